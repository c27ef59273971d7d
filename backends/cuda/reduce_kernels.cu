// Reductions (sum, mean, max, min, prod, nansum, nanprod), softmax /
// log_softmax, masked_softmax / masked_log_softmax and their gradients, and the
// strided gather-sum behind broadcasts, transposes, slices and the
// reduce/broadcast gradients. Declared in elementwise.h.
#include <cmath>
#include <type_traits>

#include "backends/cuda/elementwise.h"
#include "backends/cuda/index_util.cuh"
#include "backends/cuda/kernel_util.cuh"
#include "backends/cuda/reduce_util.cuh"

namespace mx_cuda {
namespace {

using namespace kernel;  // NOLINT: the shared kernel helpers.

template <typename A>
__device__ A BlockMax(A v, A* shared) {
  shared[threadIdx.x] = v;
  __syncthreads();
  for (int s = kThreads / 2; s > 0; s >>= 1) {
    if (threadIdx.x < s) {
      const A o = shared[threadIdx.x + s];
      if (IsNan(o) || o > shared[threadIdx.x]) shared[threadIdx.x] = o;
    }
    __syncthreads();
  }
  const A r = shared[0];
  __syncthreads();
  return r;
}

// One block per output element (inner == 1: contiguous reduced runs).
template <int kReq, typename T>
__global__ void ReduceRowsKernel(Reduce op, int64_t reduce, const T* x, T* y) {
  using A = typename ReduceAcc<T>::type;
  __shared__ A shared[kThreads];
  const T* row = x + blockIdx.x * reduce;
  A acc = ReduceInit<A>(op);
  for (int64_t j = threadIdx.x; j < reduce; j += kThreads) {
    acc = ReduceStep(op, acc, static_cast<A>(Load(row, j)));
  }
  acc = BlockReduce(op, acc, shared);
  if (threadIdx.x == 0) {
    Store<kReq>(y, blockIdx.x,
                op == Reduce::kMean ? acc / static_cast<A>(reduce) : acc);
  }
}

// One thread per output element (strided reduced axis).
template <int kReq, typename T>
__global__ void ReduceStridedKernel(Reduce op, int64_t outer, int64_t reduce,
                                    int64_t inner, const T* x, T* y) {
  using A = typename ReduceAcc<T>::type;
  const int64_t n = outer * inner;
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < n;
       i += int64_t{blockDim.x} * gridDim.x) {
    const int64_t o = i / inner, k = i % inner;
    const T* p = x + o * reduce * inner + k;
    A acc = ReduceInit<A>(op);
    for (int64_t j = 0; j < reduce; ++j)
      acc = ReduceStep(op, acc, static_cast<A>(Load(p, j * inner)));
    Store<kReq>(y, i, op == Reduce::kMean ? acc / static_cast<A>(reduce) : acc);
  }
}

// Softmax of one row per block (inner == 1), over the row's first
// valid[row] elements (all without `valid`); the rest of the row is 0.
template <int kReq, typename T>
__global__ void SoftmaxRowsKernel(bool log_out, int64_t len, double temp,
                                  const int64_t* valid, const T* x, T* y) {
  using A = typename Acc<T>::type;
  __shared__ A shared[kThreads];
  const T* in = x + blockIdx.x * len;
  T* out = y + blockIdx.x * len;
  const int64_t n = valid == nullptr ? len : valid[blockIdx.x];
  const A t = static_cast<A>(temp);
  A m = -INFINITY;
  for (int64_t j = threadIdx.x; j < n; j += kThreads) {
    const A v = Load(in, j) / t;
    if (IsNan(v) || v > m) m = v;
  }
  m = BlockMax(m, shared);
  A s = 0;
  for (int64_t j = threadIdx.x; j < n; j += kThreads) {
    s += exp(Load(in, j) / t - m);
  }
  s = BlockSum(s, shared);
  const A log_s = log(s);
  for (int64_t j = threadIdx.x; j < len; j += kThreads) {
    const A v = Load(in, j) / t - m;
    Store<kReq>(out, j, j >= n ? A(0) : (log_out ? v - log_s : exp(v) / s));
  }
}

// Softmax along a strided axis: one thread per (outer, inner) pair, over
// the line's first valid[line] elements as the rows kernel.
template <int kReq, typename T>
__global__ void SoftmaxStridedKernel(bool log_out, int64_t outer, int64_t len,
                                     int64_t inner, double temp,
                                     const int64_t* valid, const T* x, T* y) {
  using A = typename Acc<T>::type;
  const A t = static_cast<A>(temp);
  const int64_t lines = outer * inner;
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < lines;
       i += int64_t{blockDim.x} * gridDim.x) {
    const int64_t base = (i / inner) * len * inner + i % inner;
    const int64_t n = valid == nullptr ? len : valid[i];
    A m = -INFINITY;
    for (int64_t j = 0; j < n; ++j) {
      const A v = Load(x, base + j * inner) / t;
      if (IsNan(v) || v > m) m = v;
    }
    A s = 0;
    for (int64_t j = 0; j < n; ++j) s += exp(Load(x, base + j * inner) / t - m);
    const A log_s = log(s);
    for (int64_t j = 0; j < len; ++j) {
      const A v = Load(x, base + j * inner) / t - m;
      Store<kReq>(y, base + j * inner,
                  j >= n ? A(0) : (log_out ? v - log_s : exp(v) / s));
    }
  }
}

