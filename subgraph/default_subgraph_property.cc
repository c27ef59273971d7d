// The "default" backend: claims connected ops whose names (or aliases) are
// in the property's "op_names" attribute and replaces each subgraph with a
// _default_subgraph_op.
#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "subgraph/subgraph_property.h"

namespace mx {
namespace {

class OpNameSelector : public SubgraphSelector {
 public:
  explicit OpNameSelector(absl::flat_hash_set<const Op*> ops)
      : ops_(std::move(ops)) {}
  bool Select(const Node& n) override { return Claims(n); }
  bool SelectInput(const Node&, const Node& in) override { return Claims(in); }
  bool SelectOutput(const Node&, const Node& out) override {
    return Claims(out);
  }

 private:
  bool Claims(const Node& n) const {
    return !n.is_variable() && ops_.contains(n.op());
  }
  absl::flat_hash_set<const Op*> ops_;
};

class DefaultSubgraphProperty : public SubgraphProperty {
 public:
  std::string name() const override { return "default"; }

  SubgraphSelectorPtr CreateSubgraphSelector() const override {
    if (!HasAttr("op_names")) {
      throw InvalidArgument(
          "subgraph property \"default\" has no op names; call "
          "mx::SetSubgraphPropertyOpNames(\"default\", {...}) first");
    }
    // Names unknown here (another framework's spelling) are ignored.
    absl::flat_hash_set<const Op*> ops;
    for (const std::string& name :
         GetAttr<std::vector<std::string>>("op_names")) {
      if (const Op* op = OpRegistry::Get()->Find(name)) ops.insert(op);
    }
    return std::make_shared<OpNameSelector>(std::move(ops));
  }

  NodePtr CreateSubgraphNode(const Symbol& symbol, int id) const override {
    return MakeSubgraphOpNode("_default_subgraph_op", symbol,
                              absl::StrCat("_default_subgraph", id));
  }
};

MX_REGISTER_SUBGRAPH_PROPERTY(default, DefaultSubgraphProperty);

}  // namespace
}  // namespace mx
