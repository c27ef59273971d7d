// MXNet 2's NumPy-interface reductions: _np_sum, _npi_mean, _np_prod,
// _np_max, _np_min (axis: None reduces every axis, () none, which NumPy
// takes as the identity; keepdims; dtype for sum, mean and prod; MXNet 2
// refuses `initial`, and so do these). Their dtypes are MXNet 2's: sum and
// prod of bool give int64, mean of integers or bool float32, `dtype` the
// output's (the data converted to it first, so the sum accumulates in it),
// max and min the data's. The legacy ops' kernels do the work.
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "backends/cpu/grad_util.h"
#include "backends/cpu/kernel_util.h"
#include "backends/cpu/reduce_util.h"
#include "base/error.h"

namespace mx {
namespace cpu {
namespace {

using B = GradBuilder;
using E = std::vector<NodeEntry>;

struct NumpyReduceParam {
  std::optional<TShape> axis;
  std::optional<DType> dtype;
  bool keepdims = false;
  std::optional<double> initial;
  static void Declare(ParamSchema<NumpyReduceParam>* s) {
    s->Field("axis", &NumpyReduceParam::axis)
        .Describe("axes to reduce; None: all, (): none");
    s->Field("dtype", &NumpyReduceParam::dtype)
        .Describe("output dtype (sum, mean, prod)");
    s->Field("keepdims", &NumpyReduceParam::keepdims)
        .Describe("keep reduced axes with length 1");
    s->Field("initial", &NumpyReduceParam::initial)
        .Describe("not supported (as in MXNet 2)");
  }
};

// axis=(): nothing reduced, the data itself (in the output's dtype).
bool IsIdentity(const NumpyReduceParam& p) {
  return p.axis && p.axis->ndim() == 0;
}

void CheckParams(ReduceKind kind, const NodeAttrs& attrs) {
  const NumpyReduceParam& p = attrs.get<NumpyReduceParam>();
  if (p.initial) {
    throw NotImplemented(
        absl::StrCat(OpLabel(attrs), ": initial is not supported"));
  }
  if (p.dtype && (kind == ReduceKind::kMax || kind == ReduceKind::kMin)) {
    throw InvalidArgument(
        absl::StrCat(OpLabel(attrs), ": max and min take no dtype"));
  }
}

DType OutType(ReduceKind kind, const NumpyReduceParam& p, DType in) {
  if (p.dtype) return *p.dtype;
  if (kind == ReduceKind::kMean) return IsFloat(in) ? in : DType::kFloat32;
  if (in == DType::kBool &&
      (kind == ReduceKind::kSum || kind == ReduceKind::kProd)) {
    return DType::kInt64;
  }
  return in;
}

void RegisterNumpyReduce(const char* name, ReduceKind kind) {
  OpRegistry::Get()
      ->Register(name)
      .Describe("NumPy's reduction (MXNet 2's dtype rules)")
      .SetNumInputs(1)
      .SetInputNames({"a"})
      .SetParams<NumpyReduceParam>()
      .SetInferShape([kind](const NodeAttrs& attrs, std::vector<TShape>* in,
                            std::vector<TShape>* out) {
        CheckParams(kind, attrs);
        const TShape& s = (*in)[0];
        if (!s.ndim_known()) return;
        const NumpyReduceParam& p = attrs.get<NumpyReduceParam>();
        if (IsIdentity(p)) return AssignShape(attrs, out, 0, s, true);
        const std::vector<bool> reduced = ReducedAxes(attrs, s, p.axis, false);
        if (kind == ReduceKind::kMax || kind == ReduceKind::kMin) {
          RequireNonEmptyReduction(attrs, s, reduced);
        }
        AssignShape(attrs, out, 0, ReducedShape(s, reduced, p.keepdims), true);
      })
      .SetInferType([kind](const NodeAttrs& attrs, std::vector<DType>* in,
                           std::vector<DType>* out) {
        CheckParams(kind, attrs);
        if ((*in)[0] == DType::kUnknown) return;
        if (kind == ReduceKind::kMax || kind == ReduceKind::kMin) {
          RequireNumeric(attrs, (*in)[0]);
        }
        AssignType(attrs, out, 0,
                   OutType(kind, attrs.get<NumpyReduceParam>(), (*in)[0]),
                   true);
      })
      .SetResourceRequest(TempSpaceRequest)
      .SetCompute(
          Context::kCPU, [kind](const OpContext& ctx, const NodeAttrs& attrs,
                                const std::vector<TBlob>& in,
                                const std::vector<OpReqType>& req,
                                const std::vector<TBlob>& out) {
            const NumpyReduceParam& p = attrs.get<NumpyReduceParam>();
            if (IsIdentity(p)) return ConvertBlob(in[0], req[0], out[0]);
            // Sum, mean and prod accumulate in the output's dtype (bool counts
            // go through the legacy kernel's own int64 path).
            const bool convert = in[0].dtype != DType::kBool || p.dtype;
            ReduceInto(kind, attrs, p.axis, false,
                       convert ? InDType(ctx, in[0], out[0].dtype) : in[0],
                       req[0], out[0]);
          });
}

// The legacy reduction's attributes of a NumPy one (axis None: all).
AttrDict LegacyAttrs(const NodePtr& n) {
  const NumpyReduceParam& p = n->attrs.get<NumpyReduceParam>();
  AttrDict d = {{"keepdims", p.keepdims ? "1" : "0"}};
  if (p.axis) d["axis"] = p.axis->ToString();
  return d;
}

// Gradients: the legacy ones over the data in the head gradient's dtype,
// back in the data's; the identity's is the head gradient.
void SetNumpyReduceGradient(const char* name, ReduceKind kind) {
  SetGradient(name, [kind](B& b, const E& g) {
    const NodeEntry x = b.x();
    if (IsIdentity(b.n->attrs.get<NumpyReduceParam>())) {
      return E{b.Op("_cast_like", {g[0], x})};
    }
    const AttrDict attrs = LegacyAttrs(b.n);
    // Computed in the head gradient's dtype.
    const NodeEntry xo = b.Op("_cast_like", {x, g[0]});
    NodeEntry grad;
    switch (kind) {
      case ReduceKind::kProd: {
        AttrDict prod = attrs;
        prod["skip_nan"] = "0";
        grad = b.Op("_backward_prod", {g[0], xo}, prod);
        break;
      }
      case ReduceKind::kMax:
      case ReduceKind::kMin: {
        // MXNet's: every tied extremum gets the whole head gradient. The
        // extremum is compared in xo's dtype too (a device may broadcast
        // floats only: the CUDA plugin refused int32 here on an H200).
        const NodeEntry yo = b.Op("_cast_like", {b.y(), g[0]});
        const NodeEntry hit =
            b.Op("_npi_equal",
                 {xo, b.Op("_broadcast_reduced_like", {yo, xo}, attrs)});
        grad = b.Op("where",
                    {hit, b.Op("_broadcast_reduced_like", {g[0], xo}, attrs),
                     b.Op("zeros_like", {xo})});
        break;
      }
      default: {
        AttrDict sum = attrs;
        sum["normalize"] = kind == ReduceKind::kMean ? "1" : "0";
        grad = b.Op("_broadcast_reduced_like", {g[0], xo}, sum);
      }
    }
    return E{b.Op("_cast_like", {grad, x})};
  });
}

[[maybe_unused]] const bool kRegistered = [] {
  const std::pair<const char*, ReduceKind> ops[] = {
      {"_np_sum", ReduceKind::kSum},
      {"_npi_mean", ReduceKind::kMean},
      {"_np_prod", ReduceKind::kProd},
      {"_np_max", ReduceKind::kMax},
      {"_np_min", ReduceKind::kMin}};
  for (const auto& [name, kind] : ops) {
    RegisterNumpyReduce(name, kind);
    SetNumpyReduceGradient(name, kind);
  }
  return true;
}();

}  // namespace
}  // namespace cpu
}  // namespace mx
