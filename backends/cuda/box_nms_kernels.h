// Launchers of _contrib_box_nms and its gradient (box_nms_kernels.cu):
// one thread block per batch item; of _contrib_MultiBoxPrior's anchors; and
// of _contrib_MultiBoxDetection (multibox_detection_kernels.cu). Return
// the launch status; never throw.
#ifndef MXCORE_BACKENDS_CUDA_BOX_NMS_KERNELS_H_
#define MXCORE_BACKENDS_CUDA_BOX_NMS_KERNELS_H_

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

namespace mx_cuda {

// The op's attributes (MXNet's meaning; indices checked by the caller).
struct BoxNmsParams {
  double overlap_thresh = 0.5, valid_thresh = 0;
  int64_t topk = -1, coord_start = 2, score_index = 1, id_index = -1;
  int64_t background_id = -1;
  bool force_suppress = false, center_in = false, center_out = false;
};

// Scratch bytes for `batches` items of n boxes.
size_t BoxNmsScratchBytes(int64_t batches, int64_t n);

// x: (batches, n, k) float data -> y (same shape: kept boxes first by
// descending score, other rows -1) and source_row (batches, n) int32 (-1
// for filled rows). Comparisons and IoU in double, as the CPU kernel.
cudaError_t LaunchBoxNms(int dtype, int64_t batches, int64_t n, int64_t k,
                         const BoxNmsParams& p, const void* x, void* y,
                         int req_y, int32_t* source_row, int req_source,
                         void* scratch, cudaStream_t stream);

// dx (batches, n, k) (+)= out_grad's row r at row source_row[r].
cudaError_t LaunchBoxNmsGrad(int dtype, int64_t batches, int64_t n, int64_t k,
                             const void* out_grad, const int32_t* source_row,
                             void* dx, int req, cudaStream_t stream);

// SSD anchors (backends/cpu/multibox_prior_ops.cc): at cell (r, c) of an
// h x w map, centre ((c + offset_x) * step_x, (r + offset_y) * step_y),
// anchor a spans +- (half_w[a], half_h[a]) (device arrays of `anchors`
// values); y (h * w * anchors, 4) as corners, clamped to [0, 1] when clip.
struct PriorBoxes {
  int64_t h = 0, w = 0, anchors = 0;
  double step_y = 1, step_x = 1, offset_y = 0.5, offset_x = 0.5;
  bool clip = false;
  const double* half_w = nullptr;
  const double* half_h = nullptr;
};
cudaError_t LaunchMultiBoxPrior(int dtype, const PriorBoxes& p, void* y,
                                int req, cudaStream_t stream);

// SSD decoding and NMS (backends/cpu/multibox_detection_ops.cc): cls_prob
// (batches, classes, anchors), loc_pred (batches, anchors * 4), anchor
// (anchors, 4) -> y (batches, anchors, 6). Thresholds and variances are
// MXNet's float parameters.
struct SsdDetection {
  int64_t batches = 0, classes = 0, anchors = 0;
  float threshold = 0.01f, nms_threshold = 0.5f;
  float variances[4] = {0.1f, 0.1f, 0.2f, 0.2f};
  bool clip = true, force_suppress = false;
  int64_t nms_topk = -1;
};
// Scratch for batches x anchors items: decoded rows (6 values of the
// dtype each), the compacted and ranked item indices, the suppression flags.
struct SsdDetectionScratch {
  void* rows = nullptr;
  int64_t* compact = nullptr;
  int64_t* order = nullptr;
  unsigned char* dropped = nullptr;
};
cudaError_t LaunchMultiBoxDetection(int dtype, const SsdDetection& p,
                                    const void* cls_prob, const void* loc_pred,
                                    const void* anchor, void* y, int req,
                                    const SsdDetectionScratch& scratch,
                                    cudaStream_t stream);

// SSD training targets (backends/cpu/multibox_target_ops.cc): anchor
// (anchors, 4), label (batches, rows, width), cls_pred (batches, classes,
// anchors) -> loc_target, loc_mask (batches, anchors * 4), cls_target
// (batches, anchors). Parameters are MXNet's floats, rounded by the caller.
// The images are a batch's [first_image, first_image + batches); *bad (set
// to ~0 by the caller) gets the lowest image * rows + row (image counted in
// the whole batch) of a class -1 row whose box is not all -1.
struct SsdTargets {
  int64_t batches = 0, anchors = 0, rows = 0, width = 5, classes = 1;
  int64_t first_image = 0;
  float overlap_threshold = 0.5f, ignore_label = -1;
  float negative_mining_ratio = -1, negative_mining_thresh = 0.5f;
  float variances[4] = {0.1f, 0.1f, 0.2f, 0.2f};
};
size_t MultiBoxTargetScratchBytes(const SsdTargets& p);
cudaError_t LaunchMultiBoxTarget(int dtype, const SsdTargets& p,
                                 const void* anchor, const void* label,
                                 const void* cls_pred, void* loc_target,
                                 int req_loc, void* loc_mask, int req_mask,
                                 void* cls_target, int req_cls,
                                 unsigned long long* bad, void* scratch,
                                 cudaStream_t stream);

}  // namespace mx_cuda

#endif  // MXCORE_BACKENDS_CUDA_BOX_NMS_KERNELS_H_
