// Trainer: applies an optimizer to a set of parameters after backward.
//
// Step(batch_size) updates every parameter that has a gradient (grad_req
// not kNull) with its gradient scaled by 1 / batch_size, so a loss summed
// over the batch trains like its mean.
//
//   nn::SGDOptions sgd;
//   sgd.learning_rate = 0.1;
//   nn::Trainer trainer(net->CollectParams(), nn::MakeSGD(sgd));
//   {
//     autograd::RecordScope record;
//     loss = loss_fn({(*net)(x), y})[0];
//   }
//   autograd::Backward({loss});
//   trainer.Step(batch_size);
#ifndef MXCORE_NN_TRAINER_H_
#define MXCORE_NN_TRAINER_H_

#include <memory>
#include <vector>

#include "nn/block.h"
#include "nn/optimizer.h"

namespace mx {
namespace nn {

class Trainer {
 public:
  Trainer(ParameterList params, std::unique_ptr<Optimizer> optimizer);

  // One update of every trainable parameter. Throws StateError naming a
  // parameter that is not initialized yet; InvalidArgument for
  // batch_size <= 0.
  void Step(int batch_size);

  double learning_rate() const { return optimizer_->learning_rate(); }
  void set_learning_rate(double lr) { optimizer_->set_learning_rate(lr); }
  const ParameterList& params() const { return params_; }

 private:
  ParameterList params_;
  std::unique_ptr<Optimizer> optimizer_;
};

}  // namespace nn
}  // namespace mx

#endif  // MXCORE_NN_TRAINER_H_
