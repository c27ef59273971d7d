// norm: MXNet's L1 or L2 norm over axes (entrywise: over two axes it is
// the Frobenius norm for ord=2, the sum of |x| for ord=1, as MXNet's).
//
// Floats only, as MXNet's; the result is in the input's dtype or out_dtype.
// Sums of squares accumulate in double; float64 inputs through the scaled
// sum (mx_math::ScaledSumOfSquares), so values above 1e154 or below 1e-154
// neither overflow nor vanish. An empty norm is 0.
#include <cmath>
#include <optional>

#include "absl/strings/str_cat.h"
#include "backends/common/mxnet_math.h"
#include "backends/cpu/grad_util.h"
#include "backends/cpu/kernel_util.h"
#include "backends/cpu/reduce_util.h"
#include "base/error.h"

namespace mx {
namespace cpu {
namespace {

struct NormParam {
  int ord = 2;
  std::optional<TShape> axis;
  std::optional<DType> out_dtype;
  bool keepdims = false;
  static void Declare(ParamSchema<NormParam>* s) {
    s->Field("ord", &NormParam::ord).Describe("1 or 2");
    s->Field("axis", &NormParam::axis)
        .Describe("axes to reduce; none or () reduces all axes");
    s->Field("out_dtype", &NormParam::out_dtype)
        .Describe("the result's float dtype; none: the input's");
    s->Field("keepdims", &NormParam::keepdims)
        .Describe("keep reduced axes with length 1");
  }
};

std::vector<bool> NormAxes(const NodeAttrs& attrs, const TShape& in) {
  const NormParam& p = attrs.get<NormParam>();
  if (p.ord != 1 && p.ord != 2) {
    throw InvalidArgument(absl::StrCat(OpLabel(attrs), ": ord=", p.ord,
                                       " is not supported (1 or 2)"));
  }
  return ReducedAxes(attrs, in, p.axis, /*exclude=*/false);
}

void NormShape(const NodeAttrs& attrs, std::vector<TShape>* in,
               std::vector<TShape>* out) {
  const TShape& ishape = (*in)[0];
  if (!ishape.ndim_known()) return;
  AssignShape(attrs, out, 0,
              ReducedShape(ishape, NormAxes(attrs, ishape),
                           attrs.get<NormParam>().keepdims),
              true);
}

void NormType(const NodeAttrs& attrs, std::vector<DType>* in,
              std::vector<DType>* out) {
  const NormParam& p = attrs.get<NormParam>();
  if (p.out_dtype) {
    if (!IsFloat(*p.out_dtype)) {
      throw DTypeError(absl::StrCat(OpLabel(attrs),
                                    ": out_dtype=", DTypeName(*p.out_dtype),
                                    " is not a floating-point dtype"));
    }
    AssignType(attrs, out, 0, *p.out_dtype, true);
  } else {
    AssignType(attrs, out, 0, (*in)[0], true);
    AssignType(attrs, in, 0, (*out)[0], false);
  }
  if ((*in)[0] != DType::kUnknown) RequireFloat(attrs, (*in)[0]);
}

// The norm of one output's elements, in double.
template <typename T>
double NormOf(int ord, const T* base, const ReducePlan& plan) {
  if (ord == 1) {
    double sum = 0;
    ForEachReduced(base, plan, [&](T v) {
      sum += std::fabs(static_cast<double>(static_cast<AccType<T>>(v)));
    });
    return sum;
  }
  if constexpr (std::is_same_v<T, double>) {
    mx_math::ScaledSumOfSquares sum;
    ForEachReduced(base, plan, [&](T v) { sum.Add(v); });
    return sum.Norm();
  } else {
    // Squares of float16/float32 values cannot overflow a double.
    double sum = 0;
    ForEachReduced(base, plan, [&](T t) {
      const double v = static_cast<AccType<T>>(t);
      sum += v * v;
    });
    return std::sqrt(sum);
  }
}

void NormCompute(const OpContext&, const NodeAttrs& attrs,
                 const std::vector<TBlob>& in,
                 const std::vector<OpReqType>& req,
                 const std::vector<TBlob>& out) {
  const int ord = attrs.get<NormParam>().ord;
  const ReducePlan plan = MakePlan(in[0].shape, NormAxes(attrs, in[0].shape));
  const int64_t count = plan.red_size;
  MX_FLOAT_DTYPE_SWITCH(in[0].dtype, T, {
    const T* x = in[0].data<T>();
    MX_FLOAT_DTYPE_SWITCH(out[0].dtype, O, {
      O* y = out[0].data<O>();
      ParallelFor(
          plan.out_size, std::max<int64_t>(1, kReduceGrain / (count + 1)),
          [&](int64_t b, int64_t e) {
            for (int64_t o = b; o < e; ++o) {
              // An empty reduction has no data (x may be null).
              const double n =
                  count > 0 ? NormOf(ord, x + KeptOffset(o, plan), plan) : 0.0;
              Assign(y + o, req[0], static_cast<AccType<O>>(n));
            }
          });
    });
  });
}

MX_REGISTER_OP(norm)
    .Describe(
        "L1 (ord=1) or L2 (ord=2) norm over axes, entrywise; float inputs, "
        "the result in out_dtype or the input's dtype.")
    .SetNumInputs(1)
    .SetInputNames({"data"})
    .SetParams<NormParam>()
    .SetInferShape(NormShape)
    .SetInferType(NormType)
    .SetCompute(Context::kCPU, NormCompute);

// Gradients, as graphs of ops (so they differentiate again): ord=1 gives
// g * sign(x) (0 at 0, as MXNet's and PyTorch's); ord=2 gives g * x / y,
// 0 where the norm is 0 (MXNet's is 0/0 there; PyTorch's is 0).
[[maybe_unused]] const bool kGradientsRegistered = [] {
  SetGradient("norm", [](GradBuilder& b, const std::vector<NodeEntry>& g) {
    const NormParam& p = b.n->attrs.get<NormParam>();
    const NodeEntry x = b.x();
    AttrDict attrs = ReduceAttrs(b.n);
    // The head gradient (and the norm) in x's dtype, broadcast to x.
    const auto spread = [&](NodeEntry e) {
      if (p.out_dtype) e = b.Op("_cast_like", {e, x});
      return b.Op("_broadcast_reduced_like", {e, x}, attrs);
    };
    const NodeEntry head = spread(g[0]);
    if (p.ord == 1)
      return std::vector<NodeEntry>{b.Mul(head, b.Op("sign", {x}))};
    const NodeEntry norm = spread(b.y());
    const NodeEntry divisor =
        b.Op("elemwise_add",
             {norm, b.Op("_equal_scalar", {norm}, {{"scalar", "0"}})});
    return std::vector<NodeEntry>{
        b.Op("elemwise_div", {b.Mul(head, x), divisor})};
  });
  return true;
}();

}  // namespace
}  // namespace cpu
}  // namespace mx
