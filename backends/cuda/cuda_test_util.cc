#include "backends/cuda/cuda_test_util.h"

#include <dlfcn.h>

#include <cstdlib>

#include "plugin/plugin.h"
#include "testing/op_test_util.h"

namespace mx {
namespace testing {

std::vector<double> Host(const NDArray& a) {
  return ToDouble(a.Copy(Context::CPU()));
}

const char* CudaPluginPath() { return std::getenv("MX_CUDA_PLUGIN"); }

const std::string& NoGpuReason() {
  static const std::string* reason = [] {
    const PluginInfo info = LoadPlugin(CudaPluginPath());
    EXPECT_EQ(info.name, "cuda");
    void* lib = dlopen(CudaPluginPath(), RTLD_NOW | RTLD_NOLOAD);
    auto fn = lib == nullptr ? nullptr
                             : reinterpret_cast<const char* (*)()>(
                                   dlsym(lib, "mx_cuda_no_device_reason"));
    auto* r = new std::string(fn == nullptr ? "plugin symbol missing" : fn());
    if (lib != nullptr) dlclose(lib);
    return r;
  }();
  return *reason;
}

int64_t CudnnCallsSoFar() {
  NoGpuReason();  // Loaded.
  void* lib = dlopen(CudaPluginPath(), RTLD_NOW | RTLD_NOLOAD);
  auto fn =
      lib == nullptr
          ? nullptr
          : reinterpret_cast<int64_t (*)()>(dlsym(lib, "mx_cuda_cudnn_calls"));
  const int64_t n = fn == nullptr ? -1 : fn();
  if (lib != nullptr) dlclose(lib);
  return n;
}

}  // namespace testing
}  // namespace mx
