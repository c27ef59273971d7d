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

// The pooling geometry in the kernels' index type I: int32_t where every
// index fits (FitsInt32), since a GPU spends several times the
// instructions on a 64-bit division (each output decomposes its index
// with three); int64_t otherwise.
template <typename I>
struct Dims {
  I planes, in[3], out[3], k[3], s[3], p[3];
};

template <typename I>
Dims<I> DimsOf(const PoolShape& g) {
  Dims<I> d;
  d.planes = static_cast<I>(g.planes);
  for (int a = 0; a < 3; ++a) {
    d.in[a] = static_cast<I>(g.in[a]);
    d.out[a] = static_cast<I>(g.out[a]);
    d.k[a] = static_cast<I>(g.k[a]);
    d.s[a] = static_cast<I>(g.s[a]);
    d.p[a] = static_cast<I>(g.p[a]);
  }
  return d;
}

// Every value the kernels compute stays below 2^31: plane offsets and
// indices (below planes * max(volume in, volume out) < 2^30), a grid-stride
// step past the last index (the grid has at most as many threads as
// outputs, plus one block), window starts and ends (below out * stride +
// kernel + padding), window counts (at most the kernel's volume).
bool FitsInt32(const PoolShape& g) {
  constexpr int64_t kLimit = int64_t{1} << 30;
  int64_t vin = 1, vout = 1, vkernel = 1;
  for (int a = 0; a < 3; ++a) {
    if (g.in[a] >= kLimit || g.out[a] >= kLimit || g.k[a] >= kLimit ||
        g.s[a] >= kLimit || g.p[a] >= kLimit ||
        g.out[a] * g.s[a] + g.k[a] + g.p[a] >= kLimit) {
      return false;
    }
    vin *= g.in[a];
    vout *= g.out[a];
    vkernel *= g.k[a];
    if (vin >= kLimit || vout >= kLimit || vkernel >= kLimit) return false;
  }
  return g.planes < kLimit && g.planes * vin < kLimit &&
         g.planes * vout < kLimit;
}

// A grid-stride loop's first index and step in the index type I.
template <typename I>
__device__ __forceinline__ I GridStart() {
  return static_cast<I>(blockIdx.x) * static_cast<I>(blockDim.x) +
         static_cast<I>(threadIdx.x);
}
template <typename I>
__device__ __forceinline__ I GridStep() {
  return static_cast<I>(blockDim.x) * static_cast<I>(gridDim.x);
}

// One window along one axis.
template <typename I>
struct Span {
  I start, end, lo, hi;
};

template <typename I>
__device__ __forceinline__ Span<I> SpanOf(const Dims<I>& g, int axis, I o) {
  Span<I> s;
  s.start = o * g.s[axis] - g.p[axis];
  const I n = g.in[axis];
  s.end = min(s.start + g.k[axis], n + g.p[axis]);
  s.lo = max(s.start, I{0});
  s.hi = min(s.end, n);
  return s;
}

template <typename I>
__device__ __forceinline__ I Count(bool include_pad, const Span<I>* sp) {
  I c = 1;
  for (int a = 0; a < 3; ++a) {
    c *= include_pad ? max(I{0}, sp[a].end - sp[a].start)
                     : max(I{0}, sp[a].hi - sp[a].lo);
  }
  return c;
}

template <typename A, typename I>
__device__ __forceinline__ bool Replaces(A v, I at, A best, I best_at) {
  const bool earlier = at < best_at;
  return (v > best) || ((v == best) && earlier) ||
         (IsNan(v) && (!IsNan(best) || earlier));
}

// Decomposes output index i into (plane, window spans).
template <typename I>
__device__ __forceinline__ I Window(const Dims<I>& g, I i, Span<I>* sp) {
  const I vout = g.out[0] * g.out[1] * g.out[2];
  const I plane = i / vout;
  I rest = i - plane * vout;
  const I ox = rest % g.out[2];
  rest /= g.out[2];
  const I oy = rest % g.out[1];
  const I oz = rest / g.out[1];
  sp[0] = SpanOf(g, 0, oz);
  sp[1] = SpanOf(g, 1, oy);
  sp[2] = SpanOf(g, 2, ox);
  return plane;
}

