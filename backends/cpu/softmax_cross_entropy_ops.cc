// softmax_cross_entropy: the summed cross entropy of softmax(data) rows
// against integer labels (MXNet's), and its gradient
// _backward_softmax_cross_entropy.
#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "absl/strings/str_cat.h"
#include "backends/cpu/grad_util.h"
#include "backends/cpu/kernel_util.h"
#include "base/error.h"

namespace mx {
namespace cpu {
namespace {

void CrossEntropyShape(const NodeAttrs& attrs, std::vector<TShape>* in,
                       std::vector<TShape>* out) {
  const TShape& d = (*in)[0];
  if (d.ndim_known() && d.ndim() != 2) {
    throw ShapeError(absl::StrCat(OpLabel(attrs), ": input 0 (data) has shape ",
                                  d.ToString(),
                                  " but a 2-D shape (batch, classes) is "
                                  "required"));
  }
  AssignShape(attrs, in, 1, TShape{d.ndim_known() ? d[0] : -1}, false);
  AssignShape(attrs, in, 0, TShape{(*in)[1][0], -1}, false);
  AssignShape(attrs, out, 0, TShape{1}, true);
}

void CrossEntropyType(const NodeAttrs& attrs, std::vector<DType>* in,
                      std::vector<DType>* out) {
  AssignType(attrs, in, 0, (*out)[0], false);
  if ((*in)[1] != DType::kUnknown) RequireNumeric(attrs, (*in)[1]);
  if ((*in)[0] == DType::kUnknown) return;
  RequireFloat(attrs, (*in)[0]);
  AssignType(attrs, out, 0, (*in)[0], true);
}

// MXNet takes -log(max(p, 1e-8f)) per row: a row's loss is at most this
// (18.42), however unlikely its label.
const double kMaxCrossEntropyRowLoss = -std::log(static_cast<double>(1e-8f));

template <typename T, typename L>
double CrossEntropySum(const NodeAttrs& attrs, const T* x, const L* label,
                       int64_t n, int64_t c) {
  using A = AccType<T>;
  double total = 0;
  for (int64_t i = 0; i < n; ++i) {
    const double lv = static_cast<double>(label[i]);
    if (!(lv >= 0 && lv < static_cast<double>(c))) {
      throw InvalidArgument(absl::StrCat(
          OpLabel(attrs), ": input 1 (label) holds ", lv, " at row ", i,
          ", outside the ", c, " classes [0, ", c, ") of data"));
    }
    const T* row = x + i * c;
    A mx = -std::numeric_limits<A>::infinity();
    for (int64_t j = 0; j < c; ++j) mx = std::max(mx, static_cast<A>(row[j]));
    double sum = 0;
    for (int64_t j = 0; j < c; ++j) {
      sum += std::exp(static_cast<double>(static_cast<A>(row[j]) - mx));
    }
    const int64_t target = static_cast<int64_t>(lv);
    total += std::min(
        std::log(sum) - static_cast<double>(static_cast<A>(row[target]) - mx),
        kMaxCrossEntropyRowLoss);
  }
  return total;
}

void CrossEntropyCompute(const OpContext&, const NodeAttrs& attrs,
                         const std::vector<TBlob>& in,
                         const std::vector<OpReqType>& req,
                         const std::vector<TBlob>& out) {
  const int64_t n = in[0].shape[0], c = in[0].shape[1];
  MX_FLOAT_DTYPE_SWITCH(in[0].dtype, T, {
    double total = 0;
    MX_DTYPE_SWITCH(in[1].dtype, L, {
      total = CrossEntropySum(attrs, in[0].data<T>(), in[1].data<L>(), n, c);
    });
    Assign(out[0].data<T>(), req[0], static_cast<AccType<T>>(total));
  });
}

MX_REGISTER_OP(softmax_cross_entropy)
    .Describe(
        "Sum over the batch of -log(softmax(data)[label]); data (N, C), "
        "label (N,) of class indices; output shape (1,).")
    .SetNumInputs(2)
    .SetInputNames({"data", "label"})
    .SetParams<NoParams>()
    .SetInferShape(CrossEntropyShape)
    .SetInferType(CrossEntropyType)
    .SetCompute(Context::kCPU, CrossEntropyCompute);

// ---- Gradients. ----

// Inputs (out_grad, output) of the forward; output data_grad. With y the
// output and g its gradient along a line, softmax gives
// Inputs (out_grad of shape (1,), data, label); output data_grad =
// out_grad * (softmax(data) - one_hot(label)). Labels were checked by the
// forward.
void CrossEntropyBackwardCompute(const OpContext&, const NodeAttrs& attrs,
                                 const std::vector<TBlob>& in,
                                 const std::vector<OpReqType>& req,
                                 const std::vector<TBlob>& out) {
  if (req[0] == OpReqType::kNullOp) return;
  if (in[1].shape.ndim() != 2 || in[2].Size() != in[1].shape[0] ||
      in[0].Size() != 1) {
    throw ShapeError(absl::StrCat(
        OpLabel(attrs), ": out_grad ", in[0].shape.ToString(), ", data ",
        in[1].shape.ToString(), " and label ", in[2].shape.ToString(),
        " do not fit (1 element; (batch, classes); batch labels)"));
  }
  const int64_t n = in[1].shape[0], c = in[1].shape[1];
  MX_FLOAT_DTYPE_SWITCH(in[1].dtype, T, {
    using A = AccType<T>;
    const double scale = static_cast<double>(in[0].data<T>()[0]);
    const T* x = in[1].data<T>();
    T* dx = out[0].data<T>();
    MX_DTYPE_SWITCH(in[2].dtype, L, {
      const L* label = in[2].data<L>();
      for (int64_t i = 0; i < n; ++i) {
        const T* row = x + i * c;
        A mx = -std::numeric_limits<A>::infinity();
        for (int64_t j = 0; j < c; ++j) {
          mx = std::max(mx, static_cast<A>(row[j]));
        }
        double sum = 0;
        for (int64_t j = 0; j < c; ++j) {
          sum += std::exp(static_cast<double>(static_cast<A>(row[j]) - mx));
        }
        // As the forward: a label outside [0, c) (or NaN) is an error, and
        // never converted to an integer out of range.
        const double lv = static_cast<double>(label[i]);
        if (!(lv >= 0 && lv < static_cast<double>(c))) {
          throw InvalidArgument(absl::StrCat(
              OpLabel(attrs), ": input 2 (label) holds ", lv, " at row ", i,
              ", outside the ", c, " classes [0, ", c, ") of data"));
        }
        const int64_t target = static_cast<int64_t>(lv);
        for (int64_t j = 0; j < c; ++j) {
          const double prob =
              std::exp(static_cast<double>(static_cast<A>(row[j]) - mx)) / sum;
          const double v = scale * (prob - (j == target ? 1.0 : 0.0));
          Assign(dx + i * c + j, req[0], static_cast<A>(v));
        }
      }
    });
  });
}

MX_REGISTER_OP(_backward_softmax_cross_entropy)
    .Describe(
        "Gradient of softmax_cross_entropy: (out_grad, data, label) -> "
        "data_grad.")
    .SetNumInputs(3)
    .SetInputNames({"out_grad", "data", "label"})
    .SetInferShape([](const NodeAttrs& attrs, std::vector<TShape>* in,
                      std::vector<TShape>* out) {
      AssignShape(attrs, in, 0, TShape{1}, false);
      AssignShape(attrs, out, 0, (*in)[1], true);
      AssignShape(attrs, in, 1, (*out)[0], false);
      // data and label as the forward takes them: (batch, classes) and
      // (batch,). Rank-0 inputs reached the kernel's shape[1] (found by
      // //fuzz:op_attrs_fuzzer).
      std::vector<TShape> fwd_in{(*in)[1], (*in)[2]}, fwd_out(1);
      CrossEntropyShape(attrs, &fwd_in, &fwd_out);
      AssignShape(attrs, in, 1, fwd_in[0], false);
      AssignShape(attrs, in, 2, fwd_in[1], false);
    })
    .SetInferType([](const NodeAttrs& attrs, std::vector<DType>* in,
                     std::vector<DType>* out) {
      AssignType(attrs, in, 0, (*in)[1], false);
      AssignType(attrs, in, 1, (*in)[0], false);
      AssignType(attrs, out, 0, (*in)[1], true);
    })
    .SetCompute(Context::kCPU, CrossEntropyBackwardCompute);

[[maybe_unused]] const bool kGradientRegistered = [] {
  // The label gets no gradient.
  SetGradient("softmax_cross_entropy", [](GradBuilder& b,
                                          const std::vector<NodeEntry>& g) {
    return std::vector<NodeEntry>{
        b.Op("_backward_softmax_cross_entropy", {g[0], b.x(0), b.x(1)}),
        NodeEntry{}};
  });
  return true;
}();

}  // namespace
}  // namespace cpu
}  // namespace mx
