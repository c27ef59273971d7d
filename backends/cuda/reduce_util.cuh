// Device helpers of the reductions (reduce_kernels.cu, prod_norm_kernels.cu):
// the accumulator type, the identity and the combining step of each
// Reduce, and block-wide reductions of kThreads threads.
#ifndef MXCORE_BACKENDS_CUDA_REDUCE_UTIL_CUH_
#define MXCORE_BACKENDS_CUDA_REDUCE_UTIL_CUH_

#include <cmath>
#include <type_traits>

#include "backends/cuda/elementwise.h"
#include "backends/cuda/kernel_util.cuh"

namespace mx_cuda {
namespace kernel {

// What a reduction accumulates in: int64 for integers (as the CPU's sums;
// a mean of integers is their int64 sum divided, truncating), else the
// compute type.
template <typename T>
struct ReduceAcc {
  using type = std::conditional_t<std::is_integral<T>::value, int64_t, double>;
};

template <typename A>
__device__ __forceinline__ A ReduceInit(Reduce op) {
  if (op == Reduce::kProd || op == Reduce::kNanProd) return A(1);
  if constexpr (std::is_integral<A>::value) {
    return op == Reduce::kMax   ? static_cast<A>(IntRange<A>::kLo)
           : op == Reduce::kMin ? IntMax<A>()
                                : A(0);
  } else {
    return op == Reduce::kMax   ? A(-INFINITY)
           : op == Reduce::kMin ? A(INFINITY)
                                : A(0);
  }
}

// Two partial results combined.
template <typename A>
__device__ __forceinline__ A ReduceCombine(Reduce op, A acc, A v) {
  switch (op) {
    case Reduce::kMax:
      return IsNan(acc) || acc > v ? acc : v;
    case Reduce::kMin:
      return IsNan(acc) || acc < v ? acc : v;
    case Reduce::kProd:
    case Reduce::kNanProd:
      return WrapMul(acc, v);
    default:
      return WrapAdd(acc, v);
  }
}

// An element folded in: nansum and nanprod leave NaN out (as the
// identity), so a NaN partial result (inf - inf) still propagates.
template <typename A>
__device__ __forceinline__ A ReduceStep(Reduce op, A acc, A v) {
  if ((op == Reduce::kNanSum || op == Reduce::kNanProd) && IsNan(v)) {
    return acc;
  }
  return ReduceCombine(op, acc, v);
}

template <typename A>
__device__ A BlockReduce(Reduce op, A v, A* shared) {
  shared[threadIdx.x] = v;
  __syncthreads();
  for (int s = kThreads / 2; s > 0; s >>= 1) {
    if (threadIdx.x < s) {
      shared[threadIdx.x] =
          ReduceCombine(op, shared[threadIdx.x], shared[threadIdx.x + s]);
    }
    __syncthreads();
  }
  const A r = shared[0];
  __syncthreads();
  return r;
}

// Block-wide merge of one accumulator per thread (a struct with
// Merge(const N&)); every thread gets the total.
template <typename N>
__device__ N BlockMerge(N v, N* shared) {
  shared[threadIdx.x] = v;
  __syncthreads();
  for (int s = kThreads / 2; s > 0; s >>= 1) {
    if (threadIdx.x < s) shared[threadIdx.x].Merge(shared[threadIdx.x + s]);
    __syncthreads();
  }
  const N r = shared[0];
  __syncthreads();
  return r;
}

}  // namespace kernel
}  // namespace mx_cuda

#endif  // MXCORE_BACKENDS_CUDA_REDUCE_UTIL_CUH_
