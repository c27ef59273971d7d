// 1-, 2- and 3-D convolution on NCW / NCHW / NCDHW data (im2col + Eigen
// GEMM per image and group) and its gradient, _backward_Convolution (the
// same GEMMs transposed, and col2im). The kernel's rank picks the op's
// rank, as in MXNet.
#include <Eigen/Core>
#include <algorithm>
#include <optional>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>
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
        .Describe("(w), (h, w) or (d, h, w): picks 1-, 2- or 3-D");
    s->Field("stride", &ConvolutionParam::stride).Describe("default all 1");
    s->Field("dilate", &ConvolutionParam::dilate).Describe("default all 1");
    s->Field("pad", &ConvolutionParam::pad).Describe("default all 0");
    s->Field("num_filter", &ConvolutionParam::num_filter)
        .Required()
        .Describe("Output channels.");
    s->Field("num_group", &ConvolutionParam::num_group)
        .Describe("Channel groups; C and num_filter must divide by it.");
    s->Field("no_bias", &ConvolutionParam::no_bias);
    s->Field("layout", &ConvolutionParam::layout)
        .Describe("Only NCW / NCHW / NCDHW (or None) is supported.");
    s->Field("workspace", &ConvolutionParam::workspace).Describe("Ignored.");
    s->Field("cudnn_tune", &ConvolutionParam::cudnn_tune).Describe("Ignored.");
    s->Field("cudnn_off", &ConvolutionParam::cudnn_off).Describe("Ignored.");
  }
};

// Validates the attributes; returns the window.
Window ConvWindow(const NodeAttrs& attrs) {
  const ConvolutionParam& p = attrs.get<ConvolutionParam>();
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
  w.p = PerAxis(attrs, "pad", p.pad, w.rank, 0, 0, 0);
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
  const int r = w.rank, lead = kMaxSpatial - w.rank;
  const int64_t f = p.num_filter, g = p.num_group;
  CheckDataRank(attrs, (*in)[0], r);
  if ((*out)[0].ndim_known()) {
    TShape o = TShape::Filled(r + 2, -1);
    o[1] = f;
    AssignShape(attrs, out, 0, o, true);
    TShape d = TShape::Filled(r + 2, -1);
    d[0] = (*out)[0][0];
    AssignShape(attrs, in, 0, d, false);
  }
  if (!p.no_bias) AssignShape(attrs, in, 2, TShape{f}, false);
  // Weight (f, C/g, kernel...); channels from data to weight, or back when
  // data's are unknown.
  std::vector<int64_t> wdims{f, -1};
  wdims.insert(wdims.end(), p.kernel.begin(), p.kernel.end());
  const TShape& d = (*in)[0];
  if (d.ndim_known() && d[1] >= 0) {
    if (d[1] % g != 0) {
      throw ShapeError(absl::StrCat(
          OpLabel(attrs), ": input 0 (data) has shape ", d.ToString(), " with ",
          d[1], " channels, which num_group=", g, " does not divide"));
    }
    wdims[1] = d[1] / g;
    AssignShape(attrs, in, 1, TShape(wdims), false);
  } else {
    AssignShape(attrs, in, 1, TShape(wdims), false);
    const int64_t wc = (*in)[1][1];
    if (wc >= 0) {
      TShape dd = TShape::Filled(r + 2, -1);
      dd[1] = wc * g;
      AssignShape(attrs, in, 0, dd, false);
    }
  }
  if (!d.ndim_known()) return;
  std::vector<int64_t> odims{d[0], f};
  for (int a = 0; a < r; ++a) {
    const int i = lead + a;
    odims.push_back(
        ConvOutDim(attrs, d, d[2 + a], w.k[i], w.s[i], w.d[i], w.p[i]));
  }
  AssignShape(attrs, out, 0, TShape(odims), true);
}

