// 2-D convolution (im2col + Eigen GEMM per image and group) and 2-D pooling
// on NCHW data. Other spatial ranks raise NotImplemented.
#include <Eigen/Core>
#include <algorithm>
#include <limits>
#include <optional>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "backends/cpu/gemm.h"
#include "backends/cpu/kernel_util.h"
#include "base/error.h"

namespace mx {
namespace cpu {
namespace {

void SameFloatType(const NodeAttrs& attrs, std::vector<DType>* in,
                   std::vector<DType>* out) {
  if ((*in)[0] != DType::kUnknown) RequireFloat(attrs, (*in)[0]);
  SameType(attrs, in, out);
  if ((*in)[0] != DType::kUnknown) RequireFloat(attrs, (*in)[0]);
}

// Throws unless data (when its rank is known) is 4-D; 3-D and 5-D data (1-D
// and 3-D ops) are NotImplemented.
void CheckData4D(const NodeAttrs& attrs, const TShape& data) {
  if (!data.ndim_known() || data.ndim() == 4) return;
  const std::string what =
      absl::StrCat(OpLabel(attrs), ": input 0 (data) has shape ",
                   data.ToString(), " but a 4-D shape (N,C,H,W) is required");
  if (data.ndim() == 3 || data.ndim() == 5) {
    throw NotImplemented(what + "; only 2-D " + attrs.op->name() +
                         " is implemented");
  }
  throw ShapeError(what);
}

// A 2-tuple attribute: `given` when set, else `fill` in both places.
std::pair<int64_t, int64_t> Pair(const NodeAttrs& attrs, const char* name,
                                 const TShape& given, int64_t fill,
                                 int64_t min) {
  if (!given.ndim_known()) return {fill, fill};
  if (given.ndim() != 2) {
    throw InvalidArgument(absl::StrCat(OpLabel(attrs), ": ", name, "=",
                                       given.ToString(),
                                       " must have 2 entries, like kernel"));
  }
  if (given[0] < min || given[1] < min) {
    throw InvalidArgument(absl::StrCat(OpLabel(attrs), ": ", name, "=",
                                       given.ToString(), " must be >= ", min));
  }
  return {given[0], given[1]};
}

// Window geometry of a 2-D op along both spatial axes.
struct Window {
  int64_t kh, kw, sh, sw, dh = 1, dw = 1, ph, pw;
};

void CheckKernel(const NodeAttrs& attrs, const TShape& kernel) {
  if (kernel.ndim() == 1 || kernel.ndim() == 3) {
    throw NotImplemented(
        absl::StrCat(OpLabel(attrs), ": kernel=", kernel.ToString(),
                     " asks for ", kernel.ndim(), "-D ", attrs.op->name(),
                     "; only 2-D (NCHW) is implemented"));
  }
  if (kernel.ndim() != 2) {
    throw InvalidArgument(absl::StrCat(OpLabel(attrs),
                                       ": kernel=", kernel.ToString(),
                                       " must have 2 entries (kh, kw)"));
  }
  Pair(attrs, "kernel", kernel, 1, 1);
}

// ---- Convolution. ----

struct ConvolutionParam {
  TShape kernel;
  TShape stride;
  TShape dilate;
  TShape pad;
  int64_t num_filter = 0;
  int64_t num_group = 1;
  bool no_bias = false;
  std::optional<std::string> layout;
  int64_t workspace = 1024;
  std::optional<std::string> cudnn_tune;
  bool cudnn_off = false;
  static void Declare(ParamSchema<ConvolutionParam>* s) {
    s->Field("kernel", &ConvolutionParam::kernel)
        .Required()
        .Describe("(kh, kw)");
    s->Field("stride", &ConvolutionParam::stride).Describe("default (1,1)");
    s->Field("dilate", &ConvolutionParam::dilate).Describe("default (1,1)");
    s->Field("pad", &ConvolutionParam::pad).Describe("default (0,0)");
    s->Field("num_filter", &ConvolutionParam::num_filter)
        .Required()
        .Describe("Output channels.");
    s->Field("num_group", &ConvolutionParam::num_group)
        .Describe("Channel groups; C and num_filter must divide by it.");
    s->Field("no_bias", &ConvolutionParam::no_bias);
    s->Field("layout", &ConvolutionParam::layout)
        .Describe("Only NCHW (or None) is supported.");
    s->Field("workspace", &ConvolutionParam::workspace).Describe("Ignored.");
    s->Field("cudnn_tune", &ConvolutionParam::cudnn_tune).Describe("Ignored.");
    s->Field("cudnn_off", &ConvolutionParam::cudnn_off).Describe("Ignored.");
  }
};

// Validates the attributes; returns the window.
Window ConvWindow(const NodeAttrs& attrs) {
  const ConvolutionParam& p = attrs.get<ConvolutionParam>();
  CheckKernel(attrs, p.kernel);
  if (p.layout && *p.layout != "NCHW") {
    throw NotImplemented(absl::StrCat(OpLabel(attrs), ": layout=", *p.layout,
                                      " is not supported; only NCHW is"));
  }
  if (p.num_filter <= 0 || p.num_group <= 0 ||
      p.num_filter % p.num_group != 0) {
    throw InvalidArgument(
        absl::StrCat(OpLabel(attrs), ": num_filter=", p.num_filter,
                     " and num_group=", p.num_group,
                     " must be positive with num_filter divisible by "
                     "num_group"));
  }
  Window w;
  w.kh = p.kernel[0];
  w.kw = p.kernel[1];
  std::tie(w.sh, w.sw) = Pair(attrs, "stride", p.stride, 1, 1);
  std::tie(w.dh, w.dw) = Pair(attrs, "dilate", p.dilate, 1, 1);
  std::tie(w.ph, w.pw) = Pair(attrs, "pad", p.pad, 0, 0);
  return w;
}

// Output extent of one spatial axis; -1 when `in` is unknown. Throws when
// the (dilated) kernel does not fit the padded input.
int64_t ConvOutDim(const NodeAttrs& attrs, const TShape& data, int64_t in,
                   int64_t k, int64_t s, int64_t d, int64_t p) {
  if (in < 0) return -1;
  const int64_t span = d * (k - 1) + 1;
  if (in + 2 * p < span) {
    throw ShapeError(absl::StrCat(
        OpLabel(attrs), ": input 0 (data) has shape ", data.ToString(),
        "; the kernel spans ", span, " but a padded spatial size is only ",
        in + 2 * p, ", so the output would be empty"));
  }
  return (in + 2 * p - span) / s + 1;
}

void ConvolutionShape(const NodeAttrs& attrs, std::vector<TShape>* in,
                      std::vector<TShape>* out) {
  const ConvolutionParam& p = attrs.get<ConvolutionParam>();
  const Window w = ConvWindow(attrs);
  const int64_t f = p.num_filter, g = p.num_group;
  CheckData4D(attrs, (*in)[0]);
  if ((*out)[0].ndim_known()) {
    AssignShape(attrs, out, 0, TShape{-1, f, -1, -1}, true);
    AssignShape(attrs, in, 0, TShape{(*out)[0][0], -1, -1, -1}, false);
  }
  if (!p.no_bias) AssignShape(attrs, in, 2, TShape{f}, false);
  // Channels: from data to weight, or back when data's are unknown.
  const TShape& d = (*in)[0];
  if (d.ndim_known() && d[1] >= 0) {
    if (d[1] % g != 0) {
      throw ShapeError(absl::StrCat(
          OpLabel(attrs), ": input 0 (data) has shape ", d.ToString(), " with ",
          d[1], " channels, which num_group=", g, " does not divide"));
    }
    AssignShape(attrs, in, 1, TShape{f, d[1] / g, w.kh, w.kw}, false);
  } else {
    AssignShape(attrs, in, 1, TShape{f, -1, w.kh, w.kw}, false);
    const int64_t wc = (*in)[1][1];
    if (wc >= 0) AssignShape(attrs, in, 0, TShape{-1, wc * g, -1, -1}, false);
  }
  if (!d.ndim_known()) return;
  AssignShape(
      attrs, out, 0,
      TShape{d[0], f, ConvOutDim(attrs, d, d[2], w.kh, w.sh, w.dh, w.ph),
             ConvOutDim(attrs, d, d[3], w.kw, w.sw, w.dw, w.pw)},
      true);
}

// Unfolds the (c, H, W) image x into col (c*kh*kw rows, oh*ow columns).
template <typename T, typename A>
void Im2Col(const T* x, int64_t c, int64_t h, int64_t wd, const Window& w,
            int64_t oh, int64_t ow, A* col) {
  for (int64_t ch = 0; ch < c; ++ch) {
    for (int64_t i = 0; i < w.kh; ++i) {
      for (int64_t j = 0; j < w.kw; ++j) {
        A* dst = col + ((ch * w.kh + i) * w.kw + j) * oh * ow;
        for (int64_t oy = 0; oy < oh; ++oy) {
          const int64_t iy = oy * w.sh - w.ph + i * w.dh;
          A* row = dst + oy * ow;
          if (iy < 0 || iy >= h) {
            std::fill(row, row + ow, A(0));
            continue;
          }
          const T* src = x + (ch * h + iy) * wd;
          for (int64_t ox = 0; ox < ow; ++ox) {
            const int64_t ix = ox * w.sw - w.pw + j * w.dw;
            row[ox] = (ix >= 0 && ix < wd) ? static_cast<A>(src[ix]) : A(0);
          }
        }
      }
    }
  }
}

template <typename T>
void ConvolutionImpl(const OpContext& ctx, const ConvolutionParam& p,
                     const Window& w, const std::vector<TBlob>& in,
                     OpReqType req, const TBlob& out) {
  using A = AccType<T>;
  constexpr bool kHalf = !std::is_same_v<T, A>;
  const TShape &ds = in[0].shape, &os = out.shape;
  const int64_t n = ds[0], c = ds[1], h = ds[2], wd = ds[3];
  const int64_t f = p.num_filter, g = p.num_group, oh = os[2], ow = os[3];
  const int64_t cg = c / g, fg = f / g, k = cg * w.kh * w.kw, plane = oh * ow;
  if (n == 0 || plane == 0) return;
  const T* x = in[0].data<T>();
  const T* bias = p.no_bias ? nullptr : in[2].data<T>();
  T* y = out.data<T>();
  const A* weight;
  A* acc = nullptr;  // float16: the product in float before the write.
  if constexpr (kHalf) {
    const int64_t size = in[1].Size();
    A* wbuf = ctx.TempSpace<A>(std::max<int64_t>(1, size));
    const T* src = in[1].data<T>();
    for (int64_t i = 0; i < size; ++i) wbuf[i] = static_cast<A>(src[i]);
    weight = wbuf;
    acc = ctx.TempSpace<A>(fg * plane);
  } else {
    weight = in[1].data<T>();
  }
  A* col = ctx.TempSpace<A>(std::max<int64_t>(1, k * plane));
  for (int64_t img = 0; img < n; ++img) {
    for (int64_t grp = 0; grp < g; ++grp) {
      Im2Col(x + (img * c + grp * cg) * h * wd, cg, h, wd, w, oh, ow, col);
      T* yg = y + (img * f + grp * fg) * plane;
      A* dst;
      if constexpr (kHalf) {
        dst = acc;
      } else {
        dst = yg;
      }
      Gemm(weight + grp * fg * k, col, dst, fg, plane, k, /*ta=*/false,
           /*tb=*/false, !kHalf && req == OpReqType::kAddTo);
      if (bias != nullptr) {
        for (int64_t fi = 0; fi < fg; ++fi) {
          const A b = static_cast<A>(bias[grp * fg + fi]);
          for (int64_t i = 0; i < plane; ++i) dst[fi * plane + i] += b;
        }
      }
      if constexpr (kHalf) {
        for (int64_t i = 0; i < fg * plane; ++i) Assign(yg + i, req, acc[i]);
      }
    }
  }
}

void ConvolutionCompute(const OpContext& ctx, const NodeAttrs& attrs,
                        const std::vector<TBlob>& in,
                        const std::vector<OpReqType>& req,
                        const std::vector<TBlob>& out) {
  if (req[0] == OpReqType::kNullOp) return;
  const ConvolutionParam& p = attrs.get<ConvolutionParam>();
  const Window w = ConvWindow(attrs);
  MX_FLOAT_DTYPE_SWITCH(in[0].dtype, T,
                        { ConvolutionImpl<T>(ctx, p, w, in, req[0], out[0]); });
}

MX_REGISTER_OP(Convolution)
    .Describe(
        "2-D convolution on NCHW data with weight (num_filter, "
        "C/num_group, kh, kw) and bias (num_filter,).")
    .SetNumInputs([](const NodeAttrs& attrs) {
      return attrs.get<ConvolutionParam>().no_bias ? 2 : 3;
    })
    .SetInputNames([](const NodeAttrs& attrs) {
      if (attrs.get<ConvolutionParam>().no_bias) {
        return std::vector<std::string>{"data", "weight"};
      }
      return std::vector<std::string>{"data", "weight", "bias"};
    })
    .SetParams<ConvolutionParam>()
    .SetInferShape(ConvolutionShape)
    .SetInferType(SameFloatType)
    .SetResourceRequest([](const NodeAttrs&) {
      return std::vector<ResourceRequest>{{ResourceRequest::kTempSpace}};
    })
    .SetCompute(Context::kCPU, ConvolutionCompute);

// ---- Pooling. ----

struct PoolingParam {
  TShape kernel;
  std::string pool_type = "max";
  bool global_pool = false;
  TShape stride;
  TShape pad;
  std::string pooling_convention = "valid";
  std::optional<bool> count_include_pad;
  std::optional<std::string> layout;
  bool cudnn_off = false;
  static void Declare(ParamSchema<PoolingParam>* s) {
    s->Field("kernel", &PoolingParam::kernel)
        .Describe("(kh, kw); required unless global_pool");
    s->Field("pool_type", &PoolingParam::pool_type)
        .Choices({"max", "avg", "sum", "lp"})
        .Describe("lp is not implemented");
    s->Field("global_pool", &PoolingParam::global_pool)
        .Describe("Pool all of H x W (kernel, stride and pad are ignored).");
    s->Field("stride", &PoolingParam::stride).Describe("default (1,1)");
    s->Field("pad", &PoolingParam::pad).Describe("default (0,0)");
    s->Field("pooling_convention", &PoolingParam::pooling_convention)
        .Choices({"valid", "full", "same"})
        .Describe("Output size rounding down (valid) or up (full).");
    s->Field("count_include_pad", &PoolingParam::count_include_pad)
        .Describe("avg: divide by the window size including padding.");
    s->Field("layout", &PoolingParam::layout)
        .Describe("Only NCHW (or None) is supported.");
    s->Field("cudnn_off", &PoolingParam::cudnn_off).Describe("Ignored.");
  }
};

// The window for data of spatial size h x w (either may be -1 when global).
Window PoolWindow(const NodeAttrs& attrs, int64_t h, int64_t wd) {
  const PoolingParam& p = attrs.get<PoolingParam>();
  if (p.pool_type == "lp" || p.pooling_convention == "same") {
    throw NotImplemented(absl::StrCat(
        OpLabel(attrs), ": pool_type=", p.pool_type,
        " with pooling_convention=", p.pooling_convention,
        " is not implemented (lp pooling and the same convention are not)"));
  }
  if (p.layout && *p.layout != "NCHW") {
    throw NotImplemented(absl::StrCat(OpLabel(attrs), ": layout=", *p.layout,
                                      " is not supported; only NCHW is"));
  }
  Window w;
  if (p.global_pool) {
    w.kh = h;
    w.kw = wd;
    w.sh = w.sw = 1;
    w.ph = w.pw = 0;
    return w;
  }
  if (!p.kernel.ndim_known() || p.kernel.ndim() == 0) {
    throw InvalidArgument(absl::StrCat(
        OpLabel(attrs), ": kernel is required unless global_pool is set"));
  }
  CheckKernel(attrs, p.kernel);
  w.kh = p.kernel[0];
  w.kw = p.kernel[1];
  std::tie(w.sh, w.sw) = Pair(attrs, "stride", p.stride, 1, 1);
  std::tie(w.ph, w.pw) = Pair(attrs, "pad", p.pad, 0, 0);
  return w;
}

int64_t PoolOutDim(const NodeAttrs& attrs, const TShape& data, int64_t in,
                   int64_t k, int64_t s, int64_t p) {
  if (in < 0) return -1;
  if (attrs.get<PoolingParam>().global_pool) return 1;
  if (in + 2 * p < k) {
    throw ShapeError(absl::StrCat(
        OpLabel(attrs), ": input 0 (data) has shape ", data.ToString(),
        "; the kernel spans ", k, " but a padded spatial size is only ",
        in + 2 * p, ", so the output would be empty"));
  }
  const bool full = attrs.get<PoolingParam>().pooling_convention == "full";
  return (in + 2 * p - k + (full ? s - 1 : 0)) / s + 1;
}

void PoolingShape(const NodeAttrs& attrs, std::vector<TShape>* in,
                  std::vector<TShape>* out) {
  const TShape& d = (*in)[0];
  CheckData4D(attrs, d);
  const Window w = d.ndim_known() ? PoolWindow(attrs, d[2], d[3])
                                  : PoolWindow(attrs, -1, -1);
  if ((*out)[0].ndim_known()) {
    AssignShape(attrs, out, 0, TShape::Filled(4, -1), true);
    AssignShape(attrs, in, 0, TShape{(*out)[0][0], (*out)[0][1], -1, -1},
                false);
  }
  if (!d.ndim_known()) return;
  AssignShape(attrs, out, 0,
              TShape{d[0], d[1], PoolOutDim(attrs, d, d[2], w.kh, w.sh, w.ph),
                     PoolOutDim(attrs, d, d[3], w.kw, w.sw, w.pw)},
              true);
}

void PoolingCompute(const OpContext&, const NodeAttrs& attrs,
                    const std::vector<TBlob>& in,
                    const std::vector<OpReqType>& req,
                    const std::vector<TBlob>& out) {
  if (req[0] == OpReqType::kNullOp) return;
  const PoolingParam& p = attrs.get<PoolingParam>();
  const TShape &ds = in[0].shape, &os = out[0].shape;
  const int64_t h = ds[2], wd = ds[3], oh = os[2], ow = os[3];
  const Window w = PoolWindow(attrs, h, wd);
  const bool is_max = p.pool_type == "max", is_avg = p.pool_type == "avg";
  const bool include_pad = p.count_include_pad.value_or(true);
  MX_FLOAT_DTYPE_SWITCH(in[0].dtype, T, {
    using A = AccType<T>;
    const T* x = in[0].data<T>();
    T* y = out[0].data<T>();
    ParallelFor(ds[0] * ds[1], 16, [&](int64_t b, int64_t e) {
      for (int64_t plane = b; plane < e; ++plane) {
        const T* src = x + plane * h * wd;
        T* dst = y + plane * oh * ow;
        for (int64_t oy = 0; oy < oh; ++oy) {
          // Window rows in padded coordinates, then clipped to the data.
          const int64_t y0 = oy * w.sh - w.ph;
          const int64_t y1 = std::min(y0 + w.kh, h + w.ph);
          const int64_t ys = std::max<int64_t>(y0, 0), ye = std::min(y1, h);
          for (int64_t ox = 0; ox < ow; ++ox) {
            const int64_t x0 = ox * w.sw - w.pw;
            const int64_t x1 = std::min(x0 + w.kw, wd + w.pw);
            const int64_t xs = std::max<int64_t>(x0, 0), xe = std::min(x1, wd);
            A value = 0;
            if (is_max) {
              // A window entirely in the padding gives 0.
              A best = std::numeric_limits<A>::lowest();
              for (int64_t iy = ys; iy < ye; ++iy)
                for (int64_t ix = xs; ix < xe; ++ix)
                  best = std::max(best, static_cast<A>(src[iy * wd + ix]));
              value = (ys < ye && xs < xe) ? best : A(0);
            } else {
              A sum = 0;
              for (int64_t iy = ys; iy < ye; ++iy)
                for (int64_t ix = xs; ix < xe; ++ix)
                  sum += static_cast<A>(src[iy * wd + ix]);
              const int64_t count = include_pad
                                        ? std::max<int64_t>(0, y1 - y0) *
                                              std::max<int64_t>(0, x1 - x0)
                                        : std::max<int64_t>(0, ye - ys) *
                                              std::max<int64_t>(0, xe - xs);
              value = !is_avg ? sum : count > 0 ? sum / count : A(0);
            }
            Assign(dst + oy * ow + ox, req[0], value);
          }
        }
      }
    });
  });
}

MX_REGISTER_OP(Pooling)
    .Describe("2-D max / average / sum pooling on NCHW data.")
    .SetNumInputs(1)
    .SetInputNames({"data"})
    .SetParams<PoolingParam>()
    .SetInferShape(PoolingShape)
    .SetInferType(SameFloatType)
    .SetCompute(Context::kCPU, PoolingCompute);

}  // namespace
}  // namespace cpu
}  // namespace mx
