// Shared by the CUDA plugin's benchmarks: loads the plugin named by
// MX_CUDA_PLUGIN once and says whether a GPU is there to measure on.
//
//   void BM_Something(benchmark::State& state) {
//     if (!HasGpu()) return state.SkipWithError("no GPU");
//     const NDArray x = OnGpu({64, 64}, /*seed=*/1);
#ifndef MXCORE_BACKENDS_CUDA_GPU_BENCHMARK_UTIL_H_
#define MXCORE_BACKENDS_CUDA_GPU_BENCHMARK_UTIL_H_

#include <cstdint>

#include "ndarray/ndarray.h"

namespace mx {

// Loads the plugin on first use; false (having printed why) without a
// usable GPU.
bool HasGpu();

// A float32 array on gpu(0), uniform in [lo, hi) from `seed` (made on the
// CPU, so that runs and devices see the same numbers).
NDArray OnGpu(const TShape& shape, uint32_t seed, double lo = -1,
              double hi = 1);

}  // namespace mx

#endif  // MXCORE_BACKENDS_CUDA_GPU_BENCHMARK_UTIL_H_
