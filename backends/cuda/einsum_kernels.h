// Launchers of the CUDA plugin's np.einsum kernels (einsum_kernels.cu):
// one thread per element of the target (the output, or one operand's
// gradient) sums its free labels as backends/common/einsum.h says, in
// double for floats and in 64 bits (wrapping to the dtype) for integers,
// as the CPU kernel does. Each returns the launch status
// (cudaErrorInvalidValue for a dtype it lacks) and never throws.
#ifndef MXCORE_BACKENDS_CUDA_EINSUM_KERNELS_H_
#define MXCORE_BACKENDS_CUDA_EINSUM_KERNELS_H_

#include <cuda_runtime.h>

#include <cstdint>

#include "backends/common/einsum.h"

namespace mx_cuda {

// target (n elements) = the contraction of c.num_factors factors, all of
// `dtype`; written as `req` says.
cudaError_t LaunchEinsumContraction(int dtype,
                                    const mx_math::EinsumContraction& c,
                                    const void* const* factors, void* target,
                                    int64_t n, int req, cudaStream_t stream);

}  // namespace mx_cuda

#endif  // MXCORE_BACKENDS_CUDA_EINSUM_KERNELS_H_
