#include "backends/cuda/gpu_benchmark_util.h"

#include <cuda_runtime.h>

#include <cstdio>
#include <cstdlib>

#include "plugin/plugin.h"
#include "testing/op_test_util.h"

namespace mx {

bool HasGpu() {
  static const bool has = [] {
    LoadPlugin(std::getenv("MX_CUDA_PLUGIN"));
    int n = 0;
    const cudaError_t err = cudaGetDeviceCount(&n);
    if (err != cudaSuccess || n == 0) {
      std::printf("no usable GPU (%s): nothing to measure\n",
                  err != cudaSuccess ? cudaGetErrorString(err) : "0 devices");
      return false;
    }
    return true;
  }();
  return has;
}

NDArray OnGpu(const TShape& shape, uint32_t seed, double lo, double hi) {
  return testing::RandomArray(shape, DType::kFloat32, lo, hi, seed)
      .Copy(Context::GPU(0));
}

}  // namespace mx
