// Gradients of the elementwise ops whose inputs share the output's shape
// (unary, elemwise_*, scalar forms). broadcast_* gradients need a
// reduce-to-shape and come with autograd.
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

using UnaryGrad = std::function<NodeEntry(GradBuilder&, const NodeEntry& g)>;

void SetUnaryGrad(const std::string& op, UnaryGrad grad) {
  SetGradient(op, [grad](GradBuilder& b, const std::vector<NodeEntry>& og) {
    return std::vector<NodeEntry>{grad(b, og[0])};
  });
}

void SetBinaryGrad(
    const std::string& op,
    std::function<std::vector<NodeEntry>(GradBuilder&, const NodeEntry&)>
        grad) {
  SetGradient(op, [grad](GradBuilder& b, const std::vector<NodeEntry>& og) {
    return grad(b, og[0]);
  });
}

double ScalarOf(const NodePtr& n) { return n->attrs.get<ScalarParam>().scalar; }

}  // namespace

void RegisterElemwiseGradients() {
  using B = GradBuilder;
  using E = NodeEntry;
  SetUnaryGrad("_copy", [](B&, const E& g) { return g; });
  SetUnaryGrad("negative",
               [](B& b, const E& g) { return b.Op("negative", {g}); });
  SetUnaryGrad(
      "abs", [](B& b, const E& g) { return b.Mul(g, b.Op("sign", {b.x()})); });
  SetUnaryGrad("sign",
               [](B& b, const E& g) { return b.Op("zeros_like", {g}); });
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
  // relu's output is >= 0, so sign(output) is the 0/1 mask.
  SetUnaryGrad(
      "relu", [](B& b, const E& g) { return b.Mul(g, b.Op("sign", {b.y()})); });
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
    E pow = b.Op("_power_scalar", {b.x()}, {{"scalar", absl::StrCat(s - 1)}});
    return b.Mul(g, b.Scale(pow, s));
  });
  SetUnaryGrad("_rpower_scalar", [](B& b, const E& g) {
    return b.Mul(g, b.Scale(b.y(), std::log(ScalarOf(b.n))));
  });
}

}  // namespace cpu
}  // namespace mx
