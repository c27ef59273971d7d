// Pooling, BatchNorm and Dropout-mask kernels of the CUDA plugin, with the
// CPU kernels' semantics (backends/cpu/pooling_ops.cc, batch_norm_ops.cc,
// nn_ops.cc): first maximum in row-major order, NaN wins, 0 and argmax -1
// for a window entirely in the padding; BatchNorm with biased batch
// variance and double accumulation.
#include <curand_kernel.h>

#include "backends/cuda/kernel_util.cuh"
#include "backends/cuda/nn_kernels.h"

namespace mx_cuda {
namespace {

using namespace kernel;  // NOLINT: the shared kernel helpers.

// One window along one axis.
struct Span {
  int64_t start, end, lo, hi;
};

__device__ __forceinline__ Span SpanOf(const PoolShape& g, int axis,
                                       int64_t o) {
  Span s;
  s.start = o * g.s[axis] - g.p[axis];
  const int64_t n = g.in[axis];
  s.end = min(s.start + g.k[axis], n + g.p[axis]);
  s.lo = max(s.start, int64_t{0});
  s.hi = min(s.end, n);
  return s;
}

__device__ __forceinline__ int64_t Count(bool include_pad, const Span* sp) {
  int64_t c = 1;
  for (int a = 0; a < 3; ++a) {
    c *= include_pad ? max(int64_t{0}, sp[a].end - sp[a].start)
                     : max(int64_t{0}, sp[a].hi - sp[a].lo);
  }
  return c;
}

template <typename A>
__device__ __forceinline__ bool Replaces(A v, int64_t at, A best,
                                         int64_t best_at) {
  const bool earlier = at < best_at;
  return (v > best) || ((v == best) && earlier) ||
         (IsNan(v) && (!IsNan(best) || earlier));
}

// Decomposes output index i into (plane, window spans).
__device__ __forceinline__ int64_t Window(const PoolShape& g, int64_t i,
                                          Span* sp, int64_t* o) {
  const int64_t vout = g.out[0] * g.out[1] * g.out[2];
  const int64_t plane = i / vout;
  *o = i % vout;
  int64_t rest = *o;
  const int64_t ox = rest % g.out[2];
  rest /= g.out[2];
  const int64_t oy = rest % g.out[1];
  const int64_t oz = rest / g.out[1];
  sp[0] = SpanOf(g, 0, oz);
  sp[1] = SpanOf(g, 1, oy);
  sp[2] = SpanOf(g, 2, ox);
  return plane;
}

template <int kReq, typename T>
__global__ void PoolForwardKernel(PoolType type, bool include_pad, PoolShape g,
                                  const T* x, T* y, int32_t* argmax) {
  using A = typename Acc<T>::type;
  const int64_t vin = g.in[0] * g.in[1] * g.in[2];
  const int64_t vout = g.out[0] * g.out[1] * g.out[2];
  const int64_t n = g.planes * vout;
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < n;
       i += int64_t{blockDim.x} * gridDim.x) {
    Span sp[3];
    int64_t o;
    const int64_t plane = Window(g, i, sp, &o);
    const T* src = x + plane * vin;
    A acc = 0;
    int64_t at = -1;
    for (int64_t iz = sp[0].lo; iz < sp[0].hi; ++iz) {
      for (int64_t iy = sp[1].lo; iy < sp[1].hi; ++iy) {
        const int64_t row = (iz * g.in[1] + iy) * g.in[2];
        for (int64_t ix = sp[2].lo; ix < sp[2].hi; ++ix) {
          const A v = Load(src, row + ix);
          if (type == PoolType::kMax) {
            if (at < 0 || Replaces(v, row + ix, acc, at)) {
              acc = v;
              at = row + ix;
            }
          } else {
            acc += v;
          }
        }
      }
    }
    if (type == PoolType::kAvg) {
      const int64_t c = Count(include_pad, sp);
      acc = c > 0 ? acc / static_cast<A>(c) : A(0);
    }
    if (y != nullptr) Store<kReq>(y, i, acc);
    if (argmax != nullptr) argmax[i] = static_cast<int32_t>(at);
  }
}

template <typename T>
__device__ __forceinline__ void AtomicAdd(T* p, typename Acc<T>::type v) {
  atomicAdd(p, static_cast<T>(v));
}

// Scatter from each window (dx zeroed or holding what to add to).
template <typename T>
__global__ void PoolBackwardKernel(PoolType type, bool include_pad,
                                   PoolShape g, const T* og, const T* x,
                                   const int32_t* argmax, T* dx, int* bad) {
  using A = typename Acc<T>::type;
  const int64_t vin = g.in[0] * g.in[1] * g.in[2];
  const int64_t vout = g.out[0] * g.out[1] * g.out[2];
  const int64_t n = g.planes * vout;
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < n;
       i += int64_t{blockDim.x} * gridDim.x) {
    Span sp[3];
    int64_t o;
    const int64_t plane = Window(g, i, sp, &o);
    A gv = Load(og, i);
    T* dst = dx + plane * vin;
    if (type == PoolType::kMax) {
      int64_t at = -1;
      if (argmax != nullptr) {
        at = argmax[i];
        if (at < -1 || at >= vin) {
          atomicExch(bad, 1);
          continue;
        }
      } else {
        const T* src = x + plane * vin;
        A best = 0;
        for (int64_t iz = sp[0].lo; iz < sp[0].hi; ++iz) {
          for (int64_t iy = sp[1].lo; iy < sp[1].hi; ++iy) {
            const int64_t row = (iz * g.in[1] + iy) * g.in[2];
            for (int64_t ix = sp[2].lo; ix < sp[2].hi; ++ix) {
              const A v = Load(src, row + ix);
              if (at < 0 || Replaces(v, row + ix, best, at)) {
                best = v;
                at = row + ix;
              }
            }
          }
        }
      }
      if (at >= 0) AtomicAdd(dst + at, gv);
      continue;
    }
    if (type == PoolType::kAvg) {
      const int64_t c = Count(include_pad, sp);
      if (c == 0) continue;
      gv /= static_cast<A>(c);
    }
    for (int64_t iz = sp[0].lo; iz < sp[0].hi; ++iz) {
      for (int64_t iy = sp[1].lo; iy < sp[1].hi; ++iy) {
        const int64_t row = (iz * g.in[1] + iy) * g.in[2];
        for (int64_t ix = sp[2].lo; ix < sp[2].hi; ++ix) {
          AtomicAdd(dst + row + ix, gv);
        }
      }
    }
  }
}

