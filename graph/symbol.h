// Symbol: a handle to outputs of a graph, built by composing ops.
//
// Composing an op over input symbols creates a node; inputs the caller does
// not give become variables named "<node>_<argument>", as in MXNet, so a
// network can be written by naming only its data. Auxiliary states (inputs
// an op mutates, such as BatchNorm's moving statistics) are listed apart
// from the read-only arguments, in a stable (depth-first) order.
//
//   Symbol data = Symbol::Variable("data");
//   Symbol fc = Symbol::Create("FullyConnected", {data},
//                              {{"num_hidden", "128"}}, "fc1");
//   fc.ListInputNames();   // {"data", "fc1_weight", "fc1_bias"}
//   std::string json = fc.ToJSON();  // MXNet's symbol JSON layout
#ifndef MXCORE_GRAPH_SYMBOL_H_
#define MXCORE_GRAPH_SYMBOL_H_

#include <optional>
#include <string>
#include <vector>

#include "graph/node.h"

namespace mx {

// The most inputs Symbol::Create makes variables for: real ops miss a few
// (weight, bias, statistics); a count attribute (num_args=65536 with two
// inputs given) must not turn a short request into a graph of 65536 nodes.
constexpr int kMaxCreatedVariables = 1024;

class Symbol {
 public:
  enum class InputKind { kAll, kReadOnlyArgs, kAuxStates };

  std::vector<NodeEntry> outputs;

  // A variable, with optional shape and dtype hints.
  static Symbol Variable(const std::string& name,
                         const TShape& shape = TShape(),
                         DType dtype = DType::kUnknown);
  // `op` applied to `inputs` (trailing missing inputs become variables, at
  // most kMaxCreatedVariables of them). A variadic op's count attribute
  // (num_args) defaults to the number of inputs, as MXNet's frontend sets
  // it. An empty name gets a unique one ("relu3"). Throws NotFound for an
  // unknown op, InvalidArgument for bad attributes, too many inputs, or
  // more missing inputs than the bound.
  static Symbol Create(const std::string& op, const std::vector<Symbol>& inputs,
                       const AttrDict& attrs = {},
                       const std::string& name = "");
  // Outputs of several symbols as one.
  static Symbol Group(const std::vector<Symbol>& symbols);

  // Output i as a symbol of its own.
  Symbol operator[](size_t i) const;
  // A deep copy: new nodes, same structure and attributes.
  Symbol Copy() const;
  // Every output of every node, in topological order.
  Symbol GetInternals() const;
  // The inputs of the (single) output node.
  Symbol GetChildren() const;

  std::vector<NodePtr> ListInputs(InputKind kind = InputKind::kAll) const;
  std::vector<std::string> ListInputNames(
      InputKind kind = InputKind::kAll) const;
  std::vector<std::string> ListArguments() const {
    return ListInputNames(InputKind::kReadOnlyArgs);
  }
  std::vector<std::string> ListAuxiliaryStates() const {
    return ListInputNames(InputKind::kAuxStates);
  }
  // "fc1_output", "data", "split0_output1", ...
  std::vector<std::string> ListOutputNames() const;

  // Attributes of the output node (REQUIRES a single output node).
  std::optional<std::string> GetAttr(const std::string& key) const;
  // Sets an attribute on every output node.
  void SetAttr(const std::string& key, const std::string& value);

  // One line per node: "fc1 = FullyConnected(data, fc1_weight, fc1_bias)
  // {num_hidden=128}".
  std::string Print() const;

  // Graphviz DOT text: one box per op, one ellipse per variable, edges
  // labelled with output names when a node has several outputs.
  std::string ToDOT() const;

  // MXNet symbol JSON ("nodes", "arg_nodes", "node_row_ptr", "heads",
  // "attrs"). FromJSON throws InvalidArgument on malformed JSON (including
  // arrays/objects nested deeper than kMaxJSONDepth), dangling inputs or
  // entries that are not non-negative integers, and NotFound on unknown ops,
  // naming the node. ToJSON throws InvalidArgument when a name or attribute
  // is not valid UTF-8.
  std::string ToJSON() const;
  static Symbol FromJSON(const std::string& json);
  // Deepest nesting of JSON arrays/objects FromJSON accepts. Bounds the
  // recursion over attribute values and "subgraphs" (each subgraph level
  // costs four), so hostile documents cannot overflow the stack.
  static constexpr int kMaxJSONDepth = 256;
};

}  // namespace mx

#endif  // MXCORE_GRAPH_SYMBOL_H_
