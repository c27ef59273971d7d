// The CUDA plugin's kernels that make arrays rather than map them: dtype
// casts, fills, counter-based random numbers (cuRAND's Philox) and
// one_hot. Grid-stride loops of 256 threads, as the elementwise kernels
// (elementwise.cu).
#include <cuda_fp16.h>
#include <curand_kernel.h>

#include <climits>
#include <cstdint>
#include <type_traits>

#include "backends/cuda/elementwise.h"
#include "backends/cuda/index_util.cuh"
#include "backends/cuda/kernel_util.cuh"
#include "backends/plugin_api/mx_plugin.h"

namespace mx_cuda {
namespace {

using namespace kernel;  // NOLINT: the shared kernel helpers.

template <typename S, typename D>
__global__ void CastKernel(int64_t n, const S* x, D* y) {
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < n;
       i += int64_t{blockDim.x} * gridDim.x) {
    using A = typename Acc<S>::type;
    y[i] = static_cast<D>(static_cast<A>(x[i]));
  }
}

// A fill value as T, as the CPU's fills convert it: integers truncate
// toward zero (saturating at int64's range, NaN 0) and wrap modulo 2^bits.
template <typename T>
__device__ __forceinline__ T FillValue(double v) {
  if constexpr (std::is_integral<T>::value) {
    if (v != v) return T(0);
    constexpr double kLimit = 9.2233720368547758e18;  // 2^63
    const long long i = v >= kLimit    ? LLONG_MAX
                        : v <= -kLimit ? LLONG_MIN
                                       : static_cast<long long>(v);
    return static_cast<T>(static_cast<unsigned long long>(i));
  } else {
    return static_cast<T>(static_cast<typename Acc<T>::type>(v));
  }
}

template <typename T>
__global__ void FillKernel(int64_t n, double value, T* y) {
  const T v = FillValue<T>(value);
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < n;
       i += int64_t{blockDim.x} * gridDim.x) {
    y[i] = v;
  }
}

template <typename T>
__global__ void RandomKernel(bool normal, int64_t n, double a, double b,
                             uint64_t seed, T* y) {
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < n;
       i += int64_t{blockDim.x} * gridDim.x) {
    curandStatePhilox4_32_10_t st;
    curand_init(seed, static_cast<unsigned long long>(i), 0, &st);
    const double u =
        normal ? curand_normal_double(&st) : curand_uniform_double(&st);
    // curand_uniform is in (0, 1]; 1 - u in [0, 1) as the CPU's [low, high).
    y[i] = static_cast<T>(normal ? a + b * u : a + (b - a) * (1.0 - u));
  }
}

// on/off into the output dtype as the CPU's (saturated into integers);
// indices as the CPU reads them (ToIndex: floats truncated and saturated).
template <typename T, typename I>
__global__ void OneHotKernel(int64_t n, int64_t depth, const I* idx, double on,
                             double off, T* y) {
  using A = typename Acc<T>::type;
  const int64_t total = n * depth;
  const A on_value = SaturatingCast<A>(on), off_value = SaturatingCast<A>(off);
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < total;
       i += int64_t{blockDim.x} * gridDim.x) {
    const int64_t row = i / depth, col = i % depth;
    y[i] = static_cast<T>(ToIndex(idx[row]) == col ? on_value : off_value);
  }
}

struct FillLauncher {
  int64_t n;
  double value;
  void* y;
  cudaStream_t s;
  template <int R, typename T>
  void operator()() const {
    FillKernel<T><<<Blocks(n), kThreads, 0, s>>>(n, value, static_cast<T*>(y));
  }
};

struct RandomLauncher {
  bool normal;
  int64_t n;
  double a, b;
  uint64_t seed;
  void* y;
  cudaStream_t s;
  template <int R, typename T>
  void operator()() const {
    RandomKernel<T><<<Blocks(n), kThreads, 0, s>>>(normal, n, a, b, seed,
                                                   static_cast<T*>(y));
  }
};

