// MXNet's loss heads of symbolic training graphs, whose gradient ignores
// the head gradient and starts the backward pass itself:
// LinearRegressionOutput (forward: the data), LogisticRegressionOutput (the
// sigmoid of the data), MAERegressionOutput (the data), each with a label,
// and MakeLoss (make_loss; the data). Graphs exported from MXNet's Module
// API end in them; for inference they are (nearly) the identity.
//
// Gradients, as MXNet's: the regression heads give
// grad_scale / num_output * (out - label) to the data (MAE: times 1 where
// out > label, else -1; num_output = elements per sample) and zeros to the
// label; MakeLoss gives grad_scale to every element, divided by the batch
// size (normalization=batch) or by the count of elements above valid_thresh
// (valid, at least 1).
#include <cmath>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "backends/cpu/elemwise.h"
#include "backends/cpu/grad_util.h"
#include "base/error.h"

namespace mx {
namespace cpu {
namespace {

struct RegressionParam {
  double grad_scale = 1;
  static void Declare(ParamSchema<RegressionParam>* s) {
    s->Field("grad_scale", &RegressionParam::grad_scale);
  }
};

struct MakeLossParam {
  double grad_scale = 1;
  double valid_thresh = 0;
  std::string normalization = "null";
  static void Declare(ParamSchema<MakeLossParam>* s) {
    s->Field("grad_scale", &MakeLossParam::grad_scale);
    s->Field("valid_thresh", &MakeLossParam::valid_thresh);
    s->Field("normalization", &MakeLossParam::normalization)
        .Choices({"null", "batch", "valid"});
  }
};

// The label takes the data's shape (a (n,) label for (n, 1) data, as
// MXNet's default); a given one must have the data's batch size and
// element count.
void RegressionShape(const NodeAttrs& attrs, std::vector<TShape>* in,
                     std::vector<TShape>* out) {
  const TShape& data = (*in)[0];
  if (!data.is_known()) return;
  AssignShape(attrs, out, 0, data, true);
  TShape& label = (*in)[1];
  if (!label.ndim_known()) {
    const bool column = data.ndim() == 2 && data[1] == 1;
    AssignShape(attrs, in, 1, column ? TShape{data[0]} : data, false);
  } else if (label.is_known() &&
             (label.ndim() == 0 || data.ndim() == 0 || label[0] != data[0] ||
              label.Size() != data.Size())) {
    throw ShapeError(absl::StrCat(
        OpLabel(attrs), ": input 1 (label) has shape ", label.ToString(),
        " but input 0 (data) has shape ", data.ToString(),
        "; the label needs the same batch size and number of elements"));
  }
}

template <typename F>
void RegisterRegression(const std::string& name, F f, const std::string& doc,
                        bool mae) {
  OpRegistry::Get()
      ->Register(name)
      .Describe(doc)
      .SetParams<RegressionParam>()
      .SetNumInputs(2)
      .SetInputNames({"data", "label"})
      .SetInferShape(RegressionShape)
      .SetInferType([](const NodeAttrs& attrs, std::vector<DType>* in,
                       std::vector<DType>* out) {
        SameType(attrs, in, out);
        if ((*in)[0] != DType::kUnknown) RequireFloat(attrs, (*in)[0]);
      })
      .SetCompute(Context::kCPU, UnaryKernel(f));
  SetGradient(name, [mae](GradBuilder& b, const std::vector<NodeEntry>&) {
    const double scale = b.n->attrs.get<RegressionParam>().grad_scale;
    const NodeEntry label = b.Op("reshape_like", {b.x(1), b.y()});
    NodeEntry diff = b.Op("elemwise_sub", {b.y(), label});
    if (mae) {  // MXNet's minus_sign: 1 where out > label, else -1.
      const NodeEntry above =
          b.Op("_greater_scalar", {diff}, {{"scalar", "0"}});
      diff = b.Op("_plus_scalar", {b.Scale(above, 2)}, {{"scalar", "-1"}});
    }
    // Elements per sample, broadcast over each sample.
    const NodeEntry per_sample =
        b.Op("sum", {b.Op("ones_like", {b.y()})},
             {{"axis", "0"}, {"exclude", "True"}, {"keepdims", "True"}});
    return std::vector<NodeEntry>{
        b.Op("broadcast_div", {b.Scale(diff, scale), per_sample}),
        b.Op("zeros_like", {b.x(1)})};
  });
}

[[maybe_unused]] const bool kRegistered = [] {
  RegisterRegression(
      "LinearRegressionOutput", [](auto x) { return x; },
      "Least-squares loss head: the data; gradient (out - label) scaled.",
      false);
  RegisterRegression(
      "LogisticRegressionOutput",
      [](auto x) {
        using A = decltype(x);
        return A(1) / (A(1) + std::exp(-x));
      },
      "Logistic loss head: sigmoid(data); gradient (out - label) scaled.",
      false);
  RegisterRegression(
      "MAERegressionOutput", [](auto x) { return x; },
      "Absolute-error loss head: the data; gradient +-1 scaled.", true);

  OpRegistry::Get()
      ->Register("MakeLoss")
      .Describe(
          "Marks its input as a loss: the identity, whose gradient is "
          "grad_scale (normalized) whatever the head gradient.")
      .SetParams<MakeLossParam>()
      .SetNumInputs(1)
      .SetInputNames({"data"})
      .SetInferShape(SameShape)
      .SetInferType([](const NodeAttrs& attrs, std::vector<DType>* in,
                       std::vector<DType>* out) {
        CheckUnaryType(UnaryDomain::kFloat, attrs, in, out);
      })
      .SetCompute(Context::kCPU, UnaryKernel([](auto x) { return x; }))
      .AddAlias("make_loss");
  SetUnaryGrad("MakeLoss", [](GradBuilder& b, const NodeEntry&) {
    const MakeLossParam& p = b.n->attrs.get<MakeLossParam>();
    const NodeEntry ones = b.Op("ones_like", {b.x()});
    const NodeEntry scaled = b.Scale(ones, p.grad_scale);
    if (p.normalization == "batch") {  // The batch size at every element.
      return b.Op(
          "broadcast_div",
          {scaled, b.Op("sum", {ones}, {{"axis", "0"}, {"keepdims", "True"}})});
    }
    if (p.normalization == "valid") {
      const NodeEntry valid =
          b.Op("sum", {b.Op("_greater_scalar", {b.x()},
                            {{"scalar", AttrText(p.valid_thresh)}})});
      return b.Op("broadcast_div", {scaled, b.Op("_maximum_scalar", {valid},
                                                 {{"scalar", "1"}})});
    }
    return scaled;
  });
  return true;
}();

}  // namespace
}  // namespace cpu
}  // namespace mx
