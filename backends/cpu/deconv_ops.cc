// Deconvolution (transposed convolution) on NCW / NCHW / NCDHW data: the
// forward is Convolution's data gradient (GEMM with the transposed weight,
// then col2im) and the backward is Convolution's forward (im2col, GEMM),
// with the same window geometry (conv_util.h, im2col.h).
#include <algorithm>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

#include "absl/strings/str_cat.h"
#include "backends/cpu/conv_util.h"
#include "backends/cpu/gemm.h"
#include "backends/cpu/grad_util.h"
#include "backends/cpu/im2col.h"
#include "backends/cpu/kernel_util.h"
#include "base/error.h"

namespace mx {
namespace cpu {
namespace {

struct DeconvolutionParam {
  TShape kernel;
  TShape stride;
  TShape dilate;
  TShape pad;
  TShape adj;
  TShape target_shape;
  int64_t num_filter = 0;
  int64_t num_group = 1;
  int64_t workspace = 512;
  bool no_bias = true;
  std::optional<std::string> cudnn_tune;
  bool cudnn_off = false;
  std::optional<std::string> layout;
  static void Declare(ParamSchema<DeconvolutionParam>* s) {
    s->Field("kernel", &DeconvolutionParam::kernel)
        .Required()
        .Describe("(w), (h, w) or (d, h, w): picks 1-, 2- or 3-D");
    s->Field("stride", &DeconvolutionParam::stride).Describe("default all 1");
    s->Field("dilate", &DeconvolutionParam::dilate).Describe("default all 1");
    s->Field("pad", &DeconvolutionParam::pad)
        .Describe("Removed from both ends of the output; default all 0.");
    s->Field("adj", &DeconvolutionParam::adj)
        .Describe("Added to the end of the output; each < stride.");
    s->Field("target_shape", &DeconvolutionParam::target_shape)
        .Describe("Output spatial shape; when set, pad and adj follow.");
    s->Field("num_filter", &DeconvolutionParam::num_filter)
        .Required()
        .Describe("Output channels.");
    s->Field("num_group", &DeconvolutionParam::num_group);
    s->Field("workspace", &DeconvolutionParam::workspace).Describe("Ignored.");
    s->Field("no_bias", &DeconvolutionParam::no_bias)
        .Describe("MXNet's default: true.");
    s->Field("cudnn_tune", &DeconvolutionParam::cudnn_tune)
        .Describe("Ignored.");
    s->Field("cudnn_off", &DeconvolutionParam::cudnn_off).Describe("Ignored.");
    s->Field("layout", &DeconvolutionParam::layout)
        .Describe("Only NCW / NCHW / NCDHW (or None) is supported.");
  }
};

// The window of the equivalent Convolution (from the output back to the
// data) without pad and adj, which depend on the data's shape.
Window DeconvWindow(const NodeAttrs& attrs) {
  const DeconvolutionParam& p = attrs.get<DeconvolutionParam>();
  Window w;
  w.rank = CheckKernel(attrs, p.kernel);
  CheckLayout(attrs, p.layout, w.rank);
  if (p.num_filter <= 0 || p.num_group <= 0 ||
      p.num_filter % p.num_group != 0) {
    throw InvalidArgument(
        absl::StrCat(OpLabel(attrs), ": num_filter=", p.num_filter,
                     " and num_group=", p.num_group,
                     " must be positive with num_filter divisible by "
                     "num_group"));
  }
  w.k = PerAxis(attrs, "kernel", p.kernel, w.rank, 1, 1, 1);
  w.s = PerAxis(attrs, "stride", p.stride, w.rank, 1, 1, 1);
  w.d = PerAxis(attrs, "dilate", p.dilate, w.rank, 1, 1, 1);
  return w;
}

// Whether target_shape decides the output (MXNet: any entry non-zero).
bool HasTarget(const DeconvolutionParam& p) {
  if (!p.target_shape.ndim_known()) return false;
  for (int64_t v : p.target_shape) {
    if (v != 0) return true;
  }
  return false;
}

// Sets w->p and returns the output extents for data spatial extents `in`
// (entries < 0 unknown give -1). Throws on a bad adj or target_shape.
Spatial3 DeconvGeometry(const NodeAttrs& attrs, const Spatial3& in, Window* w) {
  const DeconvolutionParam& p = attrs.get<DeconvolutionParam>();
  const int r = w->rank, lead = kMaxSpatial - r;
  const Spatial3 pad = PerAxis(attrs, "pad", p.pad, r, 0, 0, 0);
  const Spatial3 adj = PerAxis(attrs, "adj", p.adj, r, 0, 0, 0);
  const bool target = HasTarget(p);
  const Spatial3 tgt =
      target ? PerAxis(attrs, "target_shape", p.target_shape, r, 0, 1, 1)
             : Spatial3{1, 1, 1};
  Spatial3 out{1, 1, 1};
  for (int i = lead; i < kMaxSpatial; ++i) {
    // Overflow-checked: attribute values may be anything up to 2^63.
    const std::optional<int64_t> span0 = CheckedProduct({w->d[i], w->k[i] - 1});
    int64_t span = 0;
    if (!span0 || __builtin_add_overflow(*span0, 1, &span)) {
      throw InvalidArgument(
          absl::StrCat(OpLabel(attrs), ": kernel=", p.kernel.ToString(),
                       " and dilate=", p.dilate.ToString(), " are too large"));
    }
    if (!target && adj[i] >= w->s[i]) {
      throw InvalidArgument(
          absl::StrCat(OpLabel(attrs), ": adj=", p.adj.ToString(),
                       " must be smaller than stride=", p.stride.ToString(),
                       " on every axis"));
    }
    if (in[i] < 0) {
      out[i] = -1;
      w->p[i] = pad[i];
      continue;
    }
    const std::optional<int64_t> strided = CheckedProduct({w->s[i], in[i] - 1});
    int64_t full = 0;
    if (!strided || __builtin_add_overflow(*strided, span, &full)) {
      throw ShapeError(absl::StrCat(OpLabel(attrs),
                                    ": stride=", p.stride.ToString(),
                                    " and the input give an output too large"));
    }
    int64_t o;
    if (target) {
      const int64_t total = full - tgt[i];
      if (total < 0) {
        throw InvalidArgument(absl::StrCat(
            OpLabel(attrs), ": target_shape=", p.target_shape.ToString(),
            " is larger than ", full, ", the most this input and kernel give"));
      }
      w->p[i] = (total + 1) / 2;
      o = tgt[i];
    } else {
      w->p[i] = pad[i];
      // adj < stride: only a pad beyond full could overflow.
      o = pad[i] > full ? 0 : full - pad[i] - pad[i] + adj[i];
    }
    if (o <= 0) {
      throw ShapeError(absl::StrCat(
          OpLabel(attrs), ": the output would be empty (pad=", p.pad.ToString(),
          " removes ", 2 * pad[i], " of ", full, " positions)"));
    }
    out[i] = o;
  }
  return out;
}

void DeconvolutionShape(const NodeAttrs& attrs, std::vector<TShape>* in,
                        std::vector<TShape>* out) {
  const DeconvolutionParam& p = attrs.get<DeconvolutionParam>();
  Window w = DeconvWindow(attrs);
  const int r = w.rank, lead = kMaxSpatial - r;
  const int64_t f = p.num_filter, g = p.num_group;
  CheckDataRank(attrs, (*in)[0], r);
  if (!p.no_bias) AssignShape(attrs, in, 2, TShape{f}, false);
  // Weight (C, f/g, kernel...).
  std::vector<int64_t> wdims{-1, f / g};
  wdims.insert(wdims.end(), p.kernel.begin(), p.kernel.end());
  AssignShape(attrs, in, 1, TShape(wdims), false);
  if (!(*in)[0].ndim_known() && (*in)[1][0] >= 0) {
    TShape dd = TShape::Filled(r + 2, -1);
    dd[1] = (*in)[1][0];
    AssignShape(attrs, in, 0, dd, false);
  }
  const TShape& d = (*in)[0];
  if (!d.ndim_known()) return;
  if (d[1] >= 0) {
    if (d[1] % g != 0) {
      throw ShapeError(absl::StrCat(
          OpLabel(attrs), ": input 0 (data) has shape ", d.ToString(), " with ",
          d[1], " channels, which num_group=", g, " does not divide"));
    }
    wdims[0] = d[1];
    AssignShape(attrs, in, 1, TShape(wdims), false);
  }
  const Spatial3 o = DeconvGeometry(attrs, SpatialOf(d, r), &w);
  std::vector<int64_t> odims{d[0], f};
  for (int a = 0; a < r; ++a) odims.push_back(o[lead + a]);
  AssignShape(attrs, out, 0, TShape(odims), true);
}

// Sizes of one call: data (n, c, sin), output (n, f, sout), groups g.
struct DeconvDims {
  Window w;
  Spatial3 sin, sout;
  int64_t n, c, f, g, cg, fg, kvol, in_plane, out_plane;
};

DeconvDims DimsOf(const NodeAttrs& attrs, const TShape& data) {
  const DeconvolutionParam& p = attrs.get<DeconvolutionParam>();
  DeconvDims d;
  d.w = DeconvWindow(attrs);
  d.sin = SpatialOf(data, d.w.rank);
  d.sout = DeconvGeometry(attrs, d.sin, &d.w);
  d.n = data[0];
  d.c = data[1];
  d.f = p.num_filter;
  d.g = p.num_group;
  d.cg = d.c / d.g;
  d.fg = d.f / d.g;
  d.kvol = Volume(d.w.k);
  d.in_plane = Volume(d.sin);
  d.out_plane = Volume(d.sout);
  return d;
}

// Per image and group: col = W_g^T x_g, then y_g = col2im(col) (+ bias).
template <typename T>
void DeconvolutionImpl(const OpContext& ctx, const DeconvDims& d, bool bias,
                       const std::vector<TBlob>& in, OpReqType req,
                       const TBlob& out) {
  using A = AccType<T>;
  const int64_t rows = d.fg * d.kvol;
  const int64_t ysize = d.n * d.f * d.out_plane;
  const A* x = AsAcc<T>(ctx, in[0]);
  const A* weight = AsAcc<T>(ctx, in[1]);
  A* y = ctx.TempSpace<A>(std::max<int64_t>(1, ysize));
  A* col = ctx.TempSpace<A>(std::max<int64_t>(1, rows * d.in_plane));
  std::fill(y, y + ysize, A(0));
  if (d.in_plane > 0) {
    for (int64_t img = 0; img < d.n; ++img) {
      for (int64_t grp = 0; grp < d.g; ++grp) {
        Gemm(weight + grp * d.cg * rows,
             x + (img * d.c + grp * d.cg) * d.in_plane, col, rows, d.in_plane,
             d.cg, /*ta=*/true, /*tb=*/false, false);
        Col2ImAdd(col, d.fg, d.sout, d.w, d.sin,
                  y + (img * d.f + grp * d.fg) * d.out_plane);
      }
    }
  }
  if (bias) {
    const T* b = in[2].data<T>();
    for (int64_t img = 0; img < d.n; ++img) {
      for (int64_t fi = 0; fi < d.f; ++fi) {
        A* row = y + (img * d.f + fi) * d.out_plane;
        const A bv = static_cast<A>(b[fi]);
        for (int64_t i = 0; i < d.out_plane; ++i) row[i] += bv;
      }
    }
  }
  AssignAll(y, ysize, req, out.data<T>());
}

void DeconvolutionCompute(const OpContext& ctx, const NodeAttrs& attrs,
                          const std::vector<TBlob>& in,
                          const std::vector<OpReqType>& req,
                          const std::vector<TBlob>& out) {
  if (req[0] == OpReqType::kNullOp) return;
  const DeconvDims d = DimsOf(attrs, in[0].shape);
  const bool bias = !attrs.get<DeconvolutionParam>().no_bias;
  MX_FLOAT_DTYPE_SWITCH(in[0].dtype, T, {
    DeconvolutionImpl<T>(ctx, d, bias, in, req[0], out[0]);
  });
}

std::vector<ResourceRequest> TempSpace(const NodeAttrs&) {
  return {{ResourceRequest::kTempSpace}};
}

MX_REGISTER_OP(Deconvolution)
    .Describe(
        "Transposed 1-, 2- or 3-D convolution on NCW / NCHW / NCDHW data "
        "with weight (C, num_filter/num_group, kernel...) and bias "
        "(num_filter,); output extent stride*(in-1) + dilate*(kernel-1) + 1 "
        "- 2*pad + adj, or target_shape.")
    .SetNumInputs([](const NodeAttrs& attrs) {
      return attrs.get<DeconvolutionParam>().no_bias ? 2 : 3;
    })
    .SetInputNames([](const NodeAttrs& attrs) {
      if (attrs.get<DeconvolutionParam>().no_bias) {
        return std::vector<std::string>{"data", "weight"};
      }
      return std::vector<std::string>{"data", "weight", "bias"};
    })
    .SetParams<DeconvolutionParam>()
    .SetInferShape(DeconvolutionShape)
    .SetInferType(SameFloatType)
    .SetResourceRequest(TempSpace)
    .SetCompute(Context::kCPU, DeconvolutionCompute);

// Inputs (out_grad, data, weight); outputs (data_grad, weight_grad[,
// bias_grad]). Per image and group: col = im2col(out_grad_g), data_grad_g
// = W_g col and weight_grad_g += x_g col^T.
template <typename T>
void DeconvolutionBackwardImpl(const OpContext& ctx, const DeconvDims& d,
                               bool bias, const std::vector<TBlob>& in,
                               const std::vector<OpReqType>& req,
                               const std::vector<TBlob>& out) {
  using A = AccType<T>;
  const int64_t rows = d.fg * d.kvol;
  const int64_t xsize = d.n * d.c * d.in_plane, wsize = d.c * rows;
  const A* og = AsAcc<T>(ctx, in[0]);
  const A* x = AsAcc<T>(ctx, in[1]);
  const A* weight = AsAcc<T>(ctx, in[2]);
  A* dx = ctx.TempSpace<A>(std::max<int64_t>(1, xsize));
  A* dw = ctx.TempSpace<A>(std::max<int64_t>(1, wsize));
  A* col = ctx.TempSpace<A>(std::max<int64_t>(1, rows * d.in_plane));
  std::fill(dx, dx + xsize, A(0));
  std::fill(dw, dw + wsize, A(0));
  if (d.in_plane > 0) {
    for (int64_t img = 0; img < d.n; ++img) {
      for (int64_t grp = 0; grp < d.g; ++grp) {
        Im2Col(og + (img * d.f + grp * d.fg) * d.out_plane, d.fg, d.sout, d.w,
               d.sin, col);
        const A* w_g = weight + grp * d.cg * rows;
        const int64_t xo = (img * d.c + grp * d.cg) * d.in_plane;
        Gemm(w_g, col, dx + xo, d.cg, d.in_plane, rows, false, false, false);
        Gemm(x + xo, col, dw + grp * d.cg * rows, d.cg, rows, d.in_plane, false,
             true, true);
      }
    }
  }
  AssignAll(dx, xsize, req[0], out[0].data<T>());
  AssignAll(dw, wsize, req[1], out[1].data<T>());
  if (bias && req[2] != OpReqType::kNullOp) {
    T* db = out[2].data<T>();
    for (int64_t fi = 0; fi < d.f; ++fi) {
      A sum = 0;
      for (int64_t img = 0; img < d.n; ++img) {
        const A* row = og + (img * d.f + fi) * d.out_plane;
        for (int64_t i = 0; i < d.out_plane; ++i) sum += row[i];
      }
      Assign(db + fi, req[2], sum);
    }
  }
}

void DeconvolutionBackwardCompute(const OpContext& ctx, const NodeAttrs& attrs,
                                  const std::vector<TBlob>& in,
                                  const std::vector<OpReqType>& req,
                                  const std::vector<TBlob>& out) {
  const DeconvDims d = DimsOf(attrs, in[1].shape);
  const bool bias = !attrs.get<DeconvolutionParam>().no_bias;
  MX_FLOAT_DTYPE_SWITCH(in[1].dtype, T, {
    DeconvolutionBackwardImpl<T>(ctx, d, bias, in, req, out);
  });
}

MX_REGISTER_OP(_backward_Deconvolution)
    .Describe(
        "Gradients of Deconvolution: (out_grad, data, weight) -> (data_grad, "
        "weight_grad[, bias_grad]).")
    .SetNumInputs(3)
    .SetInputNames({"out_grad", "data", "weight"})
    .SetNumOutputs([](const NodeAttrs& attrs) {
      return attrs.get<DeconvolutionParam>().no_bias ? 2 : 3;
    })
    .SetParams<DeconvolutionParam>()
    .SetInferShape([](const NodeAttrs& attrs, std::vector<TShape>* in,
                      std::vector<TShape>* out) {
      AssignShape(attrs, out, 0, (*in)[1], true);
      AssignShape(attrs, out, 1, (*in)[2], true);
      if (out->size() > 2) {
        AssignShape(attrs, out, 2,
                    TShape{attrs.get<DeconvolutionParam>().num_filter}, true);
      }
      std::vector<TShape> fwd_in{(*in)[1], (*in)[2]}, fwd_out(1);
      if (out->size() > 2) fwd_in.push_back((*out)[2]);
      DeconvolutionShape(attrs, &fwd_in, &fwd_out);
      AssignShape(attrs, in, 0, fwd_out[0], false);
    })
    .SetInferType(SameFloatType)
    .SetResourceRequest(TempSpace)
    .SetCompute(Context::kCPU, DeconvolutionBackwardCompute);

[[maybe_unused]] const bool kGradientRegistered = [] {
  SetGradient(
      "Deconvolution", [](GradBuilder& b, const std::vector<NodeEntry>& g) {
        const NodeEntry d = b.Op("_backward_Deconvolution",
                                 {g[0], b.x(0), b.x(1)}, b.n->attrs.dict);
        return OutputsOf(d, b.n->inputs.size());
      });
  return true;
}();

}  // namespace
}  // namespace cpu
}  // namespace mx
