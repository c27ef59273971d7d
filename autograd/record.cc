// Recording: each op with a recorded input becomes a graph node that keeps
// only the values its gradient reads.
#include "autograd/record.h"

#include <string>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "base/error.h"
#include "imperative/imperative.h"

namespace mx {
namespace autograd {
namespace internal {
namespace {

// Which forward inputs and outputs an op's gradient reads.
struct Needs {
  std::vector<bool> inputs, outputs;
};

// Builds the node's gradient with placeholder output gradients and looks
// at which of the node's inputs and outputs it references. The traversal
// stops at the node, its inputs and the placeholders, so it only walks the
// few nodes FGradient created.
Needs ComputeNeeds(const NodePtr& node) {
  Needs needs{std::vector<bool>(node->inputs.size()),
              std::vector<bool>(node->num_outputs())};
  const FGradient* fgrad = node->op()->GetAttr<FGradient>("FGradient");
  if (fgrad == nullptr) return needs;
  std::vector<NodeEntry> placeholders;
  absl::flat_hash_set<const Node*> boundary = {node.get()};
  for (uint32_t i = 0; i < node->num_outputs(); ++i) {
    placeholders.push_back(NodeEntry{Node::Variable("_ograd"), 0, 0});
    boundary.insert(placeholders.back().node.get());
  }
  for (const NodeEntry& in : node->inputs) boundary.insert(in.node.get());
  const std::vector<NodeEntry> grads = (*fgrad)(node, placeholders);

  absl::flat_hash_set<const Node*> visited;
  std::vector<const Node*> stack;
  auto classify = [&](const NodeEntry& e) {
    if (e.node == nullptr) return;
    if (e.node == node) {
      needs.outputs[e.index] = true;
      return;
    }
    for (size_t k = 0; k < node->inputs.size(); ++k) {
      if (node->inputs[k].node == e.node && node->inputs[k].index == e.index) {
        needs.inputs[k] = true;
      }
    }
    if (!boundary.contains(e.node.get()) &&
        visited.insert(e.node.get()).second) {
      stack.push_back(e.node.get());
    }
  };
  for (const NodeEntry& g : grads) classify(g);
  while (!stack.empty()) {
    const Node* n = stack.back();
    stack.pop_back();
    for (const NodeEntry& e : n->inputs) classify(e);
  }
  return needs;
}

// ComputeNeeds per op and attributes, cached: it builds a few nodes.
const Needs& NeedsOf(const NodePtr& node) {
  thread_local absl::flat_hash_map<std::string, Needs> cache;
  std::string key = node->op()->name();
  for (const auto& [k, v] : node->attrs.dict)
    absl::StrAppend(&key, ";", k, "=", v);
  auto it = cache.find(key);
  if (it == cache.end()) {
    // Attributes such as scalars vary freely; keep the cache bounded.
    if (cache.size() >= 4096) cache.clear();
    it = cache.emplace(key, ComputeNeeds(node)).first;
  }
  return it->second;
}

std::string NodeName(const NodeAttrs& attrs) {
  if (!attrs.name.empty()) return attrs.name;
  thread_local uint64_t counter = 0;
  return absl::StrCat(attrs.op->name(), counter++);
}

NodePtr NewNode(NodeAttrs attrs, uint32_t num_outputs) {
  auto node = std::make_shared<Node>();
  node->attrs = std::move(attrs);
  auto info = std::make_shared<AGInfo>();
  info->values.resize(num_outputs);
  node->info = std::move(info);
  return node;
}

}  // namespace

AGInfo* InfoOf(const Node& node) {
  const auto* info = std::any_cast<std::shared_ptr<AGInfo>>(&node.info);
  return info == nullptr ? nullptr : info->get();
}

void RecordOp(const NodeAttrs& attrs, const std::vector<NDArray>& inputs,
              std::vector<NDArray>* outputs, bool save_values) {
  bool any_recorded = false;
  for (const NDArray& in : inputs) any_recorded |= !in.autograd_entry().empty();
  if (!any_recorded) return;

  NodeAttrs node_attrs = attrs;
  node_attrs.name = NodeName(attrs);
  NodePtr node =
      NewNode(std::move(node_attrs), static_cast<uint32_t>(outputs->size()));
  for (const NDArray& in : inputs) {
    ArrayHistory h = in.autograd_entry();
    if (h.empty()) {  // A constant: a variable without a gradient.
      NodeAttrs constant;
      constant.name = "_constant";
      h.node = NewNode(std::move(constant), 1);
    }
    node->inputs.push_back(NodeEntry{h.node, h.index, 0});
  }

  AGInfo* info = InfoOf(*node);
  for (const NDArray& out : *outputs) {
    info->shapes.push_back(out.shape());
    info->types.push_back(out.dtype());
    info->ctx = out.ctx();
  }
  if (save_values) {
    const Needs& needs = NeedsOf(node);
    for (size_t i = 0; i < outputs->size(); ++i) {
      if (needs.outputs[i]) InfoOf(*node)->values[i] = (*outputs)[i].Detach();
    }
    for (size_t k = 0; k < inputs.size(); ++k) {
      if (!needs.inputs[k]) continue;
      const NodeEntry& e = node->inputs[k];
      AGInfo* producer = InfoOf(*e.node);
      if (producer == nullptr) {
        throw StateError(absl::StrCat("autograd: input ", k, " of op \"",
                                      attrs.op->name(),
                                      "\" comes from a graph autograd did not "
                                      "record"));
      }
      // Marked leaf variables keep their value from marking on.
      if (producer->values[e.index].is_none()) {
        producer->values[e.index] = inputs[k].Detach();
      }
    }
  }
  for (size_t i = 0; i < outputs->size(); ++i) {
    (*outputs)[i].set_autograd_entry(
        ArrayHistory{node, static_cast<uint32_t>(i)});
  }
}

namespace {

// Writing into an array that is part of a recorded graph would silently
// change values its gradients read.
void CheckRecord(const NodeAttrs& attrs, const std::vector<NDArray>& inputs,
                 const std::vector<NDArray>& outputs) {
  auto fail = [&](const std::string& what) {
    throw StateError(absl::StrCat(
        "autograd: op \"", attrs.op->name(), "\" writes in place into ", what,
        ", which is part of a recorded graph; in-place writes are not "
        "supported while recording (compute a new array instead)"));
  };
  for (size_t i = 0; i < outputs.size(); ++i) {
    if (!outputs[i].is_none() && !outputs[i].autograd_entry().empty()) {
      fail(absl::StrCat("output ", i));
    }
  }
  for (int m : attrs.op->MutateInputs(attrs)) {
    if (m < static_cast<int>(inputs.size()) &&
        !inputs[m].autograd_entry().empty()) {
      fail(absl::StrCat("input ", m));
    }
  }
}

void Record(const NodeAttrs& attrs, const std::vector<NDArray>& inputs,
            std::vector<NDArray>* outputs) {
  RecordOp(attrs, inputs, outputs);
}

// Records `op` with `dict` from `in` to `*out`, which already holds the
// result (a view of `in`): nothing runs, the node only links the two.
void RecordAs(const char* op, AttrDict dict, const NDArray& in, NDArray* out) {
  std::vector<NDArray> outputs = {*out};
  RecordOp(MakeAttrs(OpRegistry::Get()->Lookup(op), std::move(dict)), {in},
           &outputs);
  *out = std::move(outputs[0]);
}

// A view of a recorded array, made while recording, is recorded as the op
// that computes the same values (as deferred compute traces it), so its
// gradient is scattered or reshaped back into the viewed array's.
void RecordView(const NDArray& self, const NDArray::TracedCall& call,
                NDArray* view) {
  if (!imperative::IsRecording()) return;
  using Call = NDArray::TracedCall;
  switch (call.method) {
    case Call::kReshape:
      RecordAs("Reshape",
               {{"shape", call.shape.ToString()},
                {"reverse", call.reverse ? "True" : "False"}},
               self, view);
      return;
    case Call::kSlice:
      RecordAs("slice_axis",
               {{"axis", "0"},
                {"begin", absl::StrCat(call.begin)},
                {"end", absl::StrCat(call.end)}},
               self, view);
      return;
    case Call::kAt: {
      // The (1, ...) row, itself a recorded view, then its axis dropped.
      NDArray row = self.Slice(call.begin, call.end);
      RecordAs("_npi_squeeze", {{"axis", "(0,)"}}, row, view);
      return;
    }
    case Call::kCopy:
      break;
  }
  throw InvalidArgument(
      "autograd: NDArray::Copy is not a view and is not recorded as one");
}

[[maybe_unused]] const bool kHooksInstalled = [] {
  imperative::InvokeHooks hooks;
  hooks.check_record = CheckRecord;
  hooks.record = Record;
  imperative::InstallInvokeHooks(hooks);
  NDArray::SetRecordViewHook(RecordView);
  return true;
}();

}  // namespace
}  // namespace internal
}  // namespace autograd
}  // namespace mx
