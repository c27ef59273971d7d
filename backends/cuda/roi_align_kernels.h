// Launchers of the CUDA plugin's _contrib_ROIAlign and ROIPooling kernels
// (roi_align_kernels.cu, roi_pooling_kernels.cu), with the CPU kernels'
// semantics (backends/cpu/roi_align_ops.cc, roi_pooling_ops.cc): bilinear
// taps or bin maxima as MXNet's, sums in double, a negative batch index
// gives zeros. float32, float64, float16;
// rois have data's dtype. Each returns the launch status and never throws.
#ifndef MXCORE_BACKENDS_CUDA_ROI_ALIGN_KERNELS_H_
#define MXCORE_BACKENDS_CUDA_ROI_ALIGN_KERNELS_H_

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

namespace mx_cuda {

struct ROIAlignArgs {
  int64_t n = 0, c = 0, h = 0, w = 0;  // data (NCHW)
  int64_t num_rois = 0, out_c = 0, ph = 1, pw = 1;
  double spatial_scale = 1;
  int64_t sample_ratio = -1;
  bool position_sensitive = false, aligned = false;
};

// `bad` (device uint64, set to UINT64_MAX by the caller) gets the first
// roi with a batch index past data's images, non-finite coordinates or
// more than 1024 samples per bin side (the CPU's InvalidArgument).
cudaError_t LaunchROIAlign(int dtype, const ROIAlignArgs& a, const void* x,
                           const void* rois, void* y, int req, uint64_t* bad,
                           cudaStream_t stream);
// data_grad from out_grad, through `scratch` (ROIAlignGradScratchBytes):
// the gradient is summed there in double, then written with req.
cudaError_t LaunchROIAlignBackward(int dtype, const ROIAlignArgs& a,
                                   const void* og, const void* rois, void* dx,
                                   int req, uint64_t* bad, void* scratch,
                                   cudaStream_t stream);
size_t ROIAlignGradScratchBytes(const ROIAlignArgs& a);

struct ROIPoolArgs {
  int64_t n = 0, c = 0, h = 0, w = 0;  // data (NCHW)
  int64_t num_rois = 0, ph = 1, pw = 1;
  double spatial_scale = 1;
};
// Output and argmax (int32 offsets in the plane, -1 for an empty bin);
// `bad` as LaunchROIAlign's (a batch index past data's images or
// non-finite coordinates).
cudaError_t LaunchROIPool(int dtype, const ROIPoolArgs& a, const void* x,
                          const void* rois, void* y, int req, int32_t* argmax,
                          int req_argmax, uint64_t* bad, cudaStream_t stream);
// data_grad from out_grad at the argmaxes, summed in `scratch`
// (ROIPoolGradScratchBytes) in double, then written with req.
cudaError_t LaunchROIPoolBackward(int dtype, const ROIPoolArgs& a,
                                  const void* og, const void* rois,
                                  const int32_t* argmax, void* dx, int req,
                                  void* scratch, cudaStream_t stream);
size_t ROIPoolGradScratchBytes(const ROIPoolArgs& a);

}  // namespace mx_cuda

#endif  // MXCORE_BACKENDS_CUDA_ROI_ALIGN_KERNELS_H_
