// Launchers of the CUDA plugin's _contrib_BilinearResize2D kernels
// (resize_kernels.cu), with the CPU kernel's interpolation
// (backends/cpu/bilinear_resize_ops.cc). Return the launch status
// (cudaErrorInvalidValue for a dtype they lack) and never throw.
#ifndef MXCORE_BACKENDS_CUDA_RESIZE_KERNELS_H_
#define MXCORE_BACKENDS_CUDA_RESIZE_KERNELS_H_

#include <cuda_runtime.h>

#include <cstdint>

namespace mx_cuda {

// planes (N * C) of (in_h, in_w) resized to (out_h, out_w).
struct ResizeShape {
  int64_t planes = 0, in_h = 0, in_w = 0, out_h = 0, out_w = 0;
  bool align_corners = true;
};

// y (planes, out_h, out_w) (+)= the bilinear resize of x.
cudaError_t LaunchBilinearResize(int dtype, const ResizeShape& r, const void* x,
                                 void* y, int req, cudaStream_t stream);
// dx (planes, in_h, in_w) (+)= each output gradient spread over its four
// source pixels, summed in `acc` (planes * in_h * in_w doubles of scratch).
cudaError_t LaunchBilinearResizeBackward(int dtype, const ResizeShape& r,
                                         const void* og, void* dx, int req,
                                         double* acc, cudaStream_t stream);

}  // namespace mx_cuda

#endif  // MXCORE_BACKENDS_CUDA_RESIZE_KERNELS_H_
