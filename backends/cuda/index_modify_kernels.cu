// npx.index_add / npx.index_update, their gradients and
// npx.constraint_check on the GPU (index_modify_kernels.h).
#include "backends/cuda/index_kernels.h"
#include "backends/cuda/index_modify_kernels.h"
#include "backends/cuda/index_util.cuh"

namespace mx_cuda {
namespace {

using namespace kernel;  // NOLINT: the shared kernel helpers.

// The row of a that position i names; false when an index is out of
// range.
template <typename I>
__device__ __forceinline__ bool RowOf(const IndexModifyShape& s, const I* ind,
                                      int64_t i, int64_t* row) {
  int64_t r = 0;
  for (int j = 0; j < s.k; ++j) {
    const int64_t v = static_cast<int64_t>(ind[j * s.count + i]);
    if (v < 0 || v >= s.lead[j]) return false;
    r = r * s.lead[j] + v;
  }
  *row = r;
  return true;
}

__device__ __forceinline__ int64_t ValOffset(const IndexModifyShape& s,
                                             int64_t i, int64_t t) {
  int64_t at = i * s.val_index_step;
  for (int d = s.tail_ndim - 1; d >= 0; --d) {
    at += (t % s.tail_dims[d]) * s.val_tail_step[d];
    t /= s.tail_dims[d];
  }
  return at;
}

// Flags indices out of range; with `writer`, records in writer[row] the
// last position naming the row (the rows start at -1).
template <typename I>
__global__ void CheckRowsKernel(IndexModifyShape s, const I* ind,
                                long long* writer, int* bad) {
  MX_GRID_LOOP(i, s.count) {
    int64_t row;
    if (!RowOf(s, ind, i, &row)) {
      atomicExch(bad, 1);
    } else if (writer != nullptr) {
      atomicMax(writer + row, static_cast<long long>(i));
    }
  }
}

template <typename T>
__global__ void LoadAccKernel(int64_t n, const T* a, ScatterAcc<T>* acc) {
  MX_GRID_LOOP(i, n) { acc[i] = ScatterValue(a, i); }
}

template <typename T, typename I>
__global__ void AddRowsKernel(IndexModifyShape s, const I* ind, const T* val,
                              ScatterAcc<T>* acc) {
  MX_GRID_LOOP(e, s.count * s.tail) {
    const int64_t i = e / s.tail, t = e % s.tail;
    int64_t row;
    if (!RowOf(s, ind, i, &row)) continue;  // Flagged by CheckRowsKernel.
    atomicAdd(acc + row * s.tail + t, ScatterValue(val, ValOffset(s, i, t)));
  }
}

template <int kReq, typename T>
__global__ void UpdateRowsKernel(IndexModifyShape s, const long long* writer,
                                 const T* a, const T* val, T* y) {
  MX_GRID_LOOP(e, s.rows * s.tail) {
    const long long w = writer[e / s.tail];
    Store<kReq>(y, e,
                w < 0 ? Load(a, e) : Load(val, ValOffset(s, w, e % s.tail)));
  }
}

template <typename T, typename I>
__global__ void ValGradKernel(IndexModifyShape s, const I* ind,
                              const long long* writer, const T* og,
                              ScatterAcc<T>* acc) {
  MX_GRID_LOOP(e, s.count * s.tail) {
    const int64_t i = e / s.tail, t = e % s.tail;
    int64_t row;
    if (!RowOf(s, ind, i, &row)) continue;
    if (writer != nullptr && writer[row] != i) continue;
    atomicAdd(acc + ValOffset(s, i, t), ScatterValue(og, row * s.tail + t));
  }
}

template <int kReq, typename T>
__global__ void UpdateAGradKernel(IndexModifyShape s, const long long* writer,
                                  const T* og, T* da) {
  using A = typename Acc<T>::type;
  MX_GRID_LOOP(e, s.rows * s.tail) {
    Store<kReq>(da, e, writer[e / s.tail] >= 0 ? A(0) : Load(og, e));
  }
}

__global__ void AllTrueKernel(int64_t n, const bool* x, bool* y, int* bad) {
  MX_GRID_LOOP(i, n) {
    if (!x[i]) atomicExch(bad, 1);
  }
  if (blockIdx.x == 0 && threadIdx.x == 0) *y = true;
}

bool IsIndexDType(int dtype) {
  return dtype == MX_DTYPE_INT32 || dtype == MX_DTYPE_INT64;
}

// f(I{}) for ind's dtype (int32 or int64).
template <typename F>
void WithIndex(int index_dtype, F f) {
  if (index_dtype == MX_DTYPE_INT32) {
    f(int32_t{});
  } else {
    f(int64_t{});
  }
}

size_t WriterBytes(const IndexModifyShape& s) {
  return static_cast<size_t>(s.rows * s.tail > 0 ? s.rows : 0) *
         sizeof(long long);
}

// Runs CheckRowsKernel; `writer` (WriterBytes of scratch, or null) is set
// to -1 first and filled when a has elements.
cudaError_t CheckRows(int index_dtype, const IndexModifyShape& s,
                      const void* ind, long long* writer, int* bad,
                      cudaStream_t st) {
  if (writer != nullptr) {
    const cudaError_t err = cudaMemsetAsync(writer, 0xff, WriterBytes(s), st);
    if (err != cudaSuccess) return err;
  }
  if (s.count == 0) return cudaSuccess;
  WithIndex(index_dtype, [&](auto tag) {
    using I = decltype(tag);
    CheckRowsKernel<I><<<Blocks(s.count), kThreads, 0, st>>>(
        s, static_cast<const I*>(ind), writer, bad);
  });
  return cudaGetLastError();
}

struct IndexAddLauncher {
  int index_dtype;
  IndexModifyShape s;
  const void *a, *ind, *val;
  void *y, *scratch;
  cudaStream_t st;
  template <int R, typename T>
  void operator()() const {
    ScatterAcc<T>* acc = static_cast<ScatterAcc<T>*>(scratch);
    const int64_t n = s.rows * s.tail;
    LoadAccKernel<T>
        <<<Blocks(n), kThreads, 0, st>>>(n, static_cast<const T*>(a), acc);
    if (s.count * s.tail > 0) {
      WithIndex(index_dtype, [&](auto tag) {
        using I = decltype(tag);
        AddRowsKernel<T, I><<<Blocks(s.count * s.tail), kThreads, 0, st>>>(
            s, static_cast<const I*>(ind), static_cast<const T*>(val), acc);
      });
    }
    StoreAccumulatedKernel<R, T>
        <<<Blocks(n), kThreads, 0, st>>>(n, acc, static_cast<T*>(y));
  }
};

struct IndexUpdateLauncher {
  IndexModifyShape s;
  const long long* writer;
  const void *a, *val;
  void* y;
  cudaStream_t st;
  template <int R, typename T>
  void operator()() const {
    UpdateRowsKernel<R, T><<<Blocks(s.rows * s.tail), kThreads, 0, st>>>(
        s, writer, static_cast<const T*>(a), static_cast<const T*>(val),
        static_cast<T*>(y));
  }
};

struct ValGradLauncher {
  int index_dtype;
  IndexModifyShape s;
  const long long* writer;
  const void *og, *ind;
  void *dval, *acc_bytes;
  cudaStream_t st;
  template <int R, typename T>
  void operator()() const {
    ScatterAcc<T>* acc = static_cast<ScatterAcc<T>*>(acc_bytes);
    if (s.count * s.tail > 0) {
      WithIndex(index_dtype, [&](auto tag) {
        using I = decltype(tag);
        ValGradKernel<T, I><<<Blocks(s.count * s.tail), kThreads, 0, st>>>(
            s, static_cast<const I*>(ind), writer, static_cast<const T*>(og),
            acc);
      });
    }
    StoreAccumulatedKernel<R, T><<<Blocks(s.val_size), kThreads, 0, st>>>(
        s.val_size, acc, static_cast<T*>(dval));
  }
};

struct UpdateAGradLauncher {
  IndexModifyShape s;
  const long long* writer;
  const void* og;
  void* da;
  cudaStream_t st;
  template <int R, typename T>
  void operator()() const {
    UpdateAGradKernel<R, T><<<Blocks(s.rows * s.tail), kThreads, 0, st>>>(
        s, writer, static_cast<const T*>(og), static_cast<T*>(da));
  }
};

}  // namespace

size_t IndexAddScratchBytes(int dtype, const IndexModifyShape& s) {
  return IndexScratchBytes(dtype, s.rows * s.tail);
}

size_t IndexUpdateScratchBytes(const IndexModifyShape& s) {
  return WriterBytes(s);
}

size_t IndexValGradScratchBytes(int dtype, const IndexModifyShape& s,
                                bool winners_only) {
  return (winners_only ? WriterBytes(s) : 0) +
         IndexScratchBytes(dtype, s.val_size);
}

cudaError_t LaunchIndexAdd(int dtype, int index_dtype,
                           const IndexModifyShape& s, const void* a,
                           const void* ind, const void* val, void* y, int req,
                           int* bad, void* scratch, cudaStream_t stream) {
  if (!IsIndexDType(index_dtype)) return cudaErrorInvalidValue;
  cudaError_t err = CheckRows(index_dtype, s, ind, nullptr, bad, stream);
  if (err != cudaSuccess || s.rows * s.tail == 0) return err;
  return Dispatch<true>(
      dtype, req,
      IndexAddLauncher{index_dtype, s, a, ind, val, y, scratch, stream});
}

cudaError_t LaunchIndexUpdate(int dtype, int index_dtype,
                              const IndexModifyShape& s, const void* a,
                              const void* ind, const void* val, void* y,
                              int req, int* bad, void* scratch,
                              cudaStream_t stream) {
  if (!IsIndexDType(index_dtype)) return cudaErrorInvalidValue;
  const bool any = s.rows * s.tail > 0;
  long long* writer = any ? static_cast<long long*>(scratch) : nullptr;
  cudaError_t err = CheckRows(index_dtype, s, ind, writer, bad, stream);
  if (err != cudaSuccess || !any) return err;
  return Dispatch<true>(dtype, req,
                        IndexUpdateLauncher{s, writer, a, val, y, stream});
}

cudaError_t LaunchIndexValGrad(int dtype, int index_dtype,
                               const IndexModifyShape& s, bool winners_only,
                               const void* og, const void* ind, void* dval,
                               int req, int* bad, void* scratch,
                               cudaStream_t stream) {
  if (!IsIndexDType(index_dtype) || !IsFloat(dtype)) {
    return cudaErrorInvalidValue;
  }
  const bool any = s.rows * s.tail > 0;
  long long* writer =
      winners_only && any ? static_cast<long long*>(scratch) : nullptr;
  cudaError_t err = CheckRows(index_dtype, s, ind, writer, bad, stream);
  if (err != cudaSuccess || s.val_size == 0 || !Writes(req)) return err;
  void* acc = static_cast<char*>(scratch) + (winners_only ? WriterBytes(s) : 0);
  err = cudaMemsetAsync(acc, 0, IndexScratchBytes(dtype, s.val_size), stream);
  if (err != cudaSuccess) return err;
  // An empty a has no rows, so no position wins: the sums stay 0.
  IndexModifyShape counted = s;
  if (winners_only && !any) counted.count = 0;
  return Dispatch(dtype, req,
                  ValGradLauncher{index_dtype, counted, writer, og, ind, dval,
                                  acc, stream});
}

cudaError_t LaunchIndexUpdateAGrad(int dtype, int index_dtype,
                                   const IndexModifyShape& s, const void* og,
                                   const void* ind, void* da, int req, int* bad,
                                   void* scratch, cudaStream_t stream) {
  if (!IsIndexDType(index_dtype) || !IsFloat(dtype)) {
    return cudaErrorInvalidValue;
  }
  const bool any = s.rows * s.tail > 0;
  long long* writer = any ? static_cast<long long*>(scratch) : nullptr;
  cudaError_t err = CheckRows(index_dtype, s, ind, writer, bad, stream);
  if (err != cudaSuccess || !any) return err;
  return Dispatch(dtype, req, UpdateAGradLauncher{s, writer, og, da, stream});
}

cudaError_t LaunchAllTrue(int64_t n, const bool* x, bool* y, int* bad,
                          cudaStream_t stream) {
  AllTrueKernel<<<Blocks(n > 0 ? n : 1), kThreads, 0, stream>>>(n, x, y, bad);
  return cudaGetLastError();
}

}  // namespace mx_cuda