template <typename T>
void ConvolutionImpl(const OpContext& ctx, const ConvolutionParam& p,
                     const Window& w, const std::vector<TBlob>& in,
                     OpReqType req, const TBlob& out) {
  using A = AccType<T>;
  constexpr bool kHalf = !std::is_same_v<T, A>;
  const TShape &ds = in[0].shape, &os = out.shape;
  const Spatial3 sin = SpatialOf(ds, w.rank), sout = SpatialOf(os, w.rank);
  const int64_t n = ds[0], c = ds[1], vol = Volume(sin);
  const int64_t f = p.num_filter, g = p.num_group;
  const int64_t cg = c / g, fg = f / g, k = cg * Volume(w.k);
  const int64_t plane = Volume(sout);
  if (n == 0 || plane == 0) return;
  const T* x = in[0].data<T>();
  const T* bias = p.no_bias ? nullptr : in[2].data<T>();
  T* y = out.data<T>();
  const A* weight;  // float16: converted to float once.
  if constexpr (kHalf) {
    const int64_t size = in[1].Size();
    A* wbuf = ctx.TempSpace<A>(std::max<int64_t>(1, size));
    const T* src = in[1].data<T>();
    for (int64_t i = 0; i < size; ++i) wbuf[i] = static_cast<A>(src[i]);
    weight = wbuf;
  } else {
    weight = in[1].data<T>();
  }
  // Images split over the CPU kernel threads (strided, one slot per
  // thread), each slot with its own im2col buffer (and float accumulator).
  const int64_t slots = std::min<int64_t>(KernelThreads(), n);
  const int64_t col_size = std::max<int64_t>(1, k * plane);
  A* cols = ctx.TempSpace<A>(slots * col_size);
  A* accs = nullptr;
  if constexpr (kHalf) accs = ctx.TempSpace<A>(slots * fg * plane);
  ParallelFor(slots, 1, [&](int64_t slot_begin, int64_t slot_end) {
    for (int64_t slot = slot_begin; slot < slot_end; ++slot) {
      A* col = cols + slot * col_size;
      for (int64_t img = slot; img < n; img += slots) {
        for (int64_t grp = 0; grp < g; ++grp) {
          Im2Col(x + (img * c + grp * cg) * vol, cg, sin, w, sout, col);
          T* yg = y + (img * f + grp * fg) * plane;
          A* dst;
          if constexpr (kHalf) {
            dst = accs + slot * fg * plane;
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
            for (int64_t i = 0; i < fg * plane; ++i)
              Assign(yg + i, req, dst[i]);
          }
        }
      }
    }
  });
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
        "1-, 2- or 3-D convolution on NCW / NCHW / NCDHW data with weight "
        "(num_filter, C/num_group, kernel...) and bias (num_filter,).")
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

// ---- _backward_Convolution. ----

// Inputs (out_grad, data, weight); outputs (data_grad, weight_grad[,
// bias_grad]). Per image and group: weight_grad += og * col^T and
// data_grad = col2im(weight^T * og), accumulated in A and then written
// per request.
template <typename T>
void ConvolutionBackwardImpl(const OpContext& ctx, const ConvolutionParam& p,
                             const Window& w, const std::vector<TBlob>& in,
                             const std::vector<OpReqType>& req,
                             const std::vector<TBlob>& out) {
  using A = AccType<T>;
  const TShape &ds = in[1].shape, &os = in[0].shape;
  const Spatial3 sin = SpatialOf(ds, w.rank), sout = SpatialOf(os, w.rank);
  const int64_t n = ds[0], c = ds[1], vol = Volume(sin);
  const int64_t f = p.num_filter, g = p.num_group;
  const int64_t cg = c / g, fg = f / g, k = cg * Volume(w.k);
  const int64_t plane = Volume(sout);
  const bool want_dx = req[0] != OpReqType::kNullOp;
  const bool want_dw = req[1] != OpReqType::kNullOp;
  const A* og = AsAcc<T>(ctx, in[0]);
  const A* weight = AsAcc<T>(ctx, in[2]);
  const T* x = in[1].data<T>();
  A* dx = ctx.TempSpace<A>(std::max<int64_t>(1, n * c * vol));
  A* dw = ctx.TempSpace<A>(std::max<int64_t>(1, f * k));
  std::fill(dx, dx + n * c * vol, A(0));
  std::fill(dw, dw + f * k, A(0));
  // Images split over the CPU kernel threads as in the forward: each slot
  // has its own im2col buffer and weight-gradient sum (slot 0 sums into
  // dw, the others are added to it after); data gradients of different
  // images are disjoint.
  const int64_t slots = std::min<int64_t>(KernelThreads(), n);
  const int64_t col_size = std::max<int64_t>(1, k * plane);
  A* cols = ctx.TempSpace<A>(std::max<int64_t>(1, slots) * col_size);
  A* dw_extra = nullptr;
  if (want_dw && slots > 1) {
    dw_extra = ctx.TempSpace<A>((slots - 1) * f * k);
    std::fill(dw_extra, dw_extra + (slots - 1) * f * k, A(0));
  }
  if (plane > 0) {
    ParallelFor(slots, 1, [&](int64_t slot_begin, int64_t slot_end) {
      for (int64_t slot = slot_begin; slot < slot_end; ++slot) {
        A* col = cols + slot * col_size;
        A* dw_slot = slot == 0 ? dw : dw_extra + (slot - 1) * f * k;
        for (int64_t img = slot; img < n; img += slots) {
          for (int64_t grp = 0; grp < g; ++grp) {
            const A* og_g = og + (img * f + grp * fg) * plane;
            if (want_dw) {
              Im2Col(x + (img * c + grp * cg) * vol, cg, sin, w, sout, col);
              Gemm(og_g, col, dw_slot + grp * fg * k, fg, k, plane, false, true,
                   true);
            }
            if (want_dx) {
              Gemm(weight + grp * fg * k, og_g, col, k, plane, fg, true, false,
                   false);
              Col2ImAdd(col, cg, sin, w, sout, dx + (img * c + grp * cg) * vol);
            }
          }
        }
      }
    });
    for (int64_t slot = 1; want_dw && slot < slots; ++slot) {
      const A* part = dw_extra + (slot - 1) * f * k;
      for (int64_t i = 0; i < f * k; ++i) dw[i] += part[i];
    }
  }
  AssignAll(dx, n * c * vol, req[0], out[0].data<T>());
  AssignAll(dw, f * k, req[1], out[1].data<T>());
  if (!p.no_bias && req[2] != OpReqType::kNullOp) {
    T* db = out[2].data<T>();
    for (int64_t fi = 0; fi < f; ++fi) {
      A sum = 0;
      for (int64_t img = 0; img < n; ++img) {
        const A* row = og + (img * f + fi) * plane;
        for (int64_t i = 0; i < plane; ++i) sum += row[i];
      }
      Assign(db + fi, req[2], sum);
    }
  }
}

