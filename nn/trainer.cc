#include "nn/trainer.h"

#include <vector>

#include "absl/strings/str_cat.h"
#include "base/error.h"

namespace mx {
namespace nn {

Trainer::Trainer(ParameterList params, std::unique_ptr<Optimizer> optimizer)
    : params_(std::move(params)), optimizer_(std::move(optimizer)) {
  if (optimizer_ == nullptr) {
    throw InvalidArgument("Trainer: the optimizer is null");
  }
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
  optimizer_->UpdateMany(indices, weights, grads, 1.0 / batch_size);
}

}  // namespace nn
}  // namespace mx
