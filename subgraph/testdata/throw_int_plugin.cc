// Registers an op, then throws an int (not a std::exception) straight out
// of a hand-written entry point: the host must catch it and roll back.
#include "subgraph/plugin.h"

extern "C" __attribute__((visibility("default"))) int mx_plugin_init(
    int, int* plugin_abi, const char** plugin_name,
    mx::PluginRegistrar* registrar) {
  *plugin_abi = MX_PLUGIN_ABI_VERSION;
  *plugin_name = "throw_int_plugin";
  registrar->RegisterOp("_throw_int_op").SetNumInputs(1);
  throw 7;
}