// Block c handles channel c.
template <typename T, typename P>
__global__ void BatchNormForwardKernel(BatchNormArgs a, const T* x,
                                       const P* gamma, const P* beta,
                                       P* moving_mean, P* moving_var, T* y,
                                       int req_y, P* mean_out, int req_mean,
                                       P* var_out, int req_var) {
  __shared__ double shared[kThreads];
  const int64_t c = blockIdx.x;
  const int64_t count = a.outer * a.inner;
  double mean, var;
  if (a.batch_stats) {
    double sum = 0;
    for (int64_t j = threadIdx.x; j < count; j += kThreads) {
      const int64_t o = j / a.inner, k = j % a.inner;
      sum += static_cast<double>(Load(x, (o * a.channels + c) * a.inner + k));
    }
    mean = BlockSum(sum, shared) / count;
    double sq = 0;
    for (int64_t j = threadIdx.x; j < count; j += kThreads) {
      const int64_t o = j / a.inner, k = j % a.inner;
      const double d =
          static_cast<double>(Load(x, (o * a.channels + c) * a.inner + k)) -
          mean;
      sq += d * d;
    }
    var = BlockSum(sq, shared) / count;
  } else {
    mean = static_cast<double>(moving_mean[c]);
    var = static_cast<double>(moving_var[c]);
  }
  const double g = a.fix_gamma ? 1.0 : static_cast<double>(gamma[c]);
  const double scale = g / sqrt(var + a.eps);
  const double shift = static_cast<double>(beta[c]) - mean * scale;
  if (req_y != MX_REQ_NULL) {
    for (int64_t j = threadIdx.x; j < count; j += kThreads) {
      const int64_t o = j / a.inner, k = j % a.inner;
      const int64_t idx = (o * a.channels + c) * a.inner + k;
      const double v = static_cast<double>(Load(x, idx)) * scale + shift;
      if (req_y == MX_REQ_ADD) {
        y[idx] = static_cast<T>(static_cast<double>(Load(y, idx)) + v);
      } else {
        y[idx] = static_cast<T>(v);
      }
    }
  }
  if (threadIdx.x == 0) {
    if (req_mean == MX_REQ_ADD) {
      mean_out[c] += static_cast<P>(mean);
    } else if (req_mean != MX_REQ_NULL) {
      mean_out[c] = static_cast<P>(mean);
    }
    if (req_var == MX_REQ_ADD) {
      var_out[c] += static_cast<P>(var);
    } else if (req_var != MX_REQ_NULL) {
      var_out[c] = static_cast<P>(var);
    }
    if (a.batch_stats) {
      const double m = a.momentum;
      moving_mean[c] = static_cast<P>(
          static_cast<double>(moving_mean[c]) * m + mean * (1 - m));
      moving_var[c] = static_cast<P>(
          static_cast<double>(moving_var[c]) * m + var * (1 - m));
    }
  }
}

