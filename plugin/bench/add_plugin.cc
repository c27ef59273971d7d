// A plugin for the call-overhead benchmark: a float32 CPU kernel for the
// existing op elemwise_add, doing what the built-in kernel does.
#include "backends/plugin_api/mx_plugin_cpp.h"

namespace {

void Add(const mxplugin::KernelContext&, const mxplugin::Attrs&,
         mxplugin::Tensors in, const int32_t* req, mxplugin::Tensors out) {
  if (in[0].dtype() != MX_DTYPE_FLOAT32) {
    throw mxplugin::Error(MX_STATUS_DTYPE_ERROR, "float32 only");
  }
  const float* a = in[0].data<float>();
  const float* b = in[1].data<float>();
  float* y = out[0].data<float>();
  const int64_t n = out[0].size();
  if (req[0] == MX_REQ_ADD) {
    for (int64_t i = 0; i < n; ++i) y[i] += a[i] + b[i];
  } else if (req[0] != MX_REQ_NULL) {
    for (int64_t i = 0; i < n; ++i) y[i] = a[i] + b[i];
  }
}

}  // namespace

MX_PLUGIN("bench_add", [](mxplugin::Plugin& p) {
  p.RegisterKernel("elemwise_add", MX_DEVICE_CPU, Add);
})
