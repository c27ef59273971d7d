#include "graph/graph.h"

#include <cstdint>
#include <limits>

#include "absl/strings/str_cat.h"

namespace mx {

IndexedGraph::IndexedGraph(const std::vector<NodeEntry>& outputs) {
  entry_rptr_.push_back(0);
  DFSVisit(outputs, [&](const NodePtr& n) {
    const uint32_t id = static_cast<uint32_t>(nodes_.size());
    node_ids_[n.get()] = id;
    NodeInfo info;
    info.source = n.get();
    for (size_t i = 0; i < n->inputs.size(); ++i) {
      const NodeEntry& e = n->inputs[i];
      const uint32_t src = node_ids_.at(e.node.get());
      info.inputs.push_back(EntryRef{src, e.index, e.version});
    }
    if (!n->is_variable()) {
      for (int m : n->op()->MutateInputs(n->attrs)) {
        if (m < static_cast<int>(info.inputs.size()) &&
            nodes_[info.inputs[m].node_id].source->is_variable()) {
          mutable_input_nodes_.insert(info.inputs[m].node_id);
        }
      }
    }
    for (const NodePtr& c : n->control_deps) {
      info.control_deps.push_back(node_ids_.at(c.get()));
    }
    if (n->is_variable()) input_nodes_.push_back(id);
    // Entry ids are uint32_t; refuse graphs whose entries do not fit
    // rather than wrapping (each node may have up to kMaxOpArity outputs).
    const uint64_t end = uint64_t{entry_rptr_.back()} + n->num_outputs();
    if (end > std::numeric_limits<uint32_t>::max()) {
      throw InvalidArgument(absl::StrCat(
          "IndexedGraph: more than ", std::numeric_limits<uint32_t>::max(),
          " node entries (outputs) at node \"", n->name(), "\""));
    }
    entry_rptr_.push_back(static_cast<uint32_t>(end));
    nodes_.push_back(std::move(info));
  });
  for (const NodeEntry& e : outputs) {
    outputs_.push_back(
        EntryRef{node_ids_.at(e.node.get()), e.index, e.version});
  }
}

std::vector<int> IndexedGraph::EntryReaders() const {
  std::vector<int> readers(num_node_entries(), 0);
  for (const NodeInfo& node : nodes_) {
    for (const EntryRef& e : node.inputs) ++readers[entry_id(e)];
  }
  for (const EntryRef& e : outputs_) ++readers[entry_id(e)];
  return readers;
}

uint32_t IndexedGraph::node_id(const Node* node) const {
  auto it = node_ids_.find(node);
  if (it == node_ids_.end()) {
    throw NotFound(
        absl::StrCat("node \"", node->name(), "\" is not part of this graph"));
  }
  return it->second;
}

const IndexedGraph& Graph::indexed_graph() const {
  if (indexed_ == nullptr) indexed_ = std::make_shared<IndexedGraph>(outputs);
  return *indexed_;
}

}  // namespace mx
