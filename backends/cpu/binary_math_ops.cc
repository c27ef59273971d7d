// MXNet's mod, hypot and smooth_l1, each with its gradient.
//
// mod follows MXNet (and Python's %): the result takes the divisor's sign,
// and x mod 0 is 0. Floats are computed in double as MXNet does; integers
// exactly (MXNet goes through double, inexact above 2^53). Its gradients are
// MXNet's too: 1 for a, -floor(a / b) for b (at b = 0 as well).
//
// smooth_l1(x, scalar=sigma) is R-CNN's loss: 0.5 (sigma x)^2 where
// |x| < 1 / sigma^2, else |x| - 0.5 / sigma^2.
#include <cmath>
#include <functional>
#include <string>
#include <type_traits>
#include <vector>

#include "backends/common/mxnet_math.h"
#include "backends/cpu/binary_functors.h"
#include "backends/cpu/elemwise.h"
#include "backends/cpu/elemwise_binary.h"
#include "backends/cpu/grad_util.h"

namespace mx {
namespace cpu {
namespace {

struct HypotF {
  template <typename A>
  static A Map(A a, A b) {
    if constexpr (std::is_integral_v<A>) {
      return SaturatingCast<A>(
          std::hypot(static_cast<double>(a), static_cast<double>(b)));
    } else {
      return std::hypot(a, b);
    }
  }
};

// a is x, b is sigma; integers computed in double.
struct SmoothL1F {
  template <typename A>
  static A Map(A a, A b) {
    using C = std::conditional_t<std::is_floating_point_v<A>, A, double>;
    return SaturatingCast<A>(mx_math::SmoothL1Loss<C>(a, b));
  }
};

using B = GradBuilder;
using E = NodeEntry;

double ScalarOf(const B& b) { return b.n->attrs.get<ScalarParam>().scalar; }

// The gradients of a two-input op: `broadcast` sums each back to its input's
// shape (broadcast_* ops), else the shapes are equal (_mod, _hypot).
void SetTwoInputGrad(const std::string& op, bool broadcast,
                     std::function<std::vector<E>(B&, const E&)> grad) {
  SetGradient(op, [broadcast, grad](B& b, const std::vector<E>& og) {
    std::vector<E> g = grad(b, og[0]);
    if (broadcast) {
      for (int i = 0; i < 2; ++i)
        g[i] = b.Op("_reduce_sum_like", {g[i], b.x(i)});
    }
    return g;
  });
}

void RegisterMod() {
  RegisterBinary<ModF>(
      "broadcast_mod", {},
      "a mod b with broadcasting, the sign of b (x mod 0 = 0)");
  RegisterElemwise<ModF>("_mod", {"_Mod"}, "a mod b, equal shapes");
  RegisterScalar<ModF>("_mod_scalar", {"_ModScalar"}, "x mod scalar");
  RegisterScalar<ModF, true>("_rmod_scalar", {"_RModScalar"}, "scalar mod x");
  for (const char* op : {"broadcast_mod", "_mod"}) {
    SetTwoInputGrad(op, op[0] == 'b', [](B& b, const E& g) {
      const E quotient =
          b.Op("floor", {b.Op("broadcast_div", {b.x(0), b.x(1)})});
      return std::vector<E>{
          g, b.Op("negative", {b.Op("broadcast_mul", {g, quotient})})};
    });
  }
  SetUnaryGrad("_mod_scalar", [](B&, const E& g) { return g; });
  SetUnaryGrad("_rmod_scalar", [](B& b, const E& g) {
    const E quotient = b.Op(
        "floor",
        {b.Op("_rdiv_scalar", {b.x()}, {{"scalar", AttrText(ScalarOf(b))}})});
    return b.Op("negative", {b.Mul(g, quotient)});
  });
}

void RegisterHypot() {
  RegisterBinary<HypotF>("broadcast_hypot", {},
                         "sqrt(a^2 + b^2) with broadcasting");
  RegisterElemwise<HypotF>("_hypot", {"_Hypot"},
                           "sqrt(a^2 + b^2), equal shapes");
  RegisterScalar<HypotF>("_hypot_scalar", {"_HypotScalar"},
                         "sqrt(x^2 + scalar^2)");
  // d/da = a / hypot(a, b), d/db = b / hypot(a, b).
  for (const char* op : {"broadcast_hypot", "_hypot"}) {
    SetTwoInputGrad(op, op[0] == 'b', [](B& b, const E& g) {
      const E g_over_y = b.Op("elemwise_div", {g, b.y()});
      return std::vector<E>{b.Op("broadcast_mul", {g_over_y, b.x(0)}),
                            b.Op("broadcast_mul", {g_over_y, b.x(1)})};
    });
  }
  SetUnaryGrad("_hypot_scalar", [](B& b, const E& g) {
    return b.Mul(b.Op("elemwise_div", {g, b.y()}), b.x());
  });
}

void RegisterSmoothL1() {
  RegisterScalar<SmoothL1F>(
      "smooth_l1", {"_npx_smooth_l1"},
      "0.5 (sigma x)^2 where |x| < 1/sigma^2, else |x| - 0.5/sigma^2 "
      "(sigma: the scalar)");
  // sigma^2 x inside, sign(x) outside (equal at the boundary).
  SetUnaryGrad("smooth_l1", [](B& b, const E& g) {
    const double sigma2 = ScalarOf(b) * ScalarOf(b);
    const E inside = b.Op("_npi_less_scalar", {b.Op("abs", {b.x()})},
                          {{"scalar", AttrText(1 / sigma2)}});
    const E slope =
        b.Op("where", {inside, b.Scale(b.x(), sigma2), b.Op("sign", {b.x()})});
    return b.Mul(g, slope);
  });
}

[[maybe_unused]] const bool kRegistered = [] {
  RegisterMod();
  RegisterHypot();
  RegisterSmoothL1();
  return true;
}();

}  // namespace
}  // namespace cpu
}  // namespace mx
