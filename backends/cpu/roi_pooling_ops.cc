// ROIPooling, as MXNet's (Fast/Faster R-CNN): each region (batch_index,
// x1, y1, x2, y2) of rois, scaled by spatial_scale and rounded, is split
// into pooled_size bins and each bin takes its maximum (0 for an empty
// bin). A hidden second output keeps each bin's argmax (int32, the offset
// in its H x W plane, -1 for none), so the gradient
// (_backward_ROIPooling) scatters instead of searching again. A negative
// batch index gives zeros (padded region lists, as ROIAlign here); one
// past the images is an InvalidArgument.
#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "backends/common/mxnet_geometry.h"
#include "backends/cpu/grad_util.h"
#include "backends/cpu/kernel_util.h"
#include "backends/cpu/like_input_op.h"
#include "base/error.h"

namespace mx {
namespace cpu {
namespace {

struct ROIPoolingParam {
  TShape pooled_size;
  double spatial_scale = 0;
  static void Declare(ParamSchema<ROIPoolingParam>* s) {
    s->Field("pooled_size", &ROIPoolingParam::pooled_size)
        .Required()
        .Describe("(h, w) bins per region.");
    s->Field("spatial_scale", &ROIPoolingParam::spatial_scale)
        .Required()
        .Describe("Maps roi coordinates to data's (1 / feature stride).");
  }
};

std::pair<int64_t, int64_t> Pooled(const NodeAttrs& attrs) {
  const ROIPoolingParam& p = attrs.get<ROIPoolingParam>();
  const auto pooled = TwoExtents(attrs, "pooled_size", p.pooled_size);
  if (!(p.spatial_scale > 0) || !std::isfinite(p.spatial_scale)) {
    throw InvalidArgument(absl::StrCat(
        OpLabel(attrs), ": spatial_scale=", p.spatial_scale, " must be > 0"));
  }
  return pooled;
}

// Shapes of (data, rois) -> (output, argmax).
void ROIPoolingShape(const NodeAttrs& attrs, std::vector<TShape>* in,
                     std::vector<TShape>* out) {
  const auto [ph, pw] = Pooled(attrs);
  const TShape &d = (*in)[0], &r = (*in)[1];
  if (d.ndim_known() && d.ndim() != 4) {
    throw ShapeError(absl::StrCat(OpLabel(attrs), ": input 0 (data) has shape ",
                                  d.ToString(), " but NCHW is required"));
  }
  AssignShape(attrs, in, 1, TShape{-1, 5}, false);
  if (!d.ndim_known() || !r.ndim_known()) return;
  const TShape o{r[0], d[1], ph, pw};
  AssignShape(attrs, out, 0, o, true);
  AssignShape(attrs, out, 1, o, true);
}

// Calls f(r, image, bins) for each region row of rois (padding rows, with a
// negative batch index, skipped), bins indexed [ph][pw] (mx_math's
// ROIPooling rules).
template <typename T, typename F>
void ForEachRegion(const NodeAttrs& attrs, const TShape& data, const T* rois,
                   int64_t num_rois, F f) {
  const double scale = attrs.get<ROIPoolingParam>().spatial_scale;
  const auto [ph, pw] = Pooled(attrs);
  const int64_t n = data[0], h = data[2], w = data[3];
  std::vector<mx_math::PixelWindow> bins(ph * pw);
  for (int64_t r = 0; r < num_rois; ++r) {
    double row[5];
    for (int k = 0; k < 5; ++k) row[k] = static_cast<double>(rois[r * 5 + k]);
    mx_math::RoiPoolRegion region;
    const mx_math::RoiRow kind =
        mx_math::RoiPoolRegionOf(row, scale, n, ph, pw, &region);
    if (kind == mx_math::RoiRow::kPadding) continue;  // Zeros.
    if (kind == mx_math::RoiRow::kInvalid) {
      throw InvalidArgument(absl::StrCat(
          OpLabel(attrs), ": input 1 (rois) row ", r, " (batch index ", row[0],
          ") is not a finite region of one of data's ", n, " images"));
    }
    for (int64_t i = 0; i < ph; ++i) {
      for (int64_t j = 0; j < pw; ++j) {
        bins[i * pw + j] = mx_math::RoiPoolBinOf(region, i, j, h, w);
      }
    }
    f(r, region.image, bins);
  }
}

void ROIPoolingCompute(const OpContext&, const NodeAttrs& attrs,
                       const std::vector<TBlob>& in,
                       const std::vector<OpReqType>& req,
                       const std::vector<TBlob>& out) {
  const TShape& d = in[0].shape;
  const int64_t c = d[1], plane = d[2] * d[3];
  const int64_t num_rois = in[1].shape[0];
  const int64_t bins_per_roi = out[0].shape[2] * out[0].shape[3];
  MX_FLOAT_DTYPE_SWITCH(in[0].dtype, T, {
    using A = AccType<T>;
    const T* x = in[0].data<T>();
    T* y = out[0].data<T>();
    int32_t* argmax = out[1].data<int32_t>();
    // Regions skipped (negative batch index) give 0 and -1.
    const auto writes = [](OpReqType r) {
      return r == OpReqType::kWriteTo || r == OpReqType::kWriteInplace;
    };
    if (writes(req[0])) std::fill(y, y + out[0].Size(), T{});
    if (writes(req[1])) std::fill(argmax, argmax + out[1].Size(), -1);
    ForEachRegion(attrs, d, in[1].data<T>(), num_rois,
                  [&](int64_t r, int64_t b,
                      const std::vector<mx_math::PixelWindow>& bins) {
                    ParallelFor(c, 1, [&](int64_t cb, int64_t ce) {
                      for (int64_t ch = cb; ch < ce; ++ch) {
                        const T* p = x + (b * c + ch) * plane;
                        const int64_t o0 = (r * c + ch) * bins_per_roi;
                        for (int64_t k = 0; k < bins_per_roi; ++k) {
                          const mx_math::PixelWindow& bin = bins[k];
                          A best = 0;
                          int32_t at = -1;
                          for (int64_t hh = bin.h0; hh < bin.h1; ++hh) {
                            for (int64_t ww = bin.w0; ww < bin.w1; ++ww) {
                              const int64_t off = hh * d[3] + ww;
                              const A v = static_cast<A>(p[off]);
                              // The first maximum; NaN propagates, as in max.
                              if (at < 0 || v > best ||
                                  (std::isnan(static_cast<double>(v)) &&
                                   !std::isnan(static_cast<double>(best)))) {
                                best = v;
                                at = static_cast<int32_t>(off);
                              }
                            }
                          }
                          Assign(y + o0 + k, req[0], best);
                          if (req[1] != OpReqType::kNullOp) argmax[o0 + k] = at;
                        }
                      }
                    });
                  });
  });
}

MX_REGISTER_OP(ROIPooling)
    .Describe(
        "Max pooling of each region (batch_index, x1, y1, x2, y2) of rois "
        "into pooled_size bins (MXNet's ROIPooling); hidden output: argmax.")
    .SetNumInputs(2)
    .SetInputNames({"data", "rois"})
    .SetNumOutputs(2)
    .SetOutputNames({"output", "argmax"})
    .SetNumVisibleOutputs([](const NodeAttrs&) { return 1; })
    .SetParams<ROIPoolingParam>()
    .SetInferShape(ROIPoolingShape)
    .SetInferType([](const NodeAttrs& attrs, std::vector<DType>* in,
                     std::vector<DType>* out) {
      std::vector<DType> out0{(*out)[0]};
      SameFloatType(attrs, in, &out0);
      AssignType(attrs, out, 0, out0[0], true);
      AssignType(attrs, out, 1, DType::kInt32, true);
    })
    .SetCompute(Context::kCPU, ROIPoolingCompute);

// (out_grad, data, rois, argmax) -> (data_grad, rois_grad = 0): each bin's
// gradient goes to its argmax, summed per channel in double.
void ROIPoolingBackwardCompute(const OpContext&, const NodeAttrs&,
                               const std::vector<TBlob>& in,
                               const std::vector<OpReqType>& req,
                               const std::vector<TBlob>& out) {
  const TShape& d = in[1].shape;
  const int64_t n = d[0], c = d[1], plane = d[2] * d[3];
  const int64_t num_rois = in[2].shape[0];
  const int64_t bins_per_roi = in[0].shape[2] * in[0].shape[3];
  MX_FLOAT_DTYPE_SWITCH(in[1].dtype, T, {
    using A = AccType<T>;
    const T* og = in[0].data<T>();
    const T* rois = in[2].data<T>();
    const int32_t* argmax = in[3].data<int32_t>();
    if (req[0] != OpReqType::kNullOp) {
      T* dx = out[0].data<T>();
      ParallelFor(c, 1, [&](int64_t cb, int64_t ce) {
        std::vector<double> acc(n * plane);
        for (int64_t ch = cb; ch < ce; ++ch) {
          std::fill(acc.begin(), acc.end(), 0.0);
          for (int64_t r = 0; r < num_rois; ++r) {
            const double bv = static_cast<double>(rois[r * 5]);
            if (!(bv >= 0 && bv < static_cast<double>(n))) continue;
            const int64_t b = static_cast<int64_t>(bv);
            const int64_t o0 = (r * c + ch) * bins_per_roi;
            for (int64_t k = 0; k < bins_per_roi; ++k) {
              const int32_t at = argmax[o0 + k];
              if (at < 0 || at >= plane) continue;
              acc[b * plane + at] +=
                  static_cast<double>(static_cast<A>(og[o0 + k]));
            }
          }
          for (int64_t b = 0; b < n; ++b) {
            for (int64_t i = 0; i < plane; ++i) {
              Assign(dx + (b * c + ch) * plane + i, req[0],
                     static_cast<A>(acc[b * plane + i]));
            }
          }
        }
      });
    }
  });
  ZeroLikeGradient(req, out);  // rois get none.
}

MX_REGISTER_OP(_backward_ROIPooling)
    .Describe(
        "Gradient of ROIPooling: (out_grad, data, rois, argmax) -> "
        "(data_grad, zeros for rois).")
    .SetNumInputs(4)
    .SetInputNames({"out_grad", "data", "rois", "argmax"})
    .SetNumOutputs(2)
    .SetParams<ROIPoolingParam>()
    .SetInferShape([](const NodeAttrs& attrs, std::vector<TShape>* in,
                      std::vector<TShape>* out) {
      std::vector<TShape> fwd_in{(*in)[1], (*in)[2]};
      std::vector<TShape> fwd_out{(*in)[0], (*in)[3]};
      ROIPoolingShape(attrs, &fwd_in, &fwd_out);
      AssignShape(attrs, in, 0, fwd_out[0], false);
      AssignShape(attrs, in, 3, fwd_out[1], false);
      AssignShape(attrs, out, 0, (*in)[1], true);
      AssignShape(attrs, out, 1, (*in)[2], true);
    })
    .SetInferType([](const NodeAttrs& attrs, std::vector<DType>* in,
                     std::vector<DType>* out) {
      std::vector<DType> values{(*in)[0], (*in)[1], (*in)[2]};
      SameFloatType(attrs, &values, out);
      for (int k = 0; k < 3; ++k) AssignType(attrs, in, k, values[k], false);
      AssignType(attrs, in, 3, DType::kInt32, false);
    })
    .SetCompute(Context::kCPU, ROIPoolingBackwardCompute);

[[maybe_unused]] const bool kGradientRegistered = [] {
  // The argmax output gets no gradient (it is an index).
  SetGradient(
      "ROIPooling", [](GradBuilder& b, const std::vector<NodeEntry>& g) {
        return OutputsOf(b.Op("_backward_ROIPooling",
                              {g[0], b.x(0), b.x(1), b.y(1)}, b.n->attrs.dict),
                         2);
      });
  return true;
}();

}  // namespace
}  // namespace cpu
}  // namespace mx
