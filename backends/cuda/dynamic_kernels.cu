// Dynamic-shape kernels: flags of the non-zero index elements, their
// inclusive prefix count (cub::DeviceScan), and the packing gathers /
// scatters that use it. The host reads the last count to size the output.
#include <cuda_fp16.h>

#include <cub/device/device_scan.cuh>

#include "backends/cuda/dynamic_kernels.h"
#include "backends/cuda/index_util.cuh"
#include "backends/cuda/kernel_util.cuh"
#include "backends/plugin_api/mx_plugin.h"

namespace mx_cuda {
namespace {

using namespace kernel;  // NOLINT: the shared kernel helpers.

template <typename I>
__device__ __forceinline__ bool NonZero(I v) {
  return v != I(0);
}
template <>
__device__ __forceinline__ bool NonZero<__half>(__half v) {
  return __half2float(v) != 0.0f;
}

// WithIndexType (index_util.cuh) as a launch status: an index dtype it
// lacks is cudaErrorInvalidValue.
template <typename Launch>
cudaError_t IndexDispatch(int dtype, Launch launch) {
  if (!WithIndexType(dtype, launch)) return cudaErrorInvalidValue;
  return cudaGetLastError();
}

template <typename I>
__global__ void FlagKernel(int64_t n, const I* index, int64_t* flags) {
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < n;
       i += int64_t{blockDim.x} * gridDim.x) {
    flags[i] = NonZero(index[i]) ? 1 : 0;
  }
}

template <typename I>
__global__ void NonZeroIndexKernel(int64_t n, const I* index,
                                   const int64_t* pos, int64_t* y) {
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < n;
       i += int64_t{blockDim.x} * gridDim.x) {
    if (NonZero(index[i])) y[pos[i] - 1] = i;
  }
}

template <typename I>
__global__ void NonZeroCoordsKernel(int64_t n, const I* index,
                                    const int64_t* pos, NonZeroShape s,
                                    int64_t* y) {
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < n;
       i += int64_t{blockDim.x} * gridDim.x) {
    if (!NonZero(index[i])) continue;
    int64_t* row = y + (pos[i] - 1) * s.ndim;
    int64_t rest = i;
    for (int d = s.ndim - 1; d >= 0; --d) {
      row[d] = rest % s.dims[d];
      rest /= s.dims[d];
    }
  }
}

// One thread per byte of the kept rows: row r of data goes to row
// pos[r] - 1 of y.
template <typename I>
__global__ void GatherRowsKernel(int64_t rows, int64_t row_bytes,
                                 const I* index, const int64_t* pos,
                                 const char* data, char* y) {
  const int64_t n = rows * row_bytes;
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < n;
       i += int64_t{blockDim.x} * gridDim.x) {
    const int64_t r = i / row_bytes, b = i % row_bytes;
    if (NonZero(index[r])) y[(pos[r] - 1) * row_bytes + b] = data[i];
  }
}

template <typename T, typename I>
__global__ void ScatterRowsKernel(int64_t rows, int64_t row, const I* index,
                                  const int64_t* pos, const T* g, T* dx,
                                  bool add) {
  using A = typename Acc<T>::type;
  const int64_t n = rows * row;
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < n;
       i += int64_t{blockDim.x} * gridDim.x) {
    const int64_t r = i / row, c = i % row;
    const A v = NonZero(index[r]) ? Load(g, (pos[r] - 1) * row + c) : A(0);
    dx[i] = static_cast<T>(add ? WrapAdd(Load(dx, i), v) : v);
  }
}

template <typename I>
struct ScatterRows {
  int64_t rows, row;
  const I* index;
  const int64_t* pos;
  const void* g;
  void* dx;
  bool add;
  cudaStream_t s;
  template <int R, typename T>
  void operator()() const {
    ScatterRowsKernel<T, I><<<Blocks(rows * row), kThreads, 0, s>>>(
        rows, row, index, pos, static_cast<const T*>(g), static_cast<T*>(dx),
        add);
  }
};

}  // namespace

