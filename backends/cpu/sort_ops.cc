// argsort: the indices that sort data along an axis (the flattened array
// when axis is None), ascending or descending, ties kept in input order
// and NaN last; as MXNet's argsort. The gradient to data is zero.
#include <algorithm>
#include <numeric>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "backends/common/mxnet_math.h"
#include "backends/cpu/grad_util.h"
#include "backends/cpu/kernel_util.h"
#include "base/error.h"

namespace mx {
namespace cpu {
namespace {

struct ArgsortParam {
  std::optional<int> axis = -1;
  bool is_ascend = true;
  DType dtype = DType::kFloat32;
  static void Declare(ParamSchema<ArgsortParam>* s) {
    s->Field("axis", &ArgsortParam::axis)
        .Describe("None: sort the flattened array.");
    s->Field("is_ascend", &ArgsortParam::is_ascend);
    s->Field("dtype", &ArgsortParam::dtype).Describe("Of the indices.");
  }
};

// (outer, len, inner) lines of the sort.
struct Lines {
  int64_t outer, len, inner;
};

Lines LinesOf(const NodeAttrs& attrs, const TShape& s) {
  const ArgsortParam& p = attrs.get<ArgsortParam>();
  if (!p.axis) return {1, s.Size(), 1};
  const int a = s.CheckAxis(*p.axis, OpLabel(attrs).c_str());
  return {s.ProdDims(0, a), s[a], s.ProdDims(a + 1, s.ndim())};
}

void ArgsortShape(const NodeAttrs& attrs, std::vector<TShape>* in,
                  std::vector<TShape>* out) {
  const TShape& d = (*in)[0];
  if (!d.ndim_known()) return;
  const ArgsortParam& p = attrs.get<ArgsortParam>();
  if (!p.axis) {
    if (d.is_known()) AssignShape(attrs, out, 0, TShape{d.Size()}, true);
    return;
  }
  d.CheckAxis(*p.axis, OpLabel(attrs).c_str());
  AssignShape(attrs, out, 0, d, true);
}

// The order sorting one line of x: order->size() elements `stride` apart.
template <typename T>
void SortLine(const T* x, int64_t stride, bool ascend,
              std::vector<int64_t>* order) {
  using A = AccType<T>;
  const auto at = [&](int64_t i) { return static_cast<A>(x[i * stride]); };
  std::iota(order->begin(), order->end(), 0);
  std::stable_sort(order->begin(), order->end(), [&](int64_t a, int64_t b) {
    const A va = at(a), vb = at(b);
    if (IsNan(va) || IsNan(vb)) return !IsNan(va) && IsNan(vb);
    return ascend ? va < vb : vb < va;
  });
}

// The sort depends on the data's dtype and the output on the indices':
// each is dispatched on its own (8 sorts compiled, not 8 x 8).
void ArgsortCompute(const OpContext&, const NodeAttrs& attrs,
                    const std::vector<TBlob>& in,
                    const std::vector<OpReqType>& req,
                    const std::vector<TBlob>& out) {
  if (req[0] == OpReqType::kNullOp) return;
  const bool ascend = attrs.get<ArgsortParam>().is_ascend;
  const Lines l = LinesOf(attrs, in[0].shape);
  // Every index up to len - 1 exact (float16 holds 2050 but not 2049).
  if (l.len - 1 > mx_math::LargestExactIndex(static_cast<int>(out[0].dtype))) {
    throw InvalidArgument(
        absl::StrCat(OpLabel(attrs), ": dtype=", DTypeName(out[0].dtype),
                     " cannot hold indices up to ", l.len - 1));
  }
  std::vector<int64_t> order(static_cast<size_t>(l.len));
  for (int64_t line = 0; line < l.outer * l.inner; ++line) {
    const int64_t base = (line / l.inner) * l.len * l.inner + line % l.inner;
    MX_DTYPE_SWITCH(in[0].dtype, T, {
      SortLine(in[0].data<T>() + base, l.inner, ascend, &order);
    });
    MX_DTYPE_SWITCH(out[0].dtype, I, {
      I* y = out[0].data<I>() + base;
      for (int64_t i = 0; i < l.len; ++i) {
        Assign(y + i * l.inner, req[0], static_cast<I>(order[i]));
      }
    });
  }
}

MX_REGISTER_OP(argsort)
    .Describe(
        "Indices sorting data along axis (flattened when None); ties keep "
        "their order, NaN sorts last.")
    .SetNumInputs(1)
    .SetInputNames({"data"})
    .SetParams<ArgsortParam>()
    .SetInferShape(ArgsortShape)
    .SetInferType([](const NodeAttrs& attrs, std::vector<DType>* in,
                     std::vector<DType>* out) {
      AssignType(attrs, out, 0, attrs.get<ArgsortParam>().dtype, true);
      if ((*in)[0] != DType::kUnknown) RequireNumeric(attrs, (*in)[0]);
    })
    .SetCompute(Context::kCPU, ArgsortCompute);

[[maybe_unused]] const bool kGradientRegistered = [] {
  SetGradient("argsort", [](GradBuilder& b, const std::vector<NodeEntry>&) {
    return std::vector<NodeEntry>{b.Op("zeros_like", {b.x()})};
  });
  return true;
}();

}  // namespace
}  // namespace cpu
}  // namespace mx
