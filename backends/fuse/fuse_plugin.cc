// The fuse plugin: backend "fuse" claims connected chains and trees of
// elementwise ops and replaces each with one _fused_elemwise op.
#include "absl/strings/str_cat.h"
#include "backends/fuse/fused_op.h"
#include "subgraph/plugin.h"

namespace mx {
namespace fuse {
namespace {

class ElemwiseSelector : public SubgraphSelector {
 public:
  bool Select(const Node& n) override { return Claims(n); }
  bool SelectInput(const Node&, const Node& n) override { return Claims(n); }
  bool SelectOutput(const Node&, const Node& n) override { return Claims(n); }
  // A single op gains nothing from fusion.
  std::vector<const Node*> Filter(
      const std::vector<const Node*>& candidates) override {
    return candidates.size() > 1 ? candidates : std::vector<const Node*>{};
  }

 private:
  static bool Claims(const Node& n) {
    return !n.is_variable() && n.control_deps.empty() &&
           IsFusable(n.op()->name());
  }
};

class FuseProperty : public SubgraphProperty {
 public:
  std::string name() const override { return "fuse"; }
  // _fused_elemwise has no gradient.
  bool inference_only() const override { return true; }
  SubgraphSelectorPtr CreateSubgraphSelector() const override {
    return std::make_shared<ElemwiseSelector>();
  }
  NodePtr CreateSubgraphNode(const Symbol& symbol, int id) const override {
    NodePtr node = MakeSubgraphOpNode("_fused_elemwise", symbol,
                                      absl::StrCat("fused", id));
    node->attrs.parsed = std::shared_ptr<const Program>(
        std::make_shared<Program>(Compile(symbol)));
    return node;
  }
};

void Register(PluginRegistrar& r) {
  RegisterFusedOp(r);
  r.RegisterSubgraphProperty("fuse", std::make_shared<FuseProperty>());
}

}  // namespace
}  // namespace fuse
}  // namespace mx

MX_DEFINE_PLUGIN("fuse", mx::fuse::Register)
