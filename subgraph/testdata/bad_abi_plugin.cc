// Built with another MX_PLUGIN_ABI_VERSION (see BUILD): must be refused.
#include "subgraph/plugin.h"

namespace {
void Register(mx::PluginRegistrar& r) {
  r.RegisterOp("_bad_abi_plugin_op").SetNumInputs(1);
}
}  // namespace

MX_DEFINE_PLUGIN("bad_abi_plugin", Register)
