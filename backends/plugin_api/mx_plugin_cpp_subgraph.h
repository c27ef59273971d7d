// Part of mx_plugin_cpp.h (include that): subgraph properties, the
// selectors that claim nodes and the node that replaces what they claimed.
#ifndef MXCORE_BACKENDS_PLUGIN_API_MX_PLUGIN_CPP_SUBGRAPH_H_
#define MXCORE_BACKENDS_PLUGIN_API_MX_PLUGIN_CPP_SUBGRAPH_H_

#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "backends/plugin_api/mx_plugin.h"
#include "backends/plugin_api/mx_plugin_cpp_kernel.h"

namespace mxplugin {

// ---- Subgraph properties ----

// A read-only node (valid during the callback).
class NodeView {
 public:
  explicit NodeView(const MxNodeView* n) : n_(n) {}
  std::string_view op() const { return n_->op_name; }
  std::string_view name() const { return n_->node_name; }
  bool is_variable() const { return n_->op_name[0] == '\0'; }
  Attrs attrs() const { return Attrs(&n_->attrs); }
  int num_inputs() const { return n_->num_inputs; }
  // Graph views only: the node index and output feeding input i.
  int input_node(int i) const { return n_->input_nodes[i]; }
  int input_output(int i) const { return n_->input_outputs[i]; }
  int num_outputs() const { return n_->num_outputs; }
  bool has_control_deps() const { return n_->has_control_deps != 0; }
  const MxNodeView* c() const { return n_; }

 private:
  const MxNodeView* n_;
};

class Selector {
 public:
  virtual ~Selector() = default;
  virtual bool Select(const NodeView& seed) = 0;
  virtual bool SelectInput(const NodeView& cur, const NodeView& input) = 0;
  virtual bool SelectOutput(const NodeView& cur, const NodeView& output) = 0;
  // Which candidates to keep (default: all).
  virtual std::vector<bool> Filter(const std::vector<NodeView>& candidates) {
    return std::vector<bool>(candidates.size(), true);
  }
};

// Claims every node `claims` accepts, as seed, input or output: all an
// elementwise fuser needs. Subclass it to add a Filter.
class PredicateSelector : public Selector {
 public:
  explicit PredicateSelector(std::function<bool(const NodeView&)> claims)
      : claims_(std::move(claims)) {}
  bool Select(const NodeView& seed) override { return claims_(seed); }
  bool SelectInput(const NodeView&, const NodeView& input) override {
    return claims_(input);
  }
  bool SelectOutput(const NodeView&, const NodeView& output) override {
    return claims_(output);
  }

 private:
  std::function<bool(const NodeView&)> claims_;
};

// What replaces a subgraph; an empty op rejects it.
struct SubgraphNode {
  std::string op;
  std::vector<std::pair<std::string, std::string>> attrs;
  bool attach_subgraph = false;
};

class Property {
 public:
  virtual ~Property() = default;
  virtual std::string name() const = 0;
  virtual bool inference_only() const { return false; }
  virtual std::unique_ptr<Selector> CreateSelector() = 0;
  virtual SubgraphNode CreateNode(const MxGraphView& graph, int id) = 0;
};

}  // namespace mxplugin

#endif  // MXCORE_BACKENDS_PLUGIN_API_MX_PLUGIN_CPP_SUBGRAPH_H_
