// argmax/argmin, argsort/sort/topk's placing, cumsum, _arange, tril and triu
// kernels of the CUDA plugin with the CPU kernels' semantics
// (backends/cpu/arg_reduce_ops.cc, ordering_ops.cc, init_ops.cc's
// _arange, triangle_ops.cc); launchers declared in index_kernels.h.
#include <thrust/iterator/counting_iterator.h>
#include <thrust/iterator/transform_iterator.h>

#include <cub/device/device_scan.cuh>
#include <cuda/std/functional>

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
                                  ScatterAcc<T>* acc, int* bad) {
  MX_GRID_LOOP(e, n) {
    const double at = ToDouble(where[e]);
    if (!(at >= 0 && at < len && at == floor(at))) {
      atomicExch(bad, 1);  // The CPU raises.
      continue;
    }
    // Atomic: positions repeated in a line (not topk's) add up, as the
    // CPU's.
    const int64_t outer = e / (keep * inner), in = e % inner;
    atomicAdd(acc + outer * len * inner + static_cast<int64_t>(at) * inner + in,
              ScatterValue(g, e));
  }
}

struct ScatterKeptLauncher {
  int idx_dtype;
  int64_t n, len, inner, keep, size;  // size: dx's.
  const void* g;
  const void* where;
  void* dx;
  void* scratch;
  int* bad;
  cudaStream_t st;
  template <int R, typename T>
  void operator()() const {
    ScatterAcc<T>* acc = static_cast<ScatterAcc<T>*>(scratch);
    WithIndexType(idx_dtype, [&](auto tag) {
      using I = decltype(tag);
      ScatterKeptKernel<T, I><<<Blocks(n), kThreads, 0, st>>>(
          n, len, inner, keep, static_cast<const T*>(g),
          static_cast<const I*>(where), acc, bad);
    });
    StoreAccumulatedKernel<R, T>
        <<<Blocks(size), kThreads, 0, st>>>(size, acc, static_cast<T*>(dx));
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

// ---- cumsum: sums as the CPU's (double for floats, wrapping int64 for
// integers); one thread per line when there are lines enough to fill the
// GPU or they are short, else one scan by line over the whole GPU (CUB)
// into an accumulator buffer, then stored (a single long line was one
// thread adding a million values in turn). ----

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

// The element of x's layout at place p of the scan (lines one after the
// other).
__host__ __device__ __forceinline__ int64_t ScanElement(int64_t p, int64_t len,
                                                        int64_t inner) {
  const int64_t line = p / len;
  return (line / inner) * len * inner + line % inner + (p % len) * inner;
}

struct LineOfPlace {
  int64_t len;
  __host__ __device__ int64_t operator()(int64_t p) const { return p / len; }
};

template <typename S, typename X>
struct LoadPlace {
  const X* x;
  int64_t len, inner;
  __device__ S operator()(int64_t p) const {
    return static_cast<S>(Load(x, ScanElement(p, len, inner)));
  }
};

struct WrapAddOp {
  template <typename S>
  __device__ __forceinline__ S operator()(S a, S b) const {
    return WrapAdd(a, b);
  }
};

template <int kReq, typename T, typename S>
__global__ void StoreSumsKernel(int64_t n, int64_t len, int64_t inner,
                                const S* sums, T* y) {
  for (int64_t p = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; p < n;
       p += int64_t{blockDim.x} * gridDim.x) {
    Store<kReq>(y, ScanElement(p, len, inner),
                static_cast<typename Acc<T>::type>(sums[p]));
  }
}

struct CumsumLauncher {
  int64_t lines, len, inner;
  const void* x;
  bool x_is_acc;
  void* y;
  CumsumBuffers* buffers;  // Null: a thread per line.
  cudaStream_t s;
  cudaError_t* scan_status;
  template <int R, typename T>
  void operator()() const {
    if (x_is_acc) {
      Launch<R, T>(static_cast<const CumsumAcc<T>*>(x));
    } else {
      Launch<R, T>(static_cast<const T*>(x));
    }
  }
  template <int R, typename T, typename X>
  void Launch(const X* from) const {
    if (buffers == nullptr) {
      CumsumKernel<R, T, X><<<Blocks(lines), kThreads, 0, s>>>(
          lines, len, inner, from, static_cast<T*>(y));
      return;
    }
    using S = CumsumAcc<T>;
    using Places = thrust::counting_iterator<int64_t>;
    const int64_t n = lines * len;
    const thrust::transform_iterator<LineOfPlace, Places, int64_t, int64_t>
        keys(Places(0), LineOfPlace{len});
    const thrust::transform_iterator<LoadPlace<S, X>, Places, S, S> values(
        Places(0), LoadPlace<S, X>{from, len, inner});
    *scan_status = cub::DeviceScan::InclusiveScanByKey(
        buffers->temp, buffers->temp_bytes, keys, values,
        static_cast<S*>(buffers->sums), WrapAddOp(), n,
        ::cuda::std::equal_to<>(), s);
    if (buffers->temp == nullptr || *scan_status != cudaSuccess) return;
    StoreSumsKernel<R, T, S><<<Blocks(n), kThreads, 0, s>>>(
        n, len, inner, static_cast<const S*>(buffers->sums),
        static_cast<T*>(y));
  }
};

}  // namespace

cudaError_t LaunchArgReduce(bool is_max, int dtype, bool int64_indices,
                            int64_t outer, int64_t n, int64_t inner,
                            const void* x, void* y, int req,
                            cudaStream_t stream) {
  if (outer * inner == 0 || n == 0) {
    return dtype == MX_DTYPE_BOOL ? cudaErrorInvalidValue : cudaSuccess;
  }
  return Dispatch<true>(
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
                              int req, int* bad, void* scratch,
                              cudaStream_t stream) {
  if (!IsIndexType(idx_dtype) || idx_dtype == MX_DTYPE_BOOL) {
    return cudaErrorInvalidValue;
  }
  const int64_t size = outer * len * inner;
  if (!Writes(req) || size == 0) return cudaSuccess;
  const cudaError_t err =
      cudaMemsetAsync(scratch, 0, IndexScratchBytes(dtype, size), stream);
  if (err != cudaSuccess) return err;
  return DispatchNumeric(
      dtype, req,
      ScatterKeptLauncher{idx_dtype, outer * keep * inner, len, inner, keep,
                          size, g, indices, dx, scratch, bad, stream});
}

bool CumsumScansTheWholeGpu(int64_t outer, int64_t len, int64_t inner) {
  // Fewer lines than this leave most of the GPU idle with a thread each;
  // lines shorter than that are summed as fast by their thread.
  constexpr int64_t kEnough = 2048;
  return outer * inner < kEnough && len >= kEnough;
}

cudaError_t LaunchCumsum(int dtype, int64_t outer, int64_t len, int64_t inner,
                         const void* x, bool x_is_acc, void* y, int req,
                         CumsumBuffers* buffers, cudaStream_t stream) {
  if (outer * len * inner == 0) return cudaSuccess;
  const bool scan = CumsumScansTheWholeGpu(outer, len, inner);
  if (scan && buffers->temp == nullptr) req = MX_REQ_WRITE;  // Sizes only.
  cudaError_t scan_status = cudaSuccess;
  const cudaError_t launched = DispatchNumeric(
      dtype, req,
      CumsumLauncher{outer * inner, len, inner, x, x_is_acc, y,
                     scan ? buffers : nullptr, stream, &scan_status});
  return scan_status != cudaSuccess ? scan_status : launched;
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
  return Dispatch<true>(
      dtype, req,
      TriangleLauncher{lower, n, rows, cols, k, from_vector, x, y, stream});
}

}  // namespace mx_cuda