template <typename T, typename P>
__global__ void BatchNormBackwardKernel(BatchNormArgs a, const T* og,
                                        const T* x, const P* gamma,
                                        const P* mean, const P* var, T* dx,
                                        int req_dx, P* dgamma, int req_dgamma,
                                        P* dbeta, int req_dbeta) {
  __shared__ double shared[kThreads];
  const int64_t c = blockIdx.x;
  const int64_t count = a.outer * a.inner;
  const double m = static_cast<double>(mean[c]);
  const double inv_std = 1.0 / sqrt(static_cast<double>(var[c]) + a.eps);
  double sg = 0, sgx = 0;
  for (int64_t j = threadIdx.x; j < count; j += kThreads) {
    const int64_t o = j / a.inner, k = j % a.inner;
    const int64_t idx = (o * a.channels + c) * a.inner + k;
    const double g = static_cast<double>(Load(og, idx));
    sg += g;
    sgx += g * (static_cast<double>(Load(x, idx)) - m) * inv_std;
  }
  const double sum_g = BlockSum(sg, shared);
  const double sum_gx = BlockSum(sgx, shared);
  const double gm = a.fix_gamma ? 1.0 : static_cast<double>(gamma[c]);
  const double scale = gm * inv_std;
  const double mean_g = a.batch_stats ? sum_g / count : 0;
  const double mean_gx = a.batch_stats ? sum_gx / count : 0;
  if (req_dx != MX_REQ_NULL) {
    for (int64_t j = threadIdx.x; j < count; j += kThreads) {
      const int64_t o = j / a.inner, k = j % a.inner;
      const int64_t idx = (o * a.channels + c) * a.inner + k;
      const double xhat = (static_cast<double>(Load(x, idx)) - m) * inv_std;
      const double v =
          scale * (static_cast<double>(Load(og, idx)) - mean_g - xhat * mean_gx);
      if (req_dx == MX_REQ_ADD) {
        dx[idx] = static_cast<T>(static_cast<double>(Load(dx, idx)) + v);
      } else {
        dx[idx] = static_cast<T>(v);
      }
    }
  }
  if (threadIdx.x == 0) {
    const double dg = a.fix_gamma ? 0.0 : sum_gx;
    if (req_dgamma == MX_REQ_ADD) {
      dgamma[c] += static_cast<P>(dg);
    } else if (req_dgamma != MX_REQ_NULL) {
      dgamma[c] = static_cast<P>(dg);
    }
    if (req_dbeta == MX_REQ_ADD) {
      dbeta[c] += static_cast<P>(sum_g);
    } else if (req_dbeta != MX_REQ_NULL) {
      dbeta[c] = static_cast<P>(sum_g);
    }
  }
}

