#include "graph/node.h"

#include <utility>

#include "absl/container/flat_hash_set.h"

namespace mx {

Node::~Node() {
  // Destroying a node destroys the inputs it alone owns, and so on up the
  // chain; done recursively that overflows the stack on deep graphs. Take
  // over the pointers instead and release them one level at a time.
  std::vector<NodePtr> pending;
  auto take = [&pending](Node* n) {
    for (NodeEntry& e : n->inputs) {
      if (e.node != nullptr) pending.push_back(std::move(e.node));
    }
    for (NodePtr& c : n->control_deps) {
      if (c != nullptr) pending.push_back(std::move(c));
    }
  };
  take(this);
  while (!pending.empty()) {
    NodePtr n = std::move(pending.back());
    pending.pop_back();
    if (n.use_count() == 1) take(n.get());
    // `n` is released here with empty input lists.
  }
}

uint32_t Node::num_outputs() const {
  return is_variable() ? 1 : static_cast<uint32_t>(op()->NumOutputs(attrs));
}

uint32_t Node::num_inputs() const {
  return is_variable() ? 0 : static_cast<uint32_t>(op()->NumInputs(attrs));
}

NodePtr Node::Variable(const std::string& name) {
  auto node = std::make_shared<Node>();
  node->attrs.name = name;
  return node;
}

NodePtr Node::Create(const Op& op, AttrDict attrs, const std::string& name) {
  auto node = std::make_shared<Node>();
  node->attrs = MakeAttrs(op, std::move(attrs), name);
  return node;
}

NodeEntry MakeNode(const std::string& op, std::vector<NodeEntry> inputs,
                   AttrDict attrs, const std::string& name) {
  NodePtr node =
      Node::Create(OpRegistry::Get()->Lookup(op), std::move(attrs), name);
  node->inputs = std::move(inputs);
  return NodeEntry{node, 0, 0};
}

void DFSVisit(const std::vector<NodeEntry>& heads,
              const std::function<void(const NodePtr&)>& visit) {
  absl::flat_hash_set<const Node*> visited;
  // (node, next child to look at); children are inputs then control deps.
  std::vector<std::pair<NodePtr, size_t>> stack;
  auto child = [](const Node& n, size_t i) -> const NodePtr& {
    return i < n.inputs.size() ? n.inputs[i].node
                               : n.control_deps[i - n.inputs.size()];
  };
  for (const NodeEntry& head : heads) {
    if (head.node == nullptr || !visited.insert(head.node.get()).second) {
      continue;
    }
    stack.emplace_back(head.node, 0);
    while (!stack.empty()) {
      auto& [node, next] = stack.back();
      const size_t num_children =
          node->inputs.size() + node->control_deps.size();
      if (next < num_children) {
        const NodePtr& c = child(*node, next++);
        if (c != nullptr && visited.insert(c.get()).second) {
          stack.emplace_back(c, 0);
        }
      } else {
        NodePtr done = std::move(node);
        stack.pop_back();
        visit(done);
      }
    }
  }
}

}  // namespace mx
