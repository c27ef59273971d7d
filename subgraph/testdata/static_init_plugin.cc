// Built with another ABI version (see BUILD): registers an op from a static
// initializer (during dlopen, outside the registrar). The refused load must
// undo that registration too.
#include "subgraph/plugin.h"

namespace {
const bool kRegistered = [] {
  mx::OpRegistry::Get()->Register("_static_init_op").SetNumInputs(1);
  return true;
}();
void Register(mx::PluginRegistrar&) {}
}  // namespace

MX_DEFINE_PLUGIN("static_init_plugin", Register)
