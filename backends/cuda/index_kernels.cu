// take, pick, gather_nd (and their gradients) and where kernels of the
// CUDA plugin with the CPU kernels' semantics
// (backends/cpu/indexing_ops.cc, embedding_ops.cc, gather_nd_ops.cc). Kept
// simple: grid-stride loops, one thread per output element, float atomics into
// a float/double scratch for the scatter-adds (so float16 gradients round once,
// as on the CPU).
#include "backends/cuda/index_kernels.h"
#include "backends/cuda/index_util.cuh"

namespace mx_cuda {
namespace {

using namespace kernel;  // NOLINT: the shared kernel helpers.

// ---- take and _backward_take. ----

// index in [0, n) by mode; false when out of range in raise mode.
__device__ __forceinline__ bool Resolve(int64_t i, int64_t n, TakeMode mode,
                                        int64_t* j) {
  if (mode == TakeMode::kClip) {
    *j = i < 0 ? 0 : (i >= n ? n - 1 : i);
  } else if (mode == TakeMode::kWrap) {
    *j = ((i % n) + n) % n;
  } else {
    if (i < -n || i >= n) return false;
    *j = i < 0 ? i + n : i;
  }
  return true;
}

template <int kReq, typename T, typename I>
__global__ void TakeKernel(TakeShape s, TakeMode mode, const T* a, const I* idx,
                           T* y, int* bad) {
  MX_GRID_LOOP(i, s.outer * s.m * s.inner) {
    const int64_t t = i % s.inner, ok = i / s.inner;
    const int64_t k = ok % s.m, o = ok / s.m;
    int64_t j;
    if (!Resolve(ToIndex(idx[k]), s.n, mode, &j)) {
      atomicExch(bad, 1);
      continue;
    }
    Store<kReq>(y, i, Load(a, (o * s.n + j) * s.inner + t));
  }
}

template <typename T, typename I>
__global__ void TakeScatterKernel(TakeShape s, TakeMode mode, const T* g,
                                  const I* idx, ScatterAcc<T>* acc, int* bad) {
  MX_GRID_LOOP(i, s.outer * s.m * s.inner) {
    const int64_t t = i % s.inner, ok = i / s.inner;
    const int64_t k = ok % s.m, o = ok / s.m;
    int64_t j;
    if (!Resolve(ToIndex(idx[k]), s.n, mode, &j)) {
      atomicExch(bad, 1);
      continue;
    }
    atomicAdd(acc + (o * s.n + j) * s.inner + t, ScatterValue(g, i));
  }
}

struct TakeLauncher {
  int index_dtype;
  TakeShape s;
  TakeMode mode;
  const void *a, *idx;
  void* y;
  int* bad;
  cudaStream_t st;
  template <int R, typename T>
  void operator()() const {
    WithIndexType(index_dtype, [&](auto tag) {
      using I = decltype(tag);
      TakeKernel<R, T, I><<<Blocks(s.outer * s.m * s.inner), kThreads, 0, st>>>(
          s, mode, static_cast<const T*>(a), static_cast<const I*>(idx),
          static_cast<T*>(y), bad);
    });
  }
};

struct TakeBackwardLauncher {
  int index_dtype;
  TakeShape s;
  TakeMode mode;
  const void *g, *idx;
  void *da, *scratch;
  int* bad;
  cudaStream_t st;
  template <int R, typename T>
  void operator()() const {
    ScatterAcc<T>* acc = static_cast<ScatterAcc<T>*>(scratch);
    const int64_t count = s.outer * s.m * s.inner;
    if (count > 0) {
      WithIndexType(index_dtype, [&](auto tag) {
        using I = decltype(tag);
        TakeScatterKernel<T, I><<<Blocks(count), kThreads, 0, st>>>(
            s, mode, static_cast<const T*>(g), static_cast<const I*>(idx), acc,
            bad);
      });
    }
    const int64_t n = s.outer * s.n * s.inner;
    StoreAccumulatedKernel<R, T>
        <<<Blocks(n), kThreads, 0, st>>>(n, acc, static_cast<T*>(da));
  }
};

// ---- gather_nd and its gradient. ----

// Offset in data of slice k; false (and *bad set) for an index out of
// range.
template <typename I>
__device__ __forceinline__ bool SliceOffset(const GatherNdShape& s,
                                            const I* idx, int64_t k,
                                            int64_t* off) {
  int64_t o = 0;
  for (int64_t j = 0; j < s.m; ++j) {
    const double v = ToDouble(idx[j * s.count + k]);
    const int64_t extent = s.dims[j];
    if (!(v >= -static_cast<double>(extent) &&
          v < static_cast<double>(extent))) {
      return false;
    }
    int64_t i = static_cast<int64_t>(v);
    if (i < 0) i += extent;
    o = o * extent + i;
  }
  *off = o * s.slice;
  return true;
}

template <int kReq, typename T, typename I>
__global__ void GatherNdKernel(GatherNdShape s, const T* data, const I* idx,
                               T* y, int* bad) {
  MX_GRID_LOOP(i, s.count * s.slice) {
    int64_t off;
    if (!SliceOffset(s, idx, i / s.slice, &off)) {
      atomicExch(bad, 1);
      continue;
    }
    Store<kReq>(y, i, Load(data, off + i % s.slice));
  }
}

template <typename T, typename I>
__global__ void GatherNdScatterKernel(GatherNdShape s, const T* g, const I* idx,
                                      ScatterAcc<T>* acc, int* bad) {
  MX_GRID_LOOP(i, s.count * s.slice) {
    int64_t off;
    if (!SliceOffset(s, idx, i / s.slice, &off)) {
      atomicExch(bad, 1);
      continue;
    }
    atomicAdd(acc + off + i % s.slice, ScatterValue(g, i));
  }
}

int64_t DataSize(const GatherNdShape& s) {
  int64_t n = 1;
  for (int d = 0; d < s.ndim; ++d) n *= s.dims[d];
  return n;
}

struct GatherNdLauncher {
  int index_dtype;
  GatherNdShape s;
  const void *data, *idx;
  void* y;
  int* bad;
  cudaStream_t st;
  template <int R, typename T>
  void operator()() const {
    WithIndexType(index_dtype, [&](auto tag) {
      using I = decltype(tag);
      GatherNdKernel<R, T, I><<<Blocks(s.count * s.slice), kThreads, 0, st>>>(
          s, static_cast<const T*>(data), static_cast<const I*>(idx),
          static_cast<T*>(y), bad);
    });
  }
};

struct GatherNdBackwardLauncher {
  int index_dtype;
  GatherNdShape s;
  const void *g, *idx;
  void *dx, *scratch;
  int* bad;
  cudaStream_t st;
  template <int R, typename T>
  void operator()() const {
    ScatterAcc<T>* acc = static_cast<ScatterAcc<T>*>(scratch);
    const int64_t count = s.count * s.slice;
    if (count > 0) {
      WithIndexType(index_dtype, [&](auto tag) {
        using I = decltype(tag);
        GatherNdScatterKernel<T, I><<<Blocks(count), kThreads, 0, st>>>(
            s, static_cast<const T*>(g), static_cast<const I*>(idx), acc, bad);
      });
    }
    const int64_t n = DataSize(s);
    StoreAccumulatedKernel<R, T>
        <<<Blocks(n), kThreads, 0, st>>>(n, acc, static_cast<T*>(dx));
  }
};

// ---- where. ----

template <int kReq, typename T, typename C>
__global__ void WhereKernel(int64_t n, WhereIndex w, const C* c, const T* x,
                            const T* z, T* y) {
  MX_GRID_LOOP(i, n) {
    int64_t rest = i, co = 0, xo = 0, zo = 0;
    for (int d = w.ndim - 1; d >= 0; --d) {
      const int64_t q = rest % w.shape[d];
      rest /= w.shape[d];
      co += q * w.c_stride[d];
      xo += q * w.x_stride[d];
      zo += q * w.z_stride[d];
    }
    const auto cv = Load(c, co);
    const bool pick = cv != static_cast<decltype(cv)>(0);  // NaN is true.
    Store<kReq>(y, i, pick ? Load(x, xo) : Load(z, zo));
  }
}

struct WhereLauncher {
  int cond_dtype;
  int64_t n;
  WhereIndex w;
  const void *c, *x, *z;
  void* y;
  cudaStream_t st;
  template <int R, typename T>
  void operator()() const {
    WithIndexType(cond_dtype, [&](auto tag) {
      using C = decltype(tag);
      WhereKernel<R, T, C><<<Blocks(n), kThreads, 0, st>>>(
          n, w, static_cast<const C*>(c), static_cast<const T*>(x),
          static_cast<const T*>(z), static_cast<T*>(y));
    });
  }
};

// ---- pick and _backward_pick. ----

template <typename I>
__device__ __forceinline__ int64_t PickPosition(I raw, const PickShape& s) {
  int64_t i = ToIndex(raw);
  if (s.wrap) {
    i %= s.n;
    return i < 0 ? i + s.n : i;
  }
  return i < 0 ? 0 : (i >= s.n ? s.n - 1 : i);
}

template <int kReq, typename T, typename I>
__global__ void PickKernel(PickShape s, const T* data, const I* index, T* y) {
  MX_GRID_LOOP(k, s.outer * s.inner) {
    const int64_t o = k / s.inner, t = k % s.inner;
    const int64_t j = PickPosition(index[k], s);
    Put<kReq>(
        y, k,
        static_cast<typename Acc<T>::type>(data[(o * s.n + j) * s.inner + t]));
  }
}

template <int kReq, typename T, typename I>
__global__ void PickBackwardKernel(PickShape s, const T* g, const I* index,
                                   T* dx) {
  using A = typename Acc<T>::type;
  MX_GRID_LOOP(i, s.outer * s.n * s.inner) {
    const int64_t t = i % s.inner, oj = i / s.inner;
    const int64_t j = oj % s.n, o = oj / s.n;
    const int64_t k = o * s.inner + t;
    // As the CPU: 0 + g written (so -0 becomes +0), x + g added at the
    // picked position only; other positions 0, or untouched when added.
    if (PickPosition(index[k], s) == j) {
      Put<kReq>(dx, i, static_cast<A>(static_cast<A>(g[k]) + A(0)));
    } else if (kReq != MX_REQ_ADD) {
      Put<kReq>(dx, i, A(0));
    }
  }
}

struct PickLauncher {
  int index_dtype;
  PickShape s;
  const void *data, *index;
  void* y;
  bool backward;
  cudaStream_t st;
  template <int R, typename T>
  void operator()() const {
    WithIndexType(index_dtype, [&](auto tag) {
      using I = decltype(tag);
      const I* idx = static_cast<const I*>(index);
      if (backward) {
        PickBackwardKernel<R, T, I>
            <<<Blocks(s.outer * s.n * s.inner), kThreads, 0, st>>>(
                s, static_cast<const T*>(data), idx, static_cast<T*>(y));
      } else {
        PickKernel<R, T, I><<<Blocks(s.outer * s.inner), kThreads, 0, st>>>(
            s, static_cast<const T*>(data), idx, static_cast<T*>(y));
      }
    });
  }
};

}  // namespace

size_t IndexScratchBytes(int dtype, int64_t n) {
  if (n <= 0) return 0;
  const bool wide = dtype == MX_DTYPE_FLOAT64 || !IsFloat(dtype);
  return static_cast<size_t>(n) * (wide ? 8 : 4);
}

cudaError_t LaunchTake(int dtype, int index_dtype, const TakeShape& s,
                       TakeMode mode, const void* a, const void* indices,
                       void* y, int req, int* bad, cudaStream_t stream) {
  if (!IsIndexType(index_dtype)) return cudaErrorInvalidValue;
  if (s.outer * s.m * s.inner == 0) return cudaSuccess;
  return Dispatch<true>(
      dtype, req,
      TakeLauncher{index_dtype, s, mode, a, indices, y, bad, stream});
}

cudaError_t LaunchTakeBackward(int dtype, int index_dtype, const TakeShape& s,
                               TakeMode mode, const void* g,
                               const void* indices, void* da, int req, int* bad,
                               void* scratch, cudaStream_t stream) {
  if (!IsIndexType(index_dtype) || dtype == MX_DTYPE_BOOL) {
    return cudaErrorInvalidValue;
  }
  const int64_t n = s.outer * s.n * s.inner;
  if (!Writes(req) || n == 0) return cudaSuccess;
  const cudaError_t err =
      cudaMemsetAsync(scratch, 0, IndexScratchBytes(dtype, n), stream);
  if (err != cudaSuccess) return err;
  return Dispatch<true>(dtype, req,
                        TakeBackwardLauncher{index_dtype, s, mode, g, indices,
                                             da, scratch, bad, stream});
}

cudaError_t LaunchGatherNd(int dtype, int index_dtype, const GatherNdShape& s,
                           const void* data, const void* indices, void* y,
                           int req, int* bad, cudaStream_t stream) {
  if (!IsIndexType(index_dtype)) return cudaErrorInvalidValue;
  if (s.count * s.slice == 0) return cudaSuccess;
  return Dispatch<true>(
      dtype, req,
      GatherNdLauncher{index_dtype, s, data, indices, y, bad, stream});
}

cudaError_t LaunchGatherNdBackward(int dtype, int index_dtype,
                                   const GatherNdShape& s, const void* g,
                                   const void* indices, void* dx, int req,
                                   int* bad, void* scratch,
                                   cudaStream_t stream) {
  if (!IsIndexType(index_dtype) || !IsFloat(dtype)) {
    return cudaErrorInvalidValue;
  }
  const int64_t n = DataSize(s);
  if (!Writes(req) || n == 0) return cudaSuccess;
  const cudaError_t err =
      cudaMemsetAsync(scratch, 0, IndexScratchBytes(dtype, n), stream);
  if (err != cudaSuccess) return err;
  return Dispatch(dtype, req,
                  GatherNdBackwardLauncher{index_dtype, s, g, indices, dx,
                                           scratch, bad, stream});
}

cudaError_t LaunchWhere(int dtype, int cond_dtype, int64_t n,
                        const WhereIndex& index, const void* cond,
                        const void* x, const void* z, void* y, int req,
                        cudaStream_t stream) {
  if (!IsIndexType(cond_dtype)) return cudaErrorInvalidValue;
  if (n == 0) return cudaSuccess;
  return Dispatch<true>(
      dtype, req, WhereLauncher{cond_dtype, n, index, cond, x, z, y, stream});
}

cudaError_t LaunchPick(int dtype, int index_dtype, const PickShape& s,
                       const void* data, const void* index, void* y, int req,
                       cudaStream_t stream) {
  if (!IsIndexType(index_dtype) || index_dtype == MX_DTYPE_BOOL) {
    return cudaErrorInvalidValue;
  }
  if (s.outer * s.inner == 0) return cudaSuccess;
  if (s.n <= 0) return cudaErrorInvalidValue;
  return DispatchAnyType(
      dtype, req,
      PickLauncher{index_dtype, s, data, index, y, /*backward=*/false, stream});
}

cudaError_t LaunchPickBackward(int dtype, int index_dtype, const PickShape& s,
                               const void* g, const void* index, void* dx,
                               int req, cudaStream_t stream) {
  if (!IsIndexType(index_dtype) || index_dtype == MX_DTYPE_BOOL) {
    return cudaErrorInvalidValue;
  }
  if (s.outer * s.n * s.inner == 0) return cudaSuccess;
  return DispatchAnyType(
      dtype, req,
      PickLauncher{index_dtype, s, g, index, dx, /*backward=*/true, stream});
}

}  // namespace mx_cuda
