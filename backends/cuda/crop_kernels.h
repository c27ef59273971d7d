// Launcher of the CUDA plugin's window copy (crop_kernels.cu): the
// uneven crops and pads of Deconvolution's target_shape, which cuDNN's
// symmetric padding cannot express. Returns the launch status
// (cudaErrorInvalidValue for a dtype it lacks) and never throws.
#ifndef MXCORE_BACKENDS_CUDA_CROP_KERNELS_H_
#define MXCORE_BACKENDS_CUDA_CROP_KERNELS_H_

#include <cuda_runtime.h>

#include <cstdint>

namespace mx_cuda {

constexpr int kCropMaxDims = 5;

// dst (shape dst) element o takes src's element o + begin (per axis), or
// 0 where that lies outside src (shape src): a crop for begin >= 0, a pad
// for begin < 0.
struct CropIndex {
  int ndim = 0;
  int64_t dst[kCropMaxDims] = {}, src[kCropMaxDims] = {},
          begin[kCropMaxDims] = {};
};
cudaError_t LaunchCrop(int dtype, const CropIndex& c, const void* src,
                       void* dst, int req, cudaStream_t stream);

}  // namespace mx_cuda

#endif  // MXCORE_BACKENDS_CUDA_CROP_KERNELS_H_