// Gradient along the axis, one thread per (outer, inner) pair:
// softmax: dx = y * (dy - sum(dy * y)) / t; log_softmax: dx = (dy -
// e^y * sum(dy)) / t; over the line's first valid[line] elements, 0 after.
template <int kReq, typename T>
__global__ void SoftmaxGradKernel(bool log_out, int64_t outer, int64_t len,
                                  int64_t inner, double temp,
                                  const int64_t* valid, const T* dy, const T* y,
                                  T* dx) {
  using A = typename Acc<T>::type;
  const A t = static_cast<A>(temp);
  const int64_t lines = outer * inner;
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < lines;
       i += int64_t{blockDim.x} * gridDim.x) {
    const int64_t base = (i / inner) * len * inner + i % inner;
    const int64_t n = valid == nullptr ? len : valid[i];
    A s = 0;
    for (int64_t j = 0; j < n; ++j) {
      const int64_t k = base + j * inner;
      s += log_out ? Load(dy, k) : Load(dy, k) * Load(y, k);
    }
    for (int64_t j = 0; j < len; ++j) {
      const int64_t k = base + j * inner;
      const A g = Load(dy, k), o = Load(y, k);
      Store<kReq>(dx, k,
                  j >= n ? A(0) : (log_out ? g - exp(o) * s : o * (g - s)) / t);
    }
  }
}

// Element k of the data's offset in its broadcast mask.
__device__ __forceinline__ int64_t MaskOffset(const MaskLayout& m, int64_t k) {
  int64_t off = 0;
  for (int d = m.ndim - 1; d >= 0; --d) {
    off += (k % m.shape[d]) * m.mask_stride[d];
    k /= m.shape[d];
  }
  return off;
}

// masked_softmax, one thread per (outer, inner) line: the maximum and the
// sum over the unmasked elements; masked ones give 0 (log: -inf).
template <int kReq, typename T>
__global__ void MaskedSoftmaxKernel(bool log_out, bool normalize, int64_t outer,
                                    int64_t len, int64_t inner, double temp,
                                    MaskLayout ml, const bool* mask, const T* x,
                                    T* y) {
  using A = typename Acc<T>::type;
  const A t = static_cast<A>(temp);
  const int64_t lines = outer * inner;
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < lines;
       i += int64_t{blockDim.x} * gridDim.x) {
    const int64_t base = (i / inner) * len * inner + i % inner;
    A m = -INFINITY;
    for (int64_t j = 0; j < len; ++j) {
      const int64_t k = base + j * inner;
      if (!mask[MaskOffset(ml, k)]) continue;
      const A v = Load(x, k) / t;
      if (IsNan(v) || v > m) m = v;
    }
    if (!normalize) m = 0;
    A s = 0;
    for (int64_t j = 0; j < len; ++j) {
      const int64_t k = base + j * inner;
      if (mask[MaskOffset(ml, k)]) s += exp(Load(x, k) / t - m);
    }
    const A log_s = log(s);
    for (int64_t j = 0; j < len; ++j) {
      const int64_t k = base + j * inner;
      const A v = Load(x, k) / t - m;
      Store<kReq>(y, k,
                  !mask[MaskOffset(ml, k)]
                      ? (log_out ? A(-INFINITY) : A(0))
                      : (log_out ? v - log_s : exp(v) / s));
    }
  }
}

