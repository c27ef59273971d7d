// The trigonometric, hyperbolic, logarithmic and root ops MXNet models use
// (tan ... degrees), and the special functions gamma, gammaln, erfinv,
// digamma and polygamma (digamma's derivatives: the gradients of the
// others), each registered once with its gradient next to it. The
// gradients are graphs of differentiable ops, so second derivatives come
// from the Gradient pass (MXNet's higher-order gradient tests; MXNet's own
// gamma and gammaln stop at the first order).
#include <cmath>
#include <functional>
#include <string>
#include <vector>

#include "Eigen/Core"
#include "absl/strings/str_cat.h"
#include "backends/cpu/elemwise.h"
#include "backends/cpu/grad_util.h"
#include "base/error.h"
#include "unsupported/Eigen/SpecialFunctions"

namespace mx {
namespace cpu {
namespace {

using B = GradBuilder;
using E = NodeEntry;
using UnaryGradFn = std::function<E(B& b, const E& g)>;

constexpr double kPi = 3.14159265358979323846;

// The forward op (floating-point inputs only) and its gradient.
template <typename F>
void Unary(const std::string& name, F f, const std::string& doc,
           UnaryGradFn grad) {
  RegisterUnary(name, UnaryDomain::kFloat, f, doc);
  SetUnaryGrad(name, std::move(grad));
}

E Square(B& b, const E& x) { return b.Op("square", {x}); }
E Div(B& b, const E& a, const E& c) { return b.Op("elemwise_div", {a, c}); }
E PlusScalar(B& b, const E& x, double s) {
  return b.Op("_plus_scalar", {x}, {{"scalar", AttrText(s)}});
}
// s - x.
E RMinusScalar(B& b, const E& x, double s) {
  return b.Op("_rminus_scalar", {x}, {{"scalar", AttrText(s)}});
}
E Rsqrt(B& b, const E& x) { return b.Op("rsqrt", {x}); }

// erf^-1(x) for |x| <= 1 (NaN outside): from Eigen's inverse normal CDF,
// erfinv(x) = ndtri((x + 1) / 2) / sqrt(2), in double. (x + 1) / 2 keeps
// only the absolute precision of 1, so small |x| get one Newton step on
// erf (relative error ~1e-16 after it; 1e-8 before).
double Erfinv(double x) {
  if (!(std::abs(x) <= 1)) return std::nan("");
  double y = Eigen::numext::ndtri((x + 1) / 2) * 0.70710678118654752440;
  if (std::abs(x) < 0.5) {
    constexpr double kTwoOverSqrtPi = 1.12837916709551257390;
    y -= (std::erf(y) - x) / (kTwoOverSqrtPi * std::exp(-y * y));
  }
  return y;
}

struct PolygammaParam {
  int n = 0;
  static void Declare(ParamSchema<PolygammaParam>* s) {
    s->Field("n", &PolygammaParam::n)
        .Required()
        .AtMost(1000)
        .Describe("the derivative's order, 0 to 1000 (0: digamma)");
  }
};

E Polygamma(B& b, const E& x, int n) {
  return b.Op("polygamma", {x}, {{"n", std::to_string(n)}});
}

// psi^(n)(x), Eigen's: +inf (odd n) or NaN (even n) at 0, -1, ...
void RegisterPolygamma() {
  OpRegistry::Get()
      ->Register("polygamma")
      .Describe("the n-th derivative of digamma, psi^(n)(x)")
      .SetParams<PolygammaParam>()
      .SetNumInputs(1)
      .SetInputNames({"data"})
      .SetInferShape(SameShape)
      .SetInferType([](const NodeAttrs& attrs, std::vector<DType>* in,
                       std::vector<DType>* out) {
        // Here, not in the kernel, so the error reaches the call at once.
        const int n = attrs.get<PolygammaParam>().n;
        if (n < 0) {
          throw InvalidArgument(
              absl::StrCat(OpLabel(attrs), ": n=", n, " must be in [0, 1000]"));
        }
        CheckUnaryType(UnaryDomain::kFloat, attrs, in, out);
      })
      .SetInplaceOption(InplaceFirst)
      .SetCompute(
          Context::kCPU,
          [](const OpContext& ctx, const NodeAttrs& attrs,
             const std::vector<TBlob>& in, const std::vector<OpReqType>& req,
             const std::vector<TBlob>& out) {
            const int n = attrs.get<PolygammaParam>().n;
            UnaryKernel(OnFloats([n](auto x) {
              return Eigen::numext::polygamma(static_cast<decltype(x)>(n), x);
            }))(ctx, attrs, in, req, out);
          });
  SetUnaryGrad("polygamma", [](B& b, const E& g) {
    return b.Mul(g,
                 Polygamma(b, b.x(), b.n->attrs.get<PolygammaParam>().n + 1));
  });
}

[[maybe_unused]] const bool kRegistered = [] {
  Unary(
      "tan", [](auto x) { return std::tan(x); }, "tangent",
      // 1 + tan(x)^2.
      [](B& b, const E& g) {
        return b.Mul(g, PlusScalar(b, Square(b, b.y()), 1));
      });
  Unary(
      "sinh", [](auto x) { return std::sinh(x); }, "hyperbolic sine",
      [](B& b, const E& g) { return b.Mul(g, b.Op("cosh", {b.x()})); });
  Unary(
      "cosh", [](auto x) { return std::cosh(x); }, "hyperbolic cosine",
      [](B& b, const E& g) { return b.Mul(g, b.Op("sinh", {b.x()})); });
  Unary(
      "arcsin", [](auto x) { return std::asin(x); }, "inverse sine",
      [](B& b, const E& g) {
        return b.Mul(g, Rsqrt(b, RMinusScalar(b, Square(b, b.x()), 1)));
      });
  Unary(
      "arccos", [](auto x) { return std::acos(x); }, "inverse cosine",
      [](B& b, const E& g) {
        return b.Op("negative",
                    {b.Mul(g, Rsqrt(b, RMinusScalar(b, Square(b, b.x()), 1)))});
      });
  Unary(
      "arctan", [](auto x) { return std::atan(x); }, "inverse tangent",
      [](B& b, const E& g) {
        return Div(b, g, PlusScalar(b, Square(b, b.x()), 1));
      });
  Unary(
      "arcsinh", [](auto x) { return std::asinh(x); },
      "inverse hyperbolic sine",
      [](B& b, const E& g) {
        return b.Mul(g, Rsqrt(b, PlusScalar(b, Square(b, b.x()), 1)));
      });
  Unary(
      "arccosh", [](auto x) { return std::acosh(x); },
      "inverse hyperbolic cosine (x >= 1)",
      [](B& b, const E& g) {
        return b.Mul(g, Rsqrt(b, PlusScalar(b, Square(b, b.x()), -1)));
      });
  Unary(
      "arctanh", [](auto x) { return std::atanh(x); },
      "inverse hyperbolic tangent (|x| < 1)",
      [](B& b, const E& g) {
        return Div(b, g, RMinusScalar(b, Square(b, b.x()), 1));
      });
  Unary(
      "log2", [](auto x) { return std::log2(x); }, "base-2 logarithm",
      [](B& b, const E& g) {
        return Div(b, g, b.Scale(b.x(), std::log(2.0)));
      });
  Unary(
      "log10", [](auto x) { return std::log10(x); }, "base-10 logarithm",
      [](B& b, const E& g) {
        return Div(b, g, b.Scale(b.x(), std::log(10.0)));
      });
  Unary(
      "expm1", [](auto x) { return std::expm1(x); }, "e^x - 1, accurate near 0",
      [](B& b, const E& g) { return b.Mul(g, b.Op("exp", {b.x()})); });
  Unary(
      "log1p", [](auto x) { return std::log1p(x); },
      "log(1 + x), accurate near 0",
      [](B& b, const E& g) { return Div(b, g, PlusScalar(b, b.x(), 1)); });
  Unary(
      "cbrt", [](auto x) { return std::cbrt(x); }, "cube root",
      // 1 / (3 cbrt(x)^2).
      [](B& b, const E& g) { return Div(b, g, b.Scale(Square(b, b.y()), 3)); });
  Unary(
      "rsqrt", [](auto x) { return decltype(x)(1) / std::sqrt(x); },
      "1 / sqrt(x)",
      // -x^(-3/2) / 2 = -rsqrt(x)^3 / 2.
      [](B& b, const E& g) {
        return b.Mul(g, b.Scale(b.Mul(Square(b, b.y()), b.y()), -0.5));
      });
  Unary(
      "rcbrt", [](auto x) { return decltype(x)(1) / std::cbrt(x); },
      "1 / cbrt(x)",
      // -x^(-4/3) / 3 = -rcbrt(x) / (3 x).
      [](B& b, const E& g) {
        return b.Mul(g, b.Scale(Div(b, b.y(), b.x()), -1.0 / 3));
      });
  Unary(
      "radians", [](auto x) { return x * static_cast<decltype(x)>(kPi / 180); },
      "degrees to radians",
      [](B& b, const E& g) { return b.Scale(g, kPi / 180); });
  Unary(
      "degrees", [](auto x) { return x * static_cast<decltype(x)>(180 / kPi); },
      "radians to degrees",
      [](B& b, const E& g) { return b.Scale(g, 180 / kPi); });
  Unary("digamma", OnFloats([](auto x) { return Eigen::numext::digamma(x); }),
        "the digamma function psi(x) = d/dx gammaln(x) (NaN at 0, -1, ...)",
        [](B& b, const E& g) { return b.Mul(g, Polygamma(b, b.x(), 1)); });
  RegisterPolygamma();
  Unary(
      "gamma", [](auto x) { return std::tgamma(x); },
      "the gamma function (factorial extended to the reals)",
      // gamma(x) psi(x).
      [](B& b, const E& g) {
        return b.Mul(g, b.Mul(b.y(), b.Op("digamma", {b.x()})));
      });
  // Eigen's lgamma is lgamma_r where the C library has it: std::lgamma
  // writes the global signgam, a data race between kernel threads.
  Unary("gammaln", OnFloats([](auto x) { return Eigen::numext::lgamma(x); }),
        "log |gamma(x)|",
        [](B& b, const E& g) { return b.Mul(g, b.Op("digamma", {b.x()})); });
  Unary(
      "erfinv",
      [](auto x) {
        return static_cast<decltype(x)>(Erfinv(static_cast<double>(x)));
      },
      "the inverse error function on [-1, 1] (NaN outside)",
      // sqrt(pi) / 2 * exp(erfinv(x)^2).
      [](B& b, const E& g) {
        return b.Mul(g, b.Scale(b.Op("exp", {Square(b, b.y())}),
                                0.88622692545275801365));
      });
  return true;
}();

}  // namespace
}  // namespace cpu
}  // namespace mx
