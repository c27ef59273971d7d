// Conv2D and the pooling layers.
#include "absl/strings/str_cat.h"
#include "base/error.h"
#include "imperative/nd.h"
#include "nn/layer_util.h"
#include "nn/layers.h"

namespace mx {
namespace nn {

using internal::OneInput;

namespace {

void Check2D(const std::string& layer, const char* what, const TShape& s) {
  if (s.ndim() != 2) {
    throw InvalidArgument(absl::StrCat(layer, ": ", what, " ", s.ToString(),
                                       " must have 2 entries (h, w)"));
  }
}

}  // namespace

Conv2D::Conv2D(int64_t channels, TShape kernel, Options options)
    : channels_(channels),
      kernel_(std::move(kernel)),
      options_(std::move(options)) {
  Check2D("Conv2D", "kernel", kernel_);
  Check2D("Conv2D", "strides", options_.strides);
  Check2D("Conv2D", "padding", options_.padding);
  Check2D("Conv2D", "dilation", options_.dilation);
  if (channels <= 0 || options_.groups <= 0 || channels % options_.groups) {
    throw InvalidArgument(absl::StrCat("Conv2D: channels (", channels,
                                       ") must be a positive multiple of "
                                       "groups (",
                                       options_.groups, ")"));
  }
  const int64_t in = options_.in_channels;
  if (in > 0 && in % options_.groups) {
    throw InvalidArgument(absl::StrCat("Conv2D: in_channels (", in,
                                       ") is not a multiple of groups (",
                                       options_.groups, ")"));
  }
  Parameter::Options w;
  w.dtype = options_.dtype;
  w.init = options_.weight_init;
  weight_ =
      RegisterParameter("weight",
                        TShape{channels, in > 0 ? in / options_.groups : 0,
                               kernel_[0], kernel_[1]},
                        w);
  if (options_.use_bias) {
    Parameter::Options b;
    b.dtype = options_.dtype;
    b.init = options_.bias_init ? options_.bias_init : init::Zeros();
    bias_ = RegisterParameter("bias", TShape{channels}, b);
  }
}

void Conv2D::InferShape(const std::vector<NDArray>& inputs) {
  const TShape& s = OneInput("Conv2D", inputs, 4).shape();
  if (s[1] % options_.groups) {
    throw ShapeError(absl::StrCat("Conv2D: input has ", s[1],
                                  " channels, not a multiple of groups (",
                                  options_.groups, ")"));
  }
  weight_->SetShape(
      {channels_, s[1] / options_.groups, kernel_[0], kernel_[1]});
}

std::vector<NDArray> Conv2D::Forward(const std::vector<NDArray>& inputs) {
  const NDArray& x = OneInput("Conv2D", inputs, 4);
  NDArray y = nd::Convolution(
      x, weight_->data(), bias_ ? bias_->data() : NDArray(), kernel_, channels_,
      options_.strides, options_.padding, options_.dilation, options_.groups,
      /*no_bias=*/!bias_);
  if (!options_.activation.empty()) y = nd::Activation(y, options_.activation);
  return {y};
}

MaxPool2D::MaxPool2D(TShape pool_size, Pool2DOptions options)
    : pool_size_(std::move(pool_size)), options_(std::move(options)) {
  Check2D("MaxPool2D", "pool_size", pool_size_);
  if (options_.strides.ndim() <= 0) options_.strides = pool_size_;
}

std::vector<NDArray> MaxPool2D::Forward(const std::vector<NDArray>& inputs) {
  return {nd::Pooling(OneInput("MaxPool2D", inputs, 4), pool_size_, "max",
                      options_.strides, options_.padding,
                      /*global_pool=*/false,
                      options_.ceil_mode ? "full" : "valid")};
}

AvgPool2D::AvgPool2D(TShape pool_size, Pool2DOptions options)
    : pool_size_(std::move(pool_size)), options_(std::move(options)) {
  Check2D("AvgPool2D", "pool_size", pool_size_);
  if (options_.strides.ndim() <= 0) options_.strides = pool_size_;
}

std::vector<NDArray> AvgPool2D::Forward(const std::vector<NDArray>& inputs) {
  return {nd::Pooling(OneInput("AvgPool2D", inputs, 4), pool_size_, "avg",
                      options_.strides, options_.padding,
                      /*global_pool=*/false,
                      options_.ceil_mode ? "full" : "valid",
                      options_.count_include_pad)};
}

std::vector<NDArray> GlobalAvgPool2D::Forward(
    const std::vector<NDArray>& inputs) {
  return {nd::Pooling(OneInput("GlobalAvgPool2D", inputs, 4), TShape{1, 1},
                      "avg", {}, {}, /*global_pool=*/true)};
}

}  // namespace nn
}  // namespace mx
