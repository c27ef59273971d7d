// GetSymbol: a copy of the recorded graph, without autograd's values, as a
// Symbol that can be printed, saved as JSON or bound by an executor.
#include <string>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "autograd/autograd.h"
#include "autograd/record.h"
#include "base/error.h"

namespace mx {
namespace autograd {

Symbol GetSymbol(const NDArray& x) {
  const ArrayHistory& h = x.autograd_entry();
  if (h.empty()) {
    throw StateError(
        "GetSymbol: the array is not part of a recorded graph (compute it "
        "inside a RecordScope from an array with AttachGrad)");
  }
  const std::vector<NodeEntry> heads = {NodeEntry{h.node, h.index, 0}};
  absl::flat_hash_map<const Node*, NodePtr> copies;
  int constants = 0;
  DFSVisit(heads, [&](const NodePtr& n) {
    NodePtr copy;
    if (n->is_variable()) {
      // Constants are all recorded as "_constant"; number them apart.
      copy = Node::Variable(n->name() == "_constant"
                                ? absl::StrCat("constant", constants++)
                                : n->name());
    } else {
      // A recorded call (CachedOp, autograd::Function) keeps its state in
      // the parsed attributes; a graph carries only the string ones.
      NodeAttrs rebuilt;
      try {
        rebuilt = MakeAttrs(*n->op(), n->attrs.dict, n->name());
        n->op()->NumInputs(rebuilt);
      } catch (const Error&) {
        throw NotImplemented(absl::StrCat(
            "GetSymbol: the recorded graph holds op \"", n->op()->name(),
            "\" (node \"", n->name(),
            "\"), a recorded call that cannot be exported as a graph"));
      }
      rebuilt.subgraphs = n->attrs.subgraphs;
      copy = std::make_shared<Node>();
      copy->attrs = std::move(rebuilt);
      for (const NodeEntry& e : n->inputs) {
        copy->inputs.push_back(
            NodeEntry{copies.at(e.node.get()), e.index, e.version});
      }
    }
    copies.emplace(n.get(), std::move(copy));
  });
  Symbol symbol;
  symbol.outputs.push_back(NodeEntry{copies.at(h.node.get()), h.index, 0});
  return symbol;
}

}  // namespace autograd
}  // namespace mx
