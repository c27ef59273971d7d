// Registers one new op, then one whose name the host already has: the load
// must fail and leave neither registered.
#include "subgraph/plugin.h"

namespace {
void Register(mx::PluginRegistrar& r) {
  r.RegisterOp("_clash_plugin_first").SetNumInputs(1);
  r.RegisterOp("sin").SetNumInputs(1);
}
}  // namespace

MX_DEFINE_PLUGIN("clash_plugin", Register)
