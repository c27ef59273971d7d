#include "nn/trainer.h"

#include <vector>

#include "absl/strings/str_cat.h"
#include "base/error.h"

namespace mx {
namespace nn {

Trainer::Trainer(ParameterList params, std::unique_ptr<Optimizer> optimizer)
    : Trainer(std::move(params), std::move(optimizer), nullptr) {}

Trainer::Trainer(ParameterList params, std::unique_ptr<Optimizer> optimizer,
                 std::shared_ptr<kvstore::KVStore> kvstore,
                 bool update_on_kvstore)
    : params_(std::move(params)),
      optimizer_(std::move(optimizer)),
      kvstore_(std::move(kvstore)),
      update_on_kvstore_(update_on_kvstore),
      broadcast_(params_.size(), false) {
  if (optimizer_ == nullptr) {
    throw InvalidArgument("Trainer: the optimizer is null");
  }
  if (update_on_kvstore_ && kvstore_ == nullptr) {
    throw InvalidArgument("Trainer: update_on_kvstore needs a KVStore");
  }
  if (kvstore_ == nullptr) return;
  if (update_on_kvstore_) {
    // Keys are parameter indices, as the optimizer's state is.
    std::shared_ptr<Optimizer> opt = optimizer_;
    std::shared_ptr<double> rescale = rescale_;
    kvstore_->SetOptimizer(
        [opt, rescale](int key, const NDArray& merged, const NDArray& stored) {
          opt->Update(key, stored, merged, *rescale);
        });
  }
  BroadcastNew();
}

void Trainer::BroadcastNew() {
  std::vector<int> keys;
  std::vector<NDArray> values;
  for (size_t i = 0; i < params_.size(); ++i) {
    if (broadcast_[i] || !params_[i].second->is_initialized()) continue;
    keys.push_back(static_cast<int>(i));
    values.push_back(params_[i].second->data());
  }
  if (keys.empty()) return;
  kvstore_->Broadcast(keys, values, values);
  for (int k : keys) broadcast_[k] = true;
}

void Trainer::Step(int batch_size) {
  if (batch_size <= 0) {
    throw InvalidArgument(absl::StrCat(
        "Trainer::Step: batch_size must be positive, got ", batch_size));
  }
  std::vector<int> indices;
  std::vector<NDArray> weights, grads;
  for (size_t i = 0; i < params_.size(); ++i) {
    const auto& [name, param] = params_[i];
    if (param->grad_req() == GradReq::kNull) continue;
    if (!param->is_initialized()) {
      throw StateError(absl::StrCat(
          "Trainer::Step: parameter \"", name,
          "\" is not initialized (run a forward pass or Initialize first)"));
    }
    indices.push_back(static_cast<int>(i));
    weights.push_back(param->data());
    grads.push_back(param->grad());
  }
  if (kvstore_ == nullptr) {
    optimizer_->UpdateMany(indices, weights, grads, 1.0 / batch_size);
    return;
  }
  BroadcastNew();
  *rescale_ = 1.0 / (static_cast<double>(batch_size) * kvstore_->num_workers());
  // Backward computes the last parameters' gradients first: reduce them
  // first.
  std::vector<int> keys(indices.rbegin(), indices.rend());
  std::vector<NDArray> reversed(grads.rbegin(), grads.rend());
  if (update_on_kvstore_) {
    kvstore_->Push(keys, reversed);
    kvstore_->Pull(keys,
                   std::vector<NDArray>(weights.rbegin(), weights.rend()));
    return;
  }
  kvstore_->PushPull(keys, reversed, reversed);
  optimizer_->UpdateMany(indices, weights, grads, *rescale_);
}

}  // namespace nn
}  // namespace mx
