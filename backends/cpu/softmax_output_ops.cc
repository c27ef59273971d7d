// MXNet's classic output layers: SoftmaxOutput (softmax forward; its
// backward is the cross-entropy gradient softmax - onehot(label), scaled,
// whatever head gradient arrives, as MXNet 1.x training graphs expect) and
// SoftmaxActivation (plain softmax over each instance or over channels).
#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "backends/cpu/grad_util.h"
#include "backends/cpu/kernel_util.h"
#include "base/error.h"

namespace mx {
namespace cpu {
namespace {

struct SoftmaxOutputParam {
  double grad_scale = 1.0;
  double ignore_label = -1.0;
  bool multi_output = false;
  bool use_ignore = false;
  bool preserve_shape = false;
  std::string normalization = "null";
  bool out_grad = false;
  double smooth_alpha = 0.0;
  static void Declare(ParamSchema<SoftmaxOutputParam>* s) {
    s->Field("grad_scale", &SoftmaxOutputParam::grad_scale)
        .Describe("Scales the gradient.");
    s->Field("ignore_label", &SoftmaxOutputParam::ignore_label)
        .Describe("With use_ignore: rows with this label get no gradient.");
    s->Field("multi_output", &SoftmaxOutputParam::multi_output)
        .Describe("Softmax over axis 1 of (n, k, d...) with labels (n, d...).");
    s->Field("use_ignore", &SoftmaxOutputParam::use_ignore);
    s->Field("preserve_shape", &SoftmaxOutputParam::preserve_shape)
        .Describe("Softmax over the last axis, labels of the leading axes.");
    s->Field("normalization", &SoftmaxOutputParam::normalization)
        .Choices({"null", "batch", "valid"})
        .Describe(
            "Gradient divided by 1, the number of labels or the number of "
            "labels not equal to ignore_label; with multi_output, null "
            "and batch also divide by the positions per image (MXNet's "
            "rule).");
    s->Field("out_grad", &SoftmaxOutputParam::out_grad)
        .Describe("Multiply the gradient by the head gradient.");
    s->Field("smooth_alpha", &SoftmaxOutputParam::smooth_alpha)
        .Describe(
            "Label smoothing: the target is 1 - alpha at the label and "
            "alpha / (k - 1) elsewhere (not with multi_output, as MXNet).");
  }
};

// The softmax lines of a data shape: `outer` blocks of `classes` values
// `inner` apart; labels are indexed by (block, inner position).
struct Lines {
  int64_t outer = 0, classes = 0, inner = 1;
};

Lines LinesOf(const SoftmaxOutputParam& p, const TShape& d) {
  Lines l;
  if (d.ndim() == 0) return l;
  if (p.multi_output) {
    l.outer = d[0];
    l.classes = d.ndim() > 1 ? d[1] : 1;
    l.inner = d.ProdDims(2, d.ndim());
  } else if (p.preserve_shape) {
    l.classes = d[d.ndim() - 1];
    l.outer = d.ProdDims(0, d.ndim() - 1);
  } else {
    l.outer = d[0];
    l.classes = d.ProdDims(1, d.ndim());
  }
  return l;
}

// Label shape for a data shape, as MXNet infers it: (n, d...) with
// multi_output, else every axis but the last.
TShape LabelShapeOf(const SoftmaxOutputParam& p, const TShape& d) {
  std::vector<int64_t> dims;
  if (p.multi_output) {
    dims.push_back(d[0]);
    for (int i = 2; i < d.ndim(); ++i) dims.push_back(d[i]);
  } else {
    for (int i = 0; i + 1 < d.ndim(); ++i) dims.push_back(d[i]);
  }
  return TShape(dims);
}

void SoftmaxOutputShape(const NodeAttrs& attrs, std::vector<TShape>* in,
                        std::vector<TShape>* out) {
  const SoftmaxOutputParam& p = attrs.get<SoftmaxOutputParam>();
  AssignShape(attrs, in, 0, (*out)[0], false);
  AssignShape(attrs, out, 0, (*in)[0], true);
  const TShape& d = (*in)[0];
  if (!d.ndim_known()) return;
  const int min_rank = p.multi_output ? 2 : 1;
  if (d.ndim() < min_rank) {
    throw ShapeError(absl::StrCat(OpLabel(attrs), ": input 0 (data) has shape ",
                                  d.ToString(), " but at least ", min_rank,
                                  " axes are required"));
  }
  const TShape label = LabelShapeOf(p, d);
  // A label per row: the label's size must match the rows the kernel sees
  // (MXNet's flattening for data of rank > 2 without multi_output).
  const TShape& given = (*in)[1];
  if (!p.multi_output && !p.preserve_shape && d.ndim() > 2 &&
      given.ndim_known() && given.ndim() == 1) {
    AssignShape(attrs, in, 1, TShape{d[0]}, false);
    return;
  }
  AssignShape(attrs, in, 1, label, false);
}

void SoftmaxOutputType(const NodeAttrs& attrs, std::vector<DType>* in,
                       std::vector<DType>* out) {
  AssignType(attrs, in, 0, (*out)[0], false);
  if ((*in)[0] == DType::kUnknown) return;
  RequireFloat(attrs, (*in)[0]);
  AssignType(attrs, out, 0, (*in)[0], true);
  if ((*in)[1] == DType::kUnknown) AssignType(attrs, in, 1, (*in)[0], false);
  RequireNumeric(attrs, (*in)[1]);
}

// Softmax of every line of x into y (computed in A, maximum subtracted).
template <typename T>
void SoftmaxLines(const Lines& l, const T* x, T* y, OpReqType req) {
  using A = AccType<T>;
  ParallelFor(l.outer * l.inner, 64, [&](int64_t b, int64_t e) {
    std::vector<A> z(static_cast<size_t>(l.classes));
    for (int64_t line = b; line < e; ++line) {
      const int64_t base =
          (line / l.inner) * l.classes * l.inner + line % l.inner;
      A mx = -std::numeric_limits<A>::infinity();
      for (int64_t c = 0; c < l.classes; ++c) {
        mx = std::max(mx, static_cast<A>(x[base + c * l.inner]));
      }
      double sum = 0;
      for (int64_t c = 0; c < l.classes; ++c) {
        z[c] = std::exp(static_cast<A>(x[base + c * l.inner]) - mx);
        sum += z[c];
      }
      const A inv = static_cast<A>(1.0 / sum);
      for (int64_t c = 0; c < l.classes; ++c) {
        Assign(y + base + c * l.inner, req, z[c] * inv);
      }
    }
  });
}

void SoftmaxOutputCompute(const OpContext&, const NodeAttrs& attrs,
                          const std::vector<TBlob>& in,
                          const std::vector<OpReqType>& req,
                          const std::vector<TBlob>& out) {
  if (req[0] == OpReqType::kNullOp) return;
  const Lines l = LinesOf(attrs.get<SoftmaxOutputParam>(), in[0].shape);
  MX_FLOAT_DTYPE_SWITCH(in[0].dtype, T, {
    SoftmaxLines(l, in[0].data<T>(), out[0].data<T>(), req[0]);
  });
}

MX_REGISTER_OP(SoftmaxOutput)
    .Describe(
        "Softmax over each row (over axis 1 with multi_output, over the last "
        "axis with preserve_shape). Its gradient is (softmax - "
        "onehot(label)) * grad_scale / normalization, whatever the head "
        "gradient (times it with out_grad=True); the label gets none.")
    .SetNumInputs(2)
    .SetInputNames({"data", "label"})
    .SetParams<SoftmaxOutputParam>()
    .SetInferShape(SoftmaxOutputShape)
    .SetInferType(SoftmaxOutputType)
    .SetCompute(Context::kCPU, SoftmaxOutputCompute)
    .AddAlias("Softmax");

// Inputs (out_grad, output, label); output data_grad.
template <typename T, typename L>
void SoftmaxOutputBackwardImpl(const NodeAttrs& attrs,
                               const SoftmaxOutputParam& p,
                               const std::vector<TBlob>& in, OpReqType req,
                               const TBlob& out) {
  using A = AccType<T>;
  const Lines l = LinesOf(p, in[1].shape);
  const T* head = in[0].data<T>();
  const T* y = in[1].data<T>();
  const L* label = in[2].data<L>();
  T* dx = out.data<T>();
  const int64_t rows = l.outer * l.inner;
  if (in[2].Size() != rows) {
    throw ShapeError(absl::StrCat(
        OpLabel(attrs), ": input 1 (label) has shape ", in[2].shape.ToString(),
        " but data ", in[1].shape.ToString(), " needs ", rows, " labels"));
  }
  // As MXNet: labels match ignore_label as integers (truncated); `valid`
  // counts the rows whose label is not ignore_label even without
  // use_ignore; with multi_output, null and batch also divide by the
  // positions per image (inner), and smooth_alpha is not applied.
  const auto is_ignore_label = [&](int64_t row) {
    return std::trunc(static_cast<double>(label[row])) ==
           std::trunc(p.ignore_label);
  };
  const auto ignored = [&](int64_t row) {
    return p.use_ignore && is_ignore_label(row);
  };
  double norm = p.multi_output ? static_cast<double>(l.inner) : 1;
  if (p.normalization == "batch") {
    norm = static_cast<double>(rows);
  } else if (p.normalization == "valid") {
    int64_t valid = 0;
    for (int64_t r = 0; r < rows; ++r) valid += !is_ignore_label(r);
    norm = static_cast<double>(std::max<int64_t>(valid, 1));
  }
  const double scale = p.grad_scale / norm;
  const double alpha = p.multi_output ? 0 : p.smooth_alpha;
  const double off = l.classes > 1 ? alpha / (l.classes - 1) : 0;
  for (int64_t r = 0; r < rows; ++r) {
    const int64_t base = (r / l.inner) * l.classes * l.inner + r % l.inner;
    const double lv = static_cast<double>(label[r]);
    const bool skip = ignored(r);
    // MXNet casts the label to an index; one outside [0, classes) has no
    // one-hot entry (the row's gradient is the plain softmax).
    const int64_t target = (lv >= 0 && lv < static_cast<double>(l.classes))
                               ? static_cast<int64_t>(lv)
                               : -1;
    if (!skip && target < 0) {
      throw InvalidArgument(absl::StrCat(
          OpLabel(attrs), ": input 2 (label) holds ", lv, " at position ", r,
          ", outside the ", l.classes, " classes [0, ", l.classes, ")"));
    }
    for (int64_t c = 0; c < l.classes; ++c) {
      const int64_t i = base + c * l.inner;
      double g = 0;
      if (!skip) {
        const double t = c == target ? 1.0 - alpha : off;
        g = (static_cast<double>(static_cast<A>(y[i])) - t) * scale;
        if (p.out_grad) g *= static_cast<double>(static_cast<A>(head[i]));
      }
      Assign(dx + i, req, static_cast<A>(g));
    }
  }
}

void SoftmaxOutputBackwardCompute(const OpContext&, const NodeAttrs& attrs,
                                  const std::vector<TBlob>& in,
                                  const std::vector<OpReqType>& req,
                                  const std::vector<TBlob>& out) {
  if (req[0] == OpReqType::kNullOp) return;
  const SoftmaxOutputParam& p = attrs.get<SoftmaxOutputParam>();
  MX_FLOAT_DTYPE_SWITCH(in[1].dtype, T, {
    MX_DTYPE_SWITCH(in[2].dtype, L, {
      SoftmaxOutputBackwardImpl<T, L>(attrs, p, in, req[0], out[0]);
    });
  });
}

MX_REGISTER_OP(_backward_SoftmaxOutput)
    .Describe(
        "Gradient of SoftmaxOutput: (out_grad, output, label) -> data_grad.")
    .SetNumInputs(3)
    .SetInputNames({"out_grad", "output", "label"})
    .SetParams<SoftmaxOutputParam>()
    .SetInferShape([](const NodeAttrs& attrs, std::vector<TShape>* in,
                      std::vector<TShape>* out) {
      AssignShape(attrs, in, 0, (*in)[1], false);
      AssignShape(attrs, in, 1, (*in)[0], false);
      AssignShape(attrs, out, 0, (*in)[1], true);
      std::vector<TShape> fwd_in{(*in)[1], (*in)[2]}, fwd_out(1);
      SoftmaxOutputShape(attrs, &fwd_in, &fwd_out);
      AssignShape(attrs, in, 2, fwd_in[1], false);
    })
    .SetInferType([](const NodeAttrs& attrs, std::vector<DType>* in,
                     std::vector<DType>* out) {
      AssignType(attrs, in, 0, (*in)[1], false);
      AssignType(attrs, in, 1, (*in)[0], false);
      AssignType(attrs, out, 0, (*in)[1], true);
    })
    .SetCompute(Context::kCPU, SoftmaxOutputBackwardCompute);

// ---- SoftmaxActivation. ----

struct SoftmaxActivationParam {
  std::string mode = "instance";
  static void Declare(ParamSchema<SoftmaxActivationParam>* s) {
    s->Field("mode", &SoftmaxActivationParam::mode)
        .Choices({"instance", "channel"})
        .Describe("instance: over all but axis 0; channel: over axis 1.");
  }
};

void SoftmaxActivationShape(const NodeAttrs& attrs, std::vector<TShape>* in,
                            std::vector<TShape>* out) {
  SameShape(attrs, in, out);
  const TShape& d = (*in)[0];
  const bool channel = attrs.get<SoftmaxActivationParam>().mode == "channel";
  if (d.ndim_known() && d.ndim() < (channel ? 3 : 1)) {
    throw ShapeError(absl::StrCat(
        OpLabel(attrs), ": input 0 (data) has shape ", d.ToString(),
        channel ? " but mode=channel needs at least 3 axes (n, c, ...)"
                : " but at least 1 axis is required"));
  }
}

void SoftmaxActivationCompute(const OpContext&, const NodeAttrs& attrs,
                              const std::vector<TBlob>& in,
                              const std::vector<OpReqType>& req,
                              const std::vector<TBlob>& out) {
  if (req[0] == OpReqType::kNullOp) return;
  SoftmaxOutputParam lines_of;
  lines_of.multi_output = attrs.get<SoftmaxActivationParam>().mode == "channel";
  const Lines l = LinesOf(lines_of, in[0].shape);
  MX_FLOAT_DTYPE_SWITCH(in[0].dtype, T, {
    SoftmaxLines(l, in[0].data<T>(), out[0].data<T>(), req[0]);
  });
}

MX_REGISTER_OP(SoftmaxActivation)
    .Describe(
        "Softmax over each instance (all axes but 0) or, with mode=channel, "
        "over axis 1 at every position.")
    .SetNumInputs(1)
    .SetInputNames({"data"})
    .SetParams<SoftmaxActivationParam>()
    .SetInferShape(SoftmaxActivationShape)
    .SetInferType([](const NodeAttrs& attrs, std::vector<DType>* in,
                     std::vector<DType>* out) {
      SameType(attrs, in, out);
      if ((*in)[0] != DType::kUnknown) RequireFloat(attrs, (*in)[0]);
    })
    .SetCompute(Context::kCPU, SoftmaxActivationCompute);

[[maybe_unused]] const bool kGradientsRegistered = [] {
  SetGradient("SoftmaxOutput", [](GradBuilder& b,
                                  const std::vector<NodeEntry>& g) {
    return std::vector<NodeEntry>{
        b.Op("_backward_SoftmaxOutput", {g[0], b.y(), b.x(1)}, b.n->attrs.dict),
        NodeEntry{}};
  });
  // softmax's own backward along axis 1 (channel), or along the last
  // axis of the (n, rest) view (instance).
  SetGradient(
      "SoftmaxActivation", [](GradBuilder& b, const std::vector<NodeEntry>& g) {
        if (b.n->attrs.get<SoftmaxActivationParam>().mode == "channel") {
          return std::vector<NodeEntry>{
              b.Op("_backward_softmax", {g[0], b.y()}, {{"axis", "1"}})};
        }
        const AttrDict rows{{"shape", "(0, -1)"}};
        const NodeEntry d = b.Op(
            "_backward_softmax",
            {b.Op("Reshape", {g[0]}, rows), b.Op("Reshape", {b.y()}, rows)},
            {{"axis", "-1"}});
        return std::vector<NodeEntry>{b.Op("reshape_like", {d, b.x()})};
      });
  return true;
}();

}  // namespace
}  // namespace cpu
}  // namespace mx
