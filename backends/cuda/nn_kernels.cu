// Pooling and Dropout-mask kernels of the CUDA plugin, with the CPU
// kernels' semantics (backends/cpu/pooling_ops.cc, nn_ops.cc): first
// maximum in row-major order, NaN wins, 0 and argmax -1 for a window
// entirely in the padding (BatchNorm: batch_norm_kernels.cu).
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

cudaError_t LaunchDropoutMask(int dtype, int64_t n, double p, uint64_t seed,
                              void* mask, cudaStream_t stream) {
  if (n == 0) return cudaSuccess;
  return Dispatch(dtype, MX_REQ_WRITE,
                  DropoutMaskLauncher{n, p, seed, mask, stream});
}

}  // namespace mx_cuda
