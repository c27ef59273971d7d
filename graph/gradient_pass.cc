// Gradient: builds the backward graph by reverse-mode differentiation.
//
// Needs graph attributes
//   "grad_ys"        std::vector<NodeEntry>: outputs to differentiate
//   "grad_ys_out_grad" std::vector<NodeEntry>: their head gradients
//   "grad_xs"        std::vector<NodeEntry>: what to differentiate against
// and replaces the graph's outputs with one gradient per x. Each op's
// "FGradient" attribute gives its input gradients from its output
// gradients; several gradients reaching one entry are summed (add_n). An x
// no gradient reaches gets zeros_like(x). Only nodes that depend on some x
// are differentiated, so ops without a gradient (optimizer updates,
// dynamic-shape ops, ...) are fine on paths that no x feeds; on a path from
// an x they raise NotImplemented naming the op.
#include <algorithm>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "graph/pass.h"

namespace mx {
namespace {

Graph Gradient(Graph g) {
  const auto& ys = g.GetAttr<std::vector<NodeEntry>>("grad_ys");
  const auto& head_grads =
      g.GetAttr<std::vector<NodeEntry>>("grad_ys_out_grad");
  const auto& xs = g.GetAttr<std::vector<NodeEntry>>("grad_xs");
  if (ys.size() != head_grads.size()) {
    throw InvalidArgument(absl::StrCat("Gradient: ", ys.size(), " outputs but ",
                                       head_grads.size(), " head gradients"));
  }
  // Contributions to each entry's gradient.
  absl::flat_hash_map<EntryKey, std::vector<NodeEntry>> grads;
  for (size_t i = 0; i < ys.size(); ++i) {
    grads[{ys[i].node.get(), ys[i].index}].push_back(head_grads[i]);
  }
  std::vector<NodePtr> order;
  DFSVisit(ys, [&](const NodePtr& n) { order.push_back(n); });
  // Nodes an x feeds (through their inputs), and the xs themselves.
  absl::flat_hash_set<const Node*> fed, reached;
  for (const NodeEntry& x : xs) reached.insert(x.node.get());
  for (const NodePtr& n : order) {
    for (const NodeEntry& in : n->inputs) {
      if (reached.contains(in.node.get())) {
        fed.insert(n.get());
        reached.insert(n.get());
        break;
      }
    }
  }

  auto summed = [&](const Node* node, uint32_t index) -> NodeEntry {
    auto it = grads.find(EntryKey{node, index});
    if (it == grads.end() || it->second.empty()) return NodeEntry{};
    std::vector<NodeEntry>& parts = it->second;
    // add_n takes at most kMaxOpArity inputs: sum larger sets as a tree.
    for (int level = 0; parts.size() > 1; ++level) {
      std::vector<NodeEntry> sums;
      for (size_t b = 0; b < parts.size(); b += kMaxOpArity) {
        const size_t e = std::min(parts.size(), b + kMaxOpArity);
        if (e - b == 1) {
          sums.push_back(parts[b]);
          continue;
        }
        std::string name = absl::StrCat(node->name(), "_grad_sum", index);
        if (parts.size() > kMaxOpArity || level > 0) {
          absl::StrAppend(&name, "_", level, "_", b / kMaxOpArity);
        }
        sums.push_back(MakeNode("add_n", {parts.begin() + b, parts.begin() + e},
                                {{"num_args", std::to_string(e - b)}}, name));
      }
      parts = std::move(sums);
    }
    return parts[0];
  };

  for (auto it = order.rbegin(); it != order.rend(); ++it) {
    const NodePtr& node = *it;
    if (!fed.contains(node.get())) continue;
    std::vector<NodeEntry> out_grads;
    bool any = false;
    for (uint32_t i = 0; i < node->num_outputs(); ++i) {
      out_grads.push_back(summed(node.get(), i));
      any |= out_grads.back().node != nullptr;
    }
    if (!any) continue;  // No gradient flows back through it.
    // Outputs without a gradient of their own get zeros.
    for (uint32_t i = 0; i < out_grads.size(); ++i) {
      if (out_grads[i].node == nullptr) {
        out_grads[i] = MakeNode("zeros_like", {NodeEntry{node, i, 0}}, {},
                                absl::StrCat(node->name(), "_zero_grad", i));
      }
    }
    const FGradient* fgrad = node->op()->GetAttr<FGradient>("FGradient");
    if (fgrad == nullptr) {
      throw NotImplemented(absl::StrCat("Gradient: op \"", node->op()->name(),
                                        "\" (node \"", node->name(),
                                        "\") has no gradient"));
    }
    std::vector<NodeEntry> in_grads = (*fgrad)(node, out_grads);
    if (in_grads.size() != node->inputs.size()) {
      throw InvalidArgument(absl::StrCat(
          "Gradient: FGradient of op \"", node->op()->name(), "\" returned ",
          in_grads.size(), " gradients for ", node->inputs.size(), " inputs"));
    }
    for (size_t i = 0; i < in_grads.size(); ++i) {
      if (in_grads[i].node == nullptr) continue;
      const NodeEntry& in = node->inputs[i];
      grads[{in.node.get(), in.index}].push_back(in_grads[i]);
    }
  }
  Graph out;
  for (const NodeEntry& x : xs) {
    NodeEntry grad = summed(x.node.get(), x.index);
    if (grad.node == nullptr) {
      grad = MakeNode("zeros_like", {x}, {},
                      absl::StrCat(x.node->name(), "_zero_grad"));
    }
    out.outputs.push_back(grad);
  }
  return out;
}

MX_REGISTER_PASS((PassInfo{
    "Gradient",
    "Builds gradients of grad_ys with respect to grad_xs.",
    {"grad_ys", "grad_ys_out_grad", "grad_xs"},
    {},
    Gradient}));

}  // namespace
}  // namespace mx
