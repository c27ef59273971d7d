// Registers an op and reports success without a name.
#include "subgraph/plugin.h"

extern "C" __attribute__((visibility("default"))) int mx_plugin_init(
    int, int* plugin_abi, const char** plugin_name,
    mx::PluginRegistrar* registrar) {
  *plugin_abi = MX_PLUGIN_ABI_VERSION;
  *plugin_name = nullptr;
  registrar->RegisterOp("_null_name_op").SetNumInputs(1);
  return 0;
}
