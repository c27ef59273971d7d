// The bilinear resize of resize_kernels.h: one thread per output pixel,
// taps from mx_math::BilinearTapOf as the CPU's; the gradient adds each
// output's four weighted contributions into a double buffer with atomics, then
// writes it with the request.
#include "backends/common/mxnet_geometry.h"
#include "backends/cuda/kernel_util.cuh"
#include "backends/cuda/norm_util.cuh"
#include "backends/cuda/resize_kernels.h"

namespace mx_cuda {
namespace {

using namespace kernel;  // NOLINT: the shared kernel helpers.

// Calls f(input offset in the plane, weight) for output pixel i's taps;
// returns i's plane.
template <typename F>
__device__ int64_t ForTaps(const ResizeShape& r, int64_t i, F f) {
  const int64_t x = i % r.out_w, y = (i / r.out_w) % r.out_h;
  const mx_math::BilinearTap ty =
      mx_math::BilinearTapOf(r.in_h, r.out_h, r.align_corners, y);
  const mx_math::BilinearTap tx =
      mx_math::BilinearTapOf(r.in_w, r.out_w, r.align_corners, x);
  const int64_t r0 = ty.lo * r.in_w, r1 = r0 + ty.step * r.in_w;
  const int64_t c0 = tx.lo, c1 = c0 + tx.step;
  f(r0 + c0, (1 - ty.frac) * (1 - tx.frac));
  f(r0 + c1, (1 - ty.frac) * tx.frac);
  f(r1 + c0, ty.frac * (1 - tx.frac));
  f(r1 + c1, ty.frac * tx.frac);
  return i / (r.out_w * r.out_h);
}

template <typename T>
__global__ void ResizeKernel(ResizeShape r, const T* x, T* y, int req) {
  using A = typename Acc<T>::type;
  const int64_t plane_in = r.in_h * r.in_w;
  MX_CUDA_GRID_STRIDE(i, r.planes * r.out_h * r.out_w) {
    const int64_t plane = i / (r.out_w * r.out_h);
    double sum = 0;
    ForTaps(r, i, [&](int64_t at, double w) {
      sum += w * static_cast<double>(Load(x, plane * plane_in + at));
    });
    Put(y, i, req, static_cast<A>(sum));
  }
}

template <typename T>
__global__ void ResizeGradKernel(ResizeShape r, const T* og, double* acc) {
  const int64_t plane_in = r.in_h * r.in_w;
  MX_CUDA_GRID_STRIDE(i, r.planes * r.out_h * r.out_w) {
    const double g = static_cast<double>(Load(og, i));
    const int64_t plane = i / (r.out_w * r.out_h);
    ForTaps(r, i, [&](int64_t at, double w) {
      atomicAdd(acc + plane * plane_in + at, g * w);
    });
  }
}

struct ResizeLauncher {
  ResizeShape r;
  const void* src;
  void* dst;
  int req;
  double* acc;  // Null: forward.
  cudaStream_t s;
  template <int R, typename T>
  void operator()() const {
    if (acc == nullptr) {
      ResizeKernel<T><<<Blocks(r.planes * r.out_h * r.out_w), kThreads, 0, s>>>(
          r, static_cast<const T*>(src), static_cast<T*>(dst), req);
      return;
    }
    const int64_t bins = r.planes * r.out_h * r.out_w;
    ScatterThroughDoubles(
        r.planes * r.in_h * r.in_w, acc, static_cast<T*>(dst), req, s, [&] {
          if (bins == 0) return;
          ResizeGradKernel<T><<<Blocks(bins), kThreads, 0, s>>>(
              r, static_cast<const T*>(src), acc);
        });
  }
};

}  // namespace

cudaError_t LaunchBilinearResize(int dtype, const ResizeShape& r, const void* x,
                                 void* y, int req, cudaStream_t stream) {
  if (r.planes * r.out_h * r.out_w == 0) return cudaSuccess;
  return Dispatch(dtype, MX_REQ_WRITE,
                  ResizeLauncher{r, x, y, req, nullptr, stream});
}

cudaError_t LaunchBilinearResizeBackward(int dtype, const ResizeShape& r,
                                         const void* og, void* dx, int req,
                                         double* acc, cudaStream_t stream) {
  if (r.planes * r.in_h * r.in_w == 0) return cudaSuccess;
  return Dispatch(dtype, MX_REQ_WRITE,
                  ResizeLauncher{r, og, dx, req, acc, stream});
}

}  // namespace mx_cuda
