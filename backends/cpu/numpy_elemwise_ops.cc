// MXNet 2's NumPy-interface elementwise ops, which its Gluon (np/npx)
// records in exported graphs:
//   - _npi_add, _npi_subtract, _npi_multiply, _npi_true_divide, _npi_mod,
//     _npi_power, _npi_maximum, _npi_minimum: NumPy broadcasting, and
//     operands of two dtypes meet in MXNet's promoted dtype (numpy_types.h;
//     true_divide of integers gives float32);
//   - their scalar forms (_npi_add_scalar, _npi_rsubtract_scalar, ...) with
//     MXNet 2's `is_int`: integer data with a float scalar gives float64;
//   - the comparisons _npi_equal ... _npi_less_equal (and scalar forms),
//     bool, mixed dtypes compared in the promoted dtype;
//   - the unary functions _npi_exp, _npi_sin, ... (integer data gives
//     float32) and _npi_negative, _npi_absolute, _npi_floor, ... (the dtype
//     kept), each computed by the legacy op of the same function.
// The arithmetic is the legacy ops' (binary_functors.h); operands of
// another dtype are converted into temporary space first. Gradients go back
// in each operand's dtype (_cast_like), summed over broadcast axes.
#include <algorithm>
#include <cmath>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "backends/common/numpy_types.h"
#include "backends/cpu/binary_functors.h"
#include "backends/cpu/elemwise.h"
#include "backends/cpu/elemwise_binary.h"
#include "backends/cpu/grad_util.h"
#include "backends/cpu/kernel_util.h"
#include "base/error.h"

