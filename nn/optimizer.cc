#include "nn/optimizer.h"

#include <cmath>

#include "imperative/imperative.h"
#include "imperative/nd.h"

namespace mx {
namespace nn {
namespace {

// Updates must run as plain ops: never traced, never recorded.
struct UpdateScope {
  imperative::DeferredComputeScope no_trace{false};
  imperative::RecordingScope no_record{false};
};

}  // namespace

void Optimizer::UpdateMany(const std::vector<int>& indices,
                           const std::vector<NDArray>& weights,
                           const std::vector<NDArray>& grads,
                           double rescale_grad) {
  for (size_t k = 0; k < weights.size(); ++k) {
    Update(indices[k], weights[k], grads[k], rescale_grad);
  }
}

namespace {

// The update ops clip when clip_gradient >= 0 (MXNet's kernels); Gluon's
// optimizers pass it only when set, so here <= 0 means no clipping.
double OpClip(double clip_gradient) {
  return clip_gradient > 0 ? clip_gradient : -1;
}

class SGD : public Optimizer {
 public:
  explicit SGD(const SGDOptions& o) : o_(o) {}
  void Update(int index, const NDArray& weight, const NDArray& grad,
              double rescale_grad) override {
    UpdateScope scope;
    if (o_.momentum == 0) {
      nd::sgd_update(weight, grad, o_.learning_rate, o_.wd, rescale_grad,
                     OpClip(o_.clip_gradient));
      return;
    }
    NDArray& mom = momentum_[index];
    if (mom.is_none()) mom = nd::zeros_like(weight);
    nd::sgd_mom_update(weight, grad, mom, o_.learning_rate, o_.momentum, o_.wd,
                       rescale_grad, OpClip(o_.clip_gradient));
  }
  // With momentum: _multi_sgd_mom_update over runs of up to
  // kMultiUpdateMax consecutive parameters with one context and dtype.
  void UpdateMany(const std::vector<int>& indices,
                  const std::vector<NDArray>& weights,
                  const std::vector<NDArray>& grads,
                  double rescale_grad) override {
    if (o_.momentum == 0) {
      Optimizer::UpdateMany(indices, weights, grads, rescale_grad);
      return;
    }
    UpdateScope scope;
    AttrDict attrs = {{"lr", nd::Attr(o_.learning_rate)},
                      {"momentum", nd::Attr(o_.momentum)},
                      {"wd", nd::Attr(o_.wd)},
                      {"rescale_grad", nd::Attr(rescale_grad)},
                      {"clip_gradient", nd::Attr(OpClip(o_.clip_gradient))}};
    size_t begin = 0;
    while (begin < weights.size()) {
      size_t end = begin + 1;
      while (end < weights.size() && end - begin < kMultiUpdateMax &&
             weights[end].ctx() == weights[begin].ctx() &&
             weights[end].dtype() == weights[begin].dtype()) {
        ++end;
      }
      std::vector<NDArray> in, out;
      for (size_t k = begin; k < end; ++k) {
        NDArray& mom = momentum_[indices[k]];
        if (mom.is_none()) mom = nd::zeros_like(weights[k]);
        in.insert(in.end(), {weights[k], grads[k], mom});
        out.push_back(weights[k]);
      }
      attrs["num_weights"] = nd::Attr(static_cast<int>(end - begin));
      imperative::Invoke(
          MakeAttrs(OpRegistry::Get()->Lookup("_multi_sgd_mom_update"), attrs),
          in, &out);
      begin = end;
    }
  }
  double learning_rate() const override { return o_.learning_rate; }
  void set_learning_rate(double lr) override { o_.learning_rate = lr; }

 private:
  // Parameters per _multi_sgd_mom_update (a GPU kernel takes their
  // pointers as launch arguments).
  static constexpr size_t kMultiUpdateMax = 24;
  SGDOptions o_;
  std::map<int, NDArray> momentum_;
};

class Adam : public Optimizer {
 public:
  explicit Adam(const AdamOptions& o) : o_(o) {}
  void Update(int index, const NDArray& weight, const NDArray& grad,
              double rescale_grad) override {
    UpdateScope scope;
    State& s = states_[index];
    if (s.mean.is_none()) {
      s.mean = nd::zeros_like(weight);
      s.var = nd::zeros_like(weight);
    }
    ++s.t;
    const double lr = o_.learning_rate *
                      std::sqrt(1 - std::pow(o_.beta2, s.t)) /
                      (1 - std::pow(o_.beta1, s.t));
    nd::adam_update(weight, grad, s.mean, s.var, lr, o_.beta1, o_.beta2,
                    o_.epsilon, o_.wd, rescale_grad, OpClip(o_.clip_gradient));
  }
  double learning_rate() const override { return o_.learning_rate; }
  void set_learning_rate(double lr) override { o_.learning_rate = lr; }

 private:
  struct State {
    NDArray mean, var;
    int64_t t = 0;
  };
  AdamOptions o_;
  std::map<int, State> states_;
};

}  // namespace

std::unique_ptr<Optimizer> MakeSGD(const SGDOptions& options) {
  return std::make_unique<SGD>(options);
}

std::unique_ptr<Optimizer> MakeAdam(const AdamOptions& options) {
  return std::make_unique<Adam>(options);
}

}  // namespace nn
}  // namespace mx