template <typename I>
struct OneHotLauncher {
  int64_t n, depth;
  const void* idx;
  double on, off;
  void* y;
  cudaStream_t s;
  template <int R, typename T>
  void operator()() const {
    OneHotKernel<T, I><<<Blocks(n * depth), kThreads, 0, s>>>(
        n, depth, static_cast<const I*>(idx), on, off, static_cast<T*>(y));
  }
};

}  // namespace

namespace {

template <typename S, typename D>
cudaError_t CastTo(int64_t n, const void* x, void* y, cudaStream_t s) {
  CastKernel<S, D><<<Blocks(n), kThreads, 0, s>>>(n, static_cast<const S*>(x),
                                                  static_cast<D*>(y));
  return cudaGetLastError();
}

template <typename S>
cudaError_t CastFrom(int dst, int64_t n, const void* x, void* y,
                     cudaStream_t s) {
  switch (dst) {
    case MX_DTYPE_FLOAT32:
      return CastTo<S, float>(n, x, y, s);
    case MX_DTYPE_FLOAT64:
      return CastTo<S, double>(n, x, y, s);
    case MX_DTYPE_FLOAT16:
      return CastTo<S, __half>(n, x, y, s);
    case MX_DTYPE_INT32:
      return CastTo<S, int32_t>(n, x, y, s);
    case MX_DTYPE_INT64:
      return CastTo<S, int64_t>(n, x, y, s);
    case MX_DTYPE_UINT8:
      return CastTo<S, uint8_t>(n, x, y, s);
    case MX_DTYPE_INT8:
      return CastTo<S, int8_t>(n, x, y, s);
    case MX_DTYPE_BOOL:
      return CastTo<S, bool>(n, x, y, s);
    default:
      return cudaErrorInvalidValue;
  }
}

}  // namespace

cudaError_t LaunchCast(int src, int dst, int64_t n, const void* x, void* y,
                       cudaStream_t stream) {
  if (n == 0) return cudaSuccess;
  switch (src) {
    case MX_DTYPE_FLOAT32:
      return CastFrom<float>(dst, n, x, y, stream);
    case MX_DTYPE_FLOAT64:
      return CastFrom<double>(dst, n, x, y, stream);
    case MX_DTYPE_FLOAT16:
      return CastFrom<__half>(dst, n, x, y, stream);
    case MX_DTYPE_INT32:
      return CastFrom<int32_t>(dst, n, x, y, stream);
    case MX_DTYPE_INT64:
      return CastFrom<int64_t>(dst, n, x, y, stream);
    case MX_DTYPE_UINT8:
      return CastFrom<uint8_t>(dst, n, x, y, stream);
    case MX_DTYPE_INT8:
      return CastFrom<int8_t>(dst, n, x, y, stream);
    case MX_DTYPE_BOOL:
      return CastFrom<bool>(dst, n, x, y, stream);
    default:
      return cudaErrorInvalidValue;
  }
}

cudaError_t LaunchFill(int dtype, int64_t n, double value, void* y,
                       cudaStream_t stream) {
  if (n == 0) return cudaSuccess;
  return Dispatch<true>(dtype, MX_REQ_WRITE, FillLauncher{n, value, y, stream});
}

cudaError_t LaunchRandom(bool normal, int dtype, int64_t n, double a, double b,
                         uint64_t seed, void* y, cudaStream_t stream) {
  if (n == 0) return cudaSuccess;
  return Dispatch(dtype, MX_REQ_WRITE,
                  RandomLauncher{normal, n, a, b, seed, y, stream});
}

cudaError_t LaunchOneHot(int dtype, int index_dtype, int64_t n, int64_t depth,
                         const void* idx, double on, double off, void* y,
                         cudaStream_t stream) {
  if (n * depth == 0) return cudaSuccess;
  cudaError_t err = cudaErrorInvalidValue;  // Bool or unknown indices.
  if (index_dtype != MX_DTYPE_BOOL) {
    WithIndexType(index_dtype, [&](auto tag) {
      using I = decltype(tag);
      err =
          Dispatch<true>(dtype, MX_REQ_WRITE,
                         OneHotLauncher<I>{n, depth, idx, on, off, y, stream});
    });
  }
  return err;
}

}  // namespace mx_cuda
