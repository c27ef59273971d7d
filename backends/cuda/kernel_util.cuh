// Helpers shared by the CUDA plugin's .cu files (compiled by nvcc only):
// launch geometry, float16 loads/stores in float, write requests, block
// reductions, and the dtype/request dispatch of a launcher.
#ifndef MXCORE_BACKENDS_CUDA_KERNEL_UTIL_CUH_
#define MXCORE_BACKENDS_CUDA_KERNEL_UTIL_CUH_

#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cstdint>
#include <type_traits>

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

// Integer +, -, * and negation wrap modulo 2^bits, as the CPU kernels'
// (backends/cpu/kernel_util.h) and NumPy's do: signed overflow of the
// plain operators is undefined. Other types use the plain operators.
template <typename A>
constexpr bool kWrappingInt =
    (std::is_integral_v<A> && std::is_signed_v<A> && !std::is_same_v<A, bool>);
template <typename A>
__device__ __forceinline__ A WrapAdd(A a, A b) {
  if constexpr (kWrappingInt<A>) {
    using U = typename std::make_unsigned<A>::type;
    return static_cast<A>(
        static_cast<U>(static_cast<U>(a) + static_cast<U>(b)));
  } else {
    return a + b;
  }
}
template <typename A>
__device__ __forceinline__ A WrapSub(A a, A b) {
  if constexpr (kWrappingInt<A>) {
    using U = typename std::make_unsigned<A>::type;
    return static_cast<A>(
        static_cast<U>(static_cast<U>(a) - static_cast<U>(b)));
  } else {
    return a - b;
  }
}
template <typename A>
__device__ __forceinline__ A WrapMul(A a, A b) {
  if constexpr (kWrappingInt<A>) {
    return static_cast<A>(static_cast<uint64_t>(static_cast<int64_t>(a)) *
                          static_cast<uint64_t>(static_cast<int64_t>(b)));
  } else {
    return a * b;
  }
}
template <typename A>
__device__ __forceinline__ A WrapNeg(A a) {
  if constexpr (kWrappingInt<A>) {
    return WrapSub(A(0), a);
  } else {
    return -a;  // Keeps -0.0 for floats.
  }
}

// The smallest and largest value of an integer type (device code cannot
// call std::numeric_limits without relaxed constexpr).
template <typename T>
struct IntRange;
template <>
struct IntRange<uint8_t> {
  static constexpr double kLo = 0, kHi = 255;
};
template <>
struct IntRange<int8_t> {
  static constexpr double kLo = -128, kHi = 127;
};
template <>
struct IntRange<int32_t> {
  static constexpr double kLo = -2147483648.0, kHi = 2147483647.0;
};
template <>
struct IntRange<int64_t> {
  static constexpr double kLo = -9223372036854775808.0;
  static constexpr double kHi = 9223372036854775807.0;  // Rounds to 2^63.
};

// The largest value of an integer type.
template <typename A>
__device__ __forceinline__ A IntMax() {
  using U = typename std::make_unsigned<A>::type;
  const U all_ones = static_cast<U>(~U(0));
  return static_cast<A>(std::is_signed<A>::value ? all_ones >> 1 : all_ones);
}

// static_cast<A>(v) made defined for every double, as the CPU's
// SaturatingCast: for integer A, NaN is 0 and values outside A's range
// saturate.
template <typename A>
__device__ __forceinline__ A SaturatingCast(double v) {
  if constexpr (std::is_integral<A>::value && !std::is_same<A, bool>::value) {
    if (v != v) return A(0);
    if (v <= IntRange<A>::kLo) return static_cast<A>(IntRange<A>::kLo);
    // kHi may round up as a double (2^63), so >= saturates it exactly.
    if (v >= IntRange<A>::kHi) return IntMax<A>();
  }
  return static_cast<A>(v);
}

template <int kReq, typename T, typename A>
__device__ __forceinline__ void Store(T* p, int64_t i, A v) {
  if (kReq == MX_REQ_ADD) {
    p[i] = static_cast<T>(WrapAdd(static_cast<A>(p[i]), v));
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

// launch.template operator()<kReq, T>() for kReq MX_REQ_ADD or
// MX_REQ_WRITE.
template <typename T, typename Launch>
void LaunchFor(bool add, const Launch& launch) {
  add ? launch.template operator()<MX_REQ_ADD, T>()
      : launch.template operator()<MX_REQ_WRITE, T>();
}

// Calls launch.template operator()<kReq, T>() for the dtype and request:
// float32, float64 and float16, and with kIntegers also uint8, int8, int32
// and int64; other dtypes are cudaErrorInvalidValue.
template <bool kIntegers = false, typename Launch>
cudaError_t Dispatch(int dtype, int req, Launch launch) {
  if (req != MX_REQ_WRITE && req != MX_REQ_INPLACE && req != MX_REQ_ADD) {
    return cudaSuccess;  // MX_REQ_NULL: nothing to write.
  }
  const bool add = req == MX_REQ_ADD;
  switch (dtype) {
    case MX_DTYPE_FLOAT32:
      LaunchFor<float>(add, launch);
      break;
    case MX_DTYPE_FLOAT64:
      LaunchFor<double>(add, launch);
      break;
    case MX_DTYPE_FLOAT16:
      LaunchFor<__half>(add, launch);
      break;
    default:
      if constexpr (kIntegers) {
        switch (dtype) {
          case MX_DTYPE_UINT8:
            LaunchFor<uint8_t>(add, launch);
            break;
          case MX_DTYPE_INT8:
            LaunchFor<int8_t>(add, launch);
            break;
          case MX_DTYPE_INT32:
            LaunchFor<int32_t>(add, launch);
            break;
          case MX_DTYPE_INT64:
            LaunchFor<int64_t>(add, launch);
            break;
          default:
            return cudaErrorInvalidValue;
        }
        break;
      }
      return cudaErrorInvalidValue;
  }
  return cudaGetLastError();
}

}  // namespace kernel
}  // namespace mx_cuda

#endif  // MXCORE_BACKENDS_CUDA_KERNEL_UTIL_CUH_
