// Launchers of the CUDA plugin's sequence kernels (sequence_kernels.cu):
// SequenceMask, SequenceLast and its gradient, SequenceReverse, with the
// CPU kernels' semantics (backends/cpu/sequence_ops.cc). Data is float32,
// float64 or float16; lengths of any index dtype, truncated as MXNet's, or
// null (every sequence has all its steps).
#ifndef MXCORE_BACKENDS_CUDA_SEQUENCE_KERNELS_H_
#define MXCORE_BACKENDS_CUDA_SEQUENCE_KERNELS_H_

#include <cuda_runtime.h>

#include <cstdint>

namespace mx_cuda {

// Data (d0, d1, inner): (T, B, inner) for axis 0, (B, T, inner) for axis 1.
struct SequenceShape {
  int64_t d0 = 0, d1 = 0, inner = 0;
  int axis = 0;
};

// Steps t >= lengths[b] become `value`.
cudaError_t LaunchSequenceMask(int dtype, int length_dtype,
                               const SequenceShape& s, const void* x,
                               const void* lengths, double value, void* y,
                               int req, cudaStream_t stream);

// y (B, inner) = each sequence's step lengths[b] - 1. A length outside
// [1, T] sets *bad (device memory) and writes nothing for that sequence.
cudaError_t LaunchSequenceLast(int dtype, int length_dtype,
                               const SequenceShape& s, const void* x,
                               const void* lengths, void* y, int req, int* bad,
                               cudaStream_t stream);

// Adds g (B, inner) into dx (the data's shape) at each sequence's last
// step; lengths as LaunchSequenceLast's.
cudaError_t LaunchSequenceLastBackward(int dtype, int length_dtype,
                                       const SequenceShape& s, const void* g,
                                       const void* lengths, void* dx, int* bad,
                                       cudaStream_t stream);

// Axis 0: each sequence's first lengths[b] steps reversed, the rest in
// place. A length outside [0, T] sets *bad.
cudaError_t LaunchSequenceReverse(int dtype, int length_dtype,
                                  const SequenceShape& s, const void* x,
                                  const void* lengths, void* y, int req,
                                  int* bad, cudaStream_t stream);

}  // namespace mx_cuda

#endif  // MXCORE_BACKENDS_CUDA_SEQUENCE_KERNELS_H_
