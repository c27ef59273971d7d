// A minimal plugin for tests: op "_test_plugin_double" (y = 2x) and backend
// "test_plugin" claiming it. It also reports the registry instances its
// own code sees, so tests can prove they are the host's.
#include "subgraph/plugin.h"

namespace {

class DoubleSelector : public mx::SubgraphSelector {
 public:
  bool Select(const mx::Node& n) override { return Claims(n); }
  bool SelectInput(const mx::Node&, const mx::Node& n) override {
    return Claims(n);
  }
  bool SelectOutput(const mx::Node&, const mx::Node& n) override {
    return Claims(n);
  }

 private:
  static bool Claims(const mx::Node& n) {
    return !n.is_variable() && n.op()->name() == "_test_plugin_double";
  }
};

class DoubleProperty : public mx::SubgraphProperty {
 public:
  std::string name() const override { return "test_plugin"; }
  mx::SubgraphSelectorPtr CreateSubgraphSelector() const override {
    return std::make_shared<DoubleSelector>();
  }
  mx::NodePtr CreateSubgraphNode(const mx::Symbol& s, int id) const override {
    return mx::MakeSubgraphOpNode("_default_subgraph_op", s,
                                  "test_plugin" + std::to_string(id));
  }
};

void Register(mx::PluginRegistrar& r) {
  r.RegisterOp("_test_plugin_double")
      .Describe("2 * x (test plugin)")
      .SetNumInputs(1)
      .SetInputNames({"data"})
      .SetInferShape(mx::SameShape)
      .SetInferType(mx::SameType)
      .SetCompute(mx::Context::kCPU,
                  [](const mx::OpContext&, const mx::NodeAttrs&,
                     const std::vector<mx::TBlob>& in,
                     const std::vector<mx::OpReqType>&,
                     const std::vector<mx::TBlob>& out) {
                    const float* x = in[0].data<float>();
                    float* y = out[0].data<float>();
                    for (int64_t i = 0; i < in[0].Size(); ++i) y[i] = 2 * x[i];
                  });
  r.RegisterSubgraphProperty("test_plugin", std::make_shared<DoubleProperty>());
}

}  // namespace

MX_DEFINE_PLUGIN("test_plugin", Register)

// The registries as this library's code sees them.
extern "C" __attribute__((visibility("default"))) void
mx_test_plugin_registries(const void** ops, const void** backends) {
  *ops = mx::OpRegistry::Get();
  *backends = mx::SubgraphBackendRegistry::Get();
}
