// Nodes of the graph IR and their traversal.
//
// A Node is an op application (or, with a null op, a variable); its inputs
// are NodeEntry values naming an output of another node. Nodes are shared,
// immutable once built into a symbol, and owned by whoever points at them.
//
//   NodePtr x = Node::Variable("x");
//   NodePtr y = Node::Create(OpRegistry::Get()->Lookup("relu"), {}, "r0");
//   y->inputs.push_back(NodeEntry{x, 0, 0});
//   DFSVisit({NodeEntry{y, 0, 0}}, [](const NodePtr& n) { ... });  // x, y
#ifndef MXCORE_GRAPH_NODE_H_
#define MXCORE_GRAPH_NODE_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "graph/op.h"

namespace mx {

struct Node;
using NodePtr = std::shared_ptr<Node>;

// Output `index` of `node`. `version` is the var version of a variable when
// the entry was recorded (for mutable inputs); 0 otherwise.
struct NodeEntry {
  NodePtr node;
  uint32_t index = 0;
  uint32_t version = 0;

  friend bool operator==(const NodeEntry& a, const NodeEntry& b) {
    return a.node == b.node && a.index == b.index && a.version == b.version;
  }
};

// Output `index` of `node`, ignoring versions: a key for hash maps
// (absl::flat_hash_map<EntryKey, ...>) of per-entry data.
struct EntryKey {
  const Node* node;
  uint32_t index;
  bool operator==(const EntryKey& o) const {
    return node == o.node && index == o.index;
  }
  template <typename H>
  friend H AbslHashValue(H h, const EntryKey& k) {
    return H::combine(std::move(h), k.node, k.index);
  }
};

struct Node {
  Node() = default;
  Node(const Node&) = default;
  Node& operator=(const Node&) = default;
  // Frees long chains of uniquely owned inputs without recursion.
  ~Node();

  NodeAttrs attrs;
  std::vector<NodeEntry> inputs;
  // Nodes that must run before this one without passing data.
  std::vector<NodePtr> control_deps;
  // State of the layer that recorded the node (autograd keeps the values
  // its gradient needs here); empty in symbolic graphs.
  std::any info;

  bool is_variable() const { return attrs.op == nullptr; }
  const Op* op() const { return attrs.op; }
  const std::string& name() const { return attrs.name; }
  // 1 for variables.
  uint32_t num_outputs() const;
  uint32_t num_inputs() const;

  // A variable; shape/dtype hints are stored as __shape__ / __dtype__.
  static NodePtr Variable(const std::string& name);
  // An op node with parsed attributes; inputs are added by the caller.
  static NodePtr Create(const Op& op, AttrDict attrs, const std::string& name);
};

// An op's gradient: given the node and the gradients of its outputs, the
// gradient of each input, built from new nodes (or NodeEntry{} where an
// input has no gradient). Registered as op attribute "FGradient".
using FGradient = std::function<std::vector<NodeEntry>(
    const NodePtr& node, const std::vector<NodeEntry>& out_grads)>;

// A new node applying `op` (by name) to `inputs`; returns its output 0.
// Used to build gradient graphs.
NodeEntry MakeNode(const std::string& op, std::vector<NodeEntry> inputs,
                   AttrDict attrs, const std::string& name);

// Calls `visit` on every node reachable from `heads` (through inputs and
// control dependencies) exactly once, inputs before users, in a
// deterministic order. Iterative: deep graphs do not overflow the stack.
void DFSVisit(const std::vector<NodeEntry>& heads,
              const std::function<void(const NodePtr&)>& visit);

}  // namespace mx

#endif  // MXCORE_GRAPH_NODE_H_
