// A test plugin whose CPU kernel for _default_subgraph_op always declines
// (MX_STATUS_NOT_IMPLEMENTED): the host must fall back to the kernel it
// had, the op's kernel for every device. Counts its calls for the test.
#include <atomic>

#include "backends/plugin_api/mx_plugin_cpp.h"

namespace {

std::atomic<int> calls{0};

}  // namespace

extern "C" __attribute__((visibility("default"))) int declining_plugin_calls() {
  return calls.load();
}

MX_PLUGIN("declining", [](mxplugin::Plugin& p) {
  p.RegisterKernel("_default_subgraph_op", MX_DEVICE_CPU,
                   [](const mxplugin::KernelContext&, const mxplugin::Attrs&,
                      mxplugin::Tensors, const int32_t*, mxplugin::Tensors) {
                     ++calls;
                     throw mxplugin::Error(MX_STATUS_NOT_IMPLEMENTED,
                                           "declining: never runs subgraphs");
                   });
})
