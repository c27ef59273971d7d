// _contrib_ROIAlign and its gradient (roi_align_kernels.h): one thread
// per output bin; the gradient scatters with double atomics into scratch.
#include "backends/cuda/kernel_util.cuh"
#include "backends/cuda/norm_util.cuh"
#include "backends/cuda/roi_align_kernels.h"

namespace mx_cuda {
namespace {

using namespace kernel;  // NOLINT: the shared kernel helpers.

constexpr double kMaxSamplesPerSide = 1024;

// One bilinear sample: up to four (offset, weight) taps in an H x W plane.
struct Taps {
  int64_t off[4];
  double w[4];
  int n;
};

__device__ Taps Bilinear(double y, double x, int64_t h, int64_t w) {
  Taps t;
  t.n = 0;
  if (y < -1.0 || y > static_cast<double>(h) || x < -1.0 ||
      x > static_cast<double>(w)) {
    return t;
  }
  y = fmax(y, 0.0);
  x = fmax(x, 0.0);
  int64_t y0 = static_cast<int64_t>(y), x0 = static_cast<int64_t>(x), y1, x1;
  if (y0 >= h - 1) {
    y0 = y1 = h - 1;
    y = static_cast<double>(y0);
  } else {
    y1 = y0 + 1;
  }
  if (x0 >= w - 1) {
    x0 = x1 = w - 1;
    x = static_cast<double>(x0);
  } else {
    x1 = x0 + 1;
  }
  const double ly = y - y0, lx = x - x0, hy = 1 - ly, hx = 1 - lx;
  t.n = 4;
  t.off[0] = y0 * w + x0, t.w[0] = hy * hx;
  t.off[1] = y0 * w + x1, t.w[1] = hy * lx;
  t.off[2] = y1 * w + x0, t.w[2] = ly * hx;
  t.off[3] = y1 * w + x1, t.w[3] = ly * lx;
  return t;
}

// One region's sampling grid.
struct Roi {
  int64_t b, gh, gw;
  double x0, y0, bin_h, bin_w, inv_count;
};

enum class RoiStatus { kOk, kSkip, kBad };

template <typename T>
__device__ RoiStatus RoiOf(const ROIAlignArgs& a, const T* rois, int64_t r,
                           Roi* roi) {
  const double bv = static_cast<double>(Load(rois, r * 5));
  if (!(bv >= 0)) return RoiStatus::kSkip;  // MXNet: zeros.
  if (!(bv < static_cast<double>(a.n))) return RoiStatus::kBad;
  const double offset = a.aligned ? 0.5 : 0.0;
  const double x0 =
      static_cast<double>(Load(rois, r * 5 + 1)) * a.spatial_scale - offset;
  const double y0 =
      static_cast<double>(Load(rois, r * 5 + 2)) * a.spatial_scale - offset;
  double rw = static_cast<double>(Load(rois, r * 5 + 3)) * a.spatial_scale -
              offset - x0;
  double rh = static_cast<double>(Load(rois, r * 5 + 4)) * a.spatial_scale -
              offset - y0;
  if (!a.aligned) {
    rw = fmax(rw, 1.0);
    rh = fmax(rh, 1.0);
  }
  const double sh = a.sample_ratio > 0 ? static_cast<double>(a.sample_ratio)
                                       : ceil(rh / a.ph);
  const double sw = a.sample_ratio > 0 ? static_cast<double>(a.sample_ratio)
                                       : ceil(rw / a.pw);
  if (!(sh <= kMaxSamplesPerSide && sw <= kMaxSamplesPerSide) ||
      !isfinite(x0) || !isfinite(y0)) {
    return RoiStatus::kBad;
  }
  roi->b = static_cast<int64_t>(bv);
  roi->x0 = x0;
  roi->y0 = y0;
  roi->bin_h = rh / a.ph;
  roi->bin_w = rw / a.pw;
  roi->gh = static_cast<int64_t>(sh);
  roi->gw = static_cast<int64_t>(sw);
  const int64_t count = roi->gh * roi->gw;
  roi->inv_count = 1.0 / static_cast<double>(count > 1 ? count : 1);
  return RoiStatus::kOk;
}

// Calls f(plane offset, taps) for every sample of output bin o; false
// (and `bad` set) for an invalid roi.
template <typename T, typename F>
__device__ void ForEachSample(const ROIAlignArgs& a, const T* rois, int64_t o,
                              double* inv_count, unsigned long long* bad, F f) {
  const int64_t j = o % a.pw, i = (o / a.pw) % a.ph;
  const int64_t ch = (o / (a.pw * a.ph)) % a.out_c;
  const int64_t r = o / (a.pw * a.ph * a.out_c);
  Roi roi;
  const RoiStatus st = RoiOf(a, rois, r, &roi);
  *inv_count = 0;
  if (st == RoiStatus::kBad) atomicMin(bad, static_cast<unsigned long long>(r));
  if (st != RoiStatus::kOk) return;
  *inv_count = roi.inv_count;
  const int64_t in_c = a.position_sensitive ? (ch * a.ph + i) * a.pw + j : ch;
  const int64_t plane = (roi.b * a.c + in_c) * a.h * a.w;
  for (int64_t sy = 0; sy < roi.gh; ++sy) {
    const double y = roi.y0 + i * roi.bin_h + (sy + 0.5) * roi.bin_h / roi.gh;
    for (int64_t sx = 0; sx < roi.gw; ++sx) {
      const double x = roi.x0 + j * roi.bin_w + (sx + 0.5) * roi.bin_w / roi.gw;
      f(plane, Bilinear(y, x, a.h, a.w));
    }
  }
}

template <typename T>
__global__ void ROIAlignKernel(ROIAlignArgs a, const T* x, const T* rois, T* y,
                               int req, unsigned long long* bad) {
  using A = typename Acc<T>::type;
  MX_CUDA_GRID_STRIDE(o, a.num_rois * a.out_c * a.ph * a.pw) {
    double sum = 0, inv_count;
    ForEachSample(
        a, rois, o, &inv_count, bad, [&](int64_t plane, const Taps& t) {
          for (int k = 0; k < t.n; ++k) {
            sum += t.w[k] * static_cast<double>(Load(x, plane + t.off[k]));
          }
        });
    Put(y, o, req, static_cast<A>(sum * inv_count));
  }
}

template <typename T>
__global__ void ROIAlignGradKernel(ROIAlignArgs a, const T* og, const T* rois,
                                   double* acc, unsigned long long* bad) {
  MX_CUDA_GRID_STRIDE(o, a.num_rois * a.out_c * a.ph * a.pw) {
    const double g = static_cast<double>(Load(og, o));
    double inv_count;
    ForEachSample(a, rois, o, &inv_count, bad,
                  [&](int64_t plane, const Taps& t) {
                    for (int k = 0; k < t.n; ++k) {
                      atomicAdd(acc + plane + t.off[k], g * t.w[k] * inv_count);
                    }
                  });
  }
}

struct ROIAlignLauncher {
  ROIAlignArgs a;
  const void *x, *og, *rois;
  void* y;
  int req;
  unsigned long long* bad;
  double* acc;
  cudaStream_t s;
  template <int R, typename T>
  void operator()() const {
    const int64_t bins = a.num_rois * a.out_c * a.ph * a.pw;
    const T* rt = static_cast<const T*>(rois);
    if (og == nullptr) {
      ROIAlignKernel<T><<<Blocks(bins), kThreads, 0, s>>>(
          a, static_cast<const T*>(x), rt, static_cast<T*>(y), req, bad);
      return;
    }
    ScatterThroughDoubles(
        a.n * a.c * a.h * a.w, acc, static_cast<T*>(y), req, s, [&] {
          if (bins == 0) return;
          ROIAlignGradKernel<T><<<Blocks(bins), kThreads, 0, s>>>(
              a, static_cast<const T*>(og), rt, acc, bad);
        });
  }
};

}  // namespace

cudaError_t LaunchROIAlign(int dtype, const ROIAlignArgs& a, const void* x,
                           const void* rois, void* y, int req, uint64_t* bad,
                           cudaStream_t stream) {
  if (a.num_rois * a.out_c * a.ph * a.pw == 0 || req == MX_REQ_NULL) {
    return cudaSuccess;
  }
  return Dispatch(dtype, MX_REQ_WRITE,
                  ROIAlignLauncher{a, x, nullptr, rois, y, req,
                                   reinterpret_cast<unsigned long long*>(bad),
                                   nullptr, stream});
}

cudaError_t LaunchROIAlignBackward(int dtype, const ROIAlignArgs& a,
                                   const void* og, const void* rois, void* dx,
                                   int req, uint64_t* bad, void* scratch,
                                   cudaStream_t stream) {
  if (a.n * a.c * a.h * a.w == 0 || req == MX_REQ_NULL) return cudaSuccess;
  return Dispatch(dtype, MX_REQ_WRITE,
                  ROIAlignLauncher{a, nullptr, og, rois, dx, req,
                                   reinterpret_cast<unsigned long long*>(bad),
                                   static_cast<double*>(scratch), stream});
}

size_t ROIAlignGradScratchBytes(const ROIAlignArgs& a) {
  return static_cast<size_t>(a.n * a.c * a.h * a.w) * sizeof(double);
}

}  // namespace mx_cuda
