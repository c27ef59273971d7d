// SequenceMask, SequenceLast (and its gradient) and SequenceReverse
// kernels of the CUDA plugin with the CPU kernels' semantics
// (backends/cpu/sequence_ops.cc): grid-stride loops, one thread per output
// element. Lengths the CPU refuses set a device flag the caller reads.
#include "backends/cuda/index_util.cuh"
#include "backends/cuda/sequence_kernels.h"

namespace mx_cuda {
namespace {

using namespace kernel;  // NOLINT: the shared kernel helpers.

// ---- SequenceMask. ----

template <int kReq, typename T, typename L>
__global__ void SequenceMaskKernel(SequenceShape s, const T* x, const L* len,
                                   double value, T* y) {
  using A = typename Acc<T>::type;
  MX_GRID_LOOP(i, s.d0 * s.d1 * s.inner) {
    const int64_t r = i / s.inner;
    const int64_t i1 = r % s.d1, i0 = r / s.d1;
    const int64_t t = s.axis == 0 ? i0 : i1, b = s.axis == 0 ? i1 : i0;
    // Lengths truncated to integers, as MXNet (and the CPU).
    const bool masked =
        len != nullptr && static_cast<double>(t) >= trunc(ToDouble(len[b]));
    // The fill as the CPU's: saturated into an integer dtype.
    Store<kReq>(y, i, masked ? SaturatingCast<A>(value) : Load(x, i));
  }
}

struct SequenceMaskLauncher {
  int length_dtype;
  SequenceShape s;
  const void *x, *len;
  double value;
  void* y;
  cudaStream_t st;
  template <int R, typename T>
  void operator()() const {
    const int64_t n = s.d0 * s.d1 * s.inner;
    WithIndexType(length_dtype, [&](auto tag) {
      using L = decltype(tag);
      SequenceMaskKernel<R, T, L><<<Blocks(n), kThreads, 0, st>>>(
          s, static_cast<const T*>(x), static_cast<const L*>(len), value,
          static_cast<T*>(y));
    });
  }
};

// ---- SequenceLast, its gradient, SequenceReverse. ----

// Where step t of sequence b starts.
__device__ __forceinline__ int64_t StepAt(const SequenceShape& s, int64_t t,
                                          int64_t b) {
  return (s.axis == 0 ? t * s.d1 + b : b * s.d1 + t) * s.inner;
}

// Sequence b's length: lengths[b] truncated, or all `steps` without
// lengths; -1 (and *bad set) outside [lowest, steps].
template <typename L>
__device__ __forceinline__ int64_t LengthAt(const L* len, int64_t b,
                                            int64_t steps, int64_t lowest,
                                            int* bad) {
  if (len == nullptr) return steps;
  const double t = trunc(ToDouble(len[b]));
  if (!(t >= static_cast<double>(lowest) && t <= static_cast<double>(steps))) {
    *bad = 1;
    return -1;
  }
  return static_cast<int64_t>(t);
}

__host__ __device__ __forceinline__ int64_t Steps(const SequenceShape& s) {
  return s.axis == 0 ? s.d0 : s.d1;
}
__host__ __device__ __forceinline__ int64_t Batch(const SequenceShape& s) {
  return s.axis == 0 ? s.d1 : s.d0;
}

template <int kReq, typename T, typename L>
__global__ void SequenceLastKernel(SequenceShape s, const T* x, const L* len,
                                   T* y, int* bad) {
  MX_GRID_LOOP(o, Batch(s) * s.inner) {
    const int64_t b = o / s.inner, j = o % s.inner;
    const int64_t n = LengthAt(len, b, Steps(s), 1, bad);
    if (n < 1) continue;
    Store<kReq>(y, o, Load(x, StepAt(s, n - 1, b) + j));
  }
}

// Each sequence's last step is its own, so the adds never race.
template <typename T, typename L>
__global__ void SequenceLastBackwardKernel(SequenceShape s, const T* g,
                                           const L* len, T* dx, int* bad) {
  MX_GRID_LOOP(o, Batch(s) * s.inner) {
    const int64_t b = o / s.inner, j = o % s.inner;
    const int64_t n = LengthAt(len, b, Steps(s), 1, bad);
    if (n < 1) continue;
    Put<MX_REQ_ADD>(dx, StepAt(s, n - 1, b) + j, Load(g, o));
  }
}

template <int kReq, typename T, typename L>
__global__ void SequenceReverseKernel(SequenceShape s, const T* x, const L* len,
                                      T* y, int* bad) {
  MX_GRID_LOOP(i, s.d0 * s.d1 * s.inner) {
    const int64_t j = i % s.inner, r = i / s.inner;
    const int64_t b = r % s.d1, t = r / s.d1;
    const int64_t n = LengthAt(len, b, s.d0, 0, bad);
    if (n < 0) continue;
    const int64_t from = t < n ? n - 1 - t : t;
    Store<kReq>(y, i, Load(x, (from * s.d1 + b) * s.inner + j));
  }
}

enum class SequenceKernel { kLast, kLastBackward, kReverse };

struct SequenceLauncher {
  SequenceKernel kernel;
  int length_dtype;
  SequenceShape s;
  const void *x, *len;
  void* y;
  int* bad;
  cudaStream_t st;
  template <int R, typename T>
  void operator()() const {
    WithIndexType(length_dtype, [&](auto tag) {
      using L = decltype(tag);
      const T* in = static_cast<const T*>(x);
      const L* l = static_cast<const L*>(len);
      T* out = static_cast<T*>(y);
      const int64_t rows = Batch(s) * s.inner;
      switch (kernel) {
        case SequenceKernel::kLast:
          SequenceLastKernel<R, T, L>
              <<<Blocks(rows), kThreads, 0, st>>>(s, in, l, out, bad);
          break;
        case SequenceKernel::kLastBackward:
          SequenceLastBackwardKernel<T, L>
              <<<Blocks(rows), kThreads, 0, st>>>(s, in, l, out, bad);
          break;
        case SequenceKernel::kReverse:
          SequenceReverseKernel<R, T, L>
              <<<Blocks(s.d0 * s.d1 * s.inner), kThreads, 0, st>>>(s, in, l,
                                                                   out, bad);
          break;
      }
    });
  }
};

cudaError_t LaunchSequence(SequenceKernel kernel, int dtype, int length_dtype,
                           const SequenceShape& s, const void* x,
                           const void* lengths, void* y, int req, int* bad,
                           cudaStream_t stream) {
  // Without lengths the length dtype is immaterial.
  if (lengths == nullptr) length_dtype = MX_DTYPE_FLOAT32;
  if (!IsIndexType(length_dtype)) return cudaErrorInvalidValue;
  if (s.d0 * s.d1 * s.inner == 0) return cudaSuccess;
  return Dispatch<true>(
      dtype, req,
      SequenceLauncher{kernel, length_dtype, s, x, lengths, y, bad, stream});
}

}  // namespace

cudaError_t LaunchSequenceMask(int dtype, int length_dtype,
                               const SequenceShape& s, const void* x,
                               const void* lengths, double value, void* y,
                               int req, cudaStream_t stream) {
  // Without lengths the length dtype is immaterial.
  if (lengths == nullptr) length_dtype = MX_DTYPE_FLOAT32;
  if (!IsIndexType(length_dtype)) return cudaErrorInvalidValue;
  if (s.d0 * s.d1 * s.inner == 0) return cudaSuccess;
  return Dispatch<true>(
      dtype, req,
      SequenceMaskLauncher{length_dtype, s, x, lengths, value, y, stream});
}

cudaError_t LaunchSequenceLast(int dtype, int length_dtype,
                               const SequenceShape& s, const void* x,
                               const void* lengths, void* y, int req, int* bad,
                               cudaStream_t stream) {
  return LaunchSequence(SequenceKernel::kLast, dtype, length_dtype, s, x,
                        lengths, y, req, bad, stream);
}

cudaError_t LaunchSequenceLastBackward(int dtype, int length_dtype,
                                       const SequenceShape& s, const void* g,
                                       const void* lengths, void* dx, int* bad,
                                       cudaStream_t stream) {
  return LaunchSequence(SequenceKernel::kLastBackward, dtype, length_dtype, s,
                        g, lengths, dx, MX_REQ_ADD, bad, stream);
}

cudaError_t LaunchSequenceReverse(int dtype, int length_dtype,
                                  const SequenceShape& s, const void* x,
                                  const void* lengths, void* y, int req,
                                  int* bad, cudaStream_t stream) {
  return LaunchSequence(SequenceKernel::kReverse, dtype, length_dtype, s, x,
                        lengths, y, req, bad, stream);
}

}  // namespace mx_cuda
