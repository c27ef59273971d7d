// Optimizers: per-parameter update rules, run with the optimizer update ops
// (sgd_update, sgd_mom_update, adam_update) in place on the weights.
//
// An optimizer keeps the state of each parameter (momentum, Adam's
// moments) by index, created on the parameter's first update.
//
//   nn::SGDOptions sgd;
//   sgd.learning_rate = 0.1;
//   sgd.momentum = 0.9;
//   std::unique_ptr<nn::Optimizer> opt = nn::MakeSGD(sgd);
//   opt->Update(0, weight, grad, /*rescale_grad=*/1.0 / batch_size);
#ifndef MXCORE_NN_OPTIMIZER_H_
#define MXCORE_NN_OPTIMIZER_H_

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "ndarray/ndarray.h"

namespace mx {
namespace nn {

class Optimizer {
 public:
  virtual ~Optimizer() = default;
  // One step for parameter `index`: weight and states are updated in place
  // (asynchronously); the gradient is multiplied by `rescale_grad` first.
  virtual void Update(int index, const NDArray& weight, const NDArray& grad,
                      double rescale_grad) = 0;
  // One step for several parameters (indices[k], weights[k], grads[k]);
  // the same as Update on each (what the default does). Optimizers with a
  // multi-parameter op (SGD with momentum) update them in a few ops, which
  // a GPU runs as a few launches instead of one per parameter.
  virtual void UpdateMany(const std::vector<int>& indices,
                          const std::vector<NDArray>& weights,
                          const std::vector<NDArray>& grads,
                          double rescale_grad);
  virtual double learning_rate() const = 0;
  virtual void set_learning_rate(double lr) = 0;
};

struct SGDOptions {
  double learning_rate = 0.01;
  double momentum = 0;        // 0: plain SGD, no state
  double wd = 0;              // L2 weight decay
  double clip_gradient = -1;  // <= 0: no clipping
};
// weight -= lr * (g + wd * weight), or with momentum:
// mom = momentum * mom - lr * (g + wd * weight); weight += mom.
std::unique_ptr<Optimizer> MakeSGD(const SGDOptions& options);

struct AdamOptions {
  double learning_rate = 0.001;
  double beta1 = 0.9;
  double beta2 = 0.999;
  double epsilon = 1e-8;
  double wd = 0;
  double clip_gradient = -1;
};
// Adam with bias correction folded into the step size, as MXNet does:
// at step t, lr_t = lr * sqrt(1 - beta2^t) / (1 - beta1^t).
std::unique_ptr<Optimizer> MakeAdam(const AdamOptions& options);

}  // namespace nn
}  // namespace mx

#endif  // MXCORE_NN_OPTIMIZER_H_
