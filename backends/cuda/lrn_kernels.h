// Launchers of the LRN kernels (lrn_kernels.cu): one thread per element
// runs backends/common/lrn.h, as the CPU kernel does. Return the launch
// status; never throw.
#ifndef MXCORE_BACKENDS_CUDA_LRN_KERNELS_H_
#define MXCORE_BACKENDS_CUDA_LRN_KERNELS_H_

#include <cuda_runtime.h>

#include <cstdint>

#include "backends/common/lrn.h"

namespace mx_cuda {

// y and norm (each with its request) from x, `n` elements of dtype.
cudaError_t LaunchLrnForward(int dtype, const mx_lrn::LrnSpec& s, int64_t n,
                             const void* x, void* y, int y_req, void* norm,
                             int norm_req, cudaStream_t stream);
// dx from the output gradient g, the data x and the forward's norm.
cudaError_t LaunchLrnBackward(int dtype, const mx_lrn::LrnSpec& s, int64_t n,
                              const void* g, const void* x, const void* norm,
                              void* dx, int req, cudaStream_t stream);

}  // namespace mx_cuda

#endif  // MXCORE_BACKENDS_CUDA_LRN_KERNELS_H_
