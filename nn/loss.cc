#include "nn/loss.h"

#include "absl/strings/str_cat.h"
#include "base/error.h"
#include "imperative/nd.h"

namespace mx {
namespace nn {

std::vector<NDArray> SoftmaxCrossEntropyLoss::Forward(
    const std::vector<NDArray>& inputs) {
  if (inputs.size() != 2) {
    throw InvalidArgument(absl::StrCat(
        "SoftmaxCrossEntropyLoss takes 2 inputs (pred, label), got ",
        inputs.size()));
  }
  const NDArray& pred = inputs[0];
  const TShape& shape = pred.shape();
  if (shape.ndim() < 1) {
    throw ShapeError(absl::StrCat("SoftmaxCrossEntropyLoss: pred has shape ",
                                  shape.ToString(),
                                  " but at least 1 axis is required"));
  }
  const int axis = shape.CheckAxis(options_.axis, "SoftmaxCrossEntropyLoss");
  const NDArray logp =
      options_.from_logits ? pred : nd::log_softmax(pred, axis);
  const NDArray& target = inputs[1];
  if (options_.sparse_label) {
    // As Gluon: the label's log-probability picked along the class axis;
    // labels (N,) or (N, 1) (any shape of one index per row).
    std::vector<int64_t> picked(shape.begin(), shape.end());
    picked.erase(picked.begin() + axis);
    const TShape picked_shape(picked);
    if (target.size() != picked_shape.Size()) {
      throw ShapeError(absl::StrCat(
          "SoftmaxCrossEntropyLoss: label has shape ",
          target.shape().ToString(), " but pred ", shape.ToString(),
          " needs one class index per row (", picked_shape.ToString(), ")"));
    }
    return {
        nd::negative(nd::pick(logp, nd::reshape(target, picked_shape), axis))};
  }
  if (target.shape() != shape) {
    throw ShapeError(absl::StrCat(
        "SoftmaxCrossEntropyLoss: dense label has shape ",
        target.shape().ToString(), " but pred has ", shape.ToString()));
  }
  return {nd::negative(nd::sum(logp * target, TShape{axis}))};
}

}  // namespace nn
}  // namespace mx
