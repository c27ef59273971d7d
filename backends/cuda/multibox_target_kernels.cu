// _contrib_MultiBoxTarget on the GPU (box_nms_kernels.h), deciding as the
// CPU kernel (backends/cpu/multibox_target_ops.cc) with the same mx_math
// rules: one block per image finds its ground-truth rows, computes the
// overlaps (a thread per pair), runs the bipartite rounds as block-wide
// argmaxes (ties to the first pair in (anchor, ground truth) order), the
// threshold matches and the negative mining (a thread per anchor; the
// candidates ranked by background probability, ties by anchor), then
// writes the three outputs.
#include <cuda_fp16.h>

#include "backends/common/mxnet_geometry.h"
#include "backends/cuda/box_nms_kernels.h"
#include "backends/cuda/kernel_util.cuh"
#include "backends/cuda/norm_util.cuh"
#include "backends/plugin_api/mx_plugin.h"

namespace mx_cuda {
namespace {

using namespace kernel;  // NOLINT: the shared kernel helpers.

// One image's scratch.
struct ImageScratch {
  float *iou, *best_iou, *candidate;         // anchors x rows, anchors, anchors
  int64_t* best_gt;                          // anchors
  signed char* flag;                         // anchors: 1 positive, 0 negative
  unsigned char *is_candidate, *gt_matched;  // anchors, rows
};

__device__ ImageScratch ScratchOf(const SsdTargets& p, void* base, int64_t b) {
  const int64_t a = p.anchors, m = p.rows, n = p.batches;
  float* floats = static_cast<float*>(base);
  int64_t* ints = reinterpret_cast<int64_t*>(floats + n * a * (m + 2) +
                                             (n * a * (m + 2)) % 2);
  unsigned char* bytes = reinterpret_cast<unsigned char*>(ints + n * a);
  ImageScratch s;
  s.iou = floats + b * a * m;
  s.best_iou = floats + n * a * m + b * a;
  s.candidate = floats + n * a * (m + 1) + b * a;
  s.best_gt = ints + b * a;
  s.flag = reinterpret_cast<signed char*>(bytes + b * a);
  s.is_candidate = bytes + n * a + b * a;
  s.gt_matched = bytes + 2 * n * a + b * m;
  return s;
}

// Anchor j's best ground truth (the first among equals), if not yet found.
__device__ void BestOf(const ImageScratch& s, int64_t j, int64_t num_gt) {
  float most = -1.0f;
  for (int64_t g = 0; g < num_gt; ++g) {
    if (s.iou[j * num_gt + g] > most) {
      most = s.iou[j * num_gt + g];
      s.best_gt[j] = g;
    }
  }
  if (s.best_gt[j] >= 0) s.best_iou[j] = most;
}

template <typename T>
__global__ void MultiBoxTargetKernel(SsdTargets p, const T* anchor,
                                     const T* label_all, const T* cls_all,
                                     T* loc_all, int req_loc, T* mask_all,
                                     int req_mask, T* cls_target_all,
                                     int req_cls, unsigned long long* bad,
                                     void* scratch) {
  using A = typename Acc<T>::type;
  __shared__ int64_t num_gt, positives, pick_index;
  __shared__ float pick_value[kThreads];
  __shared__ int64_t pick_at[kThreads];
  const int64_t b = blockIdx.x, anchors = p.anchors, m = p.rows;
  const T* label = label_all + b * m * p.width;
  const T* cls = cls_all + b * p.classes * anchors;
  const ImageScratch s = ScratchOf(p, scratch, b);
  if (threadIdx.x == 0) {
    num_gt = m;
    for (int64_t r = 0; r < m; ++r) {
      const T* row = label + r * p.width;
      if (static_cast<float>(Load(row, 0)) != -1.0f) continue;
      for (int k = 1; k < 5; ++k) {
        if (static_cast<float>(Load(row, k)) != -1.0f) {
          atomicMin(bad, static_cast<unsigned long long>(
                             (p.first_image + b) * m + r));
        }
      }
      num_gt = r;
      break;
    }
    positives = 0;
  }
  __syncthreads();
  const int64_t g_count = num_gt;
  for (int64_t j = threadIdx.x; j < anchors; j += blockDim.x) {
    s.flag[j] = -1;
    s.best_iou[j] = -1.0f;
    s.best_gt[j] = -1;
  }
  for (int64_t g = threadIdx.x; g < g_count; g += blockDim.x) {
    s.gt_matched[g] = 0;
  }
  for (int64_t e = threadIdx.x; e < anchors * g_count; e += blockDim.x) {
    const int64_t j = e / g_count, g = e % g_count;
    A box[4], gt[4];
    for (int k = 0; k < 4; ++k) {
      box[k] = Load(anchor, j * 4 + k);
      gt[k] = Load(label, g * p.width + 1 + k);
    }
    s.iou[e] = static_cast<float>(mx_math::SsdTargetOverlap(box, gt));
  }
  __syncthreads();
  // Bipartite rounds: the best free pair above 1e-6.
  for (int64_t round = 0; round < g_count; ++round) {
    float best = 1e-6f;
    int64_t at = -1;
    for (int64_t e = threadIdx.x; e < anchors * g_count; e += blockDim.x) {
      const int64_t j = e / g_count, g = e % g_count;
      if (s.flag[j] == 1 || s.gt_matched[g]) continue;
      const float v = s.iou[e];
      if (v > best || (v == best && at >= 0 && e < at)) {
        best = v;
        at = e;
      }
    }
    pick_value[threadIdx.x] = best;
    pick_at[threadIdx.x] = at;
    __syncthreads();
    if (threadIdx.x == 0) {
      float most = 1e-6f;
      int64_t first = -1;
      for (int t = 0; t < kThreads; ++t) {
        const int64_t e = pick_at[t];
        if (e < 0) continue;
        if (pick_value[t] > most || (pick_value[t] == most && e < first)) {
          most = pick_value[t];
          first = e;
        }
      }
      pick_index = first;
      if (first >= 0) {
        const int64_t j = first / g_count, g = first % g_count;
        s.best_iou[j] = most;
        s.best_gt[j] = g;
        s.gt_matched[g] = 1;
        s.flag[j] = 1;
        ++positives;
      }
    }
    __syncthreads();
    if (pick_index < 0) break;
  }
  if (g_count > 0 && p.overlap_threshold > 0) {
    for (int64_t j = threadIdx.x; j < anchors; j += blockDim.x) {
      if (s.flag[j] == 1) continue;
      BestOf(s, j, g_count);
      if (s.best_gt[j] >= 0 && s.best_iou[j] > p.overlap_threshold) {
        s.flag[j] = 1;
        atomicAdd(reinterpret_cast<unsigned long long*>(&positives), 1ull);
      }
    }
  }
  __syncthreads();
  if (g_count > 0 && p.negative_mining_ratio > 0) {
    int64_t wanted = static_cast<int64_t>(static_cast<float>(positives) *
                                          p.negative_mining_ratio);
    if (wanted > anchors - positives) wanted = anchors - positives;
    for (int64_t j = threadIdx.x; j < anchors; j += blockDim.x) {
      s.is_candidate[j] = 0;
      if (wanted <= 0 || s.flag[j] == 1) continue;
      if (s.best_iou[j] < 0) BestOf(s, j, g_count);
      if (!(s.best_iou[j] < p.negative_mining_thresh)) continue;
      const auto score = [cls, anchors, j](int64_t k) {
        return static_cast<A>(Load(cls, k * anchors + j));
      };
      s.candidate[j] =
          -static_cast<float>(mx_math::SsdBackgroundProb<A>(p.classes, score));
      s.is_candidate[j] = 1;
    }
    __syncthreads();
    for (int64_t j = threadIdx.x; j < anchors; j += blockDim.x) {
      if (!s.is_candidate[j]) continue;
      int64_t rank = 0;
      for (int64_t i = 0; i < anchors && rank < wanted; ++i) {
        rank +=
            s.is_candidate[i] && (s.candidate[i] > s.candidate[j] ||
                                  (s.candidate[i] == s.candidate[j] && i < j));
      }
      if (rank < wanted) s.flag[j] = 0;
    }
  } else if (g_count > 0) {
    for (int64_t j = threadIdx.x; j < anchors; j += blockDim.x) {
      if (s.flag[j] != 1) s.flag[j] = 0;
    }
  }
  __syncthreads();
  for (int64_t j = threadIdx.x; j < anchors; j += blockDim.x) {
    float loc[4] = {0, 0, 0, 0};
    float mask = 0, cls_value = p.ignore_label;
    if (s.flag[j] == 0) {
      cls_value = 0;
    } else if (s.flag[j] == 1) {
      const T* gt = label + s.best_gt[j] * p.width;
      cls_value = static_cast<float>(Load(gt, 0)) + 1;
      float box[4], gt_box[4];
      for (int k = 0; k < 4; ++k) {
        box[k] = static_cast<float>(Load(anchor, j * 4 + k));
        gt_box[k] = static_cast<float>(Load(gt, 1 + k));
      }
      mx_math::EncodeSsdBox(box, gt_box, p.variances, loc);
      mask = 1;
    }
    for (int k = 0; k < 4; ++k) {
      Put(loc_all, (b * anchors + j) * 4 + k, req_loc, static_cast<A>(loc[k]));
      Put(mask_all, (b * anchors + j) * 4 + k, req_mask, static_cast<A>(mask));
    }
    Put(cls_target_all, b * anchors + j, req_cls, static_cast<A>(cls_value));
  }
}

template <typename T>
void Launch(const SsdTargets& p, const void* anchor, const void* label,
            const void* cls_pred, void* loc, int req_loc, void* mask,
            int req_mask, void* cls, int req_cls, unsigned long long* bad,
            void* scratch, cudaStream_t stream) {
  MultiBoxTargetKernel<T>
      <<<static_cast<unsigned>(p.batches), kThreads, 0, stream>>>(
          p, static_cast<const T*>(anchor), static_cast<const T*>(label),
          static_cast<const T*>(cls_pred), static_cast<T*>(loc), req_loc,
          static_cast<T*>(mask), req_mask, static_cast<T*>(cls), req_cls, bad,
          scratch);
}

}  // namespace

size_t MultiBoxTargetScratchBytes(const SsdTargets& p) {
  const size_t n = static_cast<size_t>(p.batches);
  const size_t a = static_cast<size_t>(p.anchors);
  const size_t m = static_cast<size_t>(p.rows);
  const size_t floats = n * a * (m + 2) + (n * a * (m + 2)) % 2;  // 8-aligned
  return floats * sizeof(float) + n * a * sizeof(int64_t) + n * (2 * a + m);
}

cudaError_t LaunchMultiBoxTarget(int dtype, const SsdTargets& p,
                                 const void* anchor, const void* label,
                                 const void* cls_pred, void* loc_target,
                                 int req_loc, void* loc_mask, int req_mask,
                                 void* cls_target, int req_cls,
                                 unsigned long long* bad, void* scratch,
                                 cudaStream_t stream) {
  if (p.batches == 0 || p.anchors == 0) return cudaSuccess;
  switch (dtype) {
    case MX_DTYPE_FLOAT32:
      Launch<float>(p, anchor, label, cls_pred, loc_target, req_loc, loc_mask,
                    req_mask, cls_target, req_cls, bad, scratch, stream);
      break;
    case MX_DTYPE_FLOAT64:
      Launch<double>(p, anchor, label, cls_pred, loc_target, req_loc, loc_mask,
                     req_mask, cls_target, req_cls, bad, scratch, stream);
      break;
    case MX_DTYPE_FLOAT16:
      Launch<__half>(p, anchor, label, cls_pred, loc_target, req_loc, loc_mask,
                     req_mask, cls_target, req_cls, bad, scratch, stream);
      break;
    default:
      return cudaErrorInvalidValue;
  }
  return cudaGetLastError();
}

}  // namespace mx_cuda
