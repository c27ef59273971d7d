// Launchers of the CUDA plugin's npx.index_add / npx.index_update kernels
// and their gradients, and of npx.constraint_check's test
// (index_modify_kernels.cu), with the CPU kernels' semantics
// (backends/cpu/index_modify_ops.cc, constraint_check_ops.cc): an index
// outside [0, extent) sets *bad (a device int the caller zeroed);
// index_add's repeated positions add up (atomics, so float sums may round
// in another order than the CPU's); index_update's repeated positions keep
// their last value, found with an atomic maximum so the result does not
// depend on scheduling. Data of any numeric dtype (gradients: float32,
// float64, float16); ind int32 or int64. Each launcher returns the launch
// status (cudaErrorInvalidValue for a dtype it lacks) and never throws.
#ifndef MXCORE_BACKENDS_CUDA_INDEX_MODIFY_KERNELS_H_
#define MXCORE_BACKENDS_CUDA_INDEX_MODIFY_KERNELS_H_

#include <cuda_runtime.h>

#include <cstdint>

#include "backends/cuda/elementwise.h"

namespace mx_cuda {

// mx_math::IndexModifyGeometry in fixed arrays for the device.
struct IndexModifyShape {
  int k = 0;  // index axes
  int64_t lead[kMaxDims];
  int64_t count = 0, tail = 0, rows = 0;
  int tail_ndim = 0;
  int64_t tail_dims[kMaxDims], val_tail_step[kMaxDims];
  int64_t val_index_step = 0;
  int64_t val_size = 0;
};

// Scratch bytes each launcher below needs: the last writer of every row
// (index_update and its gradients) and accumulators (index_add, the val
// gradients).
size_t IndexAddScratchBytes(int dtype, const IndexModifyShape& s);
size_t IndexUpdateScratchBytes(const IndexModifyShape& s);
size_t IndexValGradScratchBytes(int dtype, const IndexModifyShape& s,
                                bool winners_only);

// y = a with val added (index_add) or written (index_update) at the rows
// ind names.
cudaError_t LaunchIndexAdd(int dtype, int index_dtype,
                           const IndexModifyShape& s, const void* a,
                           const void* ind, const void* val, void* y, int req,
                           int* bad, void* scratch, cudaStream_t stream);
cudaError_t LaunchIndexUpdate(int dtype, int index_dtype,
                              const IndexModifyShape& s, const void* a,
                              const void* ind, const void* val, void* y,
                              int req, int* bad, void* scratch,
                              cudaStream_t stream);
// dval: out_grad at each position (only where the position was the last
// writer of its row when winners_only), summed where val broadcasts.
cudaError_t LaunchIndexValGrad(int dtype, int index_dtype,
                               const IndexModifyShape& s, bool winners_only,
                               const void* og, const void* ind, void* dval,
                               int req, int* bad, void* scratch,
                               cudaStream_t stream);
// index_update's da: out_grad, 0 in the rows written.
cudaError_t LaunchIndexUpdateAGrad(int dtype, int index_dtype,
                                   const IndexModifyShape& s, const void* og,
                                   const void* ind, void* da, int req, int* bad,
                                   void* scratch, cudaStream_t stream);

// constraint_check: sets *bad when one of x's n bools is false; *y = true.
cudaError_t LaunchAllTrue(int64_t n, const bool* x, bool* y, int* bad,
                          cudaStream_t stream);

}  // namespace mx_cuda

#endif  // MXCORE_BACKENDS_CUDA_INDEX_MODIFY_KERNELS_H_