// Its gradient: softmax dx = y (dy - sum(dy y)) / t, log_softmax dx =
// (dy - e^y sum(dy)) / t, the sums over unmasked elements; 0 where masked.
template <int kReq, typename T>
__global__ void MaskedSoftmaxGradKernel(bool log_out, int64_t outer,
                                        int64_t len, int64_t inner, double temp,
                                        MaskLayout ml, const bool* mask,
                                        const T* dy, const T* y, T* dx) {
  using A = typename Acc<T>::type;
  const A t = static_cast<A>(temp);
  const int64_t lines = outer * inner;
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < lines;
       i += int64_t{blockDim.x} * gridDim.x) {
    const int64_t base = (i / inner) * len * inner + i % inner;
    A s = 0;
    for (int64_t j = 0; j < len; ++j) {
      const int64_t k = base + j * inner;
      if (!mask[MaskOffset(ml, k)]) continue;
      s += log_out ? Load(dy, k) : Load(dy, k) * Load(y, k);
    }
    for (int64_t j = 0; j < len; ++j) {
      const int64_t k = base + j * inner;
      const A g = Load(dy, k), o = Load(y, k);
      Store<kReq>(dx, k,
                  !mask[MaskOffset(ml, k)]
                      ? A(0)
                      : (log_out ? g - exp(o) * s : o * (g - s)) / t);
    }
  }
}

// Each line's valid length from `lengths` (any index dtype, truncated);
// outside [0, len] (or NaN) sets *bad.
template <typename L>
__global__ void SoftmaxLengthsKernel(int64_t lines, int64_t len,
                                     const L* lengths, int64_t* valid,
                                     int* bad) {
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < lines;
       i += int64_t{blockDim.x} * gridDim.x) {
    const double v =
        static_cast<double>(static_cast<typename Acc<L>::type>(lengths[i]));
    if (!(v >= 0 && trunc(v) <= static_cast<double>(len))) {
      *bad = 1;
      valid[i] = 0;
    } else {
      valid[i] = static_cast<int64_t>(v);
    }
  }
}

// The source offset of reduced element r of the output element at base.
__device__ __forceinline__ int64_t ReducedOffset(const GatherIndex& gi,
                                                 int64_t base, int64_t r) {
  for (int d = gi.rdim - 1; d >= 0; --d) {
    base += (r % gi.rshape[d]) * gi.rstride[d];
    r /= gi.rshape[d];
  }
  return base;
}

template <int kReq, typename T>
__global__ void GatherSumKernel(int64_t n, GatherIndex gi, const T* src, T* y) {
  using A = typename Acc<T>::type;
  int64_t nr = 1;
  for (int d = 0; d < gi.rdim; ++d) nr *= gi.rshape[d];
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < n;
       i += int64_t{blockDim.x} * gridDim.x) {
    int64_t rest = i, base = gi.offset;
    for (int d = gi.ndim - 1; d >= 0; --d) {
      base += (rest % gi.shape[d]) * gi.stride[d];
      rest /= gi.shape[d];
    }
    if constexpr (std::is_integral_v<A>) {
      if (gi.saturate) {
        double sum = 0;
        for (int64_t r = 0; r < nr; ++r) {
          sum += static_cast<double>(Load(src, ReducedOffset(gi, base, r)));
        }
        Store<kReq>(y, i, SaturatingCast<A>(sum * gi.scale));
        continue;
      }
    }
    A s = 0;
    for (int64_t r = 0; r < nr; ++r) {
      s = WrapAdd(s, Load(src, ReducedOffset(gi, base, r)));
    }
    if constexpr (std::is_integral_v<A>) {
      Store<kReq>(y, i,
                  gi.scale == 1
                      ? s
                      : static_cast<A>(static_cast<double>(s) * gi.scale));
    } else {
      Store<kReq>(y, i, gi.scale == 1 ? s : s * static_cast<A>(gi.scale));
    }
  }
}

