// Launchers of the CUDA plugin's indexing kernels (index_kernels.cu and,
// for argmax, argsort/sort/topk, cumsum, _arange, tril and triu,
// order_kernels.cu): take and its gradient, pick and its gradient,
// gather_nd and its gradient, where, argmax, argsort/sort/topk, cumsum,
// _arange, tril and triu, with the CPU kernels' semantics
// (backends/cpu/indexing_ops.cc and friends).
//
// Data is float32, float64 or float16 (computed in float). Index inputs
// may be any numeric dtype: floats truncate toward zero, saturating, and
// NaN reads as 0, as on the CPU. Each launcher takes the output's write
// request (MX_REQ_WRITE, _INPLACE or _ADD; MX_REQ_NULL does nothing),
// returns the launch status (cudaErrorInvalidValue for a dtype it lacks)
// and never throws.
#ifndef MXCORE_BACKENDS_CUDA_INDEX_KERNELS_H_
#define MXCORE_BACKENDS_CUDA_INDEX_KERNELS_H_

#include <cuda_runtime.h>

#include <cstdint>

#include "backends/cuda/elementwise.h"

namespace mx_cuda {

// How take treats an index outside [0, n): clamp it, wrap it modulo n,
// or (raise) count it from the end when in [-n, 0) and flag it otherwise.
enum class TakeMode : int { kClip, kWrap, kRaise };

// `a` viewed as (outer, n, inner); `m` indices. y (outer, m, inner).
struct TakeShape {
  int64_t outer = 0, n = 0, m = 0, inner = 0;
};

// y[o, k, :] = a[o, index(k), :]. In raise mode an index out of range
// sets *bad (device int, zeroed by the caller) to 1 and writes nothing.
cudaError_t LaunchTake(int dtype, int index_dtype, const TakeShape& s,
                       TakeMode mode, const void* a, const void* indices,
                       void* y, int req, int* bad, cudaStream_t stream);

// take's gradient: da (outer, n, inner) gets g[o, k, :] added at
// index(k); repeated indices add up. `scratch` holds outer * n * inner
// accumulators (IndexScratchBytes): float for float16, so its sums round
// once; 64-bit for integers (any numeric dtype), whose sums wrap.
cudaError_t LaunchTakeBackward(int dtype, int index_dtype, const TakeShape& s,
                               TakeMode mode, const void* g,
                               const void* indices, void* da, int req, int* bad,
                               void* scratch, cudaStream_t stream);
size_t IndexScratchBytes(int dtype, int64_t n);

// gather_nd: data of rank `ndim` (<= kMaxDims) and dims `dims`; indices
// (m, count); each slice has `slice` elements. An index outside
// [-extent, extent) sets *bad to 1.
struct GatherNdShape {
  int ndim = 0;
  int64_t dims[kMaxDims];
  int64_t m = 0, count = 0, slice = 0;
};
cudaError_t LaunchGatherNd(int dtype, int index_dtype, const GatherNdShape& s,
                           const void* data, const void* indices, void* y,
                           int req, int* bad, cudaStream_t stream);
// Its gradient into dx of data's shape (scratch: IndexScratchBytes of
// data's size).
cudaError_t LaunchGatherNdBackward(int dtype, int index_dtype,
                                   const GatherNdShape& s, const void* g,
                                   const void* indices, void* dx, int req,
                                   int* bad, void* scratch,
                                   cudaStream_t stream);

// where: y = cond != 0 ? x : z with broadcasting; shape is the output's
// and each stride is 0 along the axes that operand broadcasts.
struct WhereIndex {
  int ndim = 0;
  int64_t shape[kMaxDims];
  int64_t c_stride[kMaxDims], x_stride[kMaxDims], z_stride[kMaxDims];
};
cudaError_t LaunchWhere(int dtype, int cond_dtype, int64_t n,
                        const WhereIndex& index, const void* cond,
                        const void* x, const void* z, void* y, int req,
                        cudaStream_t stream);

// pick: data (outer, n, inner), index and y (outer, inner); each index is
// clipped into [0, n) or wrapped modulo n (n > 0). Data of any numeric
// dtype.
struct PickShape {
  int64_t outer = 0, n = 0, inner = 0;
  bool wrap = false;
};
cudaError_t LaunchPick(int dtype, int index_dtype, const PickShape& s,
                       const void* data, const void* index, void* y, int req,
                       cudaStream_t stream);
// Its gradient: dx (outer, n, inner) gets g[o, t] at the picked position
// and 0 elsewhere (one thread per element of dx; positions never collide).
cudaError_t LaunchPickBackward(int dtype, int index_dtype, const PickShape& s,
                               const void* g, const void* index, void* dx,
                               int req, cudaStream_t stream);

// argmax (is_max) or argmin over the middle axis of (outer, n, inner) into
// y (outer, inner), int64 or (the legacy ops) of x's dtype: the first
// maximum (minimum), or the first NaN.
cudaError_t LaunchArgReduce(bool is_max, int dtype, bool int64_indices,
                            int64_t outer, int64_t n, int64_t inner,
                            const void* x, void* y, int req,
                            cudaStream_t stream);

// Running sums along the middle axis of (outer, len, inner) into y of
// `dtype` (numeric): double for floats, wrapping int64 for integers. x has
// y's dtype, or with x_is_acc already that accumulator's (float64 or
// int64: another input dtype cast first, as the CPU converts each element).
// Many or short lines: a thread sums each. Few long ones
// (CumsumScansTheWholeGpu): one scan by line over the whole GPU (CUB) in
// buffers the caller carves: the sums, 8 bytes per element, and CUB's
// temporary storage; with temp null the call only sets temp_bytes.
struct CumsumBuffers {
  void* sums = nullptr;
  void* temp = nullptr;
  size_t temp_bytes = 0;
};
bool CumsumScansTheWholeGpu(int64_t outer, int64_t len, int64_t inner);
cudaError_t LaunchCumsum(int dtype, int64_t outer, int64_t len, int64_t inner,
                         const void* x, bool x_is_acc, void* y, int req,
                         CumsumBuffers* buffers, cudaStream_t stream);

// The rank of every element of x (numeric dtype) in its line along the
// middle axis of (outer, len, inner): its place in the stable order, NaN
// last, ascending or descending; int64, in x's layout. Two radix sorts over
// the whole GPU (sort_kernels.cu) in buffers the caller carves: keys of
// RankKeyBytes(dtype) each, uint32 positions (so at most 2^32 - 1
// elements), and CUB's temporary storage of RankSortTempBytes.
struct RankBuffers {
  void* keys_in;  // n keys each (also the lines' numbers of sort 2).
  void* keys_out;
  uint32_t* positions_in;  // n each.
  uint32_t* positions_out;
  void* temp;
  size_t temp_bytes;
};
size_t RankKeyBytes(int dtype);
cudaError_t RankSortTempBytes(int dtype, int64_t outer, int64_t len,
                              int64_t inner, size_t* bytes);
cudaError_t LaunchRank(int dtype, int64_t outer, int64_t len, int64_t inner,
                       bool ascend, const void* x, const RankBuffers& buffers,
                       int64_t* rank, cudaStream_t stream);

// What LaunchPlaceByRank writes of the kept elements (rank < keep).
enum class Placed {
  kIndex,  // Their positions along the axis, at their rank; y of `dtype`.
  kValue,  // Themselves, at their rank; y of x's dtype (`dtype`).
  kMask,   // 1 where kept, 0 elsewhere, in x's layout; y of x's dtype.
};
// y is (outer, keep, inner) for kIndex and kValue; numeric dtypes.
cudaError_t LaunchPlaceByRank(Placed what, int dtype, int64_t outer,
                              int64_t len, int64_t inner, int64_t keep,
                              const int64_t* rank, const void* x, void* y,
                              int req, cudaStream_t stream);

// _backward_topk: dx (outer, len, inner) (+)= the sums of g (outer, keep,
// inner) at the positions `indices` (idx_dtype, g's layout) name along the
// axis, zero elsewhere: atomic adds into `scratch` (IndexScratchBytes of
// dx's size), so repeated positions add up as on the CPU. A position
// outside [0, len) or not whole sets *bad (zeroed by the caller) and adds
// nothing.
cudaError_t LaunchScatterKept(int dtype, int idx_dtype, int64_t outer,
                              int64_t len, int64_t inner, int64_t keep,
                              const void* g, const void* indices, void* dx,
                              int req, int* bad, void* scratch,
                              cudaStream_t stream);

// y[i] = lo + (i / repeat) * step converted to dtype (integers truncate
// and saturate).
cudaError_t LaunchArange(int dtype, int64_t n, double lo, double step,
                         int64_t repeat, void* y, int req, cudaStream_t stream);

// tril (lower) / triu of the last two axes (rows, cols) of y's `n`
// elements, offset by diagonal k; from_vector: x is one row repeated.
cudaError_t LaunchTriangle(bool lower, int dtype, int64_t n, int64_t rows,
                           int64_t cols, int64_t k, bool from_vector,
                           const void* x, void* y, int req,
                           cudaStream_t stream);

}  // namespace mx_cuda

#endif  // MXCORE_BACKENDS_CUDA_INDEX_KERNELS_H_