// The first maximum of x's window (row-major order, NaN wins) and its
// position in the plane; -1 for a window entirely in the padding.
template <typename T, typename I>
__device__ __forceinline__ I WindowMax(const Dims<I>& g, const T* src,
                                       const Span<I>* sp,
                                       typename Acc<T>::type* max_value) {
  using A = typename Acc<T>::type;
  A best = 0;
  I at = -1;
  for (I iz = sp[0].lo; iz < sp[0].hi; ++iz) {
    for (I iy = sp[1].lo; iy < sp[1].hi; ++iy) {
      const I row = (iz * g.in[1] + iy) * g.in[2];
      for (I ix = sp[2].lo; ix < sp[2].hi; ++ix) {
        const A v = Load(src, row + ix);
        if (at < 0 || Replaces(v, row + ix, best, at)) {
          best = v;
          at = row + ix;
        }
      }
    }
  }
  *max_value = best;
  return at;
}

template <int kReq, typename T, typename I>
__global__ void PoolForwardKernel(PoolType type, bool include_pad, Dims<I> g,
                                  const T* x, T* y, int32_t* argmax) {
  using A = typename Acc<T>::type;
  const I vin = g.in[0] * g.in[1] * g.in[2];
  const I n = g.planes * g.out[0] * g.out[1] * g.out[2];
  for (I i = GridStart<I>(); i < n; i += GridStep<I>()) {
    Span<I> sp[3];
    const I plane = Window(g, i, sp);
    const T* src = x + plane * vin;
    A acc = 0;
    I at = -1;
    if (type == PoolType::kMax) {
      at = WindowMax(g, src, sp, &acc);
    } else {
      for (I iz = sp[0].lo; iz < sp[0].hi; ++iz) {
        for (I iy = sp[1].lo; iy < sp[1].hi; ++iy) {
          const I row = (iz * g.in[1] + iy) * g.in[2];
          for (I ix = sp[2].lo; ix < sp[2].hi; ++ix) acc += Load(src, row + ix);
        }
      }
    }
    if (type == PoolType::kAvg) {
      const I c = Count(include_pad, sp);
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
template <typename T, typename I>
__global__ void PoolBackwardKernel(PoolType type, bool include_pad, Dims<I> g,
                                   const T* og, const T* x,
                                   const int32_t* argmax, T* dx, int* bad) {
  using A = typename Acc<T>::type;
  const I vin = g.in[0] * g.in[1] * g.in[2];
  const I n = g.planes * g.out[0] * g.out[1] * g.out[2];
  for (I i = GridStart<I>(); i < n; i += GridStep<I>()) {
    Span<I> sp[3];
    const I plane = Window(g, i, sp);
    A gv = Load(og, i);
    T* dst = dx + plane * vin;
    if (type == PoolType::kMax) {
      I at = -1;
      if (argmax != nullptr) {
        const int32_t stored = argmax[i];
        if (stored < -1 || stored >= vin) {
          atomicExch(bad, 1);
          continue;
        }
        at = static_cast<I>(stored);
      } else {
        A unused;
        at = WindowMax(g, x + plane * vin, sp, &unused);
      }
      if (at >= 0) AtomicAdd(dst + at, gv);
      continue;
    }
    if (type == PoolType::kAvg) {
      const I c = Count(include_pad, sp);
      if (c == 0) continue;
      gv /= static_cast<A>(c);
    }
    for (I iz = sp[0].lo; iz < sp[0].hi; ++iz) {
      for (I iy = sp[1].lo; iy < sp[1].hi; ++iy) {
        const I row = (iz * g.in[1] + iy) * g.in[2];
        for (I ix = sp[2].lo; ix < sp[2].hi; ++ix) {
          AtomicAdd(dst + row + ix, gv);
        }
      }
    }
  }
}

// BatchNorm in three steps, each using the whole GPU: per-channel partial
// sums from `splits` blocks per channel (grid channels x splits), a
// per-channel finish (one thread per channel), and an elementwise pass.
// Partials and per-channel results live in caller-provided scratch.
inline int Splits(const BatchNormArgs& a) {
  const int64_t count = a.outer * a.inner;
  const int64_t s = count / (kThreads * 16);
  return static_cast<int>(s < 1 ? 1 : (s > 64 ? 64 : s));
}

// Element j of channel c's (outer x inner) elements.
__device__ __forceinline__ int64_t ChannelIndex(const BatchNormArgs& a,
                                                int64_t c, int64_t j) {
  return ((j / a.inner) * a.channels + c) * a.inner + j % a.inner;
}

// partial[(c * splits + s) * 2 + {0, 1}] = sum of (v, v^2) over the
// split's elements, v = x, or (og, og * (x - mean) * inv_std) for the
// gradient (stats = (mean, inv_std) per channel).
template <typename T, bool kGrad>
__global__ void ChannelPartialsKernel(BatchNormArgs a, const T* x, const T* og,
                                      const double* stats, double* partial) {
  __shared__ double shared[kThreads];
  const int64_t c = blockIdx.x;
  const int splits = gridDim.y;
  const int64_t count = a.outer * a.inner;
  double s0 = 0, s1 = 0;
  const double m = kGrad ? stats[2 * c] : 0, inv = kGrad ? stats[2 * c + 1] : 0;
  for (int64_t j = blockIdx.y * int64_t{kThreads} + threadIdx.x; j < count;
       j += int64_t{kThreads} * splits) {
    const int64_t idx = ChannelIndex(a, c, j);
    const double v = static_cast<double>(Load(x, idx));
    if (kGrad) {
      const double g = static_cast<double>(Load(og, idx));
      s0 += g;
      s1 += g * (v - m) * inv;
    } else {
      s0 += v;
      s1 += v * v;
    }
  }
  s0 = BlockSum(s0, shared);
  s1 = BlockSum(s1, shared);
  if (threadIdx.x == 0) {
    partial[(c * splits + blockIdx.y) * 2] = s0;
    partial[(c * splits + blockIdx.y) * 2 + 1] = s1;
  }
}

template <typename P>
__device__ __forceinline__ void Put(P* p, int64_t i, int req, double v) {
  if (req == MX_REQ_ADD) {
    p[i] += static_cast<P>(v);
  } else if (req != MX_REQ_NULL) {
    p[i] = static_cast<P>(v);
  }
}

// Forward finish: coef[2c] = scale, coef[2c+1] = shift; mean/var outputs
// and the moving statistics.
template <typename P>
__global__ void BatchNormFinishKernel(BatchNormArgs a, int splits,
                                      const double* partial, const P* gamma,
                                      const P* beta, P* moving_mean,
                                      P* moving_var, P* mean_out, int req_mean,
                                      P* var_out, int req_var, double* coef) {
  const int64_t c = blockIdx.x * int64_t{blockDim.x} + threadIdx.x;
  if (c >= a.channels) return;
  const int64_t count = a.outer * a.inner;
  double mean, var;
  if (a.batch_stats) {
    double sum = 0, sq = 0;
    for (int s = 0; s < splits; ++s) {
      sum += partial[(c * splits + s) * 2];
      sq += partial[(c * splits + s) * 2 + 1];
    }
    mean = sum / count;
    var = sq / count - mean * mean;
    if (var < 0) var = 0;
  } else {
    mean = static_cast<double>(moving_mean[c]);
    var = static_cast<double>(moving_var[c]);
  }
  const double g = a.fix_gamma ? 1.0 : static_cast<double>(gamma[c]);
  const double scale = g / sqrt(var + a.eps);
  coef[2 * c] = scale;
  coef[2 * c + 1] = static_cast<double>(beta[c]) - mean * scale;
  Put(mean_out, c, req_mean, mean);
  Put(var_out, c, req_var, var);
  if (a.batch_stats) {
    const double m = a.momentum;
    moving_mean[c] = static_cast<P>(static_cast<double>(moving_mean[c]) * m +
                                    mean * (1 - m));
    moving_var[c] =
        static_cast<P>(static_cast<double>(moving_var[c]) * m + var * (1 - m));
  }
}

// After cuDNN's forward: mean and var = 1/inv_std^2 - eps (in double) to
// the outputs, and the moving statistics updated as above.
template <typename P>
__global__ void BatchNormFromInvStdKernel(BatchNormArgs a, const P* batch_mean,
                                          const P* inv_std, P* mean_out,
                                          int req_mean, P* var_out, int req_var,
                                          P* moving_mean, P* moving_var) {
  const int64_t c = blockIdx.x * int64_t{blockDim.x} + threadIdx.x;
  if (c >= a.channels) return;
  const double mean = static_cast<double>(batch_mean[c]);
  const double inv = static_cast<double>(inv_std[c]);
  double var = 1.0 / (inv * inv) - a.eps;
  if (var < 0) var = 0;
  Put(mean_out, c, req_mean, mean);
  Put(var_out, c, req_var, var);
  const double m = a.momentum;
  moving_mean[c] =
      static_cast<P>(static_cast<double>(moving_mean[c]) * m + mean * (1 - m));
  moving_var[c] =
      static_cast<P>(static_cast<double>(moving_var[c]) * m + var * (1 - m));
}

// y = x * coef[2c] + coef[2c+1] for every element (c its channel).
template <int kReq, typename T>
__global__ void ChannelAffineKernel(BatchNormArgs a, const T* x,
                                    const double* coef, T* y) {
  using A = typename Acc<T>::type;
  const int64_t n = a.outer * a.channels * a.inner;
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < n;
       i += int64_t{blockDim.x} * gridDim.x) {
    const int64_t c = (i / a.inner) % a.channels;
    const double v =
        static_cast<double>(Load(x, i)) * coef[2 * c] + coef[2 * c + 1];
    Store<kReq>(y, i, static_cast<A>(v));
  }
}

// Gradient: stats[2c] = mean, stats[2c+1] = 1/sqrt(var + eps).
template <typename P>
__global__ void BatchNormStatsKernel(BatchNormArgs a, const P* mean,
                                     const P* var, double* stats) {
  const int64_t c = blockIdx.x * int64_t{blockDim.x} + threadIdx.x;
  if (c >= a.channels) return;
  stats[2 * c] = static_cast<double>(mean[c]);
  stats[2 * c + 1] = 1.0 / sqrt(static_cast<double>(var[c]) + a.eps);
}

// Gradient finish: dgamma, dbeta, and the per-channel coefficients of
// dx = k0 * og + k1 * x + k2 (coef[3c..3c+2]).
template <typename P>
__global__ void BatchNormGradFinishKernel(BatchNormArgs a, int splits,
                                          const double* partial,
                                          const double* stats, const P* gamma,
                                          P* dgamma, int req_dgamma, P* dbeta,
                                          int req_dbeta, double* coef) {
  const int64_t c = blockIdx.x * int64_t{blockDim.x} + threadIdx.x;
  if (c >= a.channels) return;
  const int64_t count = a.outer * a.inner;
  double sum_g = 0, sum_gx = 0;
  for (int s = 0; s < splits; ++s) {
    sum_g += partial[(c * splits + s) * 2];
    sum_gx += partial[(c * splits + s) * 2 + 1];
  }
  const double m = stats[2 * c], inv = stats[2 * c + 1];
  const double gm = a.fix_gamma ? 1.0 : static_cast<double>(gamma[c]);
  const double scale = gm * inv;
  const double mean_g = a.batch_stats ? sum_g / count : 0;
  const double mean_gx = a.batch_stats ? sum_gx / count : 0;
  // dx = scale * (og - mean_g - (x - m) * inv * mean_gx)
  coef[3 * c] = scale;
  coef[3 * c + 1] = -scale * inv * mean_gx;
  coef[3 * c + 2] = -scale * mean_g + scale * m * inv * mean_gx;
  Put(dgamma, c, req_dgamma, a.fix_gamma ? 0.0 : sum_gx);
  Put(dbeta, c, req_dbeta, sum_g);
}

template <int kReq, typename T>
__global__ void BatchNormGradApplyKernel(BatchNormArgs a, const T* og,
                                         const T* x, const double* coef,
                                         T* dx) {
  using A = typename Acc<T>::type;
  const int64_t n = a.outer * a.channels * a.inner;
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < n;
       i += int64_t{blockDim.x} * gridDim.x) {
    const int64_t c = (i / a.inner) % a.channels;
    const double v = coef[3 * c] * static_cast<double>(Load(og, i)) +
                     coef[3 * c + 1] * static_cast<double>(Load(x, i)) +
                     coef[3 * c + 2];
    Store<kReq>(dx, i, static_cast<A>(v));
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
  PoolType type;
  bool include_pad;
  PoolShape g;
  const void* x;
  void* y;
  int32_t* argmax;
  cudaStream_t s;
  template <int R, typename T>
  void operator()() const {
    const int64_t n = g.planes * g.out[0] * g.out[1] * g.out[2];
    if (FitsInt32(g)) {
      PoolForwardKernel<R, T, int32_t><<<Blocks(n), kThreads, 0, s>>>(
          type, include_pad, DimsOf<int32_t>(g), static_cast<const T*>(x),
          static_cast<T*>(y), argmax);
    } else {
      PoolForwardKernel<R, T, int64_t><<<Blocks(n), kThreads, 0, s>>>(
          type, include_pad, DimsOf<int64_t>(g), static_cast<const T*>(x),
          static_cast<T*>(y), argmax);
    }
  }
};

struct PoolBackwardLauncher {
  PoolType type;
  bool include_pad;
  PoolShape g;
  const void* og;
  const void* x;
  const int32_t* argmax;
  void* dx;
  int* bad;
  cudaStream_t s;
  template <int R, typename T>
  void operator()() const {
    const int64_t n = g.planes * g.out[0] * g.out[1] * g.out[2];
    if (FitsInt32(g)) {
      PoolBackwardKernel<T, int32_t><<<Blocks(n), kThreads, 0, s>>>(
          type, include_pad, DimsOf<int32_t>(g), static_cast<const T*>(og),
          static_cast<const T*>(x), argmax, static_cast<T*>(dx), bad);
    } else {
      PoolBackwardKernel<T, int64_t><<<Blocks(n), kThreads, 0, s>>>(
          type, include_pad, DimsOf<int64_t>(g), static_cast<const T*>(og),
          static_cast<const T*>(x), argmax, static_cast<T*>(dx), bad);
    }
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

// Scratch layout: partials (channels x splits x 2), then per-channel
// coefficients (channels x 3), then stats (channels x 2), in doubles.
struct BatchNormScratch {
  double *partial, *coef, *stats;
  BatchNormScratch(const BatchNormArgs& a, void* scratch) {
    partial = static_cast<double*>(scratch);
    coef = partial + a.channels * Splits(a) * 2;
    stats = coef + a.channels * 3;
  }
};

int ChannelBlocks(const BatchNormArgs& a) {
  return static_cast<int>((a.channels + kThreads - 1) / kThreads);
}

struct BatchNormForwardLauncher {
  BatchNormArgs a;
  const void *x, *gamma, *beta;
  void *mm, *mv, *y;
  int req_y;
  void* mean;
  int req_mean;
  void* var;
  int req_var;
  void* scratch;
  cudaStream_t s;
  template <int R, typename T>
  void operator()() const {
    using P = typename ParamOf<T>::type;
    const BatchNormScratch w(a, scratch);
    const int splits = Splits(a);
    if (a.batch_stats) {
      ChannelPartialsKernel<T, false>
          <<<dim3(static_cast<unsigned>(a.channels), splits), kThreads, 0, s>>>(
              a, static_cast<const T*>(x), nullptr, nullptr, w.partial);
    }
    BatchNormFinishKernel<P><<<ChannelBlocks(a), kThreads, 0, s>>>(
        a, splits, w.partial, static_cast<const P*>(gamma),
        static_cast<const P*>(beta), static_cast<P*>(mm), static_cast<P*>(mv),
        static_cast<P*>(mean), req_mean, static_cast<P*>(var), req_var, w.coef);
    if (req_y == MX_REQ_NULL) return;
    const int64_t n = a.outer * a.channels * a.inner;
    if (req_y == MX_REQ_ADD) {
      ChannelAffineKernel<MX_REQ_ADD, T><<<Blocks(n), kThreads, 0, s>>>(
          a, static_cast<const T*>(x), w.coef, static_cast<T*>(y));
    } else {
      ChannelAffineKernel<MX_REQ_WRITE, T><<<Blocks(n), kThreads, 0, s>>>(
          a, static_cast<const T*>(x), w.coef, static_cast<T*>(y));
    }
  }
};

struct BatchNormBackwardLauncher {
  BatchNormArgs a;
  const void *og, *x, *gamma, *mean, *var;
  void* dx;
  int req_dx;
  void* dgamma;
  int req_dgamma;
  void* dbeta;
  int req_dbeta;
  void* scratch;
  cudaStream_t s;
  template <int R, typename T>
  void operator()() const {
    using P = typename ParamOf<T>::type;
    const BatchNormScratch w(a, scratch);
    const int splits = Splits(a);
    BatchNormStatsKernel<P><<<ChannelBlocks(a), kThreads, 0, s>>>(
        a, static_cast<const P*>(mean), static_cast<const P*>(var), w.stats);
    ChannelPartialsKernel<T, true>
        <<<dim3(static_cast<unsigned>(a.channels), splits), kThreads, 0, s>>>(
            a, static_cast<const T*>(x), static_cast<const T*>(og), w.stats,
            w.partial);
    BatchNormGradFinishKernel<P><<<ChannelBlocks(a), kThreads, 0, s>>>(
        a, splits, w.partial, w.stats, static_cast<const P*>(gamma),
        static_cast<P*>(dgamma), req_dgamma, static_cast<P*>(dbeta), req_dbeta,
        w.coef);
    if (req_dx == MX_REQ_NULL) return;
    const int64_t n = a.outer * a.channels * a.inner;
    if (req_dx == MX_REQ_ADD) {
      BatchNormGradApplyKernel<MX_REQ_ADD, T><<<Blocks(n), kThreads, 0, s>>>(
          a, static_cast<const T*>(og), static_cast<const T*>(x), w.coef,
          static_cast<T*>(dx));
    } else {
      BatchNormGradApplyKernel<MX_REQ_WRITE, T><<<Blocks(n), kThreads, 0, s>>>(
          a, static_cast<const T*>(og), static_cast<const T*>(x), w.coef,
          static_cast<T*>(dx));
    }
  }
};

struct DropoutMaskLauncher {
  int64_t n;
  double p;
  uint64_t seed;
  void* mask;
  cudaStream_t s;
  template <int R, typename T>
  void operator()() const {
    DropoutMaskKernel<T>
        <<<Blocks(n), kThreads, 0, s>>>(n, p, seed, static_cast<T*>(mask));
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
  return Dispatch(
      dtype, req == MX_REQ_NULL ? MX_REQ_WRITE : req,
      PoolForwardLauncher{type, count_include_pad, shape, x,
                          req == MX_REQ_NULL ? nullptr : y, argmax, stream});
}

cudaError_t LaunchPoolBackward(PoolType type, bool count_include_pad, int dtype,
                               const PoolShape& shape, const void* og,
                               const void* x, const int32_t* argmax, void* dx,
                               int req, int* bad_argmax, cudaStream_t stream) {
  if (req == MX_REQ_NULL) return cudaSuccess;
  if (req != MX_REQ_ADD) {
    const int64_t n = shape.planes * shape.in[0] * shape.in[1] * shape.in[2];
    const size_t bytes =
        static_cast<size_t>(n) * (dtype == MX_DTYPE_FLOAT64   ? 8
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
                                   int req_var, void* scratch,
                                   cudaStream_t stream) {
  if (a.channels == 0) return cudaSuccess;
  return Dispatch(dtype, MX_REQ_WRITE,
                  BatchNormForwardLauncher{a, x, gamma, beta, moving_mean,
                                           moving_var, y, req_y, mean, req_mean,
                                           var, req_var, scratch, stream});
}

cudaError_t LaunchBatchNormBackward(int dtype, const BatchNormArgs& a,
                                    const void* og, const void* x,
                                    const void* gamma, const void* mean,
                                    const void* var, void* dx, int req_dx,
                                    void* dgamma, int req_dgamma, void* dbeta,
                                    int req_dbeta, void* scratch,
                                    cudaStream_t stream) {
  if (a.channels == 0) return cudaSuccess;
  return Dispatch(
      dtype, MX_REQ_WRITE,
      BatchNormBackwardLauncher{a, og, x, gamma, mean, var, dx, req_dx, dgamma,
                                req_dgamma, dbeta, req_dbeta, scratch, stream});
}

cudaError_t LaunchBatchNormFromInvStd(int param_dtype, const BatchNormArgs& a,
                                      const void* batch_mean,
                                      const void* inv_std, void* mean,
                                      int req_mean, void* var, int req_var,
                                      void* moving_mean, void* moving_var,
                                      cudaStream_t stream) {
  if (a.channels == 0) return cudaSuccess;
  const int blocks = Blocks(a.channels);
  if (param_dtype == MX_DTYPE_FLOAT64) {
    BatchNormFromInvStdKernel<double><<<blocks, kThreads, 0, stream>>>(
        a, static_cast<const double*>(batch_mean),
        static_cast<const double*>(inv_std), static_cast<double*>(mean),
        req_mean, static_cast<double*>(var), req_var,
        static_cast<double*>(moving_mean), static_cast<double*>(moving_var));
  } else if (param_dtype == MX_DTYPE_FLOAT32) {
    BatchNormFromInvStdKernel<float><<<blocks, kThreads, 0, stream>>>(
        a, static_cast<const float*>(batch_mean),
        static_cast<const float*>(inv_std), static_cast<float*>(mean), req_mean,
        static_cast<float*>(var), req_var, static_cast<float*>(moving_mean),
        static_cast<float*>(moving_var));
  } else {
    return cudaErrorInvalidValue;
  }
  return cudaGetLastError();
}

size_t BatchNormScratchBytes(const BatchNormArgs& a) {
  return static_cast<size_t>(a.channels * (Splits(a) * 2 + 3 + 2)) *
         sizeof(double);
}

cudaError_t LaunchDropoutMask(int dtype, int64_t n, double p, uint64_t seed,
                              void* mask, cudaStream_t stream) {
  if (n == 0) return cudaSuccess;
  return Dispatch(dtype, MX_REQ_WRITE,
                  DropoutMaskLauncher{n, p, seed, mask, stream});
}

}  // namespace mx_cuda
