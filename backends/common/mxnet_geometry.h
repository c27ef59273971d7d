// MXNet's geometry rules for the resize, ROI and SSD ops (anchors, box
// decoding and encoding, overlaps), shared by mxcore's CPU kernels and the
// CUDA plugin's so both read the same pixels and match the same boxes:
// host code, and device code where nvcc compiles it. Header-only, plain
// math (no mxcore or plugin types); mxnet_geometry_test.cc checks them on
// the host.
//
//   mx_math::BilinearTapOf(4, 8, true, 3);   // {lo 1, step 1, frac 2/7}
//   mx_math::RoiPoolRegion r;
//   double row[5] = {0, 0, 0, 7, 7};
//   mx_math::RoiPoolRegionOf(row, 1.0, 1, 2, 2, &r);  // kRegion
//   mx_math::RoiPoolBinOf(r, 1, 0, 8, 8);    // rows [4, 8), cols [0, 4)
#ifndef MXCORE_BACKENDS_COMMON_MXNET_GEOMETRY_H_
#define MXCORE_BACKENDS_COMMON_MXNET_GEOMETRY_H_

#include <float.h>
#include <math.h>
#include <stdint.h>

#include "backends/common/host_device.h"

namespace mx_math {

// Bilinear resize (_contrib_BilinearResize2D, UpSampling's bilinear mode
// follows it): output index `o` of `out` along an axis of `in` pixels reads
// pixel `lo` with weight 1 - frac and pixel lo + step with weight frac
// (step 0 at the last pixel). MXNet's area_pixel_compute_scale: the scale
// is 0 for a single output pixel, which then reads the first input pixel in
// both modes; half-pixel centres below 0 clamp to 0.
struct BilinearTap {
  int64_t lo;
  int64_t step;
  double frac;
};

MX_HOST_DEVICE inline BilinearTap BilinearTapOf(int64_t in, int64_t out,
                                                bool align_corners, int64_t o) {
  double scale = 0;
  if (out > 1) {
    scale = align_corners ? static_cast<double>(in - 1) / (out - 1)
                          : static_cast<double>(in) / out;
  }
  double src = align_corners ? scale * o : scale * (o + 0.5) - 0.5;
  if (src < 0) src = 0;
  int64_t lo = static_cast<int64_t>(src);
  if (lo > in - 1) lo = in - 1;
  return BilinearTap{lo, lo < in - 1 ? 1 : 0, src - lo};
}

// ROIPooling (Fast R-CNN, MXNet's): a rois row (batch index, x1, y1, x2, y2)
// is scaled by spatial_scale and rounded half away from zero; the region is
// at least one pixel high and wide and split into ph x pw bins.
enum class RoiRow {
  kRegion,   // A region of image `image`.
  kPadding,  // A negative batch index: the row's outputs are zeros.
  kInvalid,  // NaN or out-of-range batch index, non-finite or huge corners.
};

struct RoiPoolRegion {
  int64_t image;
  double x0, y0;        // The top-left pixel, unclamped.
  double bin_h, bin_w;  // One bin's extent in pixels.
};

MX_HOST_DEVICE inline bool IsFiniteDouble(double v) {
  return v == v && ::fabs(v) <= DBL_MAX;
}

MX_HOST_DEVICE inline RoiRow RoiPoolRegionOf(const double row[5],
                                             double spatial_scale,
                                             int64_t num_images, int64_t ph,
                                             int64_t pw,
                                             RoiPoolRegion* region) {
  const double batch = row[0];
  if (batch < 0) return RoiRow::kPadding;
  double c[4];  // x1, y1, x2, y2 in data's pixels.
  for (int k = 0; k < 4; ++k) c[k] = ::round(row[k + 1] * spatial_scale);
  // 1e15 keeps every bin edge an exact integer-valued double.
  if (!(batch < static_cast<double>(num_images)) || !IsFiniteDouble(c[0]) ||
      !IsFiniteDouble(c[1]) || !IsFiniteDouble(c[2]) || !IsFiniteDouble(c[3]) ||
      ::fabs(c[2] - c[0]) > 1e15 || ::fabs(c[3] - c[1]) > 1e15) {
    return RoiRow::kInvalid;
  }
  region->image = static_cast<int64_t>(batch);
  region->x0 = c[0];
  region->y0 = c[1];
  region->bin_h = ::fmax(c[3] - c[1] + 1, 1.0) / ph;
  region->bin_w = ::fmax(c[2] - c[0] + 1, 1.0) / pw;
  return RoiRow::kRegion;
}

// Bin (i, j)'s window [h0, h1) x [w0, w1) of an height x width plane:
// floor of the bin's start, ceil of its end, clamped to the plane (empty
// where the bin lies outside it).
struct PixelWindow {
  int64_t h0, h1, w0, w1;
};

MX_HOST_DEVICE inline int64_t ClampPixel(double v, int64_t extent) {
  return static_cast<int64_t>(
      ::fmin(::fmax(v, 0.0), static_cast<double>(extent)));
}

MX_HOST_DEVICE inline PixelWindow RoiPoolBinOf(const RoiPoolRegion& r,
                                               int64_t i, int64_t j,
                                               int64_t height, int64_t width) {
  return PixelWindow{ClampPixel(::floor(i * r.bin_h) + r.y0, height),
                     ClampPixel(::ceil((i + 1) * r.bin_h) + r.y0, height),
                     ClampPixel(::floor(j * r.bin_w) + r.x0, width),
                     ClampPixel(::ceil((j + 1) * r.bin_w) + r.x0, width)};
}

// MultiBoxPrior's anchor `a` of a cell of a height x width feature map
// (a < num_sizes + num_ratios - 1): sizes[a] with ratios[0] for the first
// num_sizes anchors, then sizes[0] with ratios[a - num_sizes + 1]. A box of
// size s and ratio q (width / height) has half-width s * H / W * sqrt(q) / 2
// and half-height s / sqrt(q) / 2, in the map's [0, 1] coordinates.
struct AnchorHalfExtent {
  double w, h;
};

MX_HOST_DEVICE inline AnchorHalfExtent AnchorHalfExtentOf(
    const double* sizes, int64_t num_sizes, const double* ratios, int64_t a,
    int64_t height, int64_t width) {
  const double size = a < num_sizes ? sizes[a] : sizes[0];
  const double q =
      ::sqrt(a < num_sizes ? ratios[0] : ratios[a - num_sizes + 1]);
  return AnchorHalfExtent{size * height / width * q / 2, size / q / 2};
}

// MultiBoxDetection's box decoding (SSD), in MXNet's arithmetic type A
// (float for float16/float32, double for float64): the anchor's corners
// (x0, y0, x1, y1) and the predicted offsets (dx, dy, dw, dh) with
// variances (vx, vy, vw, vh) give centre (dx vx w + cx, dy vy h + cy) and
// half extents exp(dw vw) w / 2, exp(dh vh) h / 2; `clip` clamps each corner
// to [0, 1] with std::min/max's comparisons (a NaN corner becomes 1).
template <typename A>
MX_HOST_DEVICE inline void DecodeSsdBox(const A anchor[4], const A loc[4],
                                        const A variances[4], bool clip,
                                        A out[4]) {
  const A aw = anchor[2] - anchor[0], ah = anchor[3] - anchor[1];
  const A ax = (anchor[0] + anchor[2]) / 2, ay = (anchor[1] + anchor[3]) / 2;
  const A ox = loc[0] * variances[0] * aw + ax;
  const A oy = loc[1] * variances[1] * ah + ay;
  const A ow = ::exp(loc[2] * variances[2]) * aw / 2;
  const A oh = ::exp(loc[3] * variances[3]) * ah / 2;
  const A corners[4] = {ox - ow, oy - oh, ox + ow, oy + oh};
  for (int k = 0; k < 4; ++k) {
    A v = corners[k];
    if (clip) {
      v = v < A(1) ? v : A(1);  // std::min(1, v)
      v = A(0) < v ? v : A(0);  // std::max(0, v)
    }
    out[k] = v;
  }
}

// MultiBoxDetection's overlap of two corner boxes: intersection over union,
// 0 where the union is not positive (MXNet's CalculateOverlap, in A).
template <typename A>
MX_HOST_DEVICE inline A SsdOverlap(const A a[4], const A b[4]) {
  const A right = b[2] < a[2] ? b[2] : a[2], left = a[0] < b[0] ? b[0] : a[0];
  const A bottom = b[3] < a[3] ? b[3] : a[3], top = a[1] < b[1] ? b[1] : a[1];
  const A w = A(0) < right - left ? right - left : A(0);
  const A h = A(0) < bottom - top ? bottom - top : A(0);
  const A i = w * h;
  const A u = (a[2] - a[0]) * (a[3] - a[1]) + (b[2] - b[0]) * (b[3] - b[1]) - i;
  return u <= A(0) ? A(0) : i / u;
}

// MultiBoxTarget's overlap of an anchor and a ground-truth box, in A, with
// mshadow's minimum/maximum comparisons: intersection / union with no guard
// (MXNet's; a degenerate pair gives NaN or inf, which the matching's strict
// comparisons then pass over).
template <typename A>
MX_HOST_DEVICE inline A SsdTargetOverlap(const A a[4], const A b[4]) {
  const A right = a[2] < b[2] ? a[2] : b[2], left = a[0] > b[0] ? a[0] : b[0];
  const A bottom = a[3] < b[3] ? a[3] : b[3], top = a[1] > b[1] ? a[1] : b[1];
  const A w = A(0) > right - left ? A(0) : right - left;  // maximum(0, .)
  const A h = A(0) > bottom - top ? A(0) : bottom - top;
  const A i = w * h;
  return i /
         ((a[2] - a[0]) * (a[3] - a[1]) + (b[2] - b[0]) * (b[3] - b[1]) - i);
}

// MultiBoxTarget's regression target of ground truth `gt` for `anchor`
// (both corners), in float as MXNet's: centre offsets over the anchor's
// size and log size ratios, each divided by its variance. The inverse of
// DecodeSsdBox.
MX_HOST_DEVICE inline void EncodeSsdBox(const float anchor[4],
                                        const float gt[4],
                                        const float variances[4],
                                        float out[4]) {
  const float aw = anchor[2] - anchor[0], ah = anchor[3] - anchor[1];
  const float ax = (anchor[0] + anchor[2]) * 0.5f;
  const float ay = (anchor[1] + anchor[3]) * 0.5f;
  const float gw = gt[2] - gt[0], gh = gt[3] - gt[1];
  const float gx = (gt[0] + gt[2]) * 0.5f, gy = (gt[1] + gt[3]) * 0.5f;
  out[0] = (gx - ax) / aw / variances[0];
  out[1] = (gy - ay) / ah / variances[1];
  out[2] = ::logf(gw / aw) / variances[2];
  out[3] = ::logf(gh / ah) / variances[3];
}

// The background probability (class 0's softmax) of anchor j from class
// scores value(k), k in [0, classes), in A as MXNet's negative mining.
template <typename A, typename F>
MX_HOST_DEVICE inline A SsdBackgroundProb(int64_t classes, F value) {
  A hi = value(0);
  for (int64_t k = 1; k < classes; ++k) {
    const A v = value(k);
    if (v > hi) hi = v;
  }
  A sum = 0;
  for (int64_t k = 0; k < classes; ++k) sum += ::exp(value(k) - hi);
  return ::exp(value(0) - hi) / sum;
}

}  // namespace mx_math

#endif  // MXCORE_BACKENDS_COMMON_MXNET_GEOMETRY_H_
