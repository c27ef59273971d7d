// 2-D max / average / sum pooling on NCHW data and its gradient,
// _backward_Pooling.
#include <algorithm>
#include <limits>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "absl/strings/str_cat.h"
#include "backends/cpu/conv_util.h"
#include "backends/cpu/grad_util.h"
#include "backends/cpu/kernel_util.h"
#include "base/error.h"

namespace mx {
namespace cpu {
namespace {

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

// ---- _backward_Pooling. ----

// Inputs (out_grad, data); output data_grad. Each window sends its
// gradient to the first maximum (max; none from a window entirely in the
// padding), spreads it over its count (avg, counted as the forward does),
// or copies it to every element (sum). Overlapping windows add up.
void PoolingBackwardCompute(const OpContext&, const NodeAttrs& attrs,
                            const std::vector<TBlob>& in,
                            const std::vector<OpReqType>& req,
                            const std::vector<TBlob>& out) {
  if (req[0] == OpReqType::kNullOp) return;
  const PoolingParam& p = attrs.get<PoolingParam>();
  const TShape &ds = in[1].shape, &os = in[0].shape;
  const int64_t h = ds[2], wd = ds[3], oh = os[2], ow = os[3];
  const Window w = PoolWindow(attrs, h, wd);
  const bool is_max = p.pool_type == "max", is_avg = p.pool_type == "avg";
  const bool include_pad = p.count_include_pad.value_or(true);
  MX_FLOAT_DTYPE_SWITCH(in[1].dtype, T, {
    using A = AccType<T>;
    const T* og = in[0].data<T>();
    const T* x = in[1].data<T>();
    T* dx = out[0].data<T>();
    ParallelFor(ds[0] * ds[1], 16, [&](int64_t b, int64_t e) {
      std::vector<A> acc(static_cast<size_t>(h * wd));
      for (int64_t plane = b; plane < e; ++plane) {
        std::fill(acc.begin(), acc.end(), A(0));
        const T* src = x + plane * h * wd;
        const T* g = og + plane * oh * ow;
        for (int64_t oy = 0; oy < oh; ++oy) {
          const int64_t y0 = oy * w.sh - w.ph;
          const int64_t y1 = std::min(y0 + w.kh, h + w.ph);
          const int64_t ys = std::max<int64_t>(y0, 0), ye = std::min(y1, h);
          for (int64_t ox = 0; ox < ow; ++ox) {
            const int64_t x0 = ox * w.sw - w.pw;
            const int64_t x1 = std::min(x0 + w.kw, wd + w.pw);
            const int64_t xs = std::max<int64_t>(x0, 0), xe = std::min(x1, wd);
            if (ys >= ye || xs >= xe) continue;
            A gv = static_cast<A>(g[oy * ow + ox]);
            if (is_max) {
              int64_t best = ys * wd + xs;
              for (int64_t iy = ys; iy < ye; ++iy) {
                for (int64_t ix = xs; ix < xe; ++ix) {
                  if (static_cast<A>(src[iy * wd + ix]) >
                      static_cast<A>(src[best])) {
                    best = iy * wd + ix;
                  }
                }
              }
              acc[best] += gv;
              continue;
            }
            if (is_avg) {
              const int64_t count =
                  include_pad ? (y1 - y0) * (x1 - x0) : (ye - ys) * (xe - xs);
              gv /= static_cast<A>(count);
            }
            for (int64_t iy = ys; iy < ye; ++iy) {
              for (int64_t ix = xs; ix < xe; ++ix) acc[iy * wd + ix] += gv;
            }
          }
        }
        T* dst = dx + plane * h * wd;
        for (int64_t i = 0; i < h * wd; ++i) Assign(dst + i, req[0], acc[i]);
      }
    });
  });
}

MX_REGISTER_OP(_backward_Pooling)
    .Describe("Gradient of Pooling: (out_grad, data) -> data_grad.")
    .SetNumInputs(2)
    .SetInputNames({"out_grad", "data"})
    .SetParams<PoolingParam>()
    .SetInferShape([](const NodeAttrs& attrs, std::vector<TShape>* in,
                      std::vector<TShape>* out) {
      AssignShape(attrs, out, 0, (*in)[1], true);
      AssignShape(attrs, in, 1, (*out)[0], false);
      // The kernel indexes (N,C,H,W): data must be 4-D and out_grad shaped
      // as Pooling's output for it.
      std::vector<TShape> data{(*in)[1]}, pooled{TShape()};
      PoolingShape(attrs, &data, &pooled);
      AssignShape(attrs, in, 0, pooled[0], false);
    })
    .SetInferType(SameFloatType)
    .SetCompute(Context::kCPU, PoolingBackwardCompute);

// Needs the data even for avg and sum pooling: the output shape alone does
// not give the data's (valid rounding drops rows).
[[maybe_unused]] const bool kGradientRegistered = [] {
  SetGradient("Pooling", [](GradBuilder& b, const std::vector<NodeEntry>& g) {
    return std::vector<NodeEntry>{
        b.Op("_backward_Pooling", {g[0], b.x()}, b.n->attrs.dict)};
  });
  return true;
}();

}  // namespace
}  // namespace cpu
}  // namespace mx
