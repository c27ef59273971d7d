// Helpers for writing op gradients (FGradient) as graphs of forward ops.
//
//   SetGradient("sin", [](GradBuilder& b, const std::vector<NodeEntry>& g) {
//     return std::vector<NodeEntry>{b.Mul(g[0], b.Op("cos", {b.x()}))};
//   });
#ifndef MXCORE_BACKENDS_CPU_GRAD_UTIL_H_
#define MXCORE_BACKENDS_CPU_GRAD_UTIL_H_

#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "graph/node.h"

namespace mx {
namespace cpu {

// Builds gradient nodes for forward node `n`, named "<n>_backward<k>".
struct GradBuilder {
  const NodePtr& n;
  int count = 0;

  NodeEntry Op(const std::string& op, std::vector<NodeEntry> in,
               AttrDict attrs = {}) {
    return MakeNode(op, std::move(in), std::move(attrs),
                    n->name() + "_backward" + std::to_string(count++));
  }
  NodeEntry Mul(NodeEntry a, NodeEntry b) { return Op("elemwise_mul", {a, b}); }
  NodeEntry Scale(NodeEntry a, double s) {
    return Op("_mul_scalar", {a}, {{"scalar", AttrText(s)}});
  }
  // Input i and output i of the forward node.
  NodeEntry x(int i = 0) const { return n->inputs[i]; }
  NodeEntry y(int i = 0) const {
    return NodeEntry{n, static_cast<uint32_t>(i), 0};
  }
};

// Outputs 0..n-1 of the node behind `e`: the input gradients when one
// backward node computes them all.
inline std::vector<NodeEntry> OutputsOf(const NodeEntry& e, size_t n) {
  std::vector<NodeEntry> outputs;
  for (uint32_t i = 0; i < n; ++i) outputs.push_back(NodeEntry{e.node, i, 0});
  return outputs;
}

using GradFn = std::function<std::vector<NodeEntry>(
    GradBuilder& b, const std::vector<NodeEntry>& out_grads)>;

// Registers `grad` as op `op`'s FGradient.
inline void SetGradient(const std::string& op, GradFn grad) {
  OpRegistry::Get()->Mutable(op).SetAttr<FGradient>(
      "FGradient", [grad](const NodePtr& n, const std::vector<NodeEntry>& og) {
        GradBuilder b{n};
        return grad(b, og);
      });
}

// Registers the gradient of a one-input op as grad(b, out_grad).
inline void SetUnaryGrad(
    const std::string& op,
    std::function<NodeEntry(GradBuilder& b, const NodeEntry& g)> grad) {
  SetGradient(op, [grad](GradBuilder& b, const std::vector<NodeEntry>& og) {
    return std::vector<NodeEntry>{grad(b, og[0])};
  });
}

// `grads` followed by zeros_like of every input from `first` on: the
// gradients of inputs that lend only shapes, indices or labels.
inline std::vector<NodeEntry> WithZeroGradsFrom(GradBuilder& b,
                                                std::vector<NodeEntry> grads,
                                                size_t first) {
  for (size_t i = first; i < b.n->inputs.size(); ++i) {
    grads.push_back(b.Op("zeros_like", {b.x(static_cast<int>(i))}));
  }
  return grads;
}

// Registers a zero gradient (zeros_like of each input) for an op that is
// constant almost everywhere: comparisons, rounding, logical ops.
inline void SetZeroGrad(const std::string& op) {
  SetGradient(op, [](GradBuilder& b, const std::vector<NodeEntry>&) {
    return WithZeroGradsFrom(b, {}, 0);
  });
}

// The gradient routes of a selection (maximum, minimum): g where `wins` or
// forward input 0 is NaN (the input the output came from), and the rest.
struct Routes {
  NodeEntry first, second;
};
inline Routes SelectionRoutes(GradBuilder& b, const NodeEntry& wins,
                              const NodeEntry& g) {
  const NodeEntry zeros = b.Op("zeros_like", {g});
  const NodeEntry nan = b.Op("_npi_not_equal", {b.x(0), b.x(0)});  // x != x
  return {b.Op("where", {wins, g, b.Op("where", {nan, g, zeros})}),
          b.Op("where", {wins, zeros, b.Op("where", {nan, zeros, g})})};
}

}  // namespace cpu
}  // namespace mx

#endif  // MXCORE_BACKENDS_CPU_GRAD_UTIL_H_
