// _contrib_ROIAlign: for each region (batch_index, x1, y1, x2, y2) of
// rois, the average of bilinear samples of data on a regular grid inside
// each of pooled_size bins, as MXNet's ROIAlign (Mask R-CNN). The
// gradient (_backward_contrib_ROIAlign) spreads each output gradient back
// through the same bilinear weights; rois get none.
#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "backends/cpu/grad_util.h"
#include "backends/cpu/kernel_util.h"
#include "base/error.h"

namespace mx {
namespace cpu {
namespace {

struct ROIAlignParam {
  TShape pooled_size;
  double spatial_scale = 0;
  int64_t sample_ratio = -1;
  bool position_sensitive = false;
  bool aligned = false;
  static void Declare(ParamSchema<ROIAlignParam>* s) {
    s->Field("pooled_size", &ROIAlignParam::pooled_size)
        .Required()
        .Describe("(h, w) bins per region.");
    s->Field("spatial_scale", &ROIAlignParam::spatial_scale)
        .Required()
        .Describe("Maps roi coordinates to data's (1 / feature stride).");
    s->Field("sample_ratio", &ROIAlignParam::sample_ratio)
        .Describe("Samples per bin side; <= 0: ceil(bin size).");
    s->Field("position_sensitive", &ROIAlignParam::position_sensitive)
        .Describe(
            "Bin (i, j) of output channel c reads channel "
            "(c * h + i) * w + j.");
    s->Field("aligned", &ROIAlignParam::aligned)
        .Describe("Shift coordinates by half a pixel.");
  }
};

std::pair<int64_t, int64_t> Pooled(const NodeAttrs& attrs) {
  return TwoExtents(attrs, "pooled_size",
                    attrs.get<ROIAlignParam>().pooled_size);
}

void ROIAlignShape(const NodeAttrs& attrs, std::vector<TShape>* in,
                   std::vector<TShape>* out) {
  const auto [ph, pw] = Pooled(attrs);
  const ROIAlignParam& p = attrs.get<ROIAlignParam>();
  const TShape &d = (*in)[0], &r = (*in)[1];
  if (d.ndim_known() && d.ndim() != 4) {
    throw ShapeError(absl::StrCat(OpLabel(attrs), ": input 0 (data) has shape ",
                                  d.ToString(), " but NCHW is required"));
  }
  AssignShape(attrs, in, 1, TShape{-1, 5}, false);
  if (!d.ndim_known() || !r.ndim_known()) return;
  int64_t c = d[1];
  if (p.position_sensitive && c >= 0) {
    if (c % (ph * pw) != 0) {
      throw ShapeError(absl::StrCat(
          OpLabel(attrs), ": input 0 (data) has ", c,
          " channels, which position_sensitive needs divisible by ", ph * pw));
    }
    c /= ph * pw;
  }
  AssignShape(attrs, out, 0, TShape{(*in)[1][0], c, ph, pw}, true);
}

constexpr double kMaxSamplesPerSide = 1024;

// One bilinear sample: up to four (offset, weight) taps in an H x W plane.
struct Taps {
  int64_t off[4];
  double w[4];
  int n = 0;
};

Taps Bilinear(double y, double x, int64_t h, int64_t w) {
  Taps t;
  if (y < -1.0 || y > static_cast<double>(h) || x < -1.0 ||
      x > static_cast<double>(w)) {
    return t;
  }
  y = std::max(y, 0.0);
  x = std::max(x, 0.0);
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

// Calls f(output index, input plane offset, taps, 1 / samples) for every
// sample of every output bin.
template <typename T, typename F>
void ForEachSample(const NodeAttrs& attrs, const TShape& data, const T* rois,
                   int64_t num_rois, int64_t out_c, F f) {
  const ROIAlignParam& p = attrs.get<ROIAlignParam>();
  const auto [ph, pw] = Pooled(attrs);
  const int64_t n = data[0], c = data[1], h = data[2], w = data[3];
  const double offset = p.aligned ? 0.5 : 0.0;
  for (int64_t r = 0; r < num_rois; ++r) {
    const T* roi = rois + r * 5;
    const double bv = static_cast<double>(roi[0]);
    if (!(bv >= 0)) continue;  // MXNet: a negative batch index gives zeros.
    if (!(bv < static_cast<double>(n))) {
      throw InvalidArgument(absl::StrCat(
          OpLabel(attrs), ": input 1 (rois) row ", r, " has batch index ", bv,
          " but data holds ", n, " images"));
    }
    const int64_t b = static_cast<int64_t>(bv);
    const double x0 = static_cast<double>(roi[1]) * p.spatial_scale - offset;
    const double y0 = static_cast<double>(roi[2]) * p.spatial_scale - offset;
    double rw = static_cast<double>(roi[3]) * p.spatial_scale - offset - x0;
    double rh = static_cast<double>(roi[4]) * p.spatial_scale - offset - y0;
    if (!p.aligned) {
      rw = std::max(rw, 1.0);
      rh = std::max(rh, 1.0);
    }
    const double bin_h = rh / ph, bin_w = rw / pw;
    // Samples per bin side: bounded, so that a hostile roi or sample_ratio
    // cannot make the loops endless (or the int conversion undefined).
    const double sh = p.sample_ratio > 0 ? static_cast<double>(p.sample_ratio)
                                         : std::ceil(rh / ph);
    const double sw = p.sample_ratio > 0 ? static_cast<double>(p.sample_ratio)
                                         : std::ceil(rw / pw);
    if (!(sh <= kMaxSamplesPerSide && sw <= kMaxSamplesPerSide) ||
        !std::isfinite(x0) || !std::isfinite(y0)) {
      throw InvalidArgument(absl::StrCat(
          OpLabel(attrs), ": input 1 (rois) row ", r, " (scaled by ",
          p.spatial_scale, ") with sample_ratio=", p.sample_ratio, " needs ",
          sh, " x ", sw, " samples per bin; at most ", kMaxSamplesPerSide,
          " per side are allowed"));
    }
    const int64_t gh = static_cast<int64_t>(sh), gw = static_cast<int64_t>(sw);
    const double inv_count = 1.0 / std::max<int64_t>(gh * gw, 1);
    for (int64_t ch = 0; ch < out_c; ++ch) {
      for (int64_t i = 0; i < ph; ++i) {
        for (int64_t j = 0; j < pw; ++j) {
          const int64_t in_c =
              p.position_sensitive ? (ch * ph + i) * pw + j : ch;
          const int64_t plane = (b * c + in_c) * h * w;
          const int64_t o = ((r * out_c + ch) * ph + i) * pw + j;
          for (int64_t sy = 0; sy < gh; ++sy) {
            const double y = y0 + i * bin_h + (sy + 0.5) * bin_h / gh;
            for (int64_t sx = 0; sx < gw; ++sx) {
              const double x = x0 + j * bin_w + (sx + 0.5) * bin_w / gw;
              f(o, plane, Bilinear(y, x, h, w), inv_count);
            }
          }
        }
      }
    }
  }
}

void ROIAlignCompute(const OpContext&, const NodeAttrs& attrs,
                     const std::vector<TBlob>& in,
                     const std::vector<OpReqType>& req,
                     const std::vector<TBlob>& out) {
  if (req[0] == OpReqType::kNullOp) return;
  MX_FLOAT_DTYPE_SWITCH(in[0].dtype, T, {
    using A = AccType<T>;
    const T* x = in[0].data<T>();
    std::vector<double> y(static_cast<size_t>(out[0].Size()), 0.0);
    ForEachSample(
        attrs, in[0].shape, in[1].data<T>(), in[1].shape[0], out[0].shape[1],
        [&](int64_t o, int64_t plane, const Taps& t, double scale) {
          for (int k = 0; k < t.n; ++k) {
            y[o] += scale * t.w[k] * static_cast<double>(x[plane + t.off[k]]);
          }
        });
    T* dst = out[0].data<T>();
    for (size_t i = 0; i < y.size(); ++i) {
      Assign(dst + i, req[0], static_cast<A>(y[i]));
    }
  });
}

MX_REGISTER_OP(_contrib_ROIAlign)
    .Describe(
        "Bilinearly sampled average pooling of each region of rois "
        "(batch_index, x1, y1, x2, y2) into pooled_size bins.")
    .SetNumInputs(2)
    .SetInputNames({"data", "rois"})
    .SetParams<ROIAlignParam>()
    .SetInferShape(ROIAlignShape)
    .SetInferType([](const NodeAttrs& attrs, std::vector<DType>* in,
                     std::vector<DType>* out) {
      SameType(attrs, in, out);
      if ((*in)[0] != DType::kUnknown) RequireFloat(attrs, (*in)[0]);
    })
    .SetCompute(Context::kCPU, ROIAlignCompute);

// Inputs (out_grad, data, rois); output data_grad.
void ROIAlignBackwardCompute(const OpContext&, const NodeAttrs& attrs,
                             const std::vector<TBlob>& in,
                             const std::vector<OpReqType>& req,
                             const std::vector<TBlob>& out) {
  if (req[0] == OpReqType::kNullOp) return;
  MX_FLOAT_DTYPE_SWITCH(in[1].dtype, T, {
    using A = AccType<T>;
    const T* g = in[0].data<T>();
    std::vector<double> dx(static_cast<size_t>(in[1].Size()), 0.0);
    ForEachSample(attrs, in[1].shape, in[2].data<T>(), in[2].shape[0],
                  in[0].shape[1],
                  [&](int64_t o, int64_t plane, const Taps& t, double scale) {
                    const double go = static_cast<double>(g[o]) * scale;
                    for (int k = 0; k < t.n; ++k) {
                      dx[plane + t.off[k]] += go * t.w[k];
                    }
                  });
    T* dst = out[0].data<T>();
    for (size_t i = 0; i < dx.size(); ++i) {
      Assign(dst + i, req[0], static_cast<A>(dx[i]));
    }
  });
}

MX_REGISTER_OP(_backward_contrib_ROIAlign)
    .Describe(
        "Gradient of _contrib_ROIAlign: (out_grad, data, rois) -> "
        "data_grad.")
    .SetNumInputs(3)
    .SetInputNames({"out_grad", "data", "rois"})
    .SetParams<ROIAlignParam>()
    .SetInferShape([](const NodeAttrs& attrs, std::vector<TShape>* in,
                      std::vector<TShape>* out) {
      AssignShape(attrs, out, 0, (*in)[1], true);
      std::vector<TShape> fwd_in{(*in)[1], (*in)[2]}, fwd_out{(*in)[0]};
      ROIAlignShape(attrs, &fwd_in, &fwd_out);
      AssignShape(attrs, in, 0, fwd_out[0], false);
    })
    .SetInferType([](const NodeAttrs& attrs, std::vector<DType>* in,
                     std::vector<DType>* out) {
      AssignType(attrs, in, 0, (*in)[1], false);
      AssignType(attrs, out, 0, (*in)[1], true);
    })
    .SetCompute(Context::kCPU, ROIAlignBackwardCompute);

[[maybe_unused]] const bool kGradientRegistered = [] {
  SetGradient("_contrib_ROIAlign", [](GradBuilder& b,
                                      const std::vector<NodeEntry>& g) {
    return std::vector<NodeEntry>{b.Op("_backward_contrib_ROIAlign",
                                       {g[0], b.x(0), b.x(1)}, b.n->attrs.dict),
                                  NodeEntry{}};
  });
  return true;
}();

}  // namespace
}  // namespace cpu
}  // namespace mx