void ConvolutionBackwardCompute(const OpContext& ctx, const NodeAttrs& attrs,
                                const std::vector<TBlob>& in,
                                const std::vector<OpReqType>& req,
                                const std::vector<TBlob>& out) {
  const ConvolutionParam& p = attrs.get<ConvolutionParam>();
  const Window w = ConvWindow(attrs);
  MX_FLOAT_DTYPE_SWITCH(
      in[1].dtype, T, { ConvolutionBackwardImpl<T>(ctx, p, w, in, req, out); });
}

MX_REGISTER_OP(_backward_Convolution)
    .Describe(
        "Gradients of Convolution: (out_grad, data, weight) -> (data_grad, "
        "weight_grad[, bias_grad]).")
    .SetNumInputs(3)
    .SetInputNames({"out_grad", "data", "weight"})
    .SetNumOutputs([](const NodeAttrs& attrs) {
      return attrs.get<ConvolutionParam>().no_bias ? 2 : 3;
    })
    .SetParams<ConvolutionParam>()
    .SetInferShape([](const NodeAttrs& attrs, std::vector<TShape>* in,
                      std::vector<TShape>* out) {
      AssignShape(attrs, out, 0, (*in)[1], true);
      AssignShape(attrs, out, 1, (*in)[2], true);
      if (out->size() > 2) {
        AssignShape(attrs, out, 2,
                    TShape{attrs.get<ConvolutionParam>().num_filter}, true);
      }
      // The data and weight must be a valid convolution, and out_grad its
      // output's shape: the kernel trusts all three (a direct call with
      // mismatched shapes read past the arrays, found by op_attrs_fuzzer).
      std::vector<TShape> fwd_in{(*in)[1], (*in)[2]}, fwd_out(1);
      if (out->size() > 2) fwd_in.push_back((*out)[2]);
      ConvolutionShape(attrs, &fwd_in, &fwd_out);
      AssignShape(attrs, in, 0, fwd_out[0], false);
    })
    .SetInferType(SameFloatType)
    .SetResourceRequest([](const NodeAttrs&) {
      return std::vector<ResourceRequest>{{ResourceRequest::kTempSpace}};
    })
    .SetCompute(Context::kCPU, ConvolutionBackwardCompute);

[[maybe_unused]] const bool kGradientRegistered = [] {
  SetGradient(
      "Convolution", [](GradBuilder& b, const std::vector<NodeEntry>& g) {
        const NodeEntry d = b.Op("_backward_Convolution",
                                 {g[0], b.x(0), b.x(1)}, b.n->attrs.dict);
        return OutputsOf(d, b.n->inputs.size());
      });
  return true;
}();

}  // namespace
}  // namespace cpu
}  // namespace mx
