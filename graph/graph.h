// Graph: outputs plus named, typed attributes produced by passes; and
// IndexedGraph, its numbered topological view.
//
// Passes communicate through graph attributes ("shape": one TShape per
// entry, "dtype", "storage_id", ...) instead of fields on nodes, so a new
// analysis adds an attribute, not a field.
//
//   Graph g(symbol);
//   g.SetAttr("shape_inputs", std::vector<TShape>{{64, 784}});
//   g = ApplyPasses(g, {"InferShape"});
//   const auto& shapes = g.GetAttr<std::vector<TShape>>("shape");
//   const IndexedGraph& idx = g.indexed_graph();
//   TShape out = shapes[idx.entry_id(g.outputs[0])];
#ifndef MXCORE_GRAPH_GRAPH_H_
#define MXCORE_GRAPH_GRAPH_H_

#include <any>
#include <memory>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "base/error.h"
#include "graph/node.h"
#include "graph/symbol.h"

namespace mx {

class IndexedGraph {
 public:
  struct EntryRef {
    uint32_t node_id;
    uint32_t index;
    uint32_t version;
  };
  struct NodeInfo {
    const Node* source;
    std::vector<EntryRef> inputs;
    std::vector<uint32_t> control_deps;
  };

  explicit IndexedGraph(const std::vector<NodeEntry>& outputs);

  size_t num_nodes() const { return nodes_.size(); }
  // Total outputs of all nodes.
  size_t num_node_entries() const { return entry_rptr_.back(); }
  const NodeInfo& operator[](uint32_t node_id) const { return nodes_[node_id]; }
  // Throws NotFound when `node` is not in the graph.
  uint32_t node_id(const Node* node) const;
  uint32_t entry_id(uint32_t node_id, uint32_t index) const {
    return entry_rptr_[node_id] + index;
  }
  uint32_t entry_id(const EntryRef& e) const {
    return entry_id(e.node_id, e.index);
  }
  uint32_t entry_id(const NodeEntry& e) const {
    return entry_id(node_id(e.node.get()), e.index);
  }
  // Variables, in topological order.
  const std::vector<uint32_t>& input_nodes() const { return input_nodes_; }
  // Variables some op mutates (auxiliary states).
  const absl::flat_hash_set<uint32_t>& mutable_input_nodes() const {
    return mutable_input_nodes_;
  }
  const std::vector<EntryRef>& outputs() const { return outputs_; }
  // Per entry: how many times nodes read it, plus one each time the graph
  // returns it (the uses a memory plan or a runner counts down).
  std::vector<int> EntryReaders() const;

 private:
  std::vector<NodeInfo> nodes_;
  std::vector<uint32_t> entry_rptr_;
  std::vector<uint32_t> input_nodes_;
  absl::flat_hash_set<uint32_t> mutable_input_nodes_;
  std::vector<EntryRef> outputs_;
  absl::flat_hash_map<const Node*, uint32_t> node_ids_;
};

class Graph {
 public:
  Graph() = default;
  explicit Graph(const Symbol& symbol) : outputs(symbol.outputs) {}

  std::vector<NodeEntry> outputs;

  template <typename T>
  void SetAttr(const std::string& key, T value) {
    attrs_[key] = std::make_shared<const std::any>(std::move(value));
  }
  bool HasAttr(const std::string& key) const { return attrs_.contains(key); }
  // Throws NotFound naming the attribute when it is missing, and
  // InvalidArgument when it holds another type than T.
  template <typename T>
  const T& GetAttr(const std::string& key) const {
    auto it = attrs_.find(key);
    if (it == attrs_.end()) {
      throw NotFound("graph attribute \"" + key + "\" is missing");
    }
    const T* value = std::any_cast<T>(it->second.get());
    if (value == nullptr) {
      throw InvalidArgument("graph attribute \"" + key +
                            "\" has a different type than requested");
    }
    return *value;
  }

  // Built on first use and cached; REQUIRES: outputs not changed after.
  const IndexedGraph& indexed_graph() const;

 private:
  absl::flat_hash_map<std::string, std::shared_ptr<const std::any>> attrs_;
  mutable std::shared_ptr<const IndexedGraph> indexed_;
};

}  // namespace mx

#endif  // MXCORE_GRAPH_GRAPH_H_
