// Elementwise ops: unary math, binary ops with NumPy broadcasting, and their
// scalar forms. The comparisons here give 1/0 in the inputs' dtype, as in
// MXNet 1.x.
#include <algorithm>
#include <cmath>

#include "absl/strings/str_cat.h"
#include "backends/cpu/binary_functors.h"
#include "backends/cpu/elemwise.h"
#include "backends/cpu/elemwise_binary.h"
#include "backends/cpu/kernel_util.h"
#include "base/error.h"

namespace mx {
namespace cpu {
namespace {

// ---- Unary (RegisterUnary is in elemwise.h). ----

// NaN for NaN, as NumPy (so relu's and abs's gradients propagate NaN).
// Compares and one select, so that loops over it (relu's gradient)
// vectorize; nested selects left a branch in the loop.
template <typename A>
A Sign(A x) {
  const A s = static_cast<A>(x > A(0)) - static_cast<A>(x < A(0));
  return IsNan(x) ? x : s;
}

template <typename A>
A Abs(A x) {
  if constexpr (std::is_same_v<A, bool>) {
    return x;
  } else {
    return x < A(0) ? WrapNeg(x) : x;
  }
}

[[maybe_unused]] const bool kUnaryRegistered = [] {
  using D = UnaryDomain;
  RegisterUnary(
      "_copy", D::kNumeric, [](auto x) { return x; }, "x (a copy)")
      .AddAlias("identity")
      .AddAlias("_np_copy");
  RegisterUnary(
      "negative", D::kNumeric, [](auto x) { return WrapNeg(x); }, "-x");
  RegisterUnary(
      "abs", D::kNumeric, [](auto x) { return Abs(x); }, "|x|");
  RegisterUnary(
      "sign", D::kNumeric, [](auto x) { return Sign(x); }, "-1, 0 or 1");
  RegisterUnary(
      "exp", D::kFloat, [](auto x) { return std::exp(x); }, "e^x");
  RegisterUnary(
      "log", D::kFloat, [](auto x) { return std::log(x); },
      "natural logarithm");
  RegisterUnary(
      "sqrt", D::kFloat, [](auto x) { return std::sqrt(x); }, "square root");
  RegisterUnary(
      "square", D::kNumeric, [](auto x) { return WrapMul(x, x); }, "x^2");
  RegisterUnary(
      "reciprocal", D::kFloat, [](auto x) { return decltype(x)(1) / x; },
      "1/x");
  RegisterUnary(
      "sin", D::kFloat, [](auto x) { return std::sin(x); }, "sine");
  RegisterUnary(
      "cos", D::kFloat, [](auto x) { return std::cos(x); }, "cosine");
  RegisterUnary(
      "tanh", D::kFloat, [](auto x) { return std::tanh(x); },
      "hyperbolic tangent");
  RegisterUnary(
      "sigmoid", D::kFloat,
      [](auto x) {
        using A = decltype(x);
        return A(1) / (A(1) + std::exp(-x));
      },
      "1 / (1 + e^-x)");
  RegisterUnary(
      "relu", D::kNumeric,
      [](auto x) { return x > 0 || IsNan(x) ? x : decltype(x)(0); },
      "max(x, 0)");
  RegisterUnary(
      "erf", D::kFloat, [](auto x) { return std::erf(x); },
      "Gauss error function");
  return true;
}();

// ---- clip. ----

struct ClipParam {
  double a_min = 0;
  double a_max = 0;
  static void Declare(ParamSchema<ClipParam>* s) {
    s->Field("a_min", &ClipParam::a_min).Required();
    s->Field("a_max", &ClipParam::a_max).Required();
  }
};

MX_REGISTER_OP(clip)
    .Describe("Limits values to [a_min, a_max].")
    .SetNumInputs(1)
    .SetInputNames({"data"})
    .SetParams<ClipParam>()
    .SetInferShape(SameShape)
    .SetInferType([](const NodeAttrs& attrs, std::vector<DType>* in,
                     std::vector<DType>* out) {
      CheckUnaryType(UnaryDomain::kNumeric, attrs, in, out);
    })
    .SetInplaceOption(InplaceFirst)
    .SetCompute(Context::kCPU, [](const OpContext& ctx, const NodeAttrs& attrs,
                                  const std::vector<TBlob>& in,
                                  const std::vector<OpReqType>& req,
                                  const std::vector<TBlob>& out) {
      const ClipParam& p = attrs.get<ClipParam>();
      if (p.a_min > p.a_max) {
        throw InvalidArgument(absl::StrCat(OpLabel(attrs), ": a_min=", p.a_min,
                                           " is greater than a_max=", p.a_max));
      }
      MX_DTYPE_SWITCH(in[0].dtype, T, {
        using A = AccType<T>;
        // Bounds outside an integer dtype's range saturate (uint8 with
        // a_min=-1 clips at 0); a NaN bound is 0 there.
        const A lo = SaturatingCast<A>(p.a_min),
                hi = SaturatingCast<A>(p.a_max);
        UnaryKernel([lo, hi](auto x) {
          return std::min<decltype(x)>(std::max<decltype(x)>(x, lo), hi);
        })(ctx, attrs, in, req, out);
      });
    });

// ---- Binary with broadcasting. ----

// relu's gradient in one pass: ograd * sign(output). The output is >= 0,
// so the sign is the 0/1 mask, and a NaN the forward propagated stays NaN.
struct ReluGradF {
  template <typename A>
  static A Map(A g, A y) {
    return WrapMul(g, Sign(y));
  }
};

}  // namespace

void BinaryShape(const NodeAttrs& attrs, std::vector<TShape>* in,
                 std::vector<TShape>* out) {
  if ((*in)[0].is_known() && (*in)[1].is_known()) {
    AssignShape(attrs, out, 0, BroadcastShape(attrs, (*in)[0], (*in)[1]), true);
  } else if ((*out)[0].is_known()) {
    // Equal-shape inputs are the common case when only the output is known.
    for (int i = 0; i < 2; ++i) {
      if (!(*in)[i].ndim_known()) AssignShape(attrs, in, i, (*out)[0], false);
    }
  }
}

namespace {

[[maybe_unused]] const bool kBinaryRegistered = [] {
  RegisterElemwise<ReluGradF>(
      "_backward_relu", {},
      "relu's gradient from (ograd, relu output): ograd * sign(output)");
  RegisterBinary<AddF>("broadcast_add", {"add"}, "a + b with broadcasting");
  RegisterBinary<SubF>("broadcast_sub", {"subtract"},
                       "a - b with broadcasting");
  RegisterBinary<MulF>("broadcast_mul", {"multiply"},
                       "a * b with broadcasting");
  RegisterBinary<DivF>("broadcast_div", {"divide"},
                       "a / b with broadcasting (integer x/0 gives 0)");
  RegisterElemwise<AddF>("elemwise_add", {"_plus", "_Plus", "_add"},
                         "a + b, equal shapes");
  RegisterElemwise<SubF>("elemwise_sub", {"_minus", "_Minus", "_sub"},
                         "a - b, equal shapes");
  RegisterElemwise<MulF>("elemwise_mul", {"_mul", "_Mul"},
                         "a * b, equal shapes");
  RegisterElemwise<DivF>("elemwise_div", {"_div", "_Div"},
                         "a / b, equal shapes");
  RegisterBinary<PowF>("broadcast_power", {"power", "_power", "_Power"},
                       "a ^ b with broadcasting");
  RegisterBinary<MaxF>("broadcast_maximum", {"maximum", "_maximum"},
                       "max(a, b) with broadcasting");
  RegisterBinary<MinF>("broadcast_minimum", {"minimum", "_minimum"},
                       "min(a, b) with broadcasting");
  // Comparisons: MXNet's legacy names give 1/0 in the inputs' dtype (the
  // NumPy-style _npi_equal, ... giving bool are in numpy_elemwise_ops.cc).
  RegisterBinary<AsNumberF<EqF>>("broadcast_equal", {"_equal"},
                                 "a == b as 1/0 in the inputs' dtype");
  RegisterBinary<AsNumberF<NeF>>("broadcast_not_equal", {"_not_equal"},
                                 "a != b as 1/0 in the inputs' dtype");
  RegisterBinary<AsNumberF<GtF>>("broadcast_greater", {"_greater"},
                                 "a > b as 1/0 in the inputs' dtype");
  RegisterBinary<AsNumberF<GeF>>("broadcast_greater_equal", {"_greater_equal"},
                                 "a >= b as 1/0 in the inputs' dtype");
  RegisterBinary<AsNumberF<LtF>>("broadcast_lesser", {"_lesser"},
                                 "a < b as 1/0 in the inputs' dtype");
  RegisterBinary<AsNumberF<LeF>>("broadcast_lesser_equal", {"_lesser_equal"},
                                 "a <= b as 1/0 in the inputs' dtype");

  RegisterScalar<AddF>("_plus_scalar", {"_PlusScalar"}, "x + scalar");
  RegisterScalar<SubF>("_minus_scalar", {"_MinusScalar"}, "x - scalar");
  RegisterScalar<SubF, true>("_rminus_scalar", {"_RMinusScalar"}, "scalar - x");
  RegisterScalar<MulF>("_mul_scalar", {"_MulScalar"}, "x * scalar");
  RegisterScalar<DivF>("_div_scalar", {"_DivScalar"}, "x / scalar");
  RegisterScalar<DivF, true>("_rdiv_scalar", {"_RDivScalar"}, "scalar / x");
  RegisterScalar<PowF>("_power_scalar", {"_PowerScalar"}, "x ^ scalar");
  RegisterScalar<PowF, true>("_rpower_scalar", {"_RPowerScalar"}, "scalar ^ x");
  RegisterScalar<MaxF>("_maximum_scalar", {"_MaximumScalar"}, "max(x, scalar)");
  RegisterScalar<MinF>("_minimum_scalar", {"_MinimumScalar"}, "min(x, scalar)");
  RegisterScalar<AsNumberF<EqF>>("_equal_scalar", {"_EqualScalar"},
                                 "x == scalar as 1/0 in x's dtype");
  RegisterScalar<AsNumberF<NeF>>("_not_equal_scalar", {"_NotEqualScalar"},
                                 "x != scalar as 1/0 in x's dtype");
  RegisterScalar<AsNumberF<GtF>>("_greater_scalar", {"_GreaterScalar"},
                                 "x > scalar as 1/0 in x's dtype");
  RegisterScalar<AsNumberF<GeF>>("_greater_equal_scalar",
                                 {"_GreaterEqualScalar"},
                                 "x >= scalar as 1/0 in x's dtype");
  RegisterScalar<AsNumberF<LtF>>("_lesser_scalar", {"_LesserScalar"},
                                 "x < scalar as 1/0 in x's dtype");
  RegisterScalar<AsNumberF<LeF>>("_lesser_equal_scalar", {"_LesserEqualScalar"},
                                 "x <= scalar as 1/0 in x's dtype");
  // Here rather than in its own static initializer: the ops above must
  // exist first, and initialization order across files is unspecified.
  RegisterElemwiseGradients();
  return true;
}();

}  // namespace
}  // namespace cpu
}  // namespace mx
