// argmax and argmin: the index (int64) of the extremum along one axis, or in
// the flattened array. The first index wins on ties; NaN counts as the
// extremum (the first NaN's index is the answer), as in NumPy.
#include <cmath>
#include <optional>

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

std::vector<bool> SearchedAxes(const NodeAttrs& attrs, const TShape& in) {
  const ArgReduceParam& p = attrs.get<ArgReduceParam>();
  std::vector<bool> reduced(in.ndim(), !p.axis.has_value());
  if (p.axis) reduced[in.CheckAxis(*p.axis, OpLabel(attrs).c_str())] = true;
  return reduced;
}

void ArgReduceShape(const NodeAttrs& attrs, std::vector<TShape>* in,
                    std::vector<TShape>* out) {
  const TShape& ishape = (*in)[0];
  if (!ishape.ndim_known()) return;
  const std::vector<bool> reduced = SearchedAxes(attrs, ishape);
  const ArgReduceParam& p = attrs.get<ArgReduceParam>();
  RequireNonEmptyReduction(attrs, ishape, reduced,
                           /*flattened=*/!p.axis.has_value());
  AssignShape(attrs, out, 0, ReducedShape(ishape, reduced, p.keepdims), true);
}

template <bool kMax>
void ArgReduceCompute(const OpContext&, const NodeAttrs& attrs,
                      const std::vector<TBlob>& in,
                      const std::vector<OpReqType>& req,
                      const std::vector<TBlob>& out) {
  // Every reduced dim but one has length 1, or all are reduced: merged, the
  // reduced part is a single (extent, stride) pair or nothing.
  const ReducePlan plan =
      MakePlan(in[0].shape, SearchedAxes(attrs, in[0].shape));
  const int64_t n = plan.red_extent.empty() ? 1 : plan.red_extent[0];
  const int64_t s = plan.red_extent.empty() ? 0 : plan.red_stride[0];
  int64_t* y = out[0].data<int64_t>();
  const OpReqType r = req[0];
  MX_DTYPE_SWITCH(in[0].dtype, T, {
    using A = AccType<T>;
    const T* x = in[0].data<T>();
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
                    Assign(y + o, r, best_i);
                  }
                });
  });
}

void RegisterArgReduce(const char* name, bool is_max, const char* doc) {
  OpRegistry::Get()
      ->Register(name)
      .Describe(doc)
      .SetNumInputs(1)
      .SetInputNames({"data"})
      .SetParams<ArgReduceParam>()
      .SetInferShape(ArgReduceShape)
      .SetInferType([](const NodeAttrs& attrs, std::vector<DType>* in,
                       std::vector<DType>* out) {
        OutputTypeIs(DType::kInt64, attrs, in, out);
      })
      .SetCompute(Context::kCPU,
                  is_max ? ArgReduceCompute<true> : ArgReduceCompute<false>);
  SetZeroGrad(name);
}

[[maybe_unused]] const bool kRegistered = [] {
  RegisterArgReduce(
      "argmax", true,
      "Index (int64) of the maximum along an axis, or in the flattened "
      "array; the first wins on ties and NaN counts as the maximum.");
  RegisterArgReduce(
      "argmin", false,
      "Index (int64) of the minimum along an axis, or in the flattened "
      "array; the first wins on ties and NaN counts as the minimum.");
  return true;
}();

}  // namespace
}  // namespace cpu
}  // namespace mx