// The inverse of a gather without reduction: src element i goes to
// y[offset + sum of its coordinates times stride]; every target distinct.
template <int kReq, typename T>
__global__ void ScatterKernel(int64_t n, GatherIndex gi, const T* src, T* y) {
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < n;
       i += int64_t{blockDim.x} * gridDim.x) {
    int64_t rest = i, off = gi.offset;
    for (int d = gi.ndim - 1; d >= 0; --d) {
      off += (rest % gi.shape[d]) * gi.stride[d];
      rest /= gi.shape[d];
    }
    Store<kReq>(y, off, Load(src, i));
  }
}

// The input offset output element i of Pad reads; -1 for the constant.
__device__ int64_t PadSource(const PadIndex& p, int64_t i) {
  int64_t rest = i, src = 0;
  for (int d = p.ndim - 1; d >= 0; --d) {
    const int64_t o = rest % p.out_shape[d];
    rest /= p.out_shape[d];
    const int64_t n = p.in_shape[d];
    int64_t k = o - p.before[d];
    if (k < 0 || k >= n) {
      if (p.mode == PadMode::kConstant) return -1;
      k = p.mode == PadMode::kEdge ? (k < 0 ? 0 : n - 1)
                                   : (k < 0 ? -k : 2 * (n - 1) - k);
    }
    src += k * p.in_stride[d];
  }
  return src;
}

template <int kReq, typename T>
__global__ void PadKernel(int64_t n, PadIndex p, double value, const T* x,
                          T* y) {
  using A = typename Acc<T>::type;
  const A fill = SaturatingCast<A>(value);  // As the CPU's.
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < n;
       i += int64_t{blockDim.x} * gridDim.x) {
    const int64_t s = PadSource(p, i);
    Store<kReq>(y, i, s < 0 ? fill : Load(x, s));
  }
}

// Pad's gradient: each output gradient element adds into the input element
// it was read from (edge and reflect read some elements several times).
template <typename T>
__global__ void PadGradKernel(int64_t n, PadIndex p, const T* dy, T* dx) {
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < n;
       i += int64_t{blockDim.x} * gridDim.x) {
    const int64_t s = PadSource(p, i);
    if (s >= 0) atomicAdd(dx + s, dy[i]);
  }
}

struct ReduceLauncher {
  Reduce op;
  int64_t outer, reduce, inner;
  const void* x;
  void* y;
  cudaStream_t s;
  template <int R, typename T>
  void operator()() const {
    if (inner == 1 && outer <= 2147483647) {
      ReduceRowsKernel<R, T><<<static_cast<unsigned>(outer), kThreads, 0, s>>>(
          op, reduce, static_cast<const T*>(x), static_cast<T*>(y));
    } else {
      ReduceStridedKernel<R, T><<<Blocks(outer * inner), kThreads, 0, s>>>(
          op, outer, reduce, inner, static_cast<const T*>(x),
          static_cast<T*>(y));
    }
  }
};

