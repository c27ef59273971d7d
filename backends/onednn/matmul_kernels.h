// oneDNN matmul kernels for dot, _backward_dot (which is also the
// backward of FullyConnected: its gradient is built from dot and sum),
// batch_dot and FullyConnected, on row-major float32 arrays; transposes
// are strided views, never copies.
#ifndef MXCORE_BACKENDS_ONEDNN_MATMUL_KERNELS_H_
#define MXCORE_BACKENDS_ONEDNN_MATMUL_KERNELS_H_

#include <cstdint>

#include "backends/plugin_api/mx_plugin_cpp.h"

namespace mx_onednn {

// C (batch of m x n) = op(A) op(B) [+ bias (n)], as the built-in Gemm
// takes it: A is stored (m x k), or (k x m) when ta; B (k x n), or (n x k)
// when tb; batches are contiguous.
struct GemmSpec {
  int64_t batch = 1, m = 0, n = 0, k = 0;
  bool ta = false, tb = false, bias = false;
};
void Gemm(const GemmSpec& spec, const float* a, const float* b,
          const float* bias, float* c);

void RegisterMatmulKernels(mxplugin::Plugin& plugin);

}  // namespace mx_onednn

#endif  // MXCORE_BACKENDS_ONEDNN_MATMUL_KERNELS_H_
