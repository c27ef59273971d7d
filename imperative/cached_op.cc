#include "imperative/cached_op.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "base/error.h"
#include "imperative/imperative.h"

namespace mx {

CachedOp::CachedOp(Symbol symbol, Options options)
    : symbol_(std::move(symbol)),
      options_(options),
      input_names_(symbol_.ListInputNames()) {}

size_t CachedOp::num_plans() const {
  std::lock_guard<std::mutex> lock(mu_);
  return plans_.size();
}

std::vector<NDArray> CachedOp::Forward(const std::vector<NDArray>& inputs) {
  if (inputs.size() != input_names_.size()) {
    throw InvalidArgument(absl::StrCat(
        "CachedOp::Forward: ", inputs.size(), " inputs given for ",
        input_names_.size(), " (", absl::StrJoin(input_names_, ", "), ")"));
  }
  if (inputs.empty()) {
    throw InvalidArgument("CachedOp::Forward: the graph has no inputs");
  }
  const Context ctx = inputs[0].ctx();
  std::string signature = ctx.ToString();
  std::vector<TShape> shapes;
  std::vector<DType> types;
  for (const NDArray& in : inputs) {
    shapes.push_back(in.shape());
    types.push_back(in.dtype());
    absl::StrAppend(&signature, ";", in.shape().ToString(),
                    DTypeName(in.dtype()));
  }
  std::lock_guard<std::mutex> lock(mu_);
  std::unique_ptr<GraphRunner>& plan = plans_[signature];
  if (plan == nullptr) {
    try {
      plan = std::make_unique<GraphRunner>(symbol_, ctx, shapes, types,
                                           "CachedOp::Forward");
    } catch (...) {
      plans_.erase(signature);
      throw;
    }
  }
  return plan->Run(inputs, imperative::IsTraining(),
                   /*fresh_blocks=*/!options_.static_alloc,
                   /*fresh_outputs=*/!options_.static_shape);
}

}  // namespace mx
