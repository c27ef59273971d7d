// cumsum (NumPy's, MXNet's np.cumsum / _np_cumsum): running sums along an
// axis, or over the flattened array when axis is None (a 1-D result).
// Accumulates as sum does (double for floats, wrapping 64 bits for
// integers); the result has `dtype`, or the input's (int64 for bool). The
// gradient is the reversed running sum of the head gradient (a graph of
// reverse and cumsum, so it differentiates again).
#include <optional>
#include <string>
#include <vector>

#include "backends/cpu/grad_util.h"
#include "backends/cpu/kernel_util.h"
#include "base/error.h"

namespace mx {
namespace cpu {
namespace {

struct CumsumParam {
  std::optional<int> axis;
  std::optional<DType> dtype;
  static void Declare(ParamSchema<CumsumParam>* s) {
    s->Field("axis", &CumsumParam::axis)
        .Describe("axis to sum along; none: the flattened array");
    s->Field("dtype", &CumsumParam::dtype)
        .Describe("the result's dtype; none: the input's (int64 for bool)");
  }
};

// The (outer, len, inner) lines the sums run along.
struct Lines {
  int64_t outer = 1, len = 1, inner = 1;
};

Lines LinesOf(const NodeAttrs& attrs, const TShape& s) {
  const std::optional<int>& axis = attrs.get<CumsumParam>().axis;
  if (!axis) return Lines{1, s.Size(), 1};
  const int a = s.CheckAxis(*axis, OpLabel(attrs).c_str());
  return Lines{s.ProdDims(0, a), s[a], s.ProdDims(a + 1, s.ndim())};
}

DType OutType(const NodeAttrs& attrs, DType in) {
  const std::optional<DType>& dtype = attrs.get<CumsumParam>().dtype;
  if (dtype) return *dtype;
  return in == DType::kBool ? DType::kInt64 : in;
}

void CumsumCompute(const OpContext&, const NodeAttrs& attrs,
                   const std::vector<TBlob>& in,
                   const std::vector<OpReqType>& req,
                   const std::vector<TBlob>& out) {
  if (req[0] == OpReqType::kNullOp) return;
  const Lines l = LinesOf(attrs, in[0].shape);
  MX_DTYPE_SWITCH(in[0].dtype, T, {
    MX_DTYPE_SWITCH(out[0].dtype, O, {
      using Sum =
          std::conditional_t<std::is_integral_v<AccType<O>>, uint64_t, double>;
      const T* x = in[0].data<T>();
      O* y = out[0].data<O>();
      ParallelFor(
          l.outer * l.inner, std::max<int64_t>(1, 4096 / (l.len + 1)),
          [&](int64_t b, int64_t e) {
            for (int64_t line = b; line < e; ++line) {
              const int64_t base =
                  (line / l.inner) * l.len * l.inner + line % l.inner;
              Sum acc = 0;
              for (int64_t i = 0; i < l.len; ++i) {
                const int64_t k = base + i * l.inner;
                if constexpr (std::is_integral_v<Sum>) {
                  acc += static_cast<Sum>(
                      static_cast<int64_t>(static_cast<AccType<T>>(x[k])));
                  Assign(y + k, req[0],
                         static_cast<O>(static_cast<int64_t>(acc)));
                } else {
                  acc += static_cast<double>(static_cast<AccType<T>>(x[k]));
                  Assign(y + k, req[0], static_cast<AccType<O>>(acc));
                }
              }
            }
          });
    });
  });
}

MX_REGISTER_OP(cumsum)
    .Describe(
        "Running sums along axis, or over the flattened array (axis None); "
        "in dtype, or the input's (int64 for bool).")
    .SetNumInputs(1)
    .SetInputNames({"a"})
    .SetParams<CumsumParam>()
    .SetInferShape([](const NodeAttrs& attrs, std::vector<TShape>* in,
                      std::vector<TShape>* out) {
      const TShape& s = (*in)[0];
      if (!s.is_known()) return;
      LinesOf(attrs, s);  // Checks the axis.
      AssignShape(attrs, out, 0,
                  attrs.get<CumsumParam>().axis ? s : TShape{s.Size()}, true);
    })
    .SetInferType([](const NodeAttrs& attrs, std::vector<DType>* in,
                     std::vector<DType>* out) {
      if ((*in)[0] != DType::kUnknown) {
        AssignType(attrs, out, 0, OutType(attrs, (*in)[0]), true);
      }
    })
    .SetCompute(Context::kCPU, CumsumCompute)
    .AddAlias("_np_cumsum");

// d/dx of cumsum with head g: the running sums of g from the end, in x's
// shape and dtype: reverse(cumsum(reverse(g))) along the axis (over the
// flattened array, then reshaped to x, for axis None).
[[maybe_unused]] const bool kGradientRegistered = [] {
  SetGradient("cumsum", [](GradBuilder& b, const std::vector<NodeEntry>& g) {
    const CumsumParam& p = b.n->attrs.get<CumsumParam>();
    const NodeEntry x = b.x();
    const std::string axis = p.axis ? AttrText(*p.axis) : "0";
    NodeEntry head = g[0];
    if (p.dtype) head = b.Op("_cast_like", {head, x});
    AttrDict sum_attrs{{"axis", axis}};
    const NodeEntry reversed = b.Op("reverse", {head}, {{"axis", axis}});
    NodeEntry grad = b.Op("reverse", {b.Op("cumsum", {reversed}, sum_attrs)},
                          {{"axis", axis}});
    if (!p.axis) grad = b.Op("reshape_like", {grad, x});
    return std::vector<NodeEntry>{grad};
  });
  return true;
}();

}  // namespace
}  // namespace cpu
}  // namespace mx
