// Rewriting a graph around found subgraphs. The input graph is not
// modified: op nodes are copied, variables shared.
//
// Per subgraph: input entries (produced outside, read inside) are cut into
// new variables, one per distinct entry; output entries (read outside, or
// graph outputs) are listed once each, in topological order. The property
// builds the replacing node from the subgraph symbol; its inputs follow
// that symbol's ListInputs() order.
#include <algorithm>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "subgraph/partition_internal.h"

namespace mx {
namespace partition_internal {
namespace {

std::string EntryVarName(const Node& n, uint32_t index) {
  if (n.is_variable()) return n.name();
  if (n.num_outputs() == 1) return n.name() + "_output";
  return absl::StrCat(n.name(), "_output", index);
}

}  // namespace

std::vector<NodeEntry> RewriteGraph(const std::vector<NodeEntry>& outputs,
                                    const IndexedGraph& idx, const Found& found,
                                    const SubgraphProperty& property,
                                    int* next_id,
                                    std::vector<std::string>* node_names) {
  const uint32_t n = static_cast<uint32_t>(idx.num_nodes());
  std::vector<NodePtr> orig;
  orig.reserve(n);
  DFSVisit(outputs, [&](const NodePtr& v) { orig.push_back(v); });
  // A group whose node the property declines goes back to being unclaimed.
  std::vector<int> label = found.label;
  const size_t num_groups = found.groups.size();

  // Output entries of each group, by entry id (= topological order).
  std::vector<int> out_index(idx.num_node_entries(), -1);
  // (entry id, node id) pairs.
  std::vector<std::vector<std::pair<uint32_t, uint32_t>>> group_outputs(
      num_groups);
  auto mark_output = [&](const IndexedGraph::EntryRef& e) {
    const uint32_t eid = idx.entry_id(e);
    if (out_index[eid] == -1) {
      out_index[eid] = -2;
      group_outputs[label[e.node_id]].emplace_back(eid, e.node_id);
    }
  };
  for (uint32_t v = 0; v < n; ++v) {
    for (const auto& e : idx[v].inputs) {
      if (label[e.node_id] >= 0 && label[e.node_id] != label[v]) {
        mark_output(e);
      }
    }
  }
  for (const auto& e : idx.outputs()) {
    if (label[e.node_id] >= 0) mark_output(e);
  }
  for (auto& outs : group_outputs) {
    std::sort(outs.begin(), outs.end());
    for (size_t i = 0; i < outs.size(); ++i) {
      out_index[outs[i].first] = static_cast<int>(i);
    }
  }

  // Subgraph symbols and the nodes replacing them.
  std::vector<NodePtr> sg_node(num_groups);
  std::vector<Symbol> syms(num_groups);
  std::vector<NodePtr> copy(n);
  std::vector<std::vector<uint32_t>> sg_control(num_groups);
  const std::vector<std::vector<InputItem>> items =
      OrderSubgraphInputs(idx, found);
  for (size_t g = 0; g < num_groups; ++g) {
    // Cut variables, numbered in the order the node takes them.
    absl::flat_hash_map<uint32_t, NodeEntry> vars;  // By entry id.
    absl::flat_hash_set<std::string> names;
    std::vector<NodePtr> extras;
    for (size_t k = 0; k < items[g].size(); ++k) {
      const InputItem& item = items[g][k];
      const std::string base = EntryVarName(*orig[item.node_id], item.index);
      std::string name = base;
      for (int i = 1; !names.insert(name).second; ++i) {
        name = absl::StrCat(base, i);
      }
      NodePtr var = Node::Variable(name);
      var->attrs.dict[kSubgraphInputKey] = std::to_string(k);
      if (item.extra) {
        extras.push_back(var);
      } else {
        vars.emplace(idx.entry_id(item.node_id, item.index),
                     NodeEntry{var, 0, 0});
      }
    }
    for (uint32_t v : found.groups[g]) {
      auto c = std::make_shared<Node>(*orig[v]);
      c->control_deps.clear();
      for (size_t i = 0; i < c->inputs.size(); ++i) {
        const auto& e = idx[v].inputs[i];
        if (label[e.node_id] == static_cast<int>(g)) {
          c->inputs[i] = NodeEntry{copy[e.node_id], e.index, e.version};
        } else {
          c->inputs[i] = vars.at(idx.entry_id(e));
        }
      }
      for (uint32_t d : idx[v].control_deps) {
        if (label[d] == static_cast<int>(g)) {
          c->control_deps.push_back(copy[d]);
        } else {
          sg_control[g].push_back(d);
        }
      }
      copy[v] = std::move(c);
    }
    // Extra inputs are only ordering: reachable, never read.
    NodePtr& anchor = copy[found.groups[g][0]];
    anchor->control_deps.insert(anchor->control_deps.end(), extras.begin(),
                                extras.end());
    Symbol& sym = syms[g];
    for (const auto& [eid, v] : group_outputs[g]) {
      sym.outputs.push_back(NodeEntry{copy[v], eid - idx.entry_id(v, 0), 0});
    }
    const int id = (*next_id)++;
    NodePtr node = property.CreateSubgraphNode(sym, id);
    if (node == nullptr) {
      // Rejected (MXNet since #15886): its nodes stay as they are. Undoing
      // a contraction of a convex group cannot close a cycle.
      for (uint32_t v : found.groups[g]) label[v] = -1;
      node_names->emplace_back();
      continue;
    }
    if (node->is_variable() || node->num_outputs() != sym.outputs.size()) {
      throw InvalidArgument(absl::StrCat(
          "subgraph property \"", property.name(),
          "\": CreateSubgraphNode must return null or an op node with ",
          sym.outputs.size(), " outputs"));
    }
    node_names->push_back(node->name());
    sg_node[g] = std::move(node);
  }

  // The outer graph: copies of unclaimed op nodes, shared variables.
  auto map_node = [&](uint32_t v) -> NodePtr {
    if (label[v] >= 0) return sg_node[label[v]];
    return orig[v]->is_variable() ? orig[v] : copy[v];
  };
  auto map_entry = [&](const IndexedGraph::EntryRef& e) -> NodeEntry {
    if (label[e.node_id] >= 0) {
      return NodeEntry{sg_node[label[e.node_id]],
                       static_cast<uint32_t>(out_index[idx.entry_id(e)]), 0};
    }
    return NodeEntry{map_node(e.node_id), e.index, e.version};
  };
  for (uint32_t v = 0; v < n; ++v) {
    if (label[v] < 0 && !orig[v]->is_variable()) {
      copy[v] = std::make_shared<Node>(*orig[v]);
    }
  }
  for (uint32_t v = 0; v < n; ++v) {
    if (label[v] >= 0 || orig[v]->is_variable()) continue;
    Node& c = *copy[v];
    for (size_t i = 0; i < c.inputs.size(); ++i) {
      c.inputs[i] = map_entry(idx[v].inputs[i]);
    }
    c.control_deps.clear();
    for (uint32_t d : idx[v].control_deps) {
      NodePtr dep = map_node(d);
      if (std::find(c.control_deps.begin(), c.control_deps.end(), dep) ==
          c.control_deps.end()) {
        c.control_deps.push_back(dep);
      }
    }
  }
  for (size_t g = 0; g < num_groups; ++g) {
    if (sg_node[g] == nullptr) continue;
    Node& node = *sg_node[g];
    // Cut variables were numbered in this order (see SubgraphInputs).
    node.inputs.clear();
    for (const InputItem& item : items[g]) {
      node.inputs.push_back(map_entry(
          IndexedGraph::EntryRef{item.node_id, item.index, item.version}));
    }
    for (uint32_t d : sg_control[g]) {
      NodePtr dep = map_node(d);
      if (dep != sg_node[g] &&
          std::find(node.control_deps.begin(), node.control_deps.end(), dep) ==
              node.control_deps.end()) {
        node.control_deps.push_back(dep);
      }
    }
  }
  std::vector<NodeEntry> result;
  for (const auto& e : idx.outputs()) result.push_back(map_entry(e));
  return result;
}

}  // namespace partition_internal
}  // namespace mx
