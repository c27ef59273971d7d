// _contrib_MultiBoxDetection on the GPU (box_nms_kernels.h), deciding as
// the CPU kernel (backends/cpu/multibox_detection_ops.cc) with the same
// mx_math rules: one thread per anchor decodes its row; then one block per
// batch item compacts the detections in anchor order (a chunked block
// scan), ranks them by descending score (ties by position: a stable
// sort), suppresses greedily in rank order (each step's IoU tests spread
// over the block) and writes MXNet's layout.
#include <cuda_fp16.h>

#include "backends/common/mxnet_geometry.h"
#include "backends/cuda/box_nms_kernels.h"
#include "backends/cuda/kernel_util.cuh"
#include "backends/cuda/norm_util.cuh"
#include "backends/plugin_api/mx_plugin.h"

namespace mx_cuda {
namespace {

using namespace kernel;  // NOLINT: the shared kernel helpers.

// rows (batches, anchors, 6) of T: [class - 1, score, box] per anchor, class
// -1 where the anchor detects nothing.
template <typename T>
__global__ void DecodeKernel(SsdDetection p, const T* cls, const T* loc,
                             const T* anchor, T* rows) {
  using A = typename Acc<T>::type;
  MX_CUDA_GRID_STRIDE(e, p.batches * p.anchors) {
    const int64_t b = e / p.anchors, i = e % p.anchors;
    const T* c = cls + b * p.classes * p.anchors;
    A score = -1;
    int64_t id = 0;
    for (int64_t j = 1; j < p.classes; ++j) {
      const A v = Load(c, j * p.anchors + i);
      if (v > score) {
        score = v;
        id = j;
      }
    }
    if (id > 0 && score < static_cast<A>(p.threshold)) id = 0;
    A anchor_box[4], offsets[4], variances[4], box[4];
    for (int k = 0; k < 4; ++k) {
      anchor_box[k] = Load(anchor, i * 4 + k);
      offsets[k] = Load(loc, (b * p.anchors + i) * 4 + k);
      variances[k] = static_cast<A>(p.variances[k]);
    }
    mx_math::DecodeSsdBox(anchor_box, offsets, variances, p.clip, box);
    T* row = rows + e * 6;
    row[0] = static_cast<T>(static_cast<A>(id - 1));
    row[1] = static_cast<T>(score);
    for (int k = 0; k < 4; ++k) row[2 + k] = static_cast<T>(box[k]);
  }
}

template <typename T>
__device__ typename Acc<T>::type ValueAt(const T* rows, int64_t row, int j) {
  return Load(rows, row * 6 + j);
}

template <typename T>
__device__ void BoxAt(const T* rows, int64_t row,
                      typename Acc<T>::type box[4]) {
  for (int k = 0; k < 4; ++k) box[k] = ValueAt(rows, row, 2 + k);
}

// compact[0, count) = the anchors with a detection, in anchor order.
template <typename T>
__device__ int64_t Compact(const T* rows, int64_t n, int64_t* compact,
                           int64_t* counts) {
  const int64_t chunk = (n + kThreads - 1) / kThreads;
  const int64_t begin = threadIdx.x * chunk;
  const int64_t end = begin + chunk < n ? begin + chunk : n;
  int64_t mine = 0;
  for (int64_t i = begin; i < end; ++i) mine += ValueAt(rows, i, 0) >= 0;
  counts[threadIdx.x] = mine;
  __syncthreads();
  if (threadIdx.x == 0) {
    int64_t total = 0;
    for (int t = 0; t < kThreads; ++t) {
      const int64_t c = counts[t];
      counts[t] = total;
      total += c;
    }
    counts[kThreads] = total;
  }
  __syncthreads();
  int64_t at = counts[threadIdx.x];
  for (int64_t i = begin; i < end; ++i) {
    if (ValueAt(rows, i, 0) >= 0) compact[at++] = i;
  }
  const int64_t count = counts[kThreads];
  __syncthreads();
  return count;
}

template <int kReq, typename T>
__global__ void SelectKernel(SsdDetection p, const T* rows_all, T* y,
                             int64_t* compact_all, int64_t* order_all,
                             unsigned char* dropped_all) {
  using A = typename Acc<T>::type;
  __shared__ int64_t counts[kThreads + 1];
  __shared__ int keep_current;
  const int64_t b = blockIdx.x, n = p.anchors;
  const T* rows = rows_all + b * n * 6;
  int64_t* compact = compact_all + b * n;
  int64_t* order = order_all + b * n;
  unsigned char* dropped = dropped_all + b * n;
  const int64_t valid = Compact(rows, n, compact, counts);
  const bool nms = valid > 0 && p.nms_threshold > 0 && p.nms_threshold <= 1;
  int64_t keep = 0;
  if (nms) {
    keep = p.nms_topk > 0 && p.nms_topk < valid ? p.nms_topk : valid;
    for (int64_t c = threadIdx.x; c < valid; c += blockDim.x) {
      const A s = ValueAt(rows, compact[c], 1);
      int64_t rank = 0;
      for (int64_t d = 0; d < valid; ++d) {
        const A t = ValueAt(rows, compact[d], 1);
        rank += t > s || (t == s && d < c);
      }
      order[rank] = compact[c];
    }
    for (int64_t r = threadIdx.x; r < keep; r += blockDim.x) dropped[r] = 0;
    __syncthreads();
    const A threshold = static_cast<A>(p.nms_threshold);
    for (int64_t r = 0; r < keep; ++r) {
      if (threadIdx.x == 0) keep_current = dropped[r] == 0;
      __syncthreads();
      if (keep_current) {
        A br[4], bq[4];
        BoxAt(rows, order[r], br);
        const A id_r = ValueAt(rows, order[r], 0);
        for (int64_t q = r + 1 + threadIdx.x; q < keep; q += blockDim.x) {
          if (dropped[q] ||
              (!p.force_suppress && ValueAt(rows, order[q], 0) != id_r)) {
            continue;
          }
          BoxAt(rows, order[q], bq);
          if (mx_math::SsdOverlap(br, bq) >= threshold) dropped[q] = 1;
        }
      }
      __syncthreads();
    }
  }
  // Rows [0, keep): by rank, suppressed ones class -1; [keep, valid): the
  // detections in anchor order, class -1 (MXNet's nms_topk layout; all of
  // them without NMS, class kept); the rest -1.
  T* yb = y + b * n * 6;
  for (int64_t e = threadIdx.x; e < n * 6; e += blockDim.x) {
    const int64_t r = e / 6;
    const int j = static_cast<int>(e % 6);
    A v = -1;
    if (r < keep) {
      v = j == 0 && dropped[r] ? A(-1) : ValueAt(rows, order[r], j);
    } else if (r < valid) {
      v = j == 0 && nms ? A(-1) : ValueAt(rows, compact[r], j);
    }
    Store<kReq>(yb, e, v);
  }
}

struct DetectionLauncher {
  SsdDetection p;
  const void *cls, *loc, *anchor;
  void* y;
  SsdDetectionScratch s;
  cudaStream_t stream;
  template <int R, typename T>
  void operator()() const {
    T* rows = static_cast<T*>(s.rows);
    DecodeKernel<T><<<Blocks(p.batches * p.anchors), kThreads, 0, stream>>>(
        p, static_cast<const T*>(cls), static_cast<const T*>(loc),
        static_cast<const T*>(anchor), rows);
    SelectKernel<R, T>
        <<<static_cast<unsigned>(p.batches), kThreads, 0, stream>>>(
            p, rows, static_cast<T*>(y), s.compact, s.order, s.dropped);
  }
};

}  // namespace

cudaError_t LaunchMultiBoxDetection(int dtype, const SsdDetection& p,
                                    const void* cls_prob, const void* loc_pred,
                                    const void* anchor, void* y, int req,
                                    const SsdDetectionScratch& scratch,
                                    cudaStream_t stream) {
  if (p.batches == 0 || p.anchors == 0) return cudaSuccess;
  return Dispatch(
      dtype, req,
      DetectionLauncher{p, cls_prob, loc_pred, anchor, y, scratch, stream});
}

}  // namespace mx_cuda
