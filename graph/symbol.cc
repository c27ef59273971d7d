#include "graph/symbol.h"

#include <algorithm>
#include <cctype>
#include <mutex>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "base/error.h"

namespace mx {
namespace {

// Unique default names per op: "relu0", "relu1", ...
std::string UniqueName(const std::string& op) {
  static std::mutex mu;
  static auto* counters = new absl::flat_hash_map<std::string, int>();
  std::string hint = op;
  std::transform(hint.begin(), hint.end(), hint.begin(),
                 [](unsigned char c) { return std::tolower(c); });
  std::lock_guard<std::mutex> lock(mu);
  return absl::StrCat(hint, (*counters)[hint]++);
}

bool IsMutatedInput(const Node& user, size_t input_index) {
  if (user.is_variable()) return false;
  for (int m : user.op()->MutateInputs(user.attrs)) {
    if (m == static_cast<int>(input_index)) return true;
  }
  return false;
}

// `names` are the node's OutputNames (ignored for variables).
std::string EntryName(const NodeEntry& e,
                      const std::vector<std::string>& names) {
  const Node& n = *e.node;
  if (n.is_variable()) return n.name();
  if (n.num_outputs() == 1) return n.name() + "_output";
  return absl::StrCat(n.name(), "_",
                      e.index < names.size() ? names[e.index]
                                             : absl::StrCat("output", e.index));
}

std::string EntryName(const NodeEntry& e) {
  const Node& n = *e.node;
  if (n.is_variable()) return n.name();
  return EntryName(e, n.op()->OutputNames(n.attrs));
}

}  // namespace

Symbol Symbol::Variable(const std::string& name, const TShape& shape,
                        DType dtype) {
  NodePtr node = Node::Variable(name);
  if (shape.ndim_known()) node->attrs.dict["__shape__"] = shape.ToString();
  if (dtype != DType::kUnknown) {
    node->attrs.dict["__dtype__"] = std::to_string(static_cast<int>(dtype));
  }
  Symbol s;
  s.outputs.push_back(NodeEntry{node, 0, 0});
  return s;
}

Symbol Symbol::Create(const std::string& op_name,
                      const std::vector<Symbol>& inputs, const AttrDict& attrs,
                      const std::string& name) {
  const Op& op = OpRegistry::Get()->Lookup(op_name);
  AttrDict full_attrs = attrs;
  FillVarNumArgs(op, inputs.size(), &full_attrs);
  NodePtr node =
      Node::Create(op, full_attrs, name.empty() ? UniqueName(op.name()) : name);
  const size_t n_in = node->num_inputs();
  if (inputs.size() > n_in) {
    throw InvalidArgument(absl::StrCat("Symbol::Create(\"", op.name(),
                                       "\"): ", inputs.size(),
                                       " inputs given but the "
                                       "op takes ",
                                       n_in));
  }
  for (const Symbol& in : inputs) {
    if (in.outputs.size() != 1) {
      throw InvalidArgument(absl::StrCat(
          "Symbol::Create(\"", op.name(), "\"): an input symbol has ",
          in.outputs.size(), " outputs; compose with single outputs"));
    }
    node->inputs.push_back(in.outputs[0]);
  }
  if (n_in - inputs.size() > static_cast<size_t>(kMaxCreatedVariables)) {
    throw InvalidArgument(absl::StrCat(
        "Symbol::Create(\"", op.name(), "\"): ", n_in - inputs.size(),
        " of its ", n_in, " inputs are missing; at most ", kMaxCreatedVariables,
        " are created as variables (give the inputs)"));
  }
  const std::vector<std::string> arg_names = op.InputNames(node->attrs);
  for (size_t i = inputs.size(); i < n_in; ++i) {
    node->inputs.push_back(NodeEntry{
        Node::Variable(absl::StrCat(node->name(), "_", arg_names[i])), 0, 0});
  }
  Symbol s;
  const int visible = op.NumVisibleOutputs(node->attrs);
  for (int i = 0; i < visible; ++i) {
    s.outputs.push_back(NodeEntry{node, static_cast<uint32_t>(i), 0});
  }
  return s;
}

Symbol Symbol::Group(const std::vector<Symbol>& symbols) {
  Symbol s;
  for (const Symbol& sym : symbols) {
    s.outputs.insert(s.outputs.end(), sym.outputs.begin(), sym.outputs.end());
  }
  return s;
}

Symbol Symbol::operator[](size_t i) const {
  if (i >= outputs.size()) {
    throw InvalidArgument(absl::StrCat("Symbol[", i, "]: the symbol has ",
                                       outputs.size(), " outputs"));
  }
  Symbol s;
  s.outputs.push_back(outputs[i]);
  return s;
}

Symbol Symbol::Copy() const {
  absl::flat_hash_map<const Node*, NodePtr> copies;
  DFSVisit(outputs, [&](const NodePtr& n) {
    auto copy = std::make_shared<Node>(*n);
    for (NodeEntry& e : copy->inputs) e.node = copies.at(e.node.get());
    for (NodePtr& c : copy->control_deps) c = copies.at(c.get());
    copies[n.get()] = copy;
  });
  Symbol s;
  for (const NodeEntry& e : outputs) {
    s.outputs.push_back(NodeEntry{copies.at(e.node.get()), e.index, e.version});
  }
  return s;
}

Symbol Symbol::GetInternals() const {
  Symbol s;
  DFSVisit(outputs, [&](const NodePtr& n) {
    for (uint32_t i = 0; i < n->num_outputs(); ++i) {
      s.outputs.push_back(NodeEntry{n, i, 0});
    }
  });
  return s;
}

Symbol Symbol::GetChildren() const {
  Symbol s;
  for (const NodeEntry& e : outputs) {
    for (const NodeEntry& in : e.node->inputs) s.outputs.push_back(in);
  }
  return s;
}

std::vector<NodePtr> Symbol::ListInputs(InputKind kind) const {
  // A variable is an auxiliary state when some op mutates it.
  absl::flat_hash_set<const Node*> mutated;
  DFSVisit(outputs, [&](const NodePtr& n) {
    for (size_t i = 0; i < n->inputs.size(); ++i) {
      if (IsMutatedInput(*n, i)) mutated.insert(n->inputs[i].node.get());
    }
  });
  std::vector<NodePtr> vars;
  DFSVisit(outputs, [&](const NodePtr& n) {
    if (!n->is_variable()) return;
    const bool aux = mutated.contains(n.get());
    if (kind == InputKind::kAll || (kind == InputKind::kAuxStates) == aux) {
      vars.push_back(n);
    }
  });
  return vars;
}

std::vector<std::string> Symbol::ListInputNames(InputKind kind) const {
  std::vector<std::string> names;
  for (const NodePtr& n : ListInputs(kind)) names.push_back(n->name());
  return names;
}

std::vector<std::string> Symbol::ListOutputNames() const {
  std::vector<std::string> names;
  // Output names computed once per run of entries of one node: a node may
  // have kMaxOpArity outputs, and recomputing them per entry is quadratic.
  const Node* last = nullptr;
  std::vector<std::string> node_names;
  for (const NodeEntry& e : outputs) {
    if (e.node.get() != last && !e.node->is_variable()) {
      last = e.node.get();
      node_names = last->op()->OutputNames(last->attrs);
    }
    names.push_back(EntryName(e, node_names));
  }
  return names;
}

std::optional<std::string> Symbol::GetAttr(const std::string& key) const {
  if (outputs.empty()) return std::nullopt;
  const Node* node = outputs[0].node.get();
  for (const NodeEntry& e : outputs) {
    if (e.node.get() != node) {
      throw InvalidArgument(
          "Symbol::GetAttr: the symbol has several output "
          "nodes; pick one with operator[]");
    }
  }
  auto it = node->attrs.dict.find(key);
  if (it == node->attrs.dict.end()) return std::nullopt;
  return it->second;
}

void Symbol::SetAttr(const std::string& key, const std::string& value) {
  for (const NodeEntry& e : outputs) {
    Node& node = *e.node;
    node.attrs.dict[key] = value;
    if (!node.is_variable() && !IsMetadataKey(key))
      node.op()->ParseAttrs(&node.attrs);
  }
}

std::string Symbol::Print() const {
  std::string out;
  DFSVisit(outputs, [&](const NodePtr& n) {
    if (n->is_variable()) {
      absl::StrAppend(&out, "var ", n->name());
    } else {
      std::vector<std::string> args;
      for (const NodeEntry& e : n->inputs) args.push_back(EntryName(e));
      absl::StrAppend(&out, n->name(), " = ", n->op()->name(), "(",
                      absl::StrJoin(args, ", "), ")");
    }
    if (!n->attrs.dict.empty()) {
      absl::StrAppend(
          &out, " {",
          absl::StrJoin(n->attrs.dict, ", ", absl::PairFormatter("=")), "}");
    }
    out += "\n";
  });
  absl::StrAppend(&out, "outputs: ", absl::StrJoin(ListOutputNames(), ", "),
                  "\n");
  return out;
}

std::string Symbol::ToDOT() const {
  absl::flat_hash_map<const Node*, int> ids;
  std::string out = "digraph mxcore {\n  node [fontsize=10];\n";
  auto quote = [](const std::string& text) {
    std::string q = "\"";
    for (char c : text) {
      if (c == '\n') {
        q += "\\n";
        continue;
      }
      if (c == '"' || c == '\\') q += '\\';
      q += c;
    }
    return q + "\"";
  };
  DFSVisit(outputs, [&](const NodePtr& n) {
    const int id = static_cast<int>(ids.size());
    ids[n.get()] = id;
    const std::string label =
        n->is_variable() ? n->name() : n->name() + "\n" + n->op()->name();
    absl::StrAppend(&out, "  n", id, " [label=", quote(label),
                    ", shape=", n->is_variable() ? "ellipse" : "box", "];\n");
    for (const NodeEntry& e : n->inputs) {
      absl::StrAppend(&out, "  n", ids.at(e.node.get()), " -> n", id);
      if (e.node->num_outputs() > 1) {
        absl::StrAppend(&out, " [label=", quote(EntryName(e)), "]");
      }
      out += ";\n";
    }
    for (const NodePtr& c : n->control_deps) {
      absl::StrAppend(&out, "  n", ids.at(c.get()), " -> n", id,
                      " [style=dashed];\n");
    }
  });
  return out + "}\n";
}

}  // namespace mx
