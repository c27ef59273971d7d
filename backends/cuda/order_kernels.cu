// argmax/argmin, argsort/sort/topk's placing, cumsum, _arange, tril and triu
// kernels of the CUDA plugin with the CPU kernels' semantics
// (backends/cpu/arg_reduce_ops.cc, ordering_ops.cc, init_ops.cc's
// _arange, triangle_ops.cc); launchers declared in index_kernels.h.
#include "backends/cuda/index_kernels.h"
#include "backends/cuda/index_util.cuh"

namespace mx_cuda {
namespace {

using namespace kernel;  // NOLINT: the shared kernel helpers.

// ---- argmax/argmin: one block per output, each thread scanning a stride
// of the axis, then a shared-memory reduction. ----

// Whether (v at i) wins over (best at at), the CPU's rule: the first NaN,
// else the first maximum (minimum). i < 0: no candidate; at < 0: none yet.
template <typename A>
__device__ __forceinline__ void Keep(bool is_max, A v, int64_t i, A* best,
                                     int64_t* at) {
  if (i < 0) return;
  bool wins;
  if (*at < 0) {
    wins = true;
  } else if (IsNan(v) || IsNan(*best)) {
    wins = IsNan(v) && (!IsNan(*best) || i < *at);
  } else {
    wins = (is_max ? v > *best : v < *best) || (v == *best && i < *at);
  }
  if (wins) {
    *best = v;
    *at = i;
  }
}

template <int kReq, typename T, typename O>
__global__ void ArgReduceKernel(bool is_max, int64_t outer, int64_t n,
                                int64_t inner, const T* x, O* y) {
  using A = typename Acc<T>::type;
  __shared__ A sv[kThreads];
  __shared__ int64_t si[kThreads];
  // Uniform per block, so every thread reaches the barriers.
  for (int64_t o = blockIdx.x; o < outer * inner; o += gridDim.x) {
    const int64_t base = (o / inner) * n * inner + o % inner;
    A best = 0;
    int64_t at = -1;
    for (int64_t i = threadIdx.x; i < n; i += kThreads) {
      Keep(is_max, Load(x, base + i * inner), i, &best, &at);
    }
    sv[threadIdx.x] = best;
    si[threadIdx.x] = at;
    __syncthreads();
    for (int h = kThreads / 2; h > 0; h >>= 1) {
      if (threadIdx.x < h) {
        Keep(is_max, sv[threadIdx.x + h], si[threadIdx.x + h], &sv[threadIdx.x],
             &si[threadIdx.x]);
      }
      __syncthreads();
    }
    if (threadIdx.x == 0)
      Put<kReq>(y, o, static_cast<typename Acc<O>::type>(si[0]));
    __syncthreads();
  }
}

struct ArgReduceLauncher {
  bool is_max;
  bool int64_indices;  // Else indices in the data's dtype (legacy ops).
  int64_t outer, n, inner;
  const void* x;
  void* y;
  cudaStream_t st;
  template <int R, typename T>
  void operator()() const {
    // One block per output: Blocks() of outputs * kThreads threads.
    const int blocks = Blocks(outer * inner * kThreads);
    if (int64_indices) {
      ArgReduceKernel<R, T><<<blocks, kThreads, 0, st>>>(
          is_max, outer, n, inner, static_cast<const T*>(x),
          static_cast<int64_t*>(y));
    } else {
      ArgReduceKernel<R, T><<<blocks, kThreads, 0, st>>>(
          is_max, outer, n, inner, static_cast<const T*>(x),
          static_cast<T*>(y));
    }
  }
};

// ---- argsort, sort, topk: the kept elements (rank < keep, ranks from
// sort_kernels.cu) placed by rank. ----

// One thread per element of x's (outer, len, inner); `what` is uniform
// over the launch.
template <int kReq, typename T>
__global__ void PlaceKernel(Placed what, int64_t n, int64_t len, int64_t inner,
                            int64_t keep, const int64_t* rank, const T* x,
                            T* y) {
  using A = typename Acc<T>::type;
  MX_GRID_LOOP(e, n) {
    const int64_t r = rank[e];
    if (what == Placed::kMask) {
      Put<kReq>(y, e, A(r < keep ? 1 : 0));
      continue;
    }
    if (r >= keep) continue;
    const int64_t outer = e / (len * inner), in = e % inner;
    const int64_t at = outer * keep * inner + r * inner + in;
    Put<kReq>(y, at,
              what == Placed::kIndex ? static_cast<A>((e / inner) % len)
                                     : Load(x, e));
  }
}

struct PlaceLauncher {
  Placed what;
  int64_t n, len, inner, keep;
  const int64_t* rank;
  const void* x;
  void* y;
  cudaStream_t st;
  template <int R, typename T>
  void operator()() const {
    PlaceKernel<R, T><<<Blocks(n), kThreads, 0, st>>>(
        what, n, len, inner, keep, rank, static_cast<const T*>(x),
        static_cast<T*>(y));
  }
};

// _backward_topk: one thread per kept element of (outer, keep, inner).
template <typename T, typename I>
__global__ void ScatterKeptKernel(int64_t n, int64_t len, int64_t inner,
                                  int64_t keep, const T* g, const I* where,
                                  T* dx) {
  MX_GRID_LOOP(e, n) {
    const double at = ToDouble(where[e]);
    // Valid positions are distinct within a line, so the adds never race.
    if (!(at >= 0 && at < len && at == floor(at))) continue;
    const int64_t outer = e / (keep * inner), in = e % inner;
    Put<MX_REQ_ADD>(dx,
                    outer * len * inner + static_cast<int64_t>(at) * inner + in,
                    Load(g, e));
  }
}

struct ScatterKeptLauncher {
  int idx_dtype;
  int64_t n, len, inner, keep;
  const void* g;
  const void* where;
  void* dx;
  cudaStream_t st;
  template <int R, typename T>
  void operator()() const {
    WithIndexType(idx_dtype, [&](auto tag) {
      using I = decltype(tag);
      ScatterKeptKernel<T, I><<<Blocks(n), kThreads, 0, st>>>(
          n, len, inner, keep, static_cast<const T*>(g),
          static_cast<const I*>(where), static_cast<T*>(dx));
    });
  }
};

// ---- _arange, tril and triu. ----

template <int kReq, typename T>
__global__ void ArangeKernel(int64_t n, double lo, double step, int64_t repeat,
                             T* y) {
  MX_GRID_LOOP(i, n) {
    const double v = lo + static_cast<double>(i / repeat) * step;
    Put<kReq>(y, i, FromDouble<T>(v));
  }
}

struct ArangeLauncher {
  int64_t n;
  double lo, step;
  int64_t repeat;
  void* y;
  cudaStream_t st;
  template <int R, typename T>
  void operator()() const {
    ArangeKernel<R, T><<<Blocks(n), kThreads, 0, st>>>(n, lo, step, repeat,
                                                       static_cast<T*>(y));
  }
};

template <int kReq, typename T>
__global__ void TriangleKernel(bool lower, int64_t n, int64_t rows,
                               int64_t cols, int64_t k, bool from_vector,
                               const T* x, T* y) {
  using A = typename Acc<T>::type;
  MX_GRID_LOOP(idx, n) {
    const int64_t j = idx % cols, i = (idx / cols) % rows;
    const bool keep = lower ? j - i <= k : j - i >= k;
    Store<kReq>(y, idx, keep ? Load(x, from_vector ? j : idx) : A(0));
  }
}

struct TriangleLauncher {
  bool lower;
  int64_t n, rows, cols, k;
  bool from_vector;
  const void* x;
  void* y;
  cudaStream_t st;
  template <int R, typename T>
  void operator()() const {
    TriangleKernel<R, T><<<Blocks(n), kThreads, 0, st>>>(
        lower, n, rows, cols, k, from_vector, static_cast<const T*>(x),
        static_cast<T*>(y));
  }
};

// ---- cumsum: one thread per line, sums as the CPU's (double for
// floats, wrapping int64 for integers). ----

template <typename T>
using CumsumAcc = typename std::conditional<std::is_integral<T>::value, int64_t,
                                            double>::type;

// x of type X: T, or T's accumulator (another input dtype cast first).
template <int kReq, typename T, typename X>
__global__ void CumsumKernel(int64_t lines, int64_t len, int64_t inner,
                             const X* x, T* y) {
  using S = CumsumAcc<T>;
  for (int64_t line = blockIdx.x * int64_t{blockDim.x} + threadIdx.x;
       line < lines; line += int64_t{blockDim.x} * gridDim.x) {
    const int64_t base = (line / inner) * len * inner + line % inner;
    S acc = 0;
    for (int64_t i = 0; i < len; ++i) {
      const int64_t k = base + i * inner;
      acc = WrapAdd(acc, static_cast<S>(Load(x, k)));
      Store<kReq>(y, k, static_cast<typename Acc<T>::type>(acc));
    }
  }
}

struct CumsumLauncher {
  int64_t lines, len, inner;
  const void* x;
  bool x_is_acc;
  void* y;
  cudaStream_t s;
  template <int R, typename T>
  void operator()() const {
    if (x_is_acc) {
      CumsumKernel<R, T, CumsumAcc<T>><<<Blocks(lines), kThreads, 0, s>>>(
          lines, len, inner, static_cast<const CumsumAcc<T>*>(x),
          static_cast<T*>(y));
    } else {
      CumsumKernel<R, T, T><<<Blocks(lines), kThreads, 0, s>>>(
          lines, len, inner, static_cast<const T*>(x), static_cast<T*>(y));
    }
  }
};

}  // namespace

cudaError_t LaunchArgReduce(bool is_max, int dtype, bool int64_indices,
                            int64_t outer, int64_t n, int64_t inner,
                            const void* x, void* y, int req,
                            cudaStream_t stream) {
  if (outer * inner == 0 || n == 0)
    return IsFloat(dtype) ? cudaSuccess : cudaErrorInvalidValue;
  return Dispatch(
      dtype, req,
      ArgReduceLauncher{is_max, int64_indices, outer, n, inner, x, y, stream});
}

cudaError_t LaunchPlaceByRank(Placed what, int dtype, int64_t outer,
                              int64_t len, int64_t inner, int64_t keep,
                              const int64_t* rank, const void* x, void* y,
                              int req, cudaStream_t stream) {
  const int64_t n = outer * len * inner;
  if (n == 0) return cudaSuccess;
  return DispatchNumeric(
      dtype, req, PlaceLauncher{what, n, len, inner, keep, rank, x, y, stream});
}

cudaError_t LaunchScatterKept(int dtype, int idx_dtype, int64_t outer,
                              int64_t len, int64_t inner, int64_t keep,
                              const void* g, const void* indices, void* dx,
                              cudaStream_t stream) {
  if (!IsIndexType(idx_dtype) || idx_dtype == MX_DTYPE_BOOL) {
    return cudaErrorInvalidValue;
  }
  const int64_t n = outer * keep * inner;
  if (n == 0) return cudaSuccess;
  return DispatchNumeric(dtype, MX_REQ_ADD,
                         ScatterKeptLauncher{idx_dtype, n, len, inner, keep, g,
                                             indices, dx, stream});
}

cudaError_t LaunchCumsum(int dtype, int64_t outer, int64_t len, int64_t inner,
                         const void* x, bool x_is_acc, void* y, int req,
                         cudaStream_t stream) {
  if (outer * len * inner == 0) return cudaSuccess;
  return DispatchNumeric(
      dtype, req,
      CumsumLauncher{outer * inner, len, inner, x, x_is_acc, y, stream});
}

cudaError_t LaunchArange(int dtype, int64_t n, double lo, double step,
                         int64_t repeat, void* y, int req,
                         cudaStream_t stream) {
  if (n == 0) return cudaSuccess;
  return DispatchNumeric(dtype, req,
                         ArangeLauncher{n, lo, step, repeat, y, stream});
}

cudaError_t LaunchTriangle(bool lower, int dtype, int64_t n, int64_t rows,
                           int64_t cols, int64_t k, bool from_vector,
                           const void* x, void* y, int req,
                           cudaStream_t stream) {
  if (n == 0) return cudaSuccess;
  return Dispatch(
      dtype, req,
      TriangleLauncher{lower, n, rows, cols, k, from_vector, x, y, stream});
}

}  // namespace mx_cuda
