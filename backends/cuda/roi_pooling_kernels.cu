// ROIPooling and its gradient (roi_align_kernels.h), with the CPU kernel's
// semantics (backends/cpu/roi_pooling_ops.cc): one thread per output bin;
// the gradient adds each bin's gradient at its argmax with double atomics
// into scratch, then writes it with the request.
#include "backends/common/mxnet_geometry.h"
#include "backends/cuda/kernel_util.cuh"
#include "backends/cuda/norm_util.cuh"
#include "backends/cuda/roi_align_kernels.h"

namespace mx_cuda {
namespace {

using namespace kernel;  // NOLINT: the shared kernel helpers.

// Bin (i, j) of the region in `roi` (mx_math's ROIPooling rules).
template <typename T>
__device__ mx_math::RoiRow WindowOf(const ROIPoolArgs& a, const T* roi,
                                    int64_t i, int64_t j, int64_t* image,
                                    mx_math::PixelWindow* win) {
  double row[5];
  for (int k = 0; k < 5; ++k) row[k] = static_cast<double>(roi[k]);
  mx_math::RoiPoolRegion region;
  const mx_math::RoiRow kind =
      mx_math::RoiPoolRegionOf(row, a.spatial_scale, a.n, a.ph, a.pw, &region);
  if (kind == mx_math::RoiRow::kRegion) {
    *image = region.image;
    *win = mx_math::RoiPoolBinOf(region, i, j, a.h, a.w);
  }
  return kind;
}

template <typename T>
__global__ void ROIPoolKernel(ROIPoolArgs a, const T* x, const T* rois, T* y,
                              int req, int32_t* argmax, int req_argmax,
                              unsigned long long* bad) {
  using A = typename Acc<T>::type;
  MX_CUDA_GRID_STRIDE(o, a.num_rois * a.c * a.ph * a.pw) {
    const int64_t j = o % a.pw, i = (o / a.pw) % a.ph;
    const int64_t ch = (o / (a.pw * a.ph)) % a.c, r = o / (a.pw * a.ph * a.c);
    int64_t image = 0;
    mx_math::PixelWindow win;
    const mx_math::RoiRow kind = WindowOf(a, rois + r * 5, i, j, &image, &win);
    if (kind == mx_math::RoiRow::kInvalid)
      atomicMin(bad, static_cast<unsigned long long>(r));
    A best = 0;
    int32_t at = -1;
    if (kind == mx_math::RoiRow::kRegion) {
      const T* p = x + (image * a.c + ch) * a.h * a.w;
      for (int64_t hh = win.h0; hh < win.h1; ++hh) {
        for (int64_t ww = win.w0; ww < win.w1; ++ww) {
          const int64_t off = hh * a.w + ww;
          const A v = Load(p, off);
          // The first maximum; NaN propagates, as in max.
          if (at < 0 || v > best || (IsNan(v) && !IsNan(best))) {
            best = v;
            at = static_cast<int32_t>(off);
          }
        }
      }
    }
    Put(y, o, req, best);
    if (req_argmax != MX_REQ_NULL) argmax[o] = at;
  }
}

template <typename T>
__global__ void ROIPoolGradKernel(ROIPoolArgs a, const T* og, const T* rois,
                                  const int32_t* argmax, double* acc) {
  MX_CUDA_GRID_STRIDE(o, a.num_rois * a.c * a.ph * a.pw) {
    const int32_t at = argmax[o];
    const int64_t ch = (o / (a.pw * a.ph)) % a.c, r = o / (a.pw * a.ph * a.c);
    const double bv = static_cast<double>(rois[r * 5]);
    if (at < 0 || at >= a.h * a.w || !(bv >= 0 && bv < a.n)) continue;
    const int64_t b = static_cast<int64_t>(bv);
    atomicAdd(acc + (b * a.c + ch) * a.h * a.w + at,
              static_cast<double>(Load(og, o)));
  }
}

struct ROIPoolLauncher {
  ROIPoolArgs a;
  const void *x, *og, *rois;
  int32_t* argmax;
  int req_argmax;
  void* y;
  int req;
  unsigned long long* bad;
  double* acc;  // Null: forward.
  cudaStream_t s;
  template <int R, typename T>
  void operator()() const {
    const int64_t bins = a.num_rois * a.c * a.ph * a.pw;
    const T* rt = static_cast<const T*>(rois);
    if (acc == nullptr) {
      ROIPoolKernel<T><<<Blocks(bins), kThreads, 0, s>>>(
          a, static_cast<const T*>(x), rt, static_cast<T*>(y), req, argmax,
          req_argmax, bad);
      return;
    }
    ScatterThroughDoubles(
        a.n * a.c * a.h * a.w, acc, static_cast<T*>(y), req, s, [&] {
          if (bins == 0) return;
          ROIPoolGradKernel<T><<<Blocks(bins), kThreads, 0, s>>>(
              a, static_cast<const T*>(og), rt, argmax, acc);
        });
  }
};

}  // namespace

cudaError_t LaunchROIPool(int dtype, const ROIPoolArgs& a, const void* x,
                          const void* rois, void* y, int req, int32_t* argmax,
                          int req_argmax, uint64_t* bad, cudaStream_t stream) {
  if (a.num_rois * a.c * a.ph * a.pw == 0) return cudaSuccess;
  return Dispatch(
      dtype, MX_REQ_WRITE,
      ROIPoolLauncher{a, x, nullptr, rois, argmax, req_argmax, y, req,
                      reinterpret_cast<unsigned long long*>(bad), nullptr,
                      stream});
}

cudaError_t LaunchROIPoolBackward(int dtype, const ROIPoolArgs& a,
                                  const void* og, const void* rois,
                                  const int32_t* argmax, void* dx, int req,
                                  void* scratch, cudaStream_t stream) {
  if (a.n * a.c * a.h * a.w == 0 || req == MX_REQ_NULL) return cudaSuccess;
  return Dispatch(
      dtype, MX_REQ_WRITE,
      ROIPoolLauncher{a, nullptr, og, rois, const_cast<int32_t*>(argmax),
                      MX_REQ_NULL, dx, req, nullptr,
                      static_cast<double*>(scratch), stream});
}

size_t ROIPoolGradScratchBytes(const ROIPoolArgs& a) {
  return static_cast<size_t>(a.n * a.c * a.h * a.w) * sizeof(double);
}

}  // namespace mx_cuda
