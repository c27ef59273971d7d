#include "nn/trainer.h"

#include <vector>

#include "absl/strings/str_cat.h"
#include "autograd/autograd.h"
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

void Trainer::Step(int batch_size, bool ignore_stale_grad) {
  if (batch_size <= 0) {
    throw InvalidArgument(absl::StrCat(
        "Trainer::Step: batch_size must be positive, got ", batch_size));
  }
  // Every checked before anything moves, so a refused Step changes nothing.
  std::vector<int> indices;
  std::vector<NDArray> weights, grads;
  std::vector<bool> fresh;
  for (size_t i = 0; i < params_.size(); ++i) {
    const auto& [name, param] = params_[i];
    if (param->grad_req() == GradReq::kNull) continue;
    if (!param->is_initialized()) {
      throw StateError(absl::StrCat(
          "Trainer::Step: parameter \"", name,
          "\" is not initialized (run a forward pass or Initialize first)"));
    }
    const NDArray data = param->data();
    fresh.push_back(autograd::IsGradFresh(data));
    if (!fresh.back() && !ignore_stale_grad) {
      throw StateError(absl::StrCat(
          "Trainer::Step: the gradient of parameter \"", name, "\" on ",
          data.ctx().ToString(),
          " has not been written by a backward since the last Step: the "
          "model may have used only some of its parameters in this "
          "iteration. If that is intended, call Step(batch_size, "
          "/*ignore_stale_grad=*/true) to skip the parameters with stale "
          "gradients"));
    }
    indices.push_back(static_cast<int>(i));
    weights.push_back(data);
    grads.push_back(param->grad());
  }
  // The gradients used now are stale for the next Step.
  for (size_t j = 0; j < weights.size(); ++j) {
    if (fresh[j]) autograd::SetGradFresh(&weights[j], false);
  }
  // Without a store, stale parameters are skipped (ignore_stale_grad). With
  // one every rank reduces every parameter (ranks may differ in which are
  // stale, and the keys must match), and only fresh ones are updated.
  auto keep_fresh = [&] {
    size_t k = 0;
    for (size_t j = 0; j < fresh.size(); ++j) {
      if (!fresh[j]) continue;
      indices[k] = indices[j];
      weights[k] = weights[j];
      grads[k] = grads[j];
      ++k;
    }
    indices.resize(k);
    weights.resize(k);
    grads.resize(k);
  };
  if (kvstore_ == nullptr) {
    keep_fresh();
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
  keep_fresh();
  optimizer_->UpdateMany(indices, weights, grads, *rescale_);
}

}  // namespace nn
}  // namespace mx
