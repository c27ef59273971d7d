// The fuse plugin: backend "fuse" claims connected chains and trees of
// elementwise ops and replaces each with one _fused_elemwise op. Written
// against the C plugin ABI's C++ layer only.
#include <memory>
#include <string>

#include "backends/common/elemwise_program.h"
#include "backends/plugin_api/mx_plugin_cpp.h"

namespace mxfuse {
namespace {

// Chains and trees of fusable ops; a single op gains nothing from fusion.
class ElemwiseSelector : public mxplugin::PredicateSelector {
 public:
  ElemwiseSelector()
      : PredicateSelector([](const mxplugin::NodeView& n) {
          return !n.is_variable() && !n.has_control_deps() &&
                 mx_elemwise::IsFusable(std::string(n.op()));
        }) {}
  std::vector<bool> Filter(
      const std::vector<mxplugin::NodeView>& candidates) override {
    return std::vector<bool>(candidates.size(), candidates.size() > 1);
  }
};

class FuseProperty : public mxplugin::Property {
 public:
  std::string name() const override { return "fuse"; }
  // _fused_elemwise has no gradient.
  bool inference_only() const override { return true; }
  std::unique_ptr<mxplugin::Selector> CreateSelector() override {
    return std::make_unique<ElemwiseSelector>();
  }
  mxplugin::SubgraphNode CreateNode(const MxGraphView& graph, int) override {
    mxplugin::SubgraphNode node;
    node.op = "_fused_elemwise";
    node.attrs = mx_elemwise::ToAttrs(mx_elemwise::Compile(graph));
    return node;
  }
};

void Register(mxplugin::Plugin& p) {
  p.RegisterOp(mx_elemwise::ProgramOpDef(
      "_fused_elemwise",
      "A chain or tree of elementwise ops, compiled to a register program, "
      "computed in one pass over memory (fuse plugin); float32 and "
      "float64."));
  p.RegisterSubgraphProperty("fuse", std::make_shared<FuseProperty>());
}

}  // namespace
}  // namespace mxfuse

MX_PLUGIN("fuse", mxfuse::Register)
