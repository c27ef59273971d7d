// Registers an op and returns a code the host does not know (7).
#include "subgraph/plugin.h"

extern "C" __attribute__((visibility("default"))) int mx_plugin_init(
    int, int* plugin_abi, const char** plugin_name,
    mx::PluginRegistrar* registrar) {
  *plugin_abi = MX_PLUGIN_ABI_VERSION;
  *plugin_name = "bad_code_plugin";
  registrar->RegisterOp("_bad_code_op").SetNumInputs(1);
  return 7;
}