struct SoftmaxLauncher {
  bool log_out;
  int64_t outer, len, inner;
  double t;
  const int64_t* valid;
  const void* x;
  void* y;
  cudaStream_t s;
  template <int R, typename T>
  void operator()() const {
    if (inner == 1 && outer <= 2147483647) {
      SoftmaxRowsKernel<R, T><<<static_cast<unsigned>(outer), kThreads, 0, s>>>(
          log_out, len, t, valid, static_cast<const T*>(x), static_cast<T*>(y));
    } else {
      SoftmaxStridedKernel<R, T><<<Blocks(outer * inner), kThreads, 0, s>>>(
          log_out, outer, len, inner, t, valid, static_cast<const T*>(x),
          static_cast<T*>(y));
    }
  }
};

struct SoftmaxGradLauncher {
  bool log_out;
  int64_t outer, len, inner;
  double t;
  const int64_t* valid;
  const void* dy;
  const void* y;
  void* dx;
  cudaStream_t s;
  template <int R, typename T>
  void operator()() const {
    SoftmaxGradKernel<R, T><<<Blocks(outer * inner), kThreads, 0, s>>>(
        log_out, outer, len, inner, t, valid, static_cast<const T*>(dy),
        static_cast<const T*>(y), static_cast<T*>(dx));
  }
};

struct MaskedSoftmaxLauncher {
  bool log_out, normalize;
  int64_t outer, len, inner;
  double t;
  MaskLayout ml;
  const bool* mask;
  const void* x;
  void* y;
  cudaStream_t s;
  template <int R, typename T>
  void operator()() const {
    MaskedSoftmaxKernel<R, T><<<Blocks(outer * inner), kThreads, 0, s>>>(
        log_out, normalize, outer, len, inner, t, ml, mask,
        static_cast<const T*>(x), static_cast<T*>(y));
  }
};

struct MaskedSoftmaxGradLauncher {
  bool log_out;
  int64_t outer, len, inner;
  double t;
  MaskLayout ml;
  const bool* mask;
  const void* dy;
  const void* y;
  void* dx;
  cudaStream_t s;
  template <int R, typename T>
  void operator()() const {
    MaskedSoftmaxGradKernel<R, T><<<Blocks(outer * inner), kThreads, 0, s>>>(
        log_out, outer, len, inner, t, ml, mask, static_cast<const T*>(dy),
        static_cast<const T*>(y), static_cast<T*>(dx));
  }
};

struct GatherSumLauncher {
  int64_t n;
  GatherIndex gi;
  const void* src;
  void* y;
  cudaStream_t s;
  template <int R, typename T>
  void operator()() const {
    GatherSumKernel<R, T><<<Blocks(n), kThreads, 0, s>>>(
        n, gi, static_cast<const T*>(src), static_cast<T*>(y));
  }
};

struct ScatterLauncher {
  int64_t n;
  GatherIndex gi;
  const void* src;
  void* y;
  cudaStream_t s;
  template <int R, typename T>
  void operator()() const {
    ScatterKernel<R, T><<<Blocks(n), kThreads, 0, s>>>(
        n, gi, static_cast<const T*>(src), static_cast<T*>(y));
  }
};

struct PadLauncher {
  int64_t n;
  PadIndex p;
  double value;
  const void* x;
  void* y;
  cudaStream_t s;
  template <int R, typename T>
  void operator()() const {
    PadKernel<R, T><<<Blocks(n), kThreads, 0, s>>>(
        n, p, value, static_cast<const T*>(x), static_cast<T*>(y));
  }
};

struct PadGradLauncher {
  int64_t n;
  PadIndex p;
  const void* dy;
  void* dx;
  cudaStream_t s;
  template <int R, typename T>
  void operator()() const {
    PadGradKernel<T><<<Blocks(n), kThreads, 0, s>>>(
        n, p, static_cast<const T*>(dy), static_cast<T*>(dx));
  }
};

}  // namespace

cudaError_t LaunchScatter(int dtype, int64_t n, const GatherIndex& index,
                          const void* src, void* y, int req,
                          cudaStream_t stream) {
  if (n == 0) return cudaSuccess;
  return Dispatch<true>(dtype, req, ScatterLauncher{n, index, src, y, stream});
}