namespace mx {
namespace cpu {
namespace {

using B = GradBuilder;
using E = NodeEntry;

DType Promote(DType a, DType b) {
  return static_cast<DType>(
      mx_numpy::PromoteTypes(static_cast<int>(a), static_cast<int>(b)));
}

// ---- Binary with broadcasting. ----

enum class BinaryRule { kPromote, kTrueDivide, kCompare };

void NumpyBinaryType(BinaryRule rule, const NodeAttrs& attrs,
                     std::vector<DType>* in, std::vector<DType>* out) {
  DType &a = (*in)[0], &b = (*in)[1];
  // With one dtype unknown, both are taken to be equal (as MXNet does).
  if (a == DType::kUnknown && b == DType::kUnknown) {
    if (rule == BinaryRule::kPromote && (*out)[0] != DType::kUnknown) {
      AssignType(attrs, in, 0, (*out)[0], false);
      AssignType(attrs, in, 1, (*out)[0], false);
    }
    return;
  }
  if (a == DType::kUnknown) AssignType(attrs, in, 0, b, false);
  if (b == DType::kUnknown) AssignType(attrs, in, 1, a, false);
  const DType meet = Promote(a, b);
  DType result = meet;
  if (rule == BinaryRule::kCompare) {
    result = DType::kBool;
  } else if (rule == BinaryRule::kTrueDivide) {
    result = static_cast<DType>(
        mx_numpy::TrueDivideType(static_cast<int>(a), static_cast<int>(b)));
  } else {
    RequireNumeric(attrs, meet);  // NumPy's bool arithmetic is not kept.
  }
  AssignType(attrs, out, 0, result, true);
}

// Operands converted to the dtype they meet in (the output's, or for a
// comparison the promoted one), then the legacy kernel.
template <typename F, BinaryRule kRule>
void NumpyBinaryCompute(const OpContext& ctx, const NodeAttrs& attrs,
                        const std::vector<TBlob>& in,
                        const std::vector<OpReqType>& req,
                        const std::vector<TBlob>& out) {
  const DType meet = kRule == BinaryRule::kCompare
                         ? Promote(in[0].dtype, in[1].dtype)
                         : out[0].dtype;
  BinaryCompute<F>(ctx, attrs,
                   {InDType(ctx, in[0], meet), InDType(ctx, in[1], meet)}, req,
                   out);
}

template <typename F, BinaryRule kRule>
Op& RegisterNumpyBinary(const std::string& name, const std::string& doc) {
  Op& op = OpRegistry::Get()
               ->Register(name)
               .Describe(doc)
               .SetNumInputs(2)
               .SetInputNames({"lhs", "rhs"})
               .SetInferShape(BinaryShape)
               .SetInferType([](const NodeAttrs& attrs, std::vector<DType>* in,
                                std::vector<DType>* out) {
                 NumpyBinaryType(kRule, attrs, in, out);
               })
               .SetResourceRequest(TempSpaceRequest)
               .SetCompute(Context::kCPU, NumpyBinaryCompute<F, kRule>);
  // An operand sharing the output's memory (same bytes) is read before the
  // output is written: converted into temporary space first, or read at
  // the element written.
  if (kRule != BinaryRule::kCompare) {
    op.SetInplaceOption([](const NodeAttrs&) {
      return std::vector<std::pair<int, int>>{{0, 0}, {1, 0}};
    });
  }
  return op;
}

// ---- Scalar forms. ----

// MXNet 2's scalar parameter: `is_int` says the Python scalar was an int.
struct NumpyScalarParam {
  double scalar = 1;
  bool is_int = true;
  static void Declare(ParamSchema<NumpyScalarParam>* s) {
    s->Field("scalar", &NumpyScalarParam::scalar);
    s->Field("is_int", &NumpyScalarParam::is_int);
  }
};

// The dtype data and scalar meet in: also the output's, except for the
// comparisons (bool) and true_divide (a float).
DType ScalarMeet(const NodeAttrs& attrs, DType data) {
  return static_cast<DType>(mx_numpy::ScalarOpType(
      static_cast<int>(data), attrs.get<NumpyScalarParam>().is_int));
}

template <typename F, bool kReverse, BinaryRule kRule>
void NumpyScalarCompute(const OpContext& ctx, const NodeAttrs& attrs,
                        const std::vector<TBlob>& in,
                        const std::vector<OpReqType>& req,
                        const std::vector<TBlob>& out) {
  const DType meet = kRule == BinaryRule::kCompare
                         ? ScalarMeet(attrs, in[0].dtype)
                         : out[0].dtype;
  ScalarKernel<F, kReverse>(attrs.get<NumpyScalarParam>().scalar,
                            InDType(ctx, in[0], meet), req[0], out[0]);
}

template <typename F, bool kReverse, BinaryRule kRule>
void RegisterNumpyScalar(const std::string& name, const std::string& doc) {
  Op& op =
      OpRegistry::Get()
          ->Register(name)
          .Describe(doc)
          .SetNumInputs(1)
          .SetInputNames({"data"})
          .SetParams<NumpyScalarParam>()
          .SetInferShape(SameShape)
          .SetInferType([](const NodeAttrs& attrs, std::vector<DType>* in,
                           std::vector<DType>* out) {
            const DType data = (*in)[0];
            if (data == DType::kUnknown) return;
            DType result = DType::kBool;
            if (kRule == BinaryRule::kTrueDivide) {
              result = static_cast<DType>(
                  mx_numpy::FloatResultType(static_cast<int>(data)));
            } else if (kRule == BinaryRule::kPromote) {
              result = ScalarMeet(attrs, data);
            }
            AssignType(attrs, out, 0, result, true);
          })
          .SetResourceRequest(TempSpaceRequest)
          .SetCompute(Context::kCPU, NumpyScalarCompute<F, kReverse, kRule>);
  if (kRule != BinaryRule::kCompare) op.SetInplaceOption(InplaceFirst);
}

// ---- Unary: the legacy op's kernel on data converted to the output's
// dtype. ----

void RegisterNumpyUnary(const std::string& name, const std::string& legacy,
                        bool float_result) {
  OpRegistry::Get()
      ->Register(name)
      .Describe(absl::StrCat(legacy, float_result
                                         ? " (integer or bool data: float32)"
                                         : " (NumPy's name)"))
      .SetNumInputs(1)
      .SetInputNames({"data"})
      .SetInferShape(SameShape)
      .SetInferType([legacy, float_result](const NodeAttrs& attrs,
                                           std::vector<DType>* in,
                                           std::vector<DType>* out) {
        if (!float_result) {
          return OpRegistry::Get()->Lookup(legacy).infer_type()(attrs, in, out);
        }
        if ((*in)[0] == DType::kUnknown) return;
        AssignType(attrs, out, 0,
                   static_cast<DType>(
                       mx_numpy::FloatResultType(static_cast<int>((*in)[0]))),
                   true);
      })
      .SetInplaceOption(InplaceFirst)
      .SetResourceRequest(TempSpaceRequest)
      .SetCompute(Context::kCPU, [legacy](const OpContext& ctx,
                                          const NodeAttrs& attrs,
                                          const std::vector<TBlob>& in,
                                          const std::vector<OpReqType>& req,
                                          const std::vector<TBlob>& out) {
        const FCompute* kernel =
            OpRegistry::Get()->Lookup(legacy).compute(Context::kCPU);
        if (kernel == nullptr) {
          throw NotImplemented(
              absl::StrCat(OpLabel(attrs), ": ", legacy, " has no CPU kernel"));
        }
        (*kernel)(ctx, attrs, {InDType(ctx, in[0], out[0].dtype)}, req, out);
      });
  // The legacy op's gradient. A float function's is taken on a node of
  // the legacy op over the data converted to the output's dtype (integer
  // data has no float gradient formula of its own), and converted back.
  OpRegistry::Get()->Mutable(name).SetAttr<FGradient>(
      "FGradient", [legacy, float_result](const NodePtr& n,
                                          const std::vector<NodeEntry>& og) {
        const FGradient* grad =
            OpRegistry::Get()->Lookup(legacy).GetAttr<FGradient>("FGradient");
        if (grad == nullptr) {
          throw NotImplemented(
              absl::StrCat(n->op()->name(), ": ", legacy, " has no gradient"));
        }
        if (!float_result) return (*grad)(n, og);
        B b{n};
        const E as_float = b.Op("_cast_like", {b.x(), b.y()});
        const E same = b.Op(legacy, {as_float});
        return std::vector<E>{
            b.Op("_cast_like", {(*grad)(same.node, og)[0], b.x()})};
      });
}

// ---- Gradients. ----

// `g` summed back to forward input i's shape, in its dtype.
E ToInput(B& b, const E& g, int i) {
  return b.Op("_cast_like", {b.Op("_reduce_sum_like", {g, b.x(i)}), b.x(i)});
}

void SetNumpyBinaryGrad(const std::string& op,
                        std::function<std::vector<E>(B&, const E&)> grad) {
  SetGradient(op, [grad](B& b, const std::vector<E>& og) {
    std::vector<E> g = grad(b, og[0]);
    return std::vector<E>{ToInput(b, g[0], 0), ToInput(b, g[1], 1)};
  });
}

// The node's scalar and is_int, and a scalar op applying another scalar.
struct ScalarOf {
  double value;
  bool is_int;
};
E ScalarOp(B& b, const char* op, const E& x, double value, bool is_int) {
  return b.Op(op, {x},
              {{"scalar", AttrText(value)}, {"is_int", is_int ? "1" : "0"}});
}

void SetNumpyScalarGrad(
    const std::string& op,
    std::function<E(B&, const E& g, const ScalarOf& s)> grad) {
  SetGradient(op, [grad](B& b, const std::vector<E>& og) {
    const NumpyScalarParam& p = b.n->attrs.get<NumpyScalarParam>();
    return std::vector<E>{
        b.Op("_cast_like", {grad(b, og[0], {p.scalar, p.is_int}), b.x()})};
  });
}

E Mul(B& b, const E& x, const E& y) { return b.Op("_npi_multiply", {x, y}); }
E Div(B& b, const E& x, const E& y) { return b.Op("_npi_true_divide", {x, y}); }
E Neg(B& b, const E& x) { return b.Op("negative", {x}); }

void RegisterNumpyGradients() {
  SetNumpyBinaryGrad("_npi_add", [](B&, const E& g) {
    return std::vector<E>{g, g};
  });
  SetNumpyBinaryGrad("_npi_subtract", [](B& b, const E& g) {
    return std::vector<E>{g, Neg(b, g)};
  });
  SetNumpyBinaryGrad("_npi_multiply", [](B& b, const E& g) {
    return std::vector<E>{Mul(b, g, b.x(1)), Mul(b, g, b.x(0))};
  });
  SetNumpyBinaryGrad("_npi_true_divide", [](B& b, const E& g) {
    // d(a/b)/db = -(a/b)/b
    return std::vector<E>{Div(b, g, b.x(1)),
                          Neg(b, Div(b, Mul(b, g, b.y()), b.x(1)))};
  });
  SetNumpyBinaryGrad("_npi_mod", [](B& b, const E& g) {
    // MXNet's: 1 for a, -floor(a / b) for b.
    const E quotient = b.Op("floor", {Div(b, b.x(0), b.x(1))});
    return std::vector<E>{g, Neg(b, Mul(b, g, quotient))};
  });
  SetNumpyBinaryGrad("_npi_power", [](B& b, const E& g) {
    // d(a^b)/da = b a^(b-1); d(a^b)/db = a^b log(a).
    const E b_minus_1 = b.Op("_npi_subtract_scalar", {b.x(1)},
                             {{"scalar", "1"}, {"is_int", "1"}});
    const E pow = b.Op("_npi_power", {b.x(0), b_minus_1});
    return std::vector<E>{Mul(b, g, Mul(b, b.x(1), pow)),
                          Mul(b, Mul(b, g, b.y()), b.Op("_npi_log", {b.x(0)}))};
  });
  SetNumpyBinaryGrad("_npi_maximum", [](B& b, const E& g) {
    const Routes r =
        SelectionRoutes(b, b.Op("_npi_greater_equal", {b.x(0), b.x(1)}), g);
    return std::vector<E>{r.first, r.second};
  });
  SetNumpyBinaryGrad("_npi_minimum", [](B& b, const E& g) {
    const Routes r =
        SelectionRoutes(b, b.Op("_npi_less_equal", {b.x(0), b.x(1)}), g);
    return std::vector<E>{r.first, r.second};
  });

  // Scalar forms.
  using S = ScalarOf;
  for (const char* op :
       {"_npi_add_scalar", "_npi_subtract_scalar", "_npi_mod_scalar"}) {
    SetNumpyScalarGrad(op, [](B&, const E& g, const S&) { return g; });
  }
  SetNumpyScalarGrad("_npi_rsubtract_scalar",
                     [](B& b, const E& g, const S&) { return Neg(b, g); });
  SetNumpyScalarGrad("_npi_multiply_scalar", [](B& b, const E& g, const S& s) {
    return ScalarOp(b, "_npi_multiply_scalar", g, s.value, s.is_int);
  });
  SetNumpyScalarGrad(
      "_npi_true_divide_scalar", [](B& b, const E& g, const S& s) {
        return ScalarOp(b, "_npi_true_divide_scalar", g, s.value, s.is_int);
      });
  SetNumpyScalarGrad("_npi_rtrue_divide_scalar",
                     [](B& b, const E& g, const S&) {
                       // d(s/x)/dx = -(s/x)/x
                       return Neg(b, Div(b, Mul(b, g, b.y()), b.x()));
                     });
  SetNumpyScalarGrad("_npi_rmod_scalar", [](B& b, const E& g, const S& s) {
    const E quotient =
        ScalarOp(b, "_npi_rtrue_divide_scalar", b.x(), s.value, s.is_int);
    return Neg(b, Mul(b, g, b.Op("floor", {quotient})));
  });
  SetNumpyScalarGrad("_npi_power_scalar", [](B& b, const E& g, const S& s) {
    // s x^(s-1)
    const E pow =
        ScalarOp(b, "_npi_power_scalar", b.x(), s.value - 1, s.is_int);
    return Mul(b, g,
               ScalarOp(b, "_npi_multiply_scalar", pow, s.value, s.is_int));
  });
  SetNumpyScalarGrad("_npi_rpower_scalar", [](B& b, const E& g, const S& s) {
    // s^x log(s)
    return ScalarOp(b, "_npi_multiply_scalar", Mul(b, g, b.y()),
                    std::log(s.value), false);
  });
  // max(x, s): the gradient to x where x won (ties included) or is NaN.
  for (const char* op : {"_npi_maximum_scalar", "_npi_minimum_scalar"}) {
    SetNumpyScalarGrad(op, [](B& b, const E& g, const S&) {
      return SelectionRoutes(b, b.Op("_npi_equal", {b.y(), b.x()}), g).first;
    });
  }

  for (const char* op : {"_npi_equal", "_npi_not_equal", "_npi_greater",
                         "_npi_greater_equal", "_npi_less", "_npi_less_equal",
                         "_npi_equal_scalar", "_npi_not_equal_scalar",
                         "_npi_greater_scalar", "_npi_greater_equal_scalar",
                         "_npi_less_scalar", "_npi_less_equal_scalar"}) {
    SetZeroGrad(op);
  }
}

[[maybe_unused]] const bool kRegistered = [] {
  using R = BinaryRule;
  RegisterNumpyBinary<AddF, R::kPromote>("_npi_add", "a + b (NumPy dtypes)");
  RegisterNumpyBinary<SubF, R::kPromote>("_npi_subtract",
                                         "a - b (NumPy dtypes)");
  RegisterNumpyBinary<MulF, R::kPromote>("_npi_multiply",
                                         "a * b (NumPy dtypes)");
  RegisterNumpyBinary<DivF, R::kTrueDivide>(
      "_npi_true_divide", "a / b as a float (integers give float32)");
  RegisterNumpyBinary<ModF, R::kPromote>(
      "_npi_mod", "a mod b, the sign of b (NumPy dtypes)");
  RegisterNumpyBinary<PowF, R::kPromote>("_npi_power", "a ^ b (NumPy dtypes)");
  RegisterNumpyBinary<MaxF, R::kPromote>("_npi_maximum",
                                         "max(a, b), NaN wins (NumPy dtypes)");
  RegisterNumpyBinary<MinF, R::kPromote>("_npi_minimum",
                                         "min(a, b), NaN wins (NumPy dtypes)");
  RegisterNumpyBinary<EqF, R::kCompare>("_npi_equal", "a == b as bool")
      .AddAlias("equal");
  RegisterNumpyBinary<NeF, R::kCompare>("_npi_not_equal", "a != b as bool")
      .AddAlias("not_equal");
  RegisterNumpyBinary<GtF, R::kCompare>("_npi_greater", "a > b as bool")
      .AddAlias("greater");
  RegisterNumpyBinary<GeF, R::kCompare>("_npi_greater_equal", "a >= b as bool")
      .AddAlias("greater_equal");
  RegisterNumpyBinary<LtF, R::kCompare>("_npi_less", "a < b as bool")
      .AddAlias("less");
  RegisterNumpyBinary<LeF, R::kCompare>("_npi_less_equal", "a <= b as bool")
      .AddAlias("less_equal");

  RegisterNumpyScalar<AddF, false, R::kPromote>("_npi_add_scalar",
                                                "x + scalar");
  RegisterNumpyScalar<SubF, false, R::kPromote>("_npi_subtract_scalar",
                                                "x - scalar");
  RegisterNumpyScalar<SubF, true, R::kPromote>("_npi_rsubtract_scalar",
                                               "scalar - x");
  RegisterNumpyScalar<MulF, false, R::kPromote>("_npi_multiply_scalar",
                                                "x * scalar");
  RegisterNumpyScalar<DivF, false, R::kTrueDivide>("_npi_true_divide_scalar",
                                                   "x / scalar as a float");
  RegisterNumpyScalar<DivF, true, R::kTrueDivide>("_npi_rtrue_divide_scalar",
                                                  "scalar / x as a float");
  RegisterNumpyScalar<ModF, false, R::kPromote>("_npi_mod_scalar",
                                                "x mod scalar");
  RegisterNumpyScalar<ModF, true, R::kPromote>("_npi_rmod_scalar",
                                               "scalar mod x");
  RegisterNumpyScalar<PowF, false, R::kPromote>("_npi_power_scalar",
                                                "x ^ scalar");
  RegisterNumpyScalar<PowF, true, R::kPromote>("_npi_rpower_scalar",
                                               "scalar ^ x");
  RegisterNumpyScalar<MaxF, false, R::kPromote>("_npi_maximum_scalar",
                                                "max(x, scalar)");
  RegisterNumpyScalar<MinF, false, R::kPromote>("_npi_minimum_scalar",
                                                "min(x, scalar)");
  RegisterNumpyScalar<EqF, false, R::kCompare>("_npi_equal_scalar",
                                               "x == scalar as bool");
  RegisterNumpyScalar<NeF, false, R::kCompare>("_npi_not_equal_scalar",
                                               "x != scalar as bool");
  RegisterNumpyScalar<GtF, false, R::kCompare>("_npi_greater_scalar",
                                               "x > scalar as bool");
  RegisterNumpyScalar<GeF, false, R::kCompare>("_npi_greater_equal_scalar",
                                               "x >= scalar as bool");
  RegisterNumpyScalar<LtF, false, R::kCompare>("_npi_less_scalar",
                                               "x < scalar as bool");
  RegisterNumpyScalar<LeF, false, R::kCompare>("_npi_less_equal_scalar",
                                               "x <= scalar as bool");

  for (const char* f :
       {"exp",     "log",     "log2",    "log10",  "log1p", "expm1",
        "sqrt",    "cbrt",    "sin",     "cos",    "tan",   "arcsin",
        "arccos",  "arctan",  "sinh",    "cosh",   "tanh",  "arcsinh",
        "arccosh", "arctanh", "degrees", "radians"}) {
    RegisterNumpyUnary(absl::StrCat("_npi_", f), f, true);
  }
  const std::pair<const char*, const char*> same_dtype[] = {
      {"_npi_negative", "negative"},
      {"_npi_absolute", "abs"},
      {"_npi_sign", "sign"},
      {"_npi_square", "square"},
      {"_npi_reciprocal", "reciprocal"},
      {"_npi_rint", "rint"},
      {"_npi_ceil", "ceil"},
      {"_npi_floor", "floor"},
      {"_npi_trunc", "trunc"},
      {"_npi_fix", "fix"}};
  for (const auto& [name, legacy] : same_dtype) {
    RegisterNumpyUnary(name, legacy, false);
  }
  RegisterNumpyGradients();
  return true;
}();

}  // namespace
}  // namespace cpu
}  // namespace mx
