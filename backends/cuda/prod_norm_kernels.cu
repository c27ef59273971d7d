// norm, moments and _backward_prod kernels of the CUDA plugin, with the CPU
// kernels' semantics (backends/cpu/norm_ops.cc, moments_ops.cc,
// reduce_ops.cc): one block per line
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

// ---- moments: the mean, then the mean squared deviation, in double. ----

template <int kReq, typename T>
__device__ __forceinline__ void StoreIf(bool write, T* p, int64_t i, double v) {
  if (write) Store<kReq>(p, i, static_cast<typename Acc<T>::type>(v));
}

template <int kReqMean, int kReqVar, typename T>
__global__ void MomentsKernel(int64_t lines, int64_t reduce, int64_t inner,
                              const T* x, T* mean_out, T* var_out,
                              bool write_mean, bool write_var) {
  __shared__ double shared[kThreads];
  for (int64_t line = blockIdx.x; line < lines; line += gridDim.x) {
    const int64_t base = (line / inner) * reduce * inner + line % inner;
    double sum = 0;
    for (int64_t j = threadIdx.x; j < reduce; j += kThreads) {
      sum += static_cast<double>(Load(x, base + j * inner));
    }
    const double mean =
        BlockReduce(Reduce::kSum, sum, shared) / static_cast<double>(reduce);
    double sq = 0;
    for (int64_t j = threadIdx.x; j < reduce; j += kThreads) {
      const double d = static_cast<double>(Load(x, base + j * inner)) - mean;
      sq += d * d;
    }
    const double var =
        BlockReduce(Reduce::kSum, sq, shared) / static_cast<double>(reduce);
    if (threadIdx.x == 0) {
      StoreIf<kReqMean>(write_mean, mean_out, line, mean);
      StoreIf<kReqVar>(write_var, var_out, line, var);
    }
  }
}

struct MomentsLauncher {
  int64_t lines, reduce, inner;
  const void* x;
  void* mean;
  int req_mean;
  void* var;
  int req_var;
  cudaStream_t s;
  template <int RM, int RV, typename T>
  void Run() const {
    MomentsKernel<RM, RV, T><<<Blocks(lines * kThreads), kThreads, 0, s>>>(
        lines, reduce, inner, static_cast<const T*>(x), static_cast<T*>(mean),
        static_cast<T*>(var), req_mean != MX_REQ_NULL, req_var != MX_REQ_NULL);
  }
  // R: the mean's request (Dispatch's); the variance's is req_var.
  template <int R, typename T>
  void operator()() const {
    if (req_var == MX_REQ_ADD) {
      Run<R, MX_REQ_ADD, T>();
    } else {
      Run<R, MX_REQ_WRITE, T>();
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

cudaError_t LaunchMoments(int dtype, int64_t outer, int64_t reduce,
                          int64_t inner, const void* x, void* mean,
                          int req_mean, void* var, int req_var,
                          cudaStream_t stream) {
  if (outer * inner == 0 || reduce == 0) return cudaSuccess;
  // Dispatch skips a null request: the mean's stands in as a write then.
  const int dispatch_req = req_mean == MX_REQ_NULL ? MX_REQ_WRITE : req_mean;
  return Dispatch(dtype, dispatch_req,
                  MomentsLauncher{outer * inner, reduce, inner, x, mean,
                                  req_mean, var, req_var, stream});
}

}  // namespace mx_cuda
