// Gradients of the elementwise ops: unary, elemwise_*, broadcast_* (each
// input's gradient summed back to its shape with _reduce_sum_like), scalar
// forms, clip and the comparisons (zero almost everywhere: zeros_like).
//
// Selections (maximum, clip, ...) route the gradient with `where`, which
// keeps the gradient's dtype without knowing it and is differentiable again.
// Ties: maximum(a, b) and _maximum_scalar give the gradient to a where
// a == b (likewise for minimum); clip passes it on [a_min, a_max] inclusive.
// NaN: the forward propagates a NaN input (as NumPy), and the gradient goes
// to the input the NaN came from (a when both are NaN).
#include <cmath>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "backends/cpu/elemwise.h"
#include "backends/cpu/grad_util.h"
#include "graph/node.h"

namespace mx {
namespace cpu {
namespace {

void SetBinaryGrad(
    const std::string& op,
    std::function<std::vector<NodeEntry>(GradBuilder&, const NodeEntry&)>
        grad) {
  SetGradient(op, [grad](GradBuilder& b, const std::vector<NodeEntry>& og) {
    return grad(b, og[0]);
  });
}

double ScalarOf(const NodePtr& n) { return n->attrs.get<ScalarParam>().scalar; }

// g where `cond`, zero elsewhere (shape: cond and g broadcast together).
NodeEntry Where(GradBuilder& b, const NodeEntry& cond, const NodeEntry& g) {
  return b.Op("where", {cond, g, b.Op("zeros_like", {g})});
}

// `g` summed back to forward input i's shape.
NodeEntry ToInput(GradBuilder& b, const NodeEntry& g, int i) {
  return b.Op("_reduce_sum_like", {g, b.x(i)});
}

// Comparison of forward input 0 with the node's scalar.
NodeEntry CompareScalar(GradBuilder& b, const char* op) {
  return b.Op(op, {b.x()}, {{"scalar", b.n->attrs.dict.at("scalar")}});
}

}  // namespace

void RegisterElemwiseGradients() {
  using B = GradBuilder;
  using E = NodeEntry;
  SetUnaryGrad("_copy", [](B&, const E& g) { return g; });
  SetUnaryGrad("negative",
               [](B& b, const E& g) { return b.Op("negative", {g}); });
  SetUnaryGrad(
      "abs", [](B& b, const E& g) { return b.Mul(g, b.Op("sign", {b.x()})); });
  SetZeroGrad("sign");
  SetUnaryGrad("exp", [](B& b, const E& g) { return b.Mul(g, b.y()); });
  SetUnaryGrad("log", [](B& b, const E& g) {
    return b.Op("elemwise_div", {g, b.x()});
  });
  SetUnaryGrad("sqrt", [](B& b, const E& g) {
    return b.Op("elemwise_div", {g, b.Scale(b.y(), 2)});
  });
  SetUnaryGrad("square",
               [](B& b, const E& g) { return b.Mul(g, b.Scale(b.x(), 2)); });
  SetUnaryGrad("reciprocal", [](B& b, const E& g) {
    return b.Op("negative", {b.Mul(g, b.Op("square", {b.y()}))});
  });
  SetUnaryGrad("sin",
               [](B& b, const E& g) { return b.Mul(g, b.Op("cos", {b.x()})); });
  SetUnaryGrad("cos", [](B& b, const E& g) {
    return b.Op("negative", {b.Mul(g, b.Op("sin", {b.x()}))});
  });
  SetUnaryGrad("tanh", [](B& b, const E& g) {
    E one_minus =
        b.Op("_rminus_scalar", {b.Op("square", {b.y()})}, {{"scalar", "1"}});
    return b.Mul(g, one_minus);
  });
  SetUnaryGrad("sigmoid", [](B& b, const E& g) {
    E one_minus = b.Op("_rminus_scalar", {b.y()}, {{"scalar", "1"}});
    return b.Mul(g, b.Mul(b.y(), one_minus));
  });
  // One pass, ograd * sign(output), instead of sign then multiply.
  SetUnaryGrad("relu", [](B& b, const E& g) {
    return b.Op("_backward_relu", {g, b.y()});
  });
  // Linear in ograd; the mask's own gradient is zero.
  SetBinaryGrad("_backward_relu", [](B& b, const E& g) {
    return std::vector<E>{b.Op("_backward_relu", {g, b.x(1)}),
                          b.Op("zeros_like", {b.x(1)})};
  });
  SetUnaryGrad("erf", [](B& b, const E& g) {
    E gauss = b.Op("exp", {b.Op("negative", {b.Op("square", {b.x()})})});
    return b.Mul(g, b.Scale(gauss, 1.1283791670955126));  // 2/sqrt(pi)
  });

  SetBinaryGrad("elemwise_add", [](B&, const E& g) {
    return std::vector<E>{g, g};
  });
  SetBinaryGrad("elemwise_sub", [](B& b, const E& g) {
    return std::vector<E>{g, b.Op("negative", {g})};
  });
  SetBinaryGrad("elemwise_mul", [](B& b, const E& g) {
    return std::vector<E>{b.Mul(g, b.x(1)), b.Mul(g, b.x(0))};
  });
  SetBinaryGrad("elemwise_div", [](B& b, const E& g) {
    E ga = b.Op("elemwise_div", {g, b.x(1)});
    // d(a/b)/db = -(a/b)/b
    E gb = b.Op("negative", {b.Op("elemwise_div", {b.Mul(g, b.y()), b.x(1)})});
    return std::vector<E>{ga, gb};
  });

  SetUnaryGrad("_plus_scalar", [](B&, const E& g) { return g; });
  SetUnaryGrad("_minus_scalar", [](B&, const E& g) { return g; });
  SetUnaryGrad("_rminus_scalar",
               [](B& b, const E& g) { return b.Op("negative", {g}); });
  SetUnaryGrad("_mul_scalar",
               [](B& b, const E& g) { return b.Scale(g, ScalarOf(b.n)); });
  SetUnaryGrad("_div_scalar", [](B& b, const E& g) {
    return b.Scale(g, 1.0 / ScalarOf(b.n));
  });
  SetUnaryGrad("_rdiv_scalar", [](B& b, const E& g) {
    // d(s/x)/dx = -(s/x)/x
    return b.Op("negative", {b.Op("elemwise_div", {b.Mul(g, b.y()), b.x()})});
  });
  SetUnaryGrad("_power_scalar", [](B& b, const E& g) {
    const double s = ScalarOf(b.n);
    E pow = b.Op("_power_scalar", {b.x()}, {{"scalar", AttrText(s - 1)}});
    return b.Mul(g, b.Scale(pow, s));
  });
  SetUnaryGrad("_rpower_scalar", [](B& b, const E& g) {
    return b.Mul(g, b.Scale(b.y(), std::log(ScalarOf(b.n))));
  });
  SetUnaryGrad("_maximum_scalar", [](B& b, const E& g) {
    return SelectionRoutes(b, CompareScalar(b, "_npi_greater_equal_scalar"), g)
        .first;
  });
  SetUnaryGrad("_minimum_scalar", [](B& b, const E& g) {
    return SelectionRoutes(b, CompareScalar(b, "_npi_less_equal_scalar"), g)
        .first;
  });
  SetUnaryGrad("clip", [](B& b, const E& g) {
    const AttrDict& d = b.n->attrs.dict;
    E lo =
        b.Op("_npi_greater_equal_scalar", {b.x()}, {{"scalar", d.at("a_min")}});
    E hi = b.Op("_npi_less_equal_scalar", {b.x()}, {{"scalar", d.at("a_max")}});
    return Where(b, lo, Where(b, hi, g));
  });

  SetBinaryGrad("broadcast_add", [](B& b, const E& g) {
    return std::vector<E>{ToInput(b, g, 0), ToInput(b, g, 1)};
  });
  SetBinaryGrad("broadcast_sub", [](B& b, const E& g) {
    return std::vector<E>{ToInput(b, g, 0),
                          ToInput(b, b.Op("negative", {g}), 1)};
  });
  SetBinaryGrad("broadcast_mul", [](B& b, const E& g) {
    return std::vector<E>{ToInput(b, b.Op("broadcast_mul", {g, b.x(1)}), 0),
                          ToInput(b, b.Op("broadcast_mul", {g, b.x(0)}), 1)};
  });
  SetBinaryGrad("broadcast_div", [](B& b, const E& g) {
    E ga = b.Op("broadcast_div", {g, b.x(1)});
    // d(a/b)/db = -(a/b)/b
    E gb = b.Op("negative", {b.Op("broadcast_div", {b.Mul(g, b.y()), b.x(1)})});
    return std::vector<E>{ToInput(b, ga, 0), ToInput(b, gb, 1)};
  });
  SetBinaryGrad("broadcast_power", [](B& b, const E& g) {
    // d(a^b)/da = b * a^(b-1) (finite at a = 0); d(a^b)/db = a^b * log(a).
    E pow = b.Op("broadcast_power",
                 {b.x(0), b.Op("_minus_scalar", {b.x(1)}, {{"scalar", "1"}})});
    E ga = b.Op("broadcast_mul", {g, b.Op("broadcast_mul", {b.x(1), pow})});
    E gb = b.Op("broadcast_mul", {b.Mul(g, b.y()), b.Op("log", {b.x(0)})});
    return std::vector<E>{ToInput(b, ga, 0), ToInput(b, gb, 1)};
  });
  SetBinaryGrad("broadcast_maximum", [](B& b, const E& g) {
    const Routes r =
        SelectionRoutes(b, b.Op("_npi_greater_equal", {b.x(0), b.x(1)}), g);
    return std::vector<E>{ToInput(b, r.first, 0), ToInput(b, r.second, 1)};
  });
  SetBinaryGrad("broadcast_minimum", [](B& b, const E& g) {
    const Routes r =
        SelectionRoutes(b, b.Op("_npi_less_equal", {b.x(0), b.x(1)}), g);
    return std::vector<E>{ToInput(b, r.first, 0), ToInput(b, r.second, 1)};
  });

  for (const char* op :
       {"broadcast_equal", "broadcast_not_equal", "broadcast_greater",
        "broadcast_greater_equal", "broadcast_lesser", "broadcast_lesser_equal",
        "_equal_scalar", "_not_equal_scalar", "_greater_scalar",
        "_greater_equal_scalar", "_lesser_scalar", "_lesser_equal_scalar"}) {
    SetZeroGrad(op);
  }
}

}  // namespace cpu
}  // namespace mx