template <typename T>
__global__ void DropoutMaskKernel(int64_t n, double p, uint64_t seed, T* mask) {
  const double keep = p < 1 ? 1.0 / (1.0 - p) : 0.0;
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < n;
       i += int64_t{blockDim.x} * gridDim.x) {
    curandStatePhilox4_32_10_t st;
    curand_init(seed, static_cast<unsigned long long>(i), 0, &st);
    const double u = 1.0 - curand_uniform_double(&st);  // [0, 1)
    mask[i] = static_cast<T>(u < p ? 0.0 : keep);
  }
}

struct PoolForwardLauncher {
  PoolType type; bool include_pad; PoolShape g; const void* x; void* y;
  int32_t* argmax; cudaStream_t s;
  template <int R, typename T> void operator()() const {
    const int64_t n = g.planes * g.out[0] * g.out[1] * g.out[2];
    PoolForwardKernel<R, T><<<Blocks(n), kThreads, 0, s>>>(
        type, include_pad, g, static_cast<const T*>(x), static_cast<T*>(y),
        argmax);
  }
};

struct PoolBackwardLauncher {
  PoolType type; bool include_pad; PoolShape g; const void* og; const void* x;
  const int32_t* argmax; void* dx; int* bad; cudaStream_t s;
  template <int R, typename T> void operator()() const {
    const int64_t n = g.planes * g.out[0] * g.out[1] * g.out[2];
    PoolBackwardKernel<T><<<Blocks(n), kThreads, 0, s>>>(
        type, include_pad, g, static_cast<const T*>(og),
        static_cast<const T*>(x), argmax, static_cast<T*>(dx), bad);
  }
};

// Per-channel arrays: float32 for float16 data.
template <typename T>
struct ParamOf {
  using type = T;
};
template <>
struct ParamOf<__half> {
  using type = float;
};

struct BatchNormForwardLauncher {
  BatchNormArgs a; const void *x, *gamma, *beta; void *mm, *mv, *y;
  int req_y; void* mean; int req_mean; void* var; int req_var; cudaStream_t s;
  template <int R, typename T> void operator()() const {
    using P = typename ParamOf<T>::type;
    BatchNormForwardKernel<T, P><<<static_cast<unsigned>(a.channels), kThreads,
                                   0, s>>>(
        a, static_cast<const T*>(x), static_cast<const P*>(gamma),
        static_cast<const P*>(beta), static_cast<P*>(mm), static_cast<P*>(mv),
        static_cast<T*>(y), req_y, static_cast<P*>(mean), req_mean,
        static_cast<P*>(var), req_var);
  }
};

struct BatchNormBackwardLauncher {
  BatchNormArgs a; const void *og, *x, *gamma, *mean, *var; void* dx;
  int req_dx; void* dgamma; int req_dgamma; void* dbeta; int req_dbeta;
  cudaStream_t s;
  template <int R, typename T> void operator()() const {
    using P = typename ParamOf<T>::type;
    BatchNormBackwardKernel<T, P><<<static_cast<unsigned>(a.channels),
                                    kThreads, 0, s>>>(
        a, static_cast<const T*>(og), static_cast<const T*>(x),
        static_cast<const P*>(gamma), static_cast<const P*>(mean),
        static_cast<const P*>(var), static_cast<T*>(dx), req_dx,
        static_cast<P*>(dgamma), req_dgamma, static_cast<P*>(dbeta),
        req_dbeta);
  }
};

