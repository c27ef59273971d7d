// The Subgraph API: how a backend says which parts of a graph it takes over.
//
// A SubgraphSelector decides, node by node, what joins a subgraph grown from
// a seed; a SubgraphProperty creates selectors and builds the node that
// replaces each claimed subgraph. Backends are registered by name as an
// ordered list of properties, applied in turn by PartitionGraph
// (subgraph/partition_graph.h). The built-in "default" backend claims
// connected ops named in a caller-given set and runs each subgraph as one
// `_default_subgraph_op`.
//
//   class MySelector : public mx::SubgraphSelector { ... };
//   class MyProperty : public mx::SubgraphProperty {
//     SubgraphSelectorPtr CreateSubgraphSelector() const override { ... }
//     NodePtr CreateSubgraphNode(const Symbol& sym, int id) const override;
//   };
//   MX_REGISTER_SUBGRAPH_PROPERTY(my_backend, MyProperty);
//   mx::SetSubgraphPropertyOpNames("default", {"exp", "sin"});
#ifndef MXCORE_SUBGRAPH_SUBGRAPH_PROPERTY_H_
#define MXCORE_SUBGRAPH_SUBGRAPH_PROPERTY_H_

#include <any>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "base/error.h"
#include "graph/node.h"
#include "graph/symbol.h"

namespace mx {

// Decides membership while a subgraph grows from one seed. A new selector
// is created per seed, so it may keep state. Variables are never claimed.
class SubgraphSelector {
 public:
  virtual ~SubgraphSelector() = default;
  // Whether `seed` starts a subgraph.
  virtual bool Select(const Node& seed) = 0;
  // Whether `input` (an op feeding `cur`, a member) joins.
  virtual bool SelectInput(const Node& cur, const Node& input) = 0;
  // Whether `output` (an op consuming `cur`, a member) joins.
  virtual bool SelectOutput(const Node& cur, const Node& output) = 0;
  // The grown candidates (topological order); returns those to keep, a
  // subset. What remains is split into connected pieces.
  virtual std::vector<const Node*> Filter(
      const std::vector<const Node*>& candidates) {
    return candidates;
  }
};
using SubgraphSelectorPtr = std::shared_ptr<SubgraphSelector>;

class SubgraphProperty {
 public:
  virtual ~SubgraphProperty() = default;

  // For reports ("default", "fuse").
  virtual std::string name() const = 0;
  virtual SubgraphSelectorPtr CreateSubgraphSelector() const = 0;
  // The node replacing a subgraph. `symbol` computes the subgraph's outputs
  // from its inputs; the caller sets the node's inputs, one per element of
  // SubgraphInputs(symbol), in that order, and uses output i for
  // symbol.outputs[i]. `id` numbers subgraphs within one partitioning.
  // Returning null rejects the subgraph: its nodes stay unpartitioned (as
  // in MXNet), and the report notes it.
  virtual NodePtr CreateSubgraphNode(const Symbol& symbol, int id) const = 0;
  // Inference-only properties are skipped when gradients are needed.
  virtual bool inference_only() const { return false; }

  // Typed attributes (e.g. "op_names"). GetAttr throws NotFound naming the
  // property and attribute, and InvalidArgument on a type mismatch.
  template <typename T>
  void SetAttr(const std::string& key, T value) {
    std::lock_guard<std::mutex> lock(mu_);
    attrs_[key] = std::make_shared<const std::any>(std::move(value));
  }
  template <typename T>
  T GetAttr(const std::string& key) const {
    std::shared_ptr<const std::any> v = FindAttr(key);
    const T* typed = std::any_cast<T>(v.get());
    if (typed == nullptr) {
      throw InvalidArgument("subgraph property \"" + name() +
                            "\": attribute \"" + key +
                            "\" has a different type than requested");
    }
    return *typed;
  }
  bool HasAttr(const std::string& key) const;
  void RemoveAttr(const std::string& key);

 private:
  std::shared_ptr<const std::any> FindAttr(const std::string& key) const;
  mutable std::mutex mu_;
  absl::flat_hash_map<std::string, std::shared_ptr<const std::any>> attrs_;
};
using SubgraphPropertyPtr = std::shared_ptr<SubgraphProperty>;

// Backends by name; each an ordered list of properties.
class SubgraphBackendRegistry {
 public:
  static SubgraphBackendRegistry* Get();

  // Appends `property` to `backend` (created on first use). Throws
  // InvalidArgument for the reserved name "NONE".
  void Register(const std::string& backend, SubgraphPropertyPtr property);
  // Drops a backend (undoing a failed plugin load).
  void Unregister(const std::string& backend);
  // Throws NotFound listing the registered backends.
  std::vector<SubgraphPropertyPtr> Lookup(const std::string& backend) const;
  bool Has(const std::string& backend) const;
  std::vector<std::string> ListNames() const;

  // Called once before the first Lookup/ListNames; the plugin loader uses
  // it to load MX_PLUGINS. Errors propagate to the caller.
  static void SetFirstUseHook(std::function<void()> hook);

 private:
  SubgraphBackendRegistry() = default;
  void RunFirstUseHook() const;
  mutable std::mutex mu_;
  absl::flat_hash_map<std::string, std::vector<SubgraphPropertyPtr>> backends_;
};

// Registered backends, sorted (loads MX_PLUGINS first when linked).
std::vector<std::string> ListSubgraphBackends();

// Gives every property of `backend` the attribute "op_names" (the ops the
// `default` property claims); Remove... clears it. Throws NotFound.
void SetSubgraphPropertyOpNames(const std::string& backend,
                                const std::vector<std::string>& op_names);
void RemoveSubgraphPropertyOpNames(const std::string& backend);

// Variable attribute numbering a subgraph's inputs (set by PartitionGraph).
inline constexpr char kSubgraphInputKey[] = "__subgraph_input__";

// The inputs of a subgraph symbol in the order its node takes them:
// ListInputs() ordered by kSubgraphInputKey where set. Some may be read by
// no op (PartitionGraph adds such inputs, as control dependencies, to keep
// the outer graph's input order).
std::vector<NodePtr> SubgraphInputs(const Symbol& symbol);

// A node of op `op_name` (a subgraph op such as _default_subgraph_op) that
// holds `symbol` in attrs.subgraphs[0].
NodePtr MakeSubgraphOpNode(const std::string& op_name, const Symbol& symbol,
                           const std::string& name);

}  // namespace mx

#define MX_SUBGRAPH_CONCAT_(a, b) a##b
#define MX_SUBGRAPH_VAR_(line) MX_SUBGRAPH_CONCAT_(mx_subgraph_prop_, line)
// Registers a property class in a backend at static-initialization time
// (libraries using it need alwayslink = 1).
#define MX_REGISTER_SUBGRAPH_PROPERTY(backend, Class)             \
  static const bool MX_SUBGRAPH_VAR_(__LINE__) [[maybe_unused]] = \
      (::mx::SubgraphBackendRegistry::Get()->Register(            \
           #backend, std::make_shared<Class>()),                  \
       true)

#endif  // MXCORE_SUBGRAPH_SUBGRAPH_PROPERTY_H_
