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

class SGD : public Optimizer {
 public:
  explicit SGD(const SGDOptions& o) : o_(o) {}
  void Update(int index, const NDArray& weight, const NDArray& grad,
              double rescale_grad) override {
    UpdateScope scope;
    if (o_.momentum == 0) {
      nd::sgd_update(weight, grad, o_.learning_rate, o_.wd, rescale_grad,
                     o_.clip_gradient);
      return;
    }
    NDArray& mom = momentum_[index];
    if (mom.is_none()) mom = nd::zeros_like(weight);
    nd::sgd_mom_update(weight, grad, mom, o_.learning_rate, o_.momentum, o_.wd,
                       rescale_grad, o_.clip_gradient);
  }
  double learning_rate() const override { return o_.learning_rate; }
  void set_learning_rate(double lr) override { o_.learning_rate = lr; }

 private:
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
                    o_.epsilon, o_.wd, rescale_grad, o_.clip_gradient);
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
