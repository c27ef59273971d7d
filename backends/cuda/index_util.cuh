// Device helpers shared by the indexing kernels (index_kernels.cu,
// order_kernels.cu; nvcc only): the CPU's index conversion (floats
// truncate toward zero and saturate, NaN is 0), dtype dispatch over every
// numeric dtype, and stores that work for integer outputs too.
#ifndef MXCORE_BACKENDS_CUDA_INDEX_UTIL_CUH_
#define MXCORE_BACKENDS_CUDA_INDEX_UTIL_CUH_

#include <cstdint>
#include <type_traits>

#include "backends/cuda/kernel_util.cuh"

namespace mx_cuda {
namespace kernel {

#define MX_GRID_LOOP(i, n)                                                  \
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < (n); \
       i += int64_t{blockDim.x} * gridDim.x)

// ---- Index conversion, as the CPU's ToIndex: floats truncate toward
// zero and saturate, NaN is 0. ----

template <typename I>
__device__ __forceinline__ double ToDouble(I v) {
  return static_cast<double>(static_cast<typename Acc<I>::type>(v));
}

template <typename I>
__device__ __forceinline__ int64_t ToIndex(I v) {
  if constexpr (std::is_integral_v<I>) {
    return static_cast<int64_t>(v);
  } else {
    const double d = ToDouble(v);
    if (d != d) return 0;
    if (d <= -9.2233720368547758e18) return INT64_MIN;
    if (d >= 9.2233720368547758e18) return INT64_MAX;
    return static_cast<int64_t>(d);
  }
}

// Calls f(I{}) for an index (or condition, or length) dtype; false when
// the dtype is none of them.
template <typename F>
bool WithIndexType(int dtype, F f) {
  switch (dtype) {
    case MX_DTYPE_FLOAT32:
      f(float{});
      return true;
    case MX_DTYPE_FLOAT64:
      f(double{});
      return true;
    case MX_DTYPE_FLOAT16:
      f(__half{});
      return true;
    case MX_DTYPE_UINT8:
      f(uint8_t{});
      return true;
    case MX_DTYPE_INT32:
      f(int32_t{});
      return true;
    case MX_DTYPE_INT8:
      f(int8_t{});
      return true;
    case MX_DTYPE_INT64:
      f(int64_t{});
      return true;
    case MX_DTYPE_BOOL:
      f(bool{});
      return true;
    default:
      return false;
  }
}

inline bool IsIndexType(int dtype) {
  return WithIndexType(dtype, [](auto) {});
}

inline bool Writes(int req) {
  return req == MX_REQ_WRITE || req == MX_REQ_INPLACE || req == MX_REQ_ADD;
}

// v truncated into [lo, hi] (NaN is 0).
template <typename T>
__device__ __forceinline__ T Saturate(double v, T lo, T hi) {
  if (v != v) return T(0);
  if (v <= static_cast<double>(lo)) return lo;
  if (v >= static_cast<double>(hi)) return hi;
  return static_cast<T>(v);
}

// A double as T: integers truncate and saturate (NaN is 0), as the CPU's
// FromDouble; float16 goes through float.
template <typename T>
__device__ __forceinline__ typename Acc<T>::type FromDouble(double v) {
  using A = typename Acc<T>::type;
  if constexpr (std::is_same_v<T, uint8_t>) {
    return Saturate<T>(v, 0, UINT8_MAX);
  } else if constexpr (std::is_same_v<T, int8_t>) {
    return Saturate<T>(v, INT8_MIN, INT8_MAX);
  } else if constexpr (std::is_same_v<T, int32_t>) {
    return Saturate<T>(v, INT32_MIN, INT32_MAX);
  } else if constexpr (std::is_same_v<T, int64_t>) {
    return Saturate<T>(v, INT64_MIN, INT64_MAX);
  } else {
    return static_cast<A>(v);
  }
}

// Stores v (in T's compute type) to p[i], adding for MX_REQ_ADD; integers
// add modulo 2^bits as on the CPU (WrapAdd: a plain signed + that overflows
// is undefined on the device too).
template <int kReq, typename T>
__device__ __forceinline__ void Put(T* p, int64_t i, typename Acc<T>::type v) {
  using A = typename Acc<T>::type;
  if (kReq == MX_REQ_ADD) v = WrapAdd(static_cast<A>(p[i]), v);
  if constexpr (std::is_same_v<T, __half>) {
    p[i] = __float2half(v);
  } else {
    p[i] = static_cast<T>(v);
  }
}

// ---- Scatter-adds that tolerate repeated targets (the gradients of take,
// gather_nd and topk): atomic adds into accumulators of the whole output
// (IndexScratchBytes each), then stored with the request. ----

// Accumulators: float (double for float64) for floats; for
// integers 64-bit unsigned adds, which wrap as the CPU's adds in the dtype
// do once the sum is truncated to it.
template <typename T>
using ScatterAcc = std::conditional_t<std::is_integral_v<T>, unsigned long long,
                                      typename Acc<T>::type>;

template <typename T>
__device__ __forceinline__ ScatterAcc<T> ScatterValue(const T* g, int64_t i) {
  if constexpr (std::is_integral_v<T>) {
    return static_cast<unsigned long long>(static_cast<int64_t>(g[i]));
  } else {
    return Load(g, i);
  }
}

// out (+)= the accumulated sums.
template <int kReq, typename T>
__global__ void StoreAccumulatedKernel(int64_t n, const ScatterAcc<T>* acc,
                                       T* out) {
  MX_GRID_LOOP(i, n) {
    if constexpr (std::is_integral_v<T>) {
      Store<kReq>(out, i, static_cast<T>(static_cast<int64_t>(acc[i])));
    } else {
      Store<kReq>(out, i, acc[i]);
    }
  }
}

// Calls launch.template operator()<kReq, T>() for any dtype, bool included
// (ops that only move elements: pick).
template <typename Launch>
cudaError_t DispatchAnyType(int dtype, int req, Launch launch) {
  if (!Writes(req)) return cudaSuccess;
  const bool add = req == MX_REQ_ADD;
  const bool known = WithIndexType(dtype, [&](auto tag) {
    using T = decltype(tag);
    add ? launch.template operator()<MX_REQ_ADD, T>()
        : launch.template operator()<MX_REQ_WRITE, T>();
  });
  return known ? cudaGetLastError() : cudaErrorInvalidValue;
}

// DispatchAnyType for any numeric dtype but bool (outputs of _arange and
// argsort).
template <typename Launch>
cudaError_t DispatchNumeric(int dtype, int req, Launch launch) {
  if (Writes(req) && dtype == MX_DTYPE_BOOL) return cudaErrorInvalidValue;
  return DispatchAnyType(dtype, req, launch);
}

inline bool IsFloat(int dtype) {
  return dtype == MX_DTYPE_FLOAT32 || dtype == MX_DTYPE_FLOAT64 ||
         dtype == MX_DTYPE_FLOAT16;
}

}  // namespace kernel
}  // namespace mx_cuda

#endif  // MXCORE_BACKENDS_CUDA_INDEX_UTIL_CUH_
