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
//
// Data-parallel (under mpirun, one process per rank):
//   auto kv = std::shared_ptr<kvstore::KVStore>(
//       kvstore::KVStore::Create("dist_sync"));
//   nn::Trainer trainer(net->CollectParams(), nn::MakeSGD(sgd), kv);
//   ... trainer.Step(batch_size_per_rank);
// Parameters are broadcast from rank 0 when the Trainer is made (those not
// initialized yet: at their first Step, so that step's gradients still come
// from each rank's own values, as in MXNet), so every rank starts equal.
// The store's keys are parameter indices: one store serves one Trainer. Step
// sums the gradients across ranks (a PushPull in place, last parameters
// first, so their reduction overlaps backward of earlier layers) and
// scales them by 1 / (batch_size * num_workers): the mean over the global
// batch. With update_on_kvstore the store applies the optimizer after the
// reduction and the parameters are pulled back (MXNet's
// update_on_kvstore).
#ifndef MXCORE_NN_TRAINER_H_
#define MXCORE_NN_TRAINER_H_

#include <memory>
#include <vector>

#include "kvstore/kvstore.h"
#include "nn/block.h"
#include "nn/optimizer.h"

namespace mx {
namespace nn {

class Trainer {
 public:
  Trainer(ParameterList params, std::unique_ptr<Optimizer> optimizer);
  Trainer(ParameterList params, std::unique_ptr<Optimizer> optimizer,
          std::shared_ptr<kvstore::KVStore> kvstore,
          bool update_on_kvstore = false);

  // One update of every trainable parameter. Throws StateError naming a
  // parameter that is not initialized yet; InvalidArgument for
  // batch_size <= 0. With a KVStore, batch_size is this rank's.
  //
  // As MXNet's Gluon Trainer, each gradient must be fresh: written by an
  // autograd::Backward since the last Step (autograd::IsGradFresh), else
  // StateError names the parameter and nothing is updated (a model that
  // used only some parameters would otherwise apply old gradients to the
  // rest). With ignore_stale_grad, parameters with stale gradients are
  // skipped instead (with a KVStore their gradients are still reduced, so
  // the ranks' keys match; update_on_kvstore updates them all, as MXNet).
  // A gradient filled by hand is marked with autograd::SetGradFresh.
  void Step(int batch_size, bool ignore_stale_grad = false);

  double learning_rate() const { return optimizer_->learning_rate(); }
  void set_learning_rate(double lr) { optimizer_->set_learning_rate(lr); }
  const ParameterList& params() const { return params_; }
  const std::shared_ptr<kvstore::KVStore>& kvstore() const { return kvstore_; }

 private:
  // Broadcasts rank 0's values of the initialized parameters not
  // broadcast yet.
  void BroadcastNew();

  ParameterList params_;
  std::shared_ptr<Optimizer> optimizer_;
  std::shared_ptr<kvstore::KVStore> kvstore_;
  bool update_on_kvstore_ = false;
  std::vector<bool> broadcast_;  // Per parameter.
  // The gradient scale of the current Step, read by the store's updater.
  std::shared_ptr<double> rescale_ = std::make_shared<double>(1.0);
};

}  // namespace nn
}  // namespace mx

#endif  // MXCORE_NN_TRAINER_H_
