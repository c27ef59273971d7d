// softmax, softmin (softmax of -x), log_softmax and softmax_cross_entropy,
// all stabilized by subtracting the maximum before exponentiating, and
// their gradients as one-pass backward kernels (_backward_<op>).
#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "backends/cpu/grad_util.h"
#include "backends/cpu/kernel_util.h"
#include "base/error.h"

namespace mx {
namespace cpu {
namespace {

struct SoftmaxParam {
  int axis = -1;
  std::optional<double> temperature;
  static void Declare(ParamSchema<SoftmaxParam>* s) {
    s->Field("axis", &SoftmaxParam::axis);
    s->Field("temperature", &SoftmaxParam::temperature)
        .Describe("Divides the input first; default 1.");
  }
};

void SoftmaxShape(const NodeAttrs& attrs, std::vector<TShape>* in,
                  std::vector<TShape>* out) {
  const SoftmaxParam& p = attrs.get<SoftmaxParam>();
  if (p.temperature &&
      !(*p.temperature != 0 && std::isfinite(*p.temperature))) {
    throw InvalidArgument(absl::StrCat(OpLabel(attrs),
                                       ": temperature=", *p.temperature,
                                       " must be finite and non-zero"));
  }
  SameShape(attrs, in, out);
  if ((*in)[0].ndim_known()) {
    (*in)[0].CheckAxis(p.axis, OpLabel(attrs).c_str());
  }
}

void FloatType(const NodeAttrs& attrs, std::vector<DType>* in,
               std::vector<DType>* out) {
  AssignType(attrs, in, 0, (*out)[0], false);
  if ((*in)[0] == DType::kUnknown) return;
  RequireFloat(attrs, (*in)[0]);
  AssignType(attrs, out, 0, (*in)[0], true);
}

// Softmax (or its log) of `len` values `stride` apart, computed in A.
template <bool kLog, typename T>
void SoftmaxLine(const T* x, T* y, int64_t len, int64_t stride, double inv_t,
                 OpReqType req) {
  using A = AccType<T>;
  const A scale = static_cast<A>(inv_t);
  A mx = -std::numeric_limits<A>::infinity();
  for (int64_t i = 0; i < len; ++i) {
    mx = std::max(mx, static_cast<A>(x[i * stride]) * scale);
  }
  double sum = 0;
  for (int64_t i = 0; i < len; ++i) {
    sum += std::exp(static_cast<A>(x[i * stride]) * scale - mx);
  }
  const A log_sum = static_cast<A>(std::log(sum));
  const A inv_sum = static_cast<A>(1.0 / sum);
  for (int64_t i = 0; i < len; ++i) {
    const A z = static_cast<A>(x[i * stride]) * scale - mx;
    Assign(y + i * stride, req, kLog ? z - log_sum : std::exp(z) * inv_sum);
  }
}

// Calls line(base, len, stride, inv_t) for every line along the softmax
// axis of `s` (base: offset of the line's first element), in parallel.
template <typename F>
void ForEachSoftmaxLine(const NodeAttrs& attrs, const TShape& s, F line) {
  const SoftmaxParam& p = attrs.get<SoftmaxParam>();
  const int ax = s.CheckAxis(p.axis, OpLabel(attrs).c_str());
  const int64_t len = s[ax], inner = s.ProdDims(ax + 1, s.ndim());
  // An empty axis leaves empty lines (and arrays without memory: a line's
  // base offset from a null pointer is undefined behaviour).
  if (len == 0) return;
  const int64_t lines = s.ProdDims(0, ax) * inner;
  // softmin (and its gradient) is softmax of -x / t.
  const bool negate = absl::EndsWith(attrs.op->name(), "softmin");
  const double inv_t = (negate ? -1.0 : 1.0) / p.temperature.value_or(1.0);
  ParallelFor(lines, std::max<int64_t>(1, 4096 / std::max<int64_t>(1, len)),
              [&](int64_t b, int64_t e) {
                for (int64_t l = b; l < e; ++l) {
                  line((l / inner) * len * inner + l % inner, len, inner,
                       inv_t);
                }
              });
}

template <bool kLog>
void SoftmaxCompute(const OpContext&, const NodeAttrs& attrs,
                    const std::vector<TBlob>& in,
                    const std::vector<OpReqType>& req,
                    const std::vector<TBlob>& out) {
  if (req[0] == OpReqType::kNullOp) return;
  MX_FLOAT_DTYPE_SWITCH(in[0].dtype, T, {
    const T* x = in[0].data<T>();
    T* y = out[0].data<T>();
    ForEachSoftmaxLine(
        attrs, in[0].shape,
        [&](int64_t base, int64_t len, int64_t stride, double inv_t) {
          SoftmaxLine<kLog>(x + base, y + base, len, stride, inv_t, req[0]);
        });
  });
}

MX_REGISTER_OP(softmax)
    .Describe("exp(x/t) / sum(exp(x/t)) along `axis`.")
    .SetNumInputs(1)
    .SetInputNames({"data"})
    .SetParams<SoftmaxParam>()
    .SetInferShape(SoftmaxShape)
    .SetInferType(FloatType)
    .SetInplaceOption([](const NodeAttrs&) {
      return std::vector<std::pair<int, int>>{{0, 0}};
    })
    .SetCompute(Context::kCPU, SoftmaxCompute<false>);

MX_REGISTER_OP(softmin)
    .Describe("softmax(-x/t) along `axis`: exp(-x/t) / sum(exp(-x/t)).")
    .SetNumInputs(1)
    .SetInputNames({"data"})
    .SetParams<SoftmaxParam>()
    .SetInferShape(SoftmaxShape)
    .SetInferType(FloatType)
    .SetInplaceOption([](const NodeAttrs&) {
      return std::vector<std::pair<int, int>>{{0, 0}};
    })
    .SetCompute(Context::kCPU, SoftmaxCompute<false>);

MX_REGISTER_OP(log_softmax)
    .Describe("log(softmax(x/t)) along `axis`.")
    .SetNumInputs(1)
    .SetInputNames({"data"})
    .SetParams<SoftmaxParam>()
    .SetInferShape(SoftmaxShape)
    .SetInferType(FloatType)
    .SetInplaceOption([](const NodeAttrs&) {
      return std::vector<std::pair<int, int>>{{0, 0}};
    })
    .SetCompute(Context::kCPU, SoftmaxCompute<true>);

// ---- softmax_cross_entropy. ----

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
// dx = y * (g - sum(g * y)) / t and log_softmax dx = (g - e^y sum(g)) / t.
template <bool kLog, typename T>
void SoftmaxGradLine(const T* g, const T* y, T* dx, int64_t len, int64_t stride,
                     double inv_t, OpReqType req) {
  using A = AccType<T>;
  double dot = 0;
  for (int64_t i = 0; i < len; ++i) {
    const double gi = static_cast<double>(g[i * stride]);
    dot += kLog ? gi : gi * static_cast<double>(y[i * stride]);
  }
  for (int64_t i = 0; i < len; ++i) {
    const double gi = static_cast<double>(g[i * stride]);
    const double yi = static_cast<double>(y[i * stride]);
    const double v = kLog ? gi - std::exp(yi) * dot : yi * (gi - dot);
    Assign(dx + i * stride, req, static_cast<A>(v * inv_t));
  }
}

template <bool kLog>
void SoftmaxBackwardCompute(const OpContext&, const NodeAttrs& attrs,
                            const std::vector<TBlob>& in,
                            const std::vector<OpReqType>& req,
                            const std::vector<TBlob>& out) {
  if (req[0] == OpReqType::kNullOp) return;
  MX_FLOAT_DTYPE_SWITCH(in[0].dtype, T, {
    const T* g = in[0].data<T>();
    const T* y = in[1].data<T>();
    T* dx = out[0].data<T>();
    ForEachSoftmaxLine(
        attrs, in[0].shape,
        [&](int64_t base, int64_t len, int64_t stride, double inv_t) {
          SoftmaxGradLine<kLog>(g + base, y + base, dx + base, len, stride,
                                inv_t, req[0]);
        });
  });
}

void RegisterSoftmaxBackward(const std::string& name, FCompute compute) {
  OpRegistry::Get()
      ->Register("_backward_" + name)
      .Describe("Gradient of " + name + ": (out_grad, output) -> data_grad.")
      .SetNumInputs(2)
      .SetInputNames({"out_grad", "output"})
      .SetParams<SoftmaxParam>()
      .SetInferShape(SameShape)
      .SetInferType(SameType)
      .SetInplaceOption([](const NodeAttrs&) {
        return std::vector<std::pair<int, int>>{{0, 0}};
      })
      .SetCompute(Context::kCPU, std::move(compute));
  SetGradient(name, [name](GradBuilder& b, const std::vector<NodeEntry>& g) {
    return std::vector<NodeEntry>{
        b.Op("_backward_" + name, {g[0], b.y()}, b.n->attrs.dict)};
  });
}

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

[[maybe_unused]] const bool kGradientsRegistered = [] {
  RegisterSoftmaxBackward("softmax", SoftmaxBackwardCompute<false>);
  RegisterSoftmaxBackward("log_softmax", SoftmaxBackwardCompute<true>);
  RegisterSoftmaxBackward("softmin", SoftmaxBackwardCompute<false>);
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
