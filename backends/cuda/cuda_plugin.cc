// The CUDA/cuDNN GPU backend plugin, libmx_cuda.so: registers the device
// type "gpu" (Context::GPU(n)) and kernels on it. Load it with
// MX_PLUGINS=/path/libmx_cuda.so or mx::LoadPlugin. On a machine without
// a usable GPU it loads and registers a device with 0 units; using gpu(0)
// is then a typed error (mx_cuda_no_device_reason says why).
#include "backends/cuda/cuda_device.h"
#include "backends/cuda/cuda_ops.h"
#include "backends/cuda/cuda_util.h"
#include "backends/cuda/dnn_calls.h"
#include "backends/plugin_api/mx_plugin_cpp.h"

MX_PLUGIN("cuda", [](mxplugin::Plugin& plugin) {
  plugin.RegisterDevice(std::make_shared<mx_cuda::CudaDevice>());
  mx_cuda::RegisterElementwiseOps(plugin);
  mx_cuda::RegisterNumpyOps(plugin);
  mx_cuda::RegisterReduceOps(plugin);
  mx_cuda::RegisterArrayOps(plugin);
  mx_cuda::RegisterLayoutOps(plugin);
  mx_cuda::RegisterDynamicOps(plugin);
  mx_cuda::RegisterBoxNmsOps(plugin);
  mx_cuda::RegisterBlasOps(plugin);
  mx_cuda::RegisterConvOps(plugin);
  mx_cuda::RegisterDeconvOps(plugin);
  mx_cuda::RegisterNnOps(plugin);
  mx_cuda::RegisterIndexOps(plugin);
  mx_cuda::RegisterIndexModifyOps(plugin);
  mx_cuda::RegisterEinsumOps(plugin);
  mx_cuda::RegisterNormOps(plugin);
  mx_cuda::RegisterGroupNormOps(plugin);
  mx_cuda::RegisterResizeOps(plugin);
  mx_cuda::RegisterLossOps(plugin);
  mx_cuda::RegisterCtcOps(plugin);
  mx_cuda::RegisterRnnOps(plugin);
  mx_cuda::RegisterLrnOps(plugin);
  mx_cuda::RegisterOrderingOps(plugin);
  mx_cuda::RegisterSequenceOps(plugin);
  mx_cuda::RegisterInterleavedMatmulOps(plugin);
  mx_cuda::RegisterFusion(plugin);
})

// For tests and diagnostics (found with dlsym; not part of the plugin
// ABI): why no GPU is usable, "" when one is.
extern "C" __attribute__((visibility("default"))) const char*
mx_cuda_no_device_reason() {
  return mx_cuda::NoDeviceReason().c_str();
}

// Fused elementwise kernels NVRTC compiled since the plugin loaded.
extern "C" __attribute__((visibility("default"))) int64_t
mx_cuda_fused_compiles() {
  return mx_cuda::FusedKernelCompiles();
}

// Softmax, activation, pooling and BatchNorm calls that ran cuDNN
// (dnn_calls.h) since the plugin loaded.
extern "C" __attribute__((visibility("default"))) int64_t
mx_cuda_cudnn_calls() {
  return mx_cuda::DnnCalls();
}
