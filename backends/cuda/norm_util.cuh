// Helpers of the CUDA plugin's norm_kernels.cu and loss_kernels.cu (and
// the gradients that sum through doubles: ROIAlign, ROIPooling, bilinear
// resize) (compiled by nvcc only): per-output write requests at run time,
// line geometry, a NaN-ignoring block maximum, label loads of any dtype.
#ifndef MXCORE_BACKENDS_CUDA_NORM_UTIL_CUH_
#define MXCORE_BACKENDS_CUDA_NORM_UTIL_CUH_

#include <cstdint>

#include "backends/cuda/kernel_util.cuh"
#include "backends/cuda/norm_kernels.h"

namespace mx_cuda {
namespace kernel {

// Block-per-line kernels use at most this many blocks (grid-stride above).
inline int LineBlocks(int64_t lines) {
  return static_cast<int>(lines < 65535 * 16 ? (lines < 1 ? 1 : lines)
                                             : 65535 * 16);
}

// A grid-stride loop of i over [0, n).
#define MX_CUDA_GRID_STRIDE(i, n)                                           \
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < (n); \
       i += int64_t{blockDim.x} * gridDim.x)

// Writes v at p[i] for a runtime request (several outputs, one launch).
template <typename T, typename A>
__device__ __forceinline__ void Put(T* p, int64_t i, int req, A v) {
  if (req == MX_REQ_ADD) {
    Store<MX_REQ_ADD>(p, i, v);
  } else if (req == MX_REQ_WRITE || req == MX_REQ_INPLACE) {
    Store<MX_REQ_WRITE>(p, i, v);
  }
}

inline bool Writes(int req) { return req != MX_REQ_NULL; }

__device__ __forceinline__ int64_t LineBase(const Lines& l, int64_t line) {
  return (line / l.inner) * l.len * l.inner + line % l.inner;
}

// Block-wide maximum as the CPU's std::max(m, v): NaN never wins.
template <typename A>
__device__ A BlockMax(A v, A* shared) {
  shared[threadIdx.x] = v;
  __syncthreads();
  for (int s = kThreads / 2; s > 0; s >>= 1) {
    if (threadIdx.x < s) {
      const A o = shared[threadIdx.x + s];
      if (shared[threadIdx.x] < o) shared[threadIdx.x] = o;
    }
    __syncthreads();
  }
  const A r = shared[0];
  __syncthreads();
  return r;
}

// A label as a double, whatever its dtype.
template <typename L>
__device__ __forceinline__ double LabelAt(const L* p, int64_t i) {
  return static_cast<double>(p[i]);
}
template <>
__device__ __forceinline__ double LabelAt<__half>(const __half* p, int64_t i) {
  return static_cast<double>(__half2float(p[i]));
}

// Calls f.template operator()<L>() for a label dtype; false for bool or
// an unknown one.
template <typename F>
bool LabelDispatch(int dtype, F f) {
  switch (dtype) {
    case MX_DTYPE_FLOAT32:
      f.template operator()<float>();
      return true;
    case MX_DTYPE_FLOAT64:
      f.template operator()<double>();
      return true;
    case MX_DTYPE_FLOAT16:
      f.template operator()<__half>();
      return true;
    case MX_DTYPE_UINT8:
      f.template operator()<uint8_t>();
      return true;
    case MX_DTYPE_INT32:
      f.template operator()<int32_t>();
      return true;
    case MX_DTYPE_INT8:
      f.template operator()<int8_t>();
      return true;
    case MX_DTYPE_INT64:
      f.template operator()<int64_t>();
      return true;
    default:
      return false;
  }
}

template <typename T>
__global__ void WriteDoublesKernel(int64_t n, const double* acc, T* dx,
                                   int req) {
  using A = typename Acc<T>::type;
  MX_CUDA_GRID_STRIDE(i, n) { Put(dx, i, req, static_cast<A>(acc[i])); }
}

// A gradient scattered with double atomics: zeroes acc (n doubles), runs
// `scatter` (launches adding into acc), then writes acc into dx (n
// elements) with `req`. A failed memset skips the rest (the launcher's
// cudaGetLastError reports it).
template <typename T, typename Scatter>
void ScatterThroughDoubles(int64_t n, double* acc, T* dx, int req,
                           cudaStream_t s, Scatter scatter) {
  if (cudaMemsetAsync(acc, 0, static_cast<size_t>(n) * sizeof(double), s) !=
      cudaSuccess) {
    return;
  }
  scatter();
  WriteDoublesKernel<T><<<Blocks(n), kThreads, 0, s>>>(n, acc, dx, req);
}

}  // namespace kernel
}  // namespace mx_cuda

#endif  // MXCORE_BACKENDS_CUDA_NORM_UTIL_CUH_
