// Broadcasting to a shape, and its adjoint: broadcast_to, broadcast_like and
// _reduce_sum_like. _reduce_sum_like sums an array over the axes along which
// another array was broadcast (leading axes included), which turns the
// gradient of any broadcasting op back into its input's shape.
#include <algorithm>

#include "absl/strings/str_cat.h"
#include "backends/cpu/grad_util.h"
#include "backends/cpu/kernel_util.h"
#include "base/error.h"

namespace mx {
namespace cpu {
namespace {

constexpr int64_t kGrain = 1 << 14;

// Whether `small` broadcasts to exactly `big` (NumPy rules, right-aligned).
bool BroadcastsTo(const TShape& small, const TShape& big) {
  if (small.ndim() > big.ndim()) return false;
  for (int d = 0; d < small.ndim(); ++d) {
    const int64_t s = small[d], b = big[big.ndim() - small.ndim() + d];
    if (s != b && s != 1) return false;
  }
  return true;
}

// Throws unless input `i` (named `name`) of shape `small` broadcasts to
// `big`, which is described by `target`.
void CheckBroadcastsTo(const NodeAttrs& attrs, int i, const char* name,
                       const TShape& small, const TShape& big,
                       const std::string& target) {
  if (!BroadcastsTo(small, big)) {
    throw ShapeError(absl::StrCat(OpLabel(attrs), ": input ", i, " (", name,
                                  ") has shape ", small.ToString(),
                                  ", which does not broadcast to ", target, " ",
                                  big.ToString()));
  }
}

// out[i] = in[the element broadcast to i].
void BroadcastCompute(const OpContext&, const NodeAttrs&,
                      const std::vector<TBlob>& in,
                      const std::vector<OpReqType>& req,
                      const std::vector<TBlob>& out) {
  const OpReqType r = req[0];
  if (r == OpReqType::kNullOp || out[0].Size() == 0) return;
  const TShape& os = out[0].shape;
  const std::vector<int64_t> strides = BroadcastStrides(in[0].shape, os);
  MX_DTYPE_SWITCH(in[0].dtype, T, {
    const T* x = in[0].data<T>();
    T* y = out[0].data<T>();
    ParallelFor(out[0].Size(), kGrain / 4, [&](int64_t b, int64_t e) {
      for (int64_t i = b; i < e; ++i) {
        Assign(y + i, r, x[BroadcastOffset(i, os, strides)]);
      }
    });
  });
}

// Output dtype is input 0's; other inputs only lend their shape.
void FirstInputType(const NodeAttrs& attrs, std::vector<DType>* in,
                    std::vector<DType>* out) {
  AssignType(attrs, out, 0, (*in)[0], true);
  AssignType(attrs, in, 0, (*out)[0], false);
}

// ---- broadcast_to. ----

struct BroadcastToParam {
  TShape shape;
  static void Declare(ParamSchema<BroadcastToParam>* s) {
    s->Field("shape", &BroadcastToParam::shape)
        .Required()
        .Describe("target shape; 0 keeps the input's dim (right-aligned)");
  }
};

MX_REGISTER_OP(broadcast_to)
    .Describe("Broadcasts to `shape` (NumPy rules).")
    .SetNumInputs(1)
    .SetInputNames({"data"})
    .SetParams<BroadcastToParam>()
    .SetInferShape([](const NodeAttrs& attrs, std::vector<TShape>* in,
                      std::vector<TShape>* out) {
      const TShape& s = (*in)[0];
      if (!s.is_known()) return;
      TShape target = attrs.get<BroadcastToParam>().shape;
      const int lead = target.ndim() - s.ndim();
      for (int d = 0; d < target.ndim(); ++d) {
        if (target[d] == 0 && d >= lead) target[d] = s[d - lead];
      }
      CheckBroadcastsTo(attrs, 0, "data", s, target, "shape=");
      AssignShape(attrs, out, 0, target, true);
    })
    .SetInferType(SameType)
    .SetCompute(Context::kCPU, BroadcastCompute);

// ---- broadcast_like. ----

MX_REGISTER_OP(broadcast_like)
    .Describe("Broadcasts lhs to the shape of rhs (NumPy rules).")
    .SetNumInputs(2)
    .SetInputNames({"lhs", "rhs"})
    .SetInferShape([](const NodeAttrs& attrs, std::vector<TShape>* in,
                      std::vector<TShape>* out) {
      AssignShape(attrs, out, 0, (*in)[1], true);
      AssignShape(attrs, in, 1, (*out)[0], false);
      if ((*in)[0].is_known() && (*in)[1].is_known()) {
        CheckBroadcastsTo(attrs, 0, "lhs", (*in)[0], (*in)[1], "rhs of shape");
      }
    })
    .SetInferType(FirstInputType)
    .SetCompute(Context::kCPU, BroadcastCompute);

// ---- _reduce_sum_like. ----

// Sums in double (integers too: exact below 2^53), then writes by request.
void ReduceSumLikeCompute(const OpContext&, const NodeAttrs&,
                          const std::vector<TBlob>& in,
                          const std::vector<OpReqType>& req,
                          const std::vector<TBlob>& out) {
  const OpReqType r = req[0];
  if (r == OpReqType::kNullOp || out[0].Size() == 0) return;
  const TShape& xs = in[0].shape;
  // Where each input element lands: `out` right-aligned to the input's rank,
  // stride 0 on the summed axes.
  const std::vector<int64_t> strides = BroadcastStrides(out[0].shape, xs);
  std::vector<double> acc(static_cast<size_t>(out[0].Size()), 0.0);
  MX_DTYPE_SWITCH(in[0].dtype, T, {
    const T* x = in[0].data<T>();
    const int64_t n = in[0].Size();
    for (int64_t i = 0; i < n; ++i) {
      acc[BroadcastOffset(i, xs, strides)] +=
          static_cast<double>(static_cast<AccType<T>>(x[i]));
    }
    T* y = out[0].data<T>();
    for (size_t j = 0; j < acc.size(); ++j) {
      Assign(y + j, r, SaturatingCast<AccType<T>>(acc[j]));
    }
  });
}

MX_REGISTER_OP(_reduce_sum_like)
    .Describe(
        "Sums data over the axes along which `like` broadcasts to it, giving "
        "like's shape (the adjoint of broadcast_like).")
    .SetNumInputs(2)
    .SetInputNames({"data", "like"})
    .SetInferShape([](const NodeAttrs& attrs, std::vector<TShape>* in,
                      std::vector<TShape>* out) {
      AssignShape(attrs, out, 0, (*in)[1], true);
      AssignShape(attrs, in, 1, (*out)[0], false);
      if ((*in)[0].is_known() && (*in)[1].is_known()) {
        CheckBroadcastsTo(attrs, 1, "like", (*in)[1], (*in)[0],
                          "data of shape");
      }
    })
    .SetInferType([](const NodeAttrs& attrs, std::vector<DType>* in,
                     std::vector<DType>* out) {
      FirstInputType(attrs, in, out);
      if ((*in)[0] != DType::kUnknown) RequireNumeric(attrs, (*in)[0]);
    })
    .SetCompute(Context::kCPU, ReduceSumLikeCompute);

// ---- Gradients (linear: each is the other's adjoint). ----

[[maybe_unused]] const bool kGradientsRegistered = [] {
  using B = GradBuilder;
  using E = std::vector<NodeEntry>;
  SetGradient("broadcast_to", [](B& b, const E& g) {
    return E{b.Op("_reduce_sum_like", {g[0], b.x()})};
  });
  SetGradient("broadcast_like", [](B& b, const E& g) {
    return E{b.Op("_reduce_sum_like", {g[0], b.x(0)}), NodeEntry{}};
  });
  SetGradient("_reduce_sum_like", [](B& b, const E& g) {
    return E{b.Op("broadcast_like", {g[0], b.x(0)}), NodeEntry{}};
  });
  return true;
}();

}  // namespace
}  // namespace cpu
}  // namespace mx
