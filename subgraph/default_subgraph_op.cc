// _default_subgraph_op: runs a nested graph as one op, forward and backward.
//
// Shapes and dtypes are inferred through the subgraph; the kernel runs it
// with SubgraphInfo::Run, on any device whose kernels the inner ops have. The
// gradient is the Gradient pass applied to the subgraph, wrapped in another
// _default_subgraph_op whose inputs are the forward inputs it reads, the
// forward outputs it reads (instead of recomputing them) and the output
// gradients.
#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "graph/pass.h"
#include "subgraph/subgraph_exec.h"
#include "subgraph/subgraph_property.h"

namespace mx {
namespace {

using subgraph_internal::GetSubgraphInfo;
using subgraph_internal::SubgraphInfo;

std::vector<NodeEntry> SubgraphGradient(const NodePtr& n,
                                        const std::vector<NodeEntry>& ograds) {
  std::shared_ptr<const SubgraphInfo> info = GetSubgraphInfo(n->attrs);
  const Symbol& fwd = info->symbol();
  std::vector<NodeEntry> heads, xs;
  for (size_t i = 0; i < fwd.outputs.size(); ++i) {
    heads.push_back(
        NodeEntry{Node::Variable(absl::StrCat("__out_grad", i)), 0, 0});
  }
  const std::vector<int>& mutated = info->mutate_inputs();
  std::vector<int> x_of_input(info->inputs().size(), -1);
  for (size_t j = 0; j < info->inputs().size(); ++j) {
    if (std::find(mutated.begin(), mutated.end(), j) != mutated.end()) {
      continue;  // Auxiliary states get no gradient.
    }
    x_of_input[j] = static_cast<int>(xs.size());
    xs.push_back(NodeEntry{info->inputs()[j], 0, 0});
  }
  Graph g(fwd);
  g.SetAttr("grad_ys", fwd.outputs);
  g.SetAttr("grad_ys_out_grad", heads);
  g.SetAttr("grad_xs", xs);
  const Graph grads = ApplyPass(std::move(g), "Gradient");

  // Forward outputs the backward graph reads become inputs fed from `n`.
  absl::flat_hash_map<EntryKey, NodeEntry> fwd_out_vars;
  absl::flat_hash_map<const Node*, int> fwd_out_index;
  for (size_t i = 0; i < fwd.outputs.size(); ++i) {
    const NodeEntry& e = fwd.outputs[i];
    if (fwd_out_vars.contains({e.node.get(), e.index})) continue;
    NodePtr v = Node::Variable(absl::StrCat("__fwd_out", i));
    fwd_out_vars[{e.node.get(), e.index}] = NodeEntry{v, 0, 0};
    fwd_out_index[v.get()] = static_cast<int>(i);
  }
  absl::flat_hash_map<const Node*, bool> in_forward;
  DFSVisit(fwd.outputs, [&](const NodePtr& f) { in_forward[f.get()] = true; });
  absl::flat_hash_map<const Node*, NodePtr> copies;
  auto remap = [&](const NodeEntry& e) -> NodeEntry {
    auto v = fwd_out_vars.find({e.node.get(), e.index});
    if (v != fwd_out_vars.end() && !e.node->is_variable()) return v->second;
    auto c = copies.find(e.node.get());
    return c == copies.end() ? e : NodeEntry{c->second, e.index, e.version};
  };
  DFSVisit(grads.outputs, [&](const NodePtr& b) {
    if (in_forward.contains(b.get()) || b->is_variable()) return;
    auto copy = std::make_shared<Node>(*b);
    for (NodeEntry& e : copy->inputs) e = remap(e);
    copies[b.get()] = copy;
  });
  Symbol bwd;
  for (const NodeEntry& e : grads.outputs) bwd.outputs.push_back(remap(e));

  NodePtr node =
      MakeSubgraphOpNode("_default_subgraph_op", bwd, n->name() + "_backward");
  absl::flat_hash_map<const Node*, int> head_index, input_index;
  for (size_t i = 0; i < heads.size(); ++i) {
    head_index[heads[i].node.get()] = static_cast<int>(i);
  }
  for (size_t j = 0; j < info->inputs().size(); ++j) {
    input_index[info->inputs()[j].get()] = static_cast<int>(j);
  }
  for (const NodePtr& v : GetSubgraphInfo(node->attrs)->inputs()) {
    if (auto h = head_index.find(v.get()); h != head_index.end()) {
      node->inputs.push_back(ograds[h->second]);
    } else if (auto f = fwd_out_index.find(v.get()); f != fwd_out_index.end()) {
      node->inputs.push_back(NodeEntry{n, static_cast<uint32_t>(f->second), 0});
    } else if (auto x = input_index.find(v.get()); x != input_index.end()) {
      node->inputs.push_back(n->inputs[x->second]);
    } else {
      throw InvalidArgument(absl::StrCat("_default_subgraph_op \"", n->name(),
                                         "\": backward graph reads unknown "
                                         "variable \"",
                                         v->name(), "\""));
    }
  }
  std::vector<NodeEntry> in_grads(n->inputs.size());
  for (size_t j = 0; j < in_grads.size(); ++j) {
    if (x_of_input[j] >= 0) {
      in_grads[j] = NodeEntry{node, static_cast<uint32_t>(x_of_input[j]), 0};
    }
  }
  return in_grads;
}

MX_REGISTER_OP(_default_subgraph_op)
    .Describe(
        "Runs the subgraph in attrs.subgraphs[0] as one op (created by "
        "PartitionGraph with the default backend).")
    .SetNumInputs([](const NodeAttrs& attrs) {
      return static_cast<int>(GetSubgraphInfo(attrs)->inputs().size());
    })
    .SetNumOutputs([](const NodeAttrs& attrs) {
      return static_cast<int>(GetSubgraphInfo(attrs)->num_outputs());
    })
    .SetInputNames([](const NodeAttrs& attrs) {
      std::vector<std::string> names;
      for (const NodePtr& v : GetSubgraphInfo(attrs)->inputs()) {
        names.push_back(v->name());
      }
      return names;
    })
    .SetInferShape([](const NodeAttrs& attrs, std::vector<TShape>* in,
                      std::vector<TShape>* out) {
      GetSubgraphInfo(attrs)->InferShape(attrs.name, in, out);
    })
    .SetInferType([](const NodeAttrs& attrs, std::vector<DType>* in,
                     std::vector<DType>* out) {
      GetSubgraphInfo(attrs)->InferType(attrs.name, in, out);
    })
    .SetMutateInputs([](const NodeAttrs& attrs) {
      return GetSubgraphInfo(attrs)->mutate_inputs();
    })
    .SetResourceRequest([](const NodeAttrs& attrs) {
      return GetSubgraphInfo(attrs)->resources();
    })
    // On whatever device the op runs: the inner ops' kernels for it.
    .SetComputeOnEveryDevice([](const OpContext& ctx, const NodeAttrs& attrs,
                                const std::vector<TBlob>& in,
                                const std::vector<OpReqType>& req,
                                const std::vector<TBlob>& out) {
      GetSubgraphInfo(attrs)->Run(ctx, in, req, out);
    })
    .SetAttr<FGradient>("FGradient", SubgraphGradient)
    .SetAttr<FAttachSubgraphs>("FAttachSubgraphs",
                               subgraph_internal::AttachSubgraphInfo);

}  // namespace
}  // namespace mx
