// Ops selecting by index: take and one_hot; and
// _backward_take, which scatter-adds take's gradient into `a`'s shape.
// Index and condition inputs get no gradient.
//
// Index inputs may have any numeric dtype; they are converted to int64
// (floats truncate toward zero, saturating; NaN becomes 0).
#include <algorithm>
#include <cmath>
#include <limits>

#include "absl/strings/str_cat.h"
#include "backends/cpu/grad_util.h"
#include "backends/cpu/kernel_util.h"
#include "base/error.h"

namespace mx {
namespace cpu {
namespace {

constexpr int64_t kGrain = 1 << 14;

// ---- Helpers. ----

// The indices of `b` as int64, in order.
std::vector<int64_t> ReadIndices(const TBlob& b) {
  std::vector<int64_t> out(static_cast<size_t>(b.Size()));
  MX_DTYPE_SWITCH(b.dtype, T, {
    const T* p = b.data<T>();
    for (size_t i = 0; i < out.size(); ++i)
      out[i] = ConvertElement<int64_t>(p[i]);
  });
  return out;
}

// A double attribute value as T (to bool: != 0; to integers: truncated and
// saturated).
template <typename T>
inline T FromDouble(double v) {
  if constexpr (std::is_same_v<T, bool>) {
    return v != 0;
  } else if constexpr (std::is_integral_v<T>) {
    if (std::isnan(v)) return T(0);
    constexpr T kMin = std::numeric_limits<T>::min();
    constexpr T kMax = std::numeric_limits<T>::max();
    if (v <= static_cast<double>(kMin)) return kMin;
    if (v >= static_cast<double>(kMax)) return kMax;
    return static_cast<T>(v);
  } else {
    return static_cast<T>(static_cast<AccType<T>>(v));
  }
}

// ---- take. ----

struct TakeParam {
  int axis = 0;
  std::string mode = "clip";
  static void Declare(ParamSchema<TakeParam>* s) {
    s->Field("axis", &TakeParam::axis).Describe("axis of `a` to index");
    s->Field("mode", &TakeParam::mode)
        .Choices({"clip", "wrap", "raise"})
        .Describe(
            "out-of-range indices: clip to [0, n-1], wrap modulo n, or raise "
            "(indices in [-n, n) count from the end when negative)");
  }
};

// take and _backward_take: output 0 has the dtype of input 0 (data or
// gradient); input 1 holds indices.
void TakeType(const NodeAttrs& attrs, std::vector<DType>* in,
              std::vector<DType>* out) {
  if ((*in)[1] != DType::kUnknown) {
    RequireIndexType(attrs, (*in)[1], 1, "indices");
  }
  AssignType(attrs, out, 0, (*in)[0], true);
  AssignType(attrs, in, 0, (*out)[0], false);
}

void TakeShape(const NodeAttrs& attrs, std::vector<TShape>* in,
               std::vector<TShape>* out) {
  const TShape &a = (*in)[0], &idx = (*in)[1];
  if (!a.ndim_known() || !idx.ndim_known()) return;
  const int axis =
      a.CheckAxis(attrs.get<TakeParam>().axis, OpLabel(attrs).c_str());
  if (a[axis] == 0 && idx.Size() > 0) {
    throw InvalidArgument(absl::StrCat(
        OpLabel(attrs), ": cannot take indices of shape ", idx.ToString(),
        " from axis ", axis, " of length 0 (input 0 (a) has shape ",
        a.ToString(), ")"));
  }
  std::vector<int64_t> dims(a.begin(), a.begin() + axis);
  dims.insert(dims.end(), idx.begin(), idx.end());
  dims.insert(dims.end(), a.begin() + axis + 1, a.end());
  AssignShape(attrs, out, 0, TShape(dims), true);
}

// take's indices resolved by `mode` into [0, n) for an `a` of shape `as`.
std::vector<int64_t> TakeIndices(const NodeAttrs& attrs, const TShape& as,
                                 const TBlob& indices) {
  const TakeParam& p = attrs.get<TakeParam>();
  const int axis = as.CheckAxis(p.axis, OpLabel(attrs).c_str());
  const int64_t n = as[axis];
  std::vector<int64_t> idx = ReadIndices(indices);
  const int64_t m = static_cast<int64_t>(idx.size());
  for (int64_t j = 0; j < m; ++j) {
    int64_t& i = idx[j];
    if (p.mode == "clip" || p.mode == "wrap") {
      i = ClipOrWrapIndex(i, n, p.mode == "wrap");
    } else if (i < -n || i >= n) {
      throw InvalidArgument(
          absl::StrCat(OpLabel(attrs), ": index ", i, " at position ", j,
                       " of input 1 (indices) is out of range for axis ", axis,
                       " of length ", n, " (input 0 (a) has shape ",
                       as.ToString(), ", mode=raise)"));
    } else if (i < 0) {
      i += n;
    }
  }
  return idx;
}

void TakeCompute(const OpContext&, const NodeAttrs& attrs,
                 const std::vector<TBlob>& in,
                 const std::vector<OpReqType>& req,
                 const std::vector<TBlob>& out) {
  const TShape& as = in[0].shape;
  const int axis =
      as.CheckAxis(attrs.get<TakeParam>().axis, OpLabel(attrs).c_str());
  const int64_t n = as[axis];
  const int64_t outer = as.ProdDims(0, axis);
  const int64_t inner = as.ProdDims(axis + 1, as.ndim());
  const std::vector<int64_t> idx = TakeIndices(attrs, as, in[1]);
  const int64_t m = static_cast<int64_t>(idx.size());
  if (out[0].Size() == 0 || req[0] == OpReqType::kNullOp) return;
  const OpReqType r = req[0];
  MX_DTYPE_SWITCH(in[0].dtype, T, {
    const T* x = in[0].data<T>();
    T* y = out[0].data<T>();
    ParallelFor(outer * m, std::max<int64_t>(1, kGrain / inner),
                [&](int64_t s, int64_t e) {
                  for (int64_t k = s; k < e; ++k) {
                    const T* src = x + ((k / m) * n + idx[k % m]) * inner;
                    T* dst = y + k * inner;
                    for (int64_t t = 0; t < inner; ++t) {
                      Assign(dst + t, r, src[t]);
                    }
                  }
                });
  });
}

MX_REGISTER_OP(take)
    .Describe("Elements of `a` at `indices` along an axis.")
    .SetNumInputs(2)
    .SetInputNames({"a", "indices"})
    .SetParams<TakeParam>()
    .SetInferShape(TakeShape)
    .SetInferType(TakeType)
    .SetCompute(Context::kCPU, TakeCompute);

// ---- _backward_take. ----

// Inputs (data, indices, like): zeros of like's shape plus, for every
// index, its slice of data added at that index (repeated indices add up).
void BackwardTakeCompute(const OpContext&, const NodeAttrs& attrs,
                         const std::vector<TBlob>& in,
                         const std::vector<OpReqType>& req,
                         const std::vector<TBlob>& out) {
  const OpReqType r = req[0];
  if (r == OpReqType::kNullOp || out[0].Size() == 0) return;
  const TShape& as = out[0].shape;
  const int axis =
      as.CheckAxis(attrs.get<TakeParam>().axis, OpLabel(attrs).c_str());
  const int64_t n = as[axis];
  const int64_t outer = as.ProdDims(0, axis);
  const int64_t inner = as.ProdDims(axis + 1, as.ndim());
  const std::vector<int64_t> idx = TakeIndices(attrs, as, in[1]);
  const int64_t m = static_cast<int64_t>(idx.size());
  MX_DTYPE_SWITCH(out[0].dtype, T, {
    const T* g = in[0].data<T>();
    T* y = out[0].data<T>();
    if (r != OpReqType::kAddTo) std::fill(y, y + out[0].Size(), T{});
    for (int64_t k = 0; k < outer * m; ++k) {
      const T* src = g + k * inner;
      T* dst = y + ((k / m) * n + idx[k % m]) * inner;
      for (int64_t t = 0; t < inner; ++t) {
        Assign(dst + t, OpReqType::kAddTo, src[t]);
      }
    }
  });
}

MX_REGISTER_OP(_backward_take)
    .Describe(
        "Scatter-adds data (shaped like take's output) at `indices` into "
        "zeros of like's shape (the gradient of take).")
    .SetNumInputs(3)
    .SetInputNames({"data", "indices", "like"})
    .SetParams<TakeParam>()
    .SetInferShape([](const NodeAttrs& attrs, std::vector<TShape>* in,
                      std::vector<TShape>* out) {
      AssignShape(attrs, out, 0, (*in)[2], true);
      AssignShape(attrs, in, 2, (*out)[0], false);
      std::vector<TShape> take_in{(*in)[2], (*in)[1]};
      std::vector<TShape> take_out{(*in)[0]};
      TakeShape(attrs, &take_in, &take_out);
      AssignShape(attrs, in, 0, take_out[0], false);
    })
    .SetInferType(TakeType)
    .SetCompute(Context::kCPU, BackwardTakeCompute);

// ---- one_hot. ----

struct OneHotParam {
  int64_t depth = 0;
  double on_value = 1;
  double off_value = 0;
  DType dtype = DType::kFloat32;
  static void Declare(ParamSchema<OneHotParam>* s) {
    s->Field("depth", &OneHotParam::depth)
        .Required()
        .Describe("length of the new last axis");
    s->Field("on_value", &OneHotParam::on_value);
    s->Field("off_value", &OneHotParam::off_value);
    s->Field("dtype", &OneHotParam::dtype).Describe("output dtype");
  }
};

MX_REGISTER_OP(one_hot)
    .Describe(
        "indices.shape + (depth,): on_value at each index, off_value "
        "elsewhere; out-of-range indices give a row of off_value.")
    .SetNumInputs(1)
    .SetInputNames({"indices"})
    .SetParams<OneHotParam>()
    .SetInferShape([](const NodeAttrs& attrs, std::vector<TShape>* in,
                      std::vector<TShape>* out) {
      const int64_t depth = attrs.get<OneHotParam>().depth;
      if (depth < 0) {
        throw InvalidArgument(absl::StrCat(OpLabel(attrs), ": depth=", depth,
                                           " must not be negative"));
      }
      const TShape& s = (*in)[0];
      if (!s.ndim_known()) return;
      std::vector<int64_t> dims(s.begin(), s.end());
      dims.push_back(depth);
      AssignShape(attrs, out, 0, TShape(dims), true);
    })
    .SetInferType([](const NodeAttrs& attrs, std::vector<DType>* in,
                     std::vector<DType>* out) {
      if ((*in)[0] != DType::kUnknown) {
        RequireIndexType(attrs, (*in)[0], 0, "indices");
      }
      OutputTypeIs(attrs.get<OneHotParam>().dtype, attrs, in, out);
    })
    .SetCompute(Context::kCPU, [](const OpContext&, const NodeAttrs& attrs,
                                  const std::vector<TBlob>& in,
                                  const std::vector<OpReqType>& req,
                                  const std::vector<TBlob>& out) {
      const OneHotParam& p = attrs.get<OneHotParam>();
      const std::vector<int64_t> idx = ReadIndices(in[0]);
      const int64_t depth = p.depth;
      const OpReqType r = req[0];
      if (out[0].Size() == 0 || r == OpReqType::kNullOp) return;
      MX_DTYPE_SWITCH(out[0].dtype, T, {
        const T on = FromDouble<T>(p.on_value);
        const T off = FromDouble<T>(p.off_value);
        T* y = out[0].data<T>();
        ParallelFor(static_cast<int64_t>(idx.size()),
                    std::max<int64_t>(1, kGrain / depth),
                    [&](int64_t s, int64_t e) {
                      for (int64_t k = s; k < e; ++k) {
                        T* row = y + k * depth;
                        for (int64_t c = 0; c < depth; ++c) {
                          Assign(row + c, r, c == idx[k] ? on : off);
                        }
                      }
                    });
      });
    });

// ---- Gradients. ----

[[maybe_unused]] const bool kGradientsRegistered = [] {
  using B = GradBuilder;
  using E = std::vector<NodeEntry>;
  // take and _backward_take are each other's adjoints (same attributes).
  SetGradient("take", [](B& b, const E& g) {
    return E{b.Op("_backward_take", {g[0], b.x(1), b.x(0)}, b.n->attrs.dict),
             NodeEntry{}};
  });
  SetGradient("_backward_take", [](B& b, const E& g) {
    return E{b.Op("take", {g[0], b.x(1)}, b.n->attrs.dict), NodeEntry{},
             NodeEntry{}};
  });
  SetGradient("one_hot", [](B&, const E&) { return E{NodeEntry{}}; });
  return true;
}();

}  // namespace
}  // namespace cpu
}  // namespace mx
