// Launchers of the dynamic-shape kernels (dynamic_kernels.cu): which
// elements of an index array are non-zero, counted with a CUB prefix sum,
// and the gathers and scatters of the kept elements or rows. Every
// launcher returns the launch status and never throws.
#ifndef MXCORE_BACKENDS_CUDA_DYNAMIC_KERNELS_H_
#define MXCORE_BACKENDS_CUDA_DYNAMIC_KERNELS_H_

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

namespace mx_cuda {

// Scratch bytes NonZeroPositions needs for n elements.
size_t NonZeroScratchBytes(int64_t n);

// positions[i] = how many of index[0..i] are non-zero (an inclusive prefix
// count, int64), for an index of dtype `dtype` (float32/64/16, int8/32/64,
// uint8, bool); `scratch` holds NonZeroScratchBytes(n) bytes.
// cudaErrorInvalidValue: a dtype it lacks.
cudaError_t NonZeroPositions(int dtype, int64_t n, const void* index,
                             int64_t* positions, void* scratch,
                             cudaStream_t stream);

// flatnonzero: y[positions[i] - 1] = i where index[i] is non-zero.
cudaError_t ScatterNonZeroIndices(int dtype, int64_t n, const void* index,
                                  const int64_t* positions, int64_t* y,
                                  cudaStream_t stream);

// _npx_nonzero: row positions[i] - 1 of y (ndim int64 each) gets the
// C-order coordinates of element i of an index of `shape` where it is
// non-zero (ndim <= kMaxNonZeroDims).
constexpr int kMaxNonZeroDims = 8;
struct NonZeroShape {
  int ndim = 0;
  int64_t dims[kMaxNonZeroDims];
};
cudaError_t ScatterNonZeroCoords(int dtype, int64_t n, const void* index,
                                 const int64_t* positions,
                                 const NonZeroShape& shape, int64_t* y,
                                 cudaStream_t stream);

// boolean_mask: the kept rows of data (rows of row_bytes bytes) packed into
// y in order.
cudaError_t GatherKeptRows(int dtype, int64_t rows, int64_t row_bytes,
                           const void* index, const int64_t* positions,
                           const void* data, void* y, cudaStream_t stream);

// _backward_boolean_mask: dx (rows x row elements of `dtype`, any numeric
// one) gets ograd's row k at the k-th kept row and zeros elsewhere (or
// adds, wrapping for integers, with `add`).
cudaError_t ScatterKeptRows(int dtype, int index_dtype, int64_t rows,
                            int64_t row, const void* index,
                            const int64_t* positions, const void* ograd,
                            void* dx, bool add, cudaStream_t stream);

}  // namespace mx_cuda

#endif  // MXCORE_BACKENDS_CUDA_DYNAMIC_KERNELS_H_
