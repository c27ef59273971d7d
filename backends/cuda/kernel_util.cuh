// Helpers shared by the CUDA plugin's .cu files (compiled by nvcc only):
// launch geometry, float16 loads/stores in float, write requests, block
// reductions, and the dtype/request dispatch of a launcher.
#ifndef MXCORE_BACKENDS_CUDA_KERNEL_UTIL_CUH_
#define MXCORE_BACKENDS_CUDA_KERNEL_UTIL_CUH_

#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cstdint>

#include "backends/plugin_api/mx_plugin.h"

namespace mx_cuda {
namespace kernel {

constexpr int kThreads = 256;

inline int Blocks(int64_t n) {
  const int64_t b = (n + kThreads - 1) / kThreads;
  return static_cast<int>(b < 65535 * 16 ? (b < 1 ? 1 : b) : 65535 * 16);
}

// Compute type: float for __half, else the type itself.
template <typename T>
struct Acc {
  using type = T;
};
template <>
struct Acc<__half> {
  using type = float;
};

template <typename T>
__device__ __forceinline__ typename Acc<T>::type Load(const T* p, int64_t i) {
  return static_cast<typename Acc<T>::type>(p[i]);
}

template <int kReq, typename T, typename A>
__device__ __forceinline__ void Store(T* p, int64_t i, A v) {
  if (kReq == MX_REQ_ADD) {
    p[i] = static_cast<T>(static_cast<A>(p[i]) + v);
  } else {
    p[i] = static_cast<T>(v);
  }
}

template <typename A>
__device__ __forceinline__ bool IsNan(A x) {
  return x != x;
}

// Block-wide sum of one value per thread (kThreads threads).
template <typename A>
__device__ A BlockSum(A v, A* shared) {
  shared[threadIdx.x] = v;
  __syncthreads();
  for (int s = kThreads / 2; s > 0; s >>= 1) {
    if (threadIdx.x < s) shared[threadIdx.x] += shared[threadIdx.x + s];
    __syncthreads();
  }
  const A r = shared[0];
  __syncthreads();
  return r;
}

// Calls launch.template operator()<kReq, T>() for the dtype and request.
template <typename Launch>
cudaError_t Dispatch(int dtype, int req, Launch launch) {
  if (req != MX_REQ_WRITE && req != MX_REQ_INPLACE && req != MX_REQ_ADD) {
    return cudaSuccess;  // MX_REQ_NULL: nothing to write.
  }
  const bool add = req == MX_REQ_ADD;
  switch (dtype) {
    case MX_DTYPE_FLOAT32:
      add ? launch.template operator()<MX_REQ_ADD, float>()
          : launch.template operator()<MX_REQ_WRITE, float>();
      break;
    case MX_DTYPE_FLOAT64:
      add ? launch.template operator()<MX_REQ_ADD, double>()
          : launch.template operator()<MX_REQ_WRITE, double>();
      break;
    case MX_DTYPE_FLOAT16:
      add ? launch.template operator()<MX_REQ_ADD, __half>()
          : launch.template operator()<MX_REQ_WRITE, __half>();
      break;
    default:
      return cudaErrorInvalidValue;
  }
  return cudaGetLastError();
}

}  // namespace kernel
}  // namespace mx_cuda

#endif  // MXCORE_BACKENDS_CUDA_KERNEL_UTIL_CUH_
