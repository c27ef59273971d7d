// Registers an op, then throws an int through MX_DEFINE_PLUGIN, which must
// turn it into a failed registration.
#include "subgraph/plugin.h"

namespace {
void Register(mx::PluginRegistrar& r) {
  r.RegisterOp("_throw_int_macro_op").SetNumInputs(1);
  throw 7;
}
}  // namespace

MX_DEFINE_PLUGIN("throw_int_macro_plugin", Register)
