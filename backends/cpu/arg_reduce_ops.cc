// argmax and argmin: the index of the extremum along one axis, or in the
// flattened array. The first index wins on ties; NaN counts as the
// extremum (the first NaN's index is the answer), as in NumPy.
//
// MXNet has two of each: the legacy `argmax`/`argmin` (the ops MXNet
// graphs hold) give the index in the data's dtype (float32 indices for
// float32 data), and NumPy's `_npi_argmax`/`_npi_argmin` give int64. An
// index the output dtype cannot hold exactly (past 2048 in float16, 255 in
// uint8 ...) is an InvalidArgument, where MXNet rounds or wraps silently.
// argmax_channel (MXNet's legacy, without attributes) is argmax along the
// last axis.
#include <cmath>
#include <optional>

#include "absl/strings/str_cat.h"
#include "backends/common/mxnet_math.h"
#include "backends/cpu/grad_util.h"
#include "backends/cpu/kernel_util.h"
#include "backends/cpu/reduce_util.h"

namespace mx {
namespace cpu {
namespace {

struct ArgReduceParam {
  std::optional<int> axis;
  bool keepdims = false;
  static void Declare(ParamSchema<ArgReduceParam>* s) {
    s->Field("axis", &ArgReduceParam::axis)
        .Describe("axis to search; none searches the flattened array");
    s->Field("keepdims", &ArgReduceParam::keepdims)
        .Describe("keep the searched axis (or all axes) with length 1");
  }
};

// argmax_channel has no attributes: argmax along the last axis.
ArgReduceParam ParamOf(const NodeAttrs& attrs) {
  if (attrs.op->name() == "argmax_channel") return {-1, false};
  return attrs.get<ArgReduceParam>();
}

std::vector<bool> SearchedAxes(const NodeAttrs& attrs, const TShape& in) {
  const ArgReduceParam p = ParamOf(attrs);
  std::vector<bool> reduced(in.ndim(), !p.axis.has_value());
  if (p.axis) reduced[in.CheckAxis(*p.axis, OpLabel(attrs).c_str())] = true;
  return reduced;
}

void ArgReduceShape(const NodeAttrs& attrs, std::vector<TShape>* in,
                    std::vector<TShape>* out) {
  const TShape& ishape = (*in)[0];
  if (!ishape.ndim_known()) return;
  const std::vector<bool> reduced = SearchedAxes(attrs, ishape);
  const ArgReduceParam p = ParamOf(attrs);
  RequireNonEmptyReduction(attrs, ishape, reduced,
                           /*flattened=*/!p.axis.has_value());
  AssignShape(attrs, out, 0, ReducedShape(ishape, reduced, p.keepdims), true);
}

// The search of data T into indices I: every reduced dim but one has
// length 1, or all are reduced: merged, the reduced part is a single
// (extent, stride) pair or nothing.
template <bool kMax, typename T, typename I>
void ArgReduceLines(const ReducePlan& plan, const T* x, OpReqType r, I* y) {
  using A = AccType<T>;
  const int64_t n = plan.red_extent.empty() ? 1 : plan.red_extent[0];
  const int64_t s = plan.red_extent.empty() ? 0 : plan.red_stride[0];
  ParallelFor(plan.out_size, std::max<int64_t>(1, kReduceGrain / (n + 1)),
              [&](int64_t b, int64_t e) {
                for (int64_t o = b; o < e; ++o) {
                  const T* base = x + KeptOffset(o, plan);
                  int64_t best_i = 0;
                  A best = static_cast<A>(base[0]);
                  bool found_nan = false;
                  if constexpr (std::is_floating_point_v<A>) {
                    found_nan = std::isnan(best);
                  }
                  for (int64_t i = 1; i < n && !found_nan; ++i) {
                    const A v = static_cast<A>(base[i * s]);
                    if constexpr (std::is_floating_point_v<A>) {
                      if (std::isnan(v)) {  // The first NaN wins.
                        best_i = i;
                        found_nan = true;
                        break;
                      }
                    }
                    if (kMax ? v > best : v < best) {
                      best = v;
                      best_i = i;
                    }
                  }
                  Assign(y + o, r, static_cast<I>(best_i));
                }
              });
}

template <bool kMax>
void ArgReduceCompute(const OpContext&, const NodeAttrs& attrs,
                      const std::vector<TBlob>& in,
                      const std::vector<OpReqType>& req,
                      const std::vector<TBlob>& out) {
  if (req[0] == OpReqType::kNullOp) return;
  const ReducePlan plan =
      MakePlan(in[0].shape, SearchedAxes(attrs, in[0].shape));
  const int64_t n = plan.red_extent.empty() ? 1 : plan.red_extent[0];
  const DType index_type = out[0].dtype;
  if (n - 1 > mx_math::LargestExactIndex(static_cast<int>(index_type))) {
    throw InvalidArgument(absl::StrCat(
        OpLabel(attrs), ": indices up to ", n - 1, " are not exact in ",
        DTypeName(index_type), " (the data's dtype; ", attrs.op->name(),
        "'s indices are in it as in MXNet): cast the data or use _npi_",
        kMax ? "argmax" : "argmin", " (int64)"));
  }
  MX_DTYPE_SWITCH(in[0].dtype, T, {
    const T* x = in[0].data<T>();
    if (index_type == DType::kInt64) {
      ArgReduceLines<kMax>(plan, x, req[0], out[0].data<int64_t>());
    } else {  // The legacy ops: the data's dtype.
      ArgReduceLines<kMax>(plan, x, req[0], out[0].data<T>());
    }
  });
}

// int64_indices: NumPy's (int64); else MXNet's legacy op (the data's
// dtype).
void RegisterArgReduce(const char* name, bool is_max, bool int64_indices,
                       const std::string& doc) {
  Op& op = OpRegistry::Get()
               ->Register(name)
               .Describe(doc)
               .SetNumInputs(1)
               .SetInputNames({"data"})
               .SetInferShape(ArgReduceShape)
               .SetCompute(Context::kCPU, is_max ? ArgReduceCompute<true>
                                                 : ArgReduceCompute<false>);
  if (int64_indices) {
    op.SetInferType([](const NodeAttrs& attrs, std::vector<DType>* in,
                       std::vector<DType>* out) {
      OutputTypeIs(DType::kInt64, attrs, in, out);
    });
  } else {
    op.SetInferType(SameType);
  }
  if (std::string(name) != "argmax_channel") op.SetParams<ArgReduceParam>();
  SetZeroGrad(name);
}

[[maybe_unused]] const bool kRegistered = [] {
  const std::string rule =
      " along an axis, or in the flattened array; the first wins on ties "
      "and NaN counts as the ";
  RegisterArgReduce("argmax", true, false,
                    "Index (in the data's dtype, as MXNet's) of the maximum" +
                        rule + "maximum.");
  RegisterArgReduce("argmin", false, false,
                    "Index (in the data's dtype, as MXNet's) of the minimum" +
                        rule + "minimum.");
  RegisterArgReduce("argmax_channel", true, false,
                    "argmax along the last axis (MXNet's legacy op, no "
                    "attributes; indices in the data's dtype).");
  RegisterArgReduce(
      "_npi_argmax", true, true,
      "NumPy's argmax: the index (int64) of the maximum" + rule + "maximum.");
  RegisterArgReduce(
      "_npi_argmin", false, true,
      "NumPy's argmin: the index (int64) of the minimum" + rule + "minimum.");
  return true;
}();

}  // namespace
}  // namespace cpu
}  // namespace mx