size_t NonZeroScratchBytes(int64_t n) {
  size_t cub_bytes = 0;
  cub::DeviceScan::InclusiveSum(nullptr, cub_bytes,
                                static_cast<const int64_t*>(nullptr),
                                static_cast<int64_t*>(nullptr), n);
  // The flags, then CUB's scratch (aligned).
  return static_cast<size_t>(n) * sizeof(int64_t) + cub_bytes + 256;
}

cudaError_t NonZeroPositions(int dtype, int64_t n, const void* index,
                             int64_t* positions, void* scratch,
                             cudaStream_t stream) {
  if (n == 0) return cudaSuccess;
  int64_t* flags = static_cast<int64_t*>(scratch);
  const cudaError_t err = IndexDispatch(dtype, [&](auto tag) {
    using I = decltype(tag);
    FlagKernel<I><<<Blocks(n), kThreads, 0, stream>>>(
        n, static_cast<const I*>(index), flags);
  });
  if (err != cudaSuccess) return err;
  size_t cub_bytes = 0;
  cub::DeviceScan::InclusiveSum(
      nullptr, cub_bytes, static_cast<const int64_t*>(flags), positions, n);
  uintptr_t tail = reinterpret_cast<uintptr_t>(flags + n);
  tail = (tail + 255) & ~uintptr_t{255};
  return cub::DeviceScan::InclusiveSum(reinterpret_cast<void*>(tail), cub_bytes,
                                       static_cast<const int64_t*>(flags),
                                       positions, n, stream);
}

cudaError_t ScatterNonZeroIndices(int dtype, int64_t n, const void* index,
                                  const int64_t* positions, int64_t* y,
                                  cudaStream_t stream) {
  if (n == 0) return cudaSuccess;
  return IndexDispatch(dtype, [&](auto tag) {
    using I = decltype(tag);
    NonZeroIndexKernel<I><<<Blocks(n), kThreads, 0, stream>>>(
        n, static_cast<const I*>(index), positions, y);
  });
}

cudaError_t ScatterNonZeroCoords(int dtype, int64_t n, const void* index,
                                 const int64_t* positions,
                                 const NonZeroShape& shape, int64_t* y,
                                 cudaStream_t stream) {
  if (n == 0 || shape.ndim == 0) return cudaSuccess;
  return IndexDispatch(dtype, [&](auto tag) {
    using I = decltype(tag);
    NonZeroCoordsKernel<I><<<Blocks(n), kThreads, 0, stream>>>(
        n, static_cast<const I*>(index), positions, shape, y);
  });
}

cudaError_t GatherKeptRows(int dtype, int64_t rows, int64_t row_bytes,
                           const void* index, const int64_t* positions,
                           const void* data, void* y, cudaStream_t stream) {
  if (rows * row_bytes == 0) return cudaSuccess;
  return IndexDispatch(dtype, [&](auto tag) {
    using I = decltype(tag);
    GatherRowsKernel<I><<<Blocks(rows * row_bytes), kThreads, 0, stream>>>(
        rows, row_bytes, static_cast<const I*>(index), positions,
        static_cast<const char*>(data), static_cast<char*>(y));
  });
}

cudaError_t ScatterKeptRows(int dtype, int index_dtype, int64_t rows,
                            int64_t row, const void* index,
                            const int64_t* positions, const void* ograd,
                            void* dx, bool add, cudaStream_t stream) {
  if (rows * row == 0) return cudaSuccess;
  cudaError_t data_err = cudaSuccess;  // The data dtype's dispatch.
  const cudaError_t err = IndexDispatch(index_dtype, [&](auto tag) {
    using I = decltype(tag);
    // (The request only selects the instance: the kernel reads `add`.)
    data_err =
        Dispatch<true>(dtype, MX_REQ_WRITE,
                       ScatterRows<I>{rows, row, static_cast<const I*>(index),
                                      positions, ograd, dx, add, stream});
  });
  return data_err != cudaSuccess ? data_err : err;
}

}  // namespace mx_cuda
