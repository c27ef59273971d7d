// Launchers of _contrib_box_nms and its gradient (box_nms_kernels.cu):
// one thread block per batch item; and of _contrib_MultiBoxPrior's anchors.
// Return the launch status; never throw.
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
// anchor a spans +- half[a] (width, height); y (h * w * anchors, 4) as
// corners, clamped to [0, 1] when clip.
constexpr int kMaxPriorAnchors = 64;
struct PriorBoxes {
  int64_t h = 0, w = 0, anchors = 0;
  double step_y = 1, step_x = 1, offset_y = 0.5, offset_x = 0.5;
  bool clip = false;
  double half_w[kMaxPriorAnchors] = {}, half_h[kMaxPriorAnchors] = {};
};
cudaError_t LaunchMultiBoxPrior(int dtype, const PriorBoxes& p, void* y,
                                int req, cudaStream_t stream);

}  // namespace mx_cuda

#endif  // MXCORE_BACKENDS_CUDA_BOX_NMS_KERNELS_H_
