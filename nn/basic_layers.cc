// Dense, BatchNorm, Dropout, Activation, Flatten.
#include "absl/strings/str_cat.h"
#include "base/error.h"
#include "imperative/nd.h"
#include "nn/layer_util.h"
#include "nn/layers.h"

namespace mx {
namespace nn {

using internal::OneInput;

Dense::Dense(int64_t units, Options options)
    : units_(units), options_(std::move(options)) {
  if (units <= 0) {
    throw InvalidArgument(
        absl::StrCat("Dense: units must be positive, got ", units));
  }
  Parameter::Options w;
  w.dtype = options_.dtype;
  w.init = options_.weight_init;
  weight_ = RegisterParameter("weight", TShape{units, options_.in_units}, w);
  if (options_.use_bias) {
    Parameter::Options b;
    b.dtype = options_.dtype;
    b.init = options_.bias_init ? options_.bias_init : init::Zeros();
    bias_ = RegisterParameter("bias", TShape{units}, b);
  }
}

Dense::Dense(int64_t units, std::string activation)
    : Dense(units, [&] {
        Options o;
        o.activation = std::move(activation);
        return o;
      }()) {}

void Dense::InferShape(const std::vector<NDArray>& inputs) {
  const TShape& s = OneInput("Dense", inputs, options_.flatten ? 2 : 1).shape();
  const int64_t in_units =
      options_.flatten ? s.ProdDims(1, s.ndim()) : s[s.ndim() - 1];
  weight_->SetShape({units_, in_units});
}

std::vector<NDArray> Dense::Forward(const std::vector<NDArray>& inputs) {
  const NDArray& x = OneInput("Dense", inputs, 1);
  NDArray y = nd::FullyConnected(x, weight_->data(),
                                 bias_ ? bias_->data() : NDArray(), units_,
                                 /*no_bias=*/!bias_, options_.flatten);
  if (!options_.activation.empty()) y = nd::Activation(y, options_.activation);
  return {y};
}

BatchNorm::BatchNorm(Options options) : options_(options) {
  const TShape shape{options.in_channels};
  Parameter::Options g;
  g.init = init::Ones();
  if (!options.scale) g.grad_req = GradReq::kNull;
  gamma_ = RegisterParameter("gamma", shape, g);
  Parameter::Options b;
  b.init = init::Zeros();
  if (!options.center) b.grad_req = GradReq::kNull;
  beta_ = RegisterParameter("beta", shape, b);
  Parameter::Options aux;
  aux.grad_req = GradReq::kNull;
  aux.init = init::Zeros();
  running_mean_ = RegisterParameter("running_mean", shape, aux);
  aux.init = init::Ones();
  running_var_ = RegisterParameter("running_var", shape, aux);
}

void BatchNorm::InferShape(const std::vector<NDArray>& inputs) {
  const NDArray& x = OneInput("BatchNorm", inputs, 1);
  const int axis = x.shape().CheckAxis(options_.axis, "BatchNorm axis");
  const TShape channels{x.shape()[axis]};
  for (const ParameterPtr& p : {gamma_, beta_, running_mean_, running_var_}) {
    p->SetShape(channels);
  }
}

std::vector<NDArray> BatchNorm::Forward(const std::vector<NDArray>& inputs) {
  const NDArray& x = OneInput("BatchNorm", inputs, 1);
  return {nd::BatchNorm(
      x, gamma_->data(), beta_->data(), running_mean_->data(),
      running_var_->data(), options_.epsilon, options_.momentum,
      /*fix_gamma=*/!options_.scale, options_.use_global_stats, options_.axis)};
}

Dropout::Dropout(double rate) : rate_(rate) {
  if (rate < 0 || rate >= 1) {
    throw InvalidArgument(
        absl::StrCat("Dropout: rate must be in [0, 1), got ", rate));
  }
}

std::vector<NDArray> Dropout::Forward(const std::vector<NDArray>& inputs) {
  return {nd::Dropout(OneInput("Dropout", inputs), rate_)};
}

Activation::Activation(std::string act_type) : act_type_(std::move(act_type)) {}

std::vector<NDArray> Activation::Forward(const std::vector<NDArray>& inputs) {
  return {nd::Activation(OneInput("Activation", inputs), act_type_)};
}

std::vector<NDArray> Flatten::Forward(const std::vector<NDArray>& inputs) {
  return {nd::flatten(OneInput("Flatten", inputs, 1))};
}

}  // namespace nn
}  // namespace mx