cudaError_t LaunchPad(int dtype, int64_t n, const PadIndex& index, double value,
                      const void* x, void* y, int req, cudaStream_t stream) {
  if (n == 0) return cudaSuccess;
  return Dispatch<true>(dtype, req, PadLauncher{n, index, value, x, y, stream});
}

cudaError_t LaunchPadGrad(int dtype, int64_t n, const PadIndex& index,
                          const void* dy, void* dx, cudaStream_t stream) {
  if (n == 0) return cudaSuccess;
  return Dispatch(dtype, MX_REQ_ADD, PadGradLauncher{n, index, dy, dx, stream});
}

cudaError_t LaunchReduce(Reduce op, int dtype, int64_t outer, int64_t reduce,
                         int64_t inner, const void* x, void* y, int req,
                         cudaStream_t stream) {
  if (outer * inner == 0) return cudaSuccess;
  return Dispatch<true>(dtype, req,
                        ReduceLauncher{op, outer, reduce, inner, x, y, stream});
}

cudaError_t LaunchSoftmax(bool log_out, int dtype, int64_t outer, int64_t len,
                          int64_t inner, double temperature,
                          const int64_t* valid, const void* x, void* y, int req,
                          cudaStream_t stream) {
  if (outer * len * inner == 0) return cudaSuccess;
  return Dispatch(dtype, req,
                  SoftmaxLauncher{log_out, outer, len, inner, temperature,
                                  valid, x, y, stream});
}

cudaError_t LaunchSoftmaxGrad(bool log_out, int dtype, int64_t outer,
                              int64_t len, int64_t inner, double temperature,
                              const int64_t* valid, const void* dy,
                              const void* y, void* dx, int req,
                              cudaStream_t stream) {
  if (outer * len * inner == 0) return cudaSuccess;
  return Dispatch(dtype, req,
                  SoftmaxGradLauncher{log_out, outer, len, inner, temperature,
                                      valid, dy, y, dx, stream});
}

cudaError_t LaunchMaskedSoftmax(bool log_out, bool normalize, int dtype,
                                int64_t outer, int64_t len, int64_t inner,
                                double temperature, const MaskLayout& layout,
                                const bool* mask, const void* x, void* y,
                                int req, cudaStream_t stream) {
  if (outer * len * inner == 0) return cudaSuccess;
  return Dispatch(
      dtype, req,
      MaskedSoftmaxLauncher{log_out, normalize, outer, len, inner, temperature,
                            layout, mask, x, y, stream});
}

cudaError_t LaunchMaskedSoftmaxGrad(bool log_out, int dtype, int64_t outer,
                                    int64_t len, int64_t inner,
                                    double temperature,
                                    const MaskLayout& layout, const bool* mask,
                                    const void* dy, const void* y, void* dx,
                                    int req, cudaStream_t stream) {
  if (outer * len * inner == 0) return cudaSuccess;
  return Dispatch(
      dtype, req,
      MaskedSoftmaxGradLauncher{log_out, outer, len, inner, temperature, layout,
                                mask, dy, y, dx, stream});
}

cudaError_t LaunchSoftmaxLengths(int length_dtype, int64_t lines, int64_t len,
                                 const void* lengths, int64_t* valid, int* bad,
                                 cudaStream_t stream) {
  if (lines == 0) return cudaSuccess;
  const bool known = WithIndexType(length_dtype, [&](auto tag) {
    using L = decltype(tag);
    SoftmaxLengthsKernel<L><<<Blocks(lines), kThreads, 0, stream>>>(
        lines, len, static_cast<const L*>(lengths), valid, bad);
  });
  return known ? cudaGetLastError() : cudaErrorInvalidValue;
}

cudaError_t LaunchGatherSum(int dtype, int64_t n, const GatherIndex& index,
                            const void* src, void* y, int req,
                            cudaStream_t stream) {
  if (n == 0) return cudaSuccess;
  return Dispatch<true>(dtype, req,
                        GatherSumLauncher{n, index, src, y, stream});
}

}  // namespace mx_cuda
