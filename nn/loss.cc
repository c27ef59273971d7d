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
  NDArray target = inputs[1];
  if (options_.sparse_label) {
    if (axis != shape.ndim() - 1) {
      throw NotImplemented(absl::StrCat(
          "SoftmaxCrossEntropyLoss: sparse labels need the class axis last; "
          "axis ",
          options_.axis, " of pred shape ", shape.ToString(), " is not"));
    }
    // Labels (N,) or (N,1) become one-hot rows over the class axis.
    TShape batch_shape(shape.begin(), shape.end() - 1);
    if (target.size() != batch_shape.Size()) {
      throw ShapeError(absl::StrCat(
          "SoftmaxCrossEntropyLoss: label has shape ",
          target.shape().ToString(), " but pred ", shape.ToString(),
          " needs one class index per row (", batch_shape.ToString(), ")"));
    }
    target = nd::one_hot(nd::reshape(target, batch_shape), shape[axis], 1, 0,
                         pred.dtype());
  } else if (target.shape() != shape) {
    throw ShapeError(absl::StrCat(
        "SoftmaxCrossEntropyLoss: dense label has shape ",
        target.shape().ToString(), " but pred has ", shape.ToString()));
  }
  return {nd::negative(nd::sum(logp * target, TShape{axis}))};
}

}  // namespace nn
}  // namespace mx
