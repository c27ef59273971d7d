// norm and _backward_prod kernels of the CUDA plugin, with the CPU kernels'
// semantics (backends/cpu/norm_ops.cc, reduce_ops.cc): one block per line
// of the reduced axis, each thread taking a stride of it, then a
// shared-memory merge. Launchers declared in elementwise.h.
#include <cmath>
#include <type_traits>

#include "backends/common/mxnet_math.h"
#include "backends/cuda/elementwise.h"
#include "backends/cuda/kernel_util.cuh"
#include "backends/cuda/reduce_util.cuh"

namespace mx_cuda {
namespace {

using namespace kernel;  // NOLINT: the shared kernel helpers.

// ---- norm: accumulators in double, as the CPU's. ----

struct AbsSum {
  double sum;
  __device__ void Add(double v) { sum += fabs(v); }
  __device__ void Merge(const AbsSum& o) { sum += o.sum; }
  __device__ double Result() const { return sum; }
};

// Squares of float16/float32 values cannot overflow a double.
struct SquareSum {
  double sum;
  __device__ void Add(double v) { sum += v * v; }
  __device__ void Merge(const SquareSum& o) { sum += o.sum; }
  __device__ double Result() const { return sqrt(sum); }
};

// float64 values: the scaled sum, which neither overflows nor vanishes.
struct ScaledSquareSum : mx_math::ScaledSumOfSquares {
  __device__ void Merge(const ScaledSquareSum& o) {
    mx_math::ScaledSumOfSquares::Merge(o);
  }
  __device__ double Result() const { return Norm(); }
};

template <typename N>
__device__ N Empty() {
  N n;
  memset(&n, 0, sizeof(N));  // The zero state of every accumulator above.
  return n;
}

template <int kReq, typename N, typename T, typename O>
__global__ void NormKernel(int64_t lines, int64_t reduce, int64_t inner,
                           const T* x, O* y) {
  // Raw shared memory: __shared__ variables cannot have constructors.
  __shared__ double raw[kThreads * ((sizeof(N) + 7) / 8)];
  N* shared = reinterpret_cast<N*>(raw);
  // Uniform per block, so every thread reaches the barriers.
  for (int64_t line = blockIdx.x; line < lines; line += gridDim.x) {
    const int64_t base = (line / inner) * reduce * inner + line % inner;
    N acc = Empty<N>();
    for (int64_t j = threadIdx.x; j < reduce; j += kThreads) {
      acc.Add(static_cast<double>(Load(x, base + j * inner)));
    }
    acc = BlockMerge(acc, shared);
    if (threadIdx.x == 0) {
      Store<kReq>(y, line, static_cast<typename Acc<O>::type>(acc.Result()));
    }
  }
}

struct NormLauncher {
  int ord, in_dtype;
  int64_t lines, reduce, inner;
  const void* x;
  void* y;
  cudaStream_t s;

  template <int R, typename O, typename T>
  void Run() const {
    const int blocks = Blocks(lines * kThreads);
    const T* in = static_cast<const T*>(x);
    O* out = static_cast<O*>(y);
    if (ord == 1) {
      NormKernel<R, AbsSum, T, O>
          <<<blocks, kThreads, 0, s>>>(lines, reduce, inner, in, out);
    } else if constexpr (std::is_same<T, double>::value) {
      NormKernel<R, ScaledSquareSum, T, O>
          <<<blocks, kThreads, 0, s>>>(lines, reduce, inner, in, out);
    } else {
      NormKernel<R, SquareSum, T, O>
          <<<blocks, kThreads, 0, s>>>(lines, reduce, inner, in, out);
    }
  }
  // O: the output's dtype (Dispatch's); the input's is in_dtype.
  template <int R, typename O>
  void operator()() const {
    switch (in_dtype) {
      case MX_DTYPE_FLOAT32:
        return Run<R, O, float>();
      case MX_DTYPE_FLOAT64:
        return Run<R, O, double>();
      default:
        return Run<R, O, __half>();
    }
  }
};

// ---- _backward_prod: g times the product of the other elements, from
// the line's zero count and the product of its non-zero elements. ----

template <int kReq, typename T>
__global__ void ProdGradKernel(bool skip_nan, int64_t lines, int64_t reduce,
                               int64_t inner, const T* g, const T* x, T* dx) {
  using P = typename std::conditional<std::is_integral<T>::value, int64_t,
                                      double>::type;
  __shared__ int64_t zeros_shared[kThreads];
  __shared__ P product_shared[kThreads];
  for (int64_t line = blockIdx.x; line < lines; line += gridDim.x) {
    const int64_t base = (line / inner) * reduce * inner + line % inner;
    int64_t zeros = 0;
    P product = 1;
    for (int64_t j = threadIdx.x; j < reduce; j += kThreads) {
      const P v = static_cast<P>(Load(x, base + j * inner));
      if (skip_nan && IsNan(v)) continue;
      if (v == P(0)) {
        ++zeros;
      } else {
        product = WrapMul(product, v);
      }
    }
    zeros = BlockReduce(Reduce::kSum, zeros, zeros_shared);
    product = BlockReduce(Reduce::kProd, product, product_shared);
    const P head = static_cast<P>(Load(g, line));
    for (int64_t j = threadIdx.x; j < reduce; j += kThreads) {
      const int64_t i = base + j * inner;
      const P v = static_cast<P>(Load(x, i));
      P others = 0;
      if ((skip_nan && IsNan(v)) || zeros > 1) {
        others = 0;
      } else if (zeros == 1) {
        others = v == P(0) ? product : P(0);
      } else {
        others = product / v;
      }
      Store<kReq>(dx, i, static_cast<typename Acc<T>::type>(head * others));
    }
  }
}

struct ProdGradLauncher {
  bool skip_nan;
  int64_t lines, reduce, inner;
  const void* g;
  const void* x;
  void* dx;
  cudaStream_t s;
  template <int R, typename T>
  void operator()() const {
    ProdGradKernel<R, T><<<Blocks(lines * kThreads), kThreads, 0, s>>>(
        skip_nan, lines, reduce, inner, static_cast<const T*>(g),
        static_cast<const T*>(x), static_cast<T*>(dx));
  }
};

}  // namespace

cudaError_t LaunchNorm(int ord, int dtype, int out_dtype, int64_t outer,
                       int64_t reduce, int64_t inner, const void* x, void* y,
                       int req, cudaStream_t stream) {
  if (outer * inner == 0) return cudaSuccess;
  if (!(ord == 1 || ord == 2) ||
      !(dtype == MX_DTYPE_FLOAT32 || dtype == MX_DTYPE_FLOAT64 ||
        dtype == MX_DTYPE_FLOAT16)) {
    return cudaErrorInvalidValue;
  }
  return Dispatch(
      out_dtype, req,
      NormLauncher{ord, dtype, outer * inner, reduce, inner, x, y, stream});
}

cudaError_t LaunchProdGrad(bool skip_nan, int dtype, int64_t outer,
                           int64_t reduce, int64_t inner, const void* g,
                           const void* x, void* dx, int req,
                           cudaStream_t stream) {
  if (outer * inner * reduce == 0) return cudaSuccess;
  return Dispatch<true>(dtype, req,
                        ProdGradLauncher{skip_nan, outer * inner, reduce, inner,
                                         g, x, dx, stream});
}

}  // namespace mx_cuda
