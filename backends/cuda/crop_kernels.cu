// The window copy of crop_kernels.h.
#include "backends/cuda/crop_kernels.h"
#include "backends/cuda/kernel_util.cuh"
#include "backends/cuda/norm_util.cuh"

namespace mx_cuda {
namespace {

using namespace kernel;  // NOLINT: the shared kernel helpers.

template <typename T>
__global__ void CropKernel(CropIndex c, int64_t n, const T* src, T* dst,
                           int req) {
  using A = typename Acc<T>::type;
  MX_CUDA_GRID_STRIDE(i, n) {
    int64_t rest = i, at = 0, stride = 1;
    bool inside = true;
    for (int d = c.ndim - 1; d >= 0; --d) {
      const int64_t s = rest % c.dst[d] + c.begin[d];
      rest /= c.dst[d];
      inside = inside && s >= 0 && s < c.src[d];
      at += s * stride;
      stride *= c.src[d];
    }
    Put(dst, i, req, inside ? Load(src, at) : A(0));
  }
}

struct CropLauncher {
  CropIndex c;
  int64_t n;
  const void* src;
  void* dst;
  int req;
  cudaStream_t s;
  template <int R, typename T>
  void operator()() const {
    CropKernel<T><<<Blocks(n), kThreads, 0, s>>>(
        c, n, static_cast<const T*>(src), static_cast<T*>(dst), req);
  }
};

}  // namespace

cudaError_t LaunchCrop(int dtype, const CropIndex& c, const void* src,
                       void* dst, int req, cudaStream_t stream) {
  int64_t n = 1;
  for (int d = 0; d < c.ndim; ++d) n *= c.dst[d];
  if (n == 0 || req == MX_REQ_NULL) return cudaSuccess;
  return Dispatch(dtype, MX_REQ_WRITE,
                  CropLauncher{c, n, src, dst, req, stream});
}

}  // namespace mx_cuda