struct DropoutMaskLauncher {
  int64_t n; double p; uint64_t seed; void* mask; cudaStream_t s;
  template <int R, typename T> void operator()() const {
    DropoutMaskKernel<T><<<Blocks(n), kThreads, 0, s>>>(n, p, seed,
                                                        static_cast<T*>(mask));
  }
};

}  // namespace

cudaError_t LaunchPoolForward(PoolType type, bool count_include_pad, int dtype,
                              const PoolShape& shape, const void* x, void* y,
                              int req, int32_t* argmax, cudaStream_t stream) {
  if (shape.planes * shape.out[0] * shape.out[1] * shape.out[2] == 0) {
    return cudaSuccess;
  }
  // req NULL with an argmax wanted: y is not written.
  return Dispatch(dtype, req == MX_REQ_NULL ? MX_REQ_WRITE : req,
                  PoolForwardLauncher{type, count_include_pad, shape, x,
                                      req == MX_REQ_NULL ? nullptr : y, argmax,
                                      stream});
}

cudaError_t LaunchPoolBackward(PoolType type, bool count_include_pad,
                               int dtype, const PoolShape& shape,
                               const void* og, const void* x,
                               const int32_t* argmax, void* dx, int req,
                               int* bad_argmax, cudaStream_t stream) {
  if (req == MX_REQ_NULL) return cudaSuccess;
  if (req != MX_REQ_ADD) {
    const int64_t n = shape.planes * shape.in[0] * shape.in[1] * shape.in[2];
    const size_t bytes = static_cast<size_t>(n) *
                         (dtype == MX_DTYPE_FLOAT64   ? 8
                          : dtype == MX_DTYPE_FLOAT16 ? 2
                                                      : 4);
    const cudaError_t err = cudaMemsetAsync(dx, 0, bytes, stream);
    if (err != cudaSuccess) return err;
  }
  if (shape.planes * shape.out[0] * shape.out[1] * shape.out[2] == 0) {
    return cudaSuccess;
  }
  return Dispatch(dtype, MX_REQ_WRITE,
                  PoolBackwardLauncher{type, count_include_pad, shape, og, x,
                                       argmax, dx, bad_argmax, stream});
}

cudaError_t LaunchBatchNormForward(int dtype, const BatchNormArgs& a,
                                   const void* x, const void* gamma,
                                   const void* beta, void* moving_mean,
                                   void* moving_var, void* y, int req_y,
                                   void* mean, int req_mean, void* var,
                                   int req_var, cudaStream_t stream) {
  if (a.channels == 0) return cudaSuccess;
  return Dispatch(dtype, MX_REQ_WRITE,
                  BatchNormForwardLauncher{a, x, gamma, beta, moving_mean,
                                           moving_var, y, req_y, mean,
                                           req_mean, var, req_var, stream});
}

cudaError_t LaunchBatchNormBackward(int dtype, const BatchNormArgs& a,
                                    const void* og, const void* x,
                                    const void* gamma, const void* mean,
                                    const void* var, void* dx, int req_dx,
                                    void* dgamma, int req_dgamma, void* dbeta,
                                    int req_dbeta, cudaStream_t stream) {
  if (a.channels == 0) return cudaSuccess;
  return Dispatch(dtype, MX_REQ_WRITE,
                  BatchNormBackwardLauncher{a, og, x, gamma, mean, var, dx,
                                            req_dx, dgamma, req_dgamma, dbeta,
                                            req_dbeta, stream});
}

cudaError_t LaunchDropoutMask(int dtype, int64_t n, double p, uint64_t seed,
                              void* mask, cudaStream_t stream) {
  if (n == 0) return cudaSuccess;
  return Dispatch(dtype, MX_REQ_WRITE,
                  DropoutMaskLauncher{n, p, seed, mask, stream});
}

}  // namespace mx_cuda
