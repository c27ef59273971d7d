#include "nn/loss.h"

#include <utility>

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

CTCLoss::CTCLoss(Options options) : options_(std::move(options)) {
  if (options_.layout != "NTC" && options_.layout != "TNC") {
    throw InvalidArgument(absl::StrCat("CTCLoss: layout \"", options_.layout,
                                       "\" is not NTC or TNC"));
  }
  if (options_.label_layout != "NT" && options_.label_layout != "TN") {
    throw InvalidArgument(absl::StrCat("CTCLoss: label_layout \"",
                                       options_.label_layout,
                                       "\" is not NT or TN"));
  }
}

std::vector<NDArray> CTCLoss::Forward(const std::vector<NDArray>& inputs) {
  if (inputs.size() < 2 || inputs.size() > 4) {
    throw InvalidArgument(absl::StrCat(
        "CTCLoss takes 2 to 4 inputs (pred, label[, pred_lengths[, "
        "label_lengths]]), got ",
        inputs.size()));
  }
  const auto time_major = [](const NDArray& a, const char* name) {
    if (a.shape().ndim() < 2) {
      throw ShapeError(absl::StrCat("CTCLoss: ", name, " has shape ",
                                    a.shape().ToString(),
                                    "; at least 2 axes needed"));
    }
    std::vector<int64_t> axes(a.shape().ndim());
    for (size_t i = 0; i < axes.size(); ++i) axes[i] = static_cast<int64_t>(i);
    std::swap(axes[0], axes[1]);
    return nd::transpose(a, TShape(axes));
  };
  const NDArray pred =
      options_.layout == "NTC" ? time_major(inputs[0], "pred") : inputs[0];
  const NDArray label = options_.label_layout == "TN"
                            ? time_major(inputs[1], "label")
                            : inputs[1];
  std::vector<NDArray> args = {pred, label};
  args.insert(args.end(), inputs.begin() + 2, inputs.end());
  const NDArray loss =
      nd::Call("CTCLoss", args,
               {{"use_data_lengths", inputs.size() > 2 ? "True" : "False"},
                {"use_label_lengths", inputs.size() > 3 ? "True" : "False"},
                {"blank_label", "last"}});
  if (options_.weight == 1.0) return {loss};
  return {loss * options_.weight};
}

}  // namespace nn
}  // namespace mx
