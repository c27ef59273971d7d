#include "backends/onednn/conv_kernels.h"

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "backends/common/attr_parse.h"
#include "backends/onednn/dnnl_context.h"
#include "backends/onednn/primitive_cache.h"

namespace mx_onednn {
namespace {

using mxplugin::Attrs;
using mxplugin::KernelContext;
using mxplugin::Tensors;

// The convolution as oneDNN describes it.
struct ConvGeometry {
  Dims src, weights, bias, dst;
  Dims strides, dilates, pad;  // oneDNN's dilation is MXNet's minus 1.
  bool has_bias = false;
  std::string Key() const {
    return DimsKey(src) + ":" + DimsKey(weights) + ":" + DimsKey(dst) + ":s" +
           DimsKey(strides) + ":d" + DimsKey(dilates) + ":p" + DimsKey(pad) +
           (has_bias ? ":bias" : "");
  }
};

// Per-axis attribute: `given` (rank entries) or `fill`.
Dims PerAxis(const std::optional<std::vector<int64_t>>& given, size_t rank,
             int64_t fill, const std::string& op) {
  if (!given) Decline(op, "cannot read a window attribute");
  if (given->empty()) return Dims(rank, fill);
  if (given->size() != rank) Decline(op, "window attributes of other ranks");
  return Dims(given->begin(), given->end());
}

// The attributes Convolution and Deconvolution share, checked against the
// data (N, C, spatial...) and output shapes.
struct WindowAttrs {
  std::vector<int64_t> kernel;
  int64_t groups = 1, filters = 0;
  bool has_bias = false;
  Dims strides, dilates, pad;  // oneDNN's dilation: MXNet's minus 1.
};

WindowAttrs ParseWindowAttrs(const Attrs& attrs,
                             const std::vector<int64_t>& data,
                             const std::vector<int64_t>& output,
                             const std::string& op,
                             const char* no_bias_default) {
  const std::optional<std::vector<int64_t>> kernel =
      mxplugin::ParseTuple(attrs.Get("kernel", "None"));
  const std::optional<int64_t> filters =
      mxplugin::ParseInt(attrs.Get("num_filter", ""));
  const std::optional<int64_t> groups =
      mxplugin::ParseInt(attrs.Get("num_group", "1"));
  const std::optional<bool> no_bias =
      mxplugin::ParseBool(attrs.Get("no_bias", no_bias_default));
  const std::string layout = attrs.Get("layout", "None");
  if (!kernel || kernel->empty() || kernel->size() > 3 || !filters || !groups ||
      *groups < 1 || !no_bias) {
    Decline(op, "cannot read the attributes");
  }
  const size_t rank = kernel->size();
  if (data.size() != rank + 2 || output.size() != rank + 2) {
    Decline(op, "data rank does not match the kernel");
  }
  if (layout != "None" && layout != "NCW" && layout != "NCHW" &&
      layout != "NCDHW") {
    Decline(op, "layout " + layout);
  }
  if (data[1] % *groups != 0 || *filters % *groups != 0) {
    Decline(op, "channels do not divide");
  }
  WindowAttrs w;
  w.kernel = *kernel;
  w.groups = *groups;
  w.filters = *filters;
  w.has_bias = !*no_bias;
  w.strides =
      PerAxis(mxplugin::ParseTuple(attrs.Get("stride", "None")), rank, 1, op);
  w.dilates =
      PerAxis(mxplugin::ParseTuple(attrs.Get("dilate", "None")), rank, 1, op);
  for (int64_t& d : w.dilates) d -= 1;
  w.pad = PerAxis(mxplugin::ParseTuple(attrs.Get("pad", "None")), rank, 0, op);
  return w;
}

// Geometry from the attributes, data (N, C, spatial...) and output shapes.
ConvGeometry GeometryOf(const Attrs& attrs, const std::vector<int64_t>& data,
                        const std::vector<int64_t>& output,
                        const std::string& op) {
  const WindowAttrs w = ParseWindowAttrs(attrs, data, output, op, "False");
  const int64_t g = w.groups, c = data[1], f = w.filters;
  ConvGeometry geo;
  geo.src = Dims(data.begin(), data.end());
  geo.dst = Dims(output.begin(), output.end());
  geo.strides = w.strides;
  geo.dilates = w.dilates;
  geo.pad = w.pad;
  geo.weights = g == 1 ? Dims{f, c} : Dims{g, f / g, c / g};
  geo.weights.insert(geo.weights.end(), w.kernel.begin(), w.kernel.end());
  geo.has_bias = w.has_bias;
  geo.bias = {f};
  return geo;
}

// ThreadBuffer slots of the convolution kernels (a kernel runs on one
// thread from start to end; the slots a step reuses are free by then).
enum Slot { kSlotSrc = 0, kSlotWeights = 1, kSlotDst = 2, kSlotDiffDst = 3 };

// Backward data: (out_grad, weight) -> data_grad into out[0], each through
// its layout. Returns the out_grad the primitive read (for backward
// weights), nothing when the data gradient is not wanted.
std::optional<dnnl::memory> RunDataBackward(
    const dnnl::primitive& prim, const dnnl::memory::desc& scratchpad,
    const Relayout& og_layout, const void* og, const Relayout& w_layout,
    const void* w, const Relayout& dx_layout,
    const std::vector<const void*>& inputs, int32_t req,
    const mxplugin::Tensor& dx_out) {
  OutputBuffer dx(dx_out, req, inputs);
  if (dx.skip()) return std::nullopt;
  const dnnl::memory diff_dst = og_layout.Input(og, kSlotDiffDst);
  const dnnl::memory result = dx_layout.Output(dx.data(), kSlotDst);
  Execute(prim, scratchpad,
          {{DNNL_ARG_DIFF_DST, diff_dst},
           {DNNL_ARG_WEIGHTS, w_layout.Input(w, kSlotWeights)},
           {DNNL_ARG_DIFF_SRC, result}});
  dx_layout.Finish(result, dx.data());
  dx.Finish();
  return diff_dst;
}

// Backward weights: (out_grad, data) -> out[1] (weights) and, with a bias,
// out[2]. One primitive computes both, so one not requested goes to a
// scratch buffer. `og_read` (from RunDataBackward) is reused when it is in
// the layout this primitive wants.
void RunWeightsBackward(const dnnl::primitive& prim,
                        const dnnl::memory::desc& scratchpad,
                        const Relayout& og_layout, const void* og,
                        const std::optional<dnnl::memory>& og_read,
                        const Relayout& x_layout, const void* x,
                        const Relayout& dw_layout,
                        const dnnl::memory::desc& bias, bool has_bias,
                        const std::vector<const void*>& inputs,
                        const int32_t* req, Tensors out) {
  OutputBuffer dw(out[1], req[1], inputs);
  std::optional<OutputBuffer> db;
  if (has_bias) db.emplace(out[2], req[2], inputs);
  if (dw.skip() && (!db || db->skip())) return;
  const dnnl::memory diff_dst =
      og_read && og_read->get_desc() == og_layout.chosen()
          ? *og_read
          : og_layout.Input(og, kSlotDiffDst);
  const dnnl::memory dw_result =
      dw_layout.Output(dw.DataOrScratch(), kSlotWeights);
  std::unordered_map<int, dnnl::memory> args{
      {DNNL_ARG_DIFF_DST, diff_dst},
      {DNNL_ARG_SRC, x_layout.Input(x, kSlotSrc)},
      {DNNL_ARG_DIFF_WEIGHTS, dw_result}};
  if (db) args.emplace(DNNL_ARG_DIFF_BIAS, Wrap(bias, db->DataOrScratch()));
  Execute(prim, scratchpad, std::move(args));
  if (!dw.skip()) dw_layout.Finish(dw_result, dw.data());
  dw.Finish();
  if (db) db->Finish();
}

dnnl::memory::desc BiasDesc(const ConvGeometry& g) {
  return g.has_bias ? PlainDesc(g.bias) : dnnl::memory::desc();
}

// Lets oneDNN choose the layout of data, weights and results: on plain
// (NCHW) arrays it falls back to im2col + GEMM ("gemm:jit"), which on an
// AVX-512 CPU took 2-3x the time of its direct kernels on blocked layouts
// (nChw16c), reorders included. The bias stays plain.
dnnl::memory::desc AnyDesc(const Dims& dims) {
  return dnnl::memory::desc(dims, dnnl::memory::data_type::f32,
                            dnnl::memory::format_tag::any);
}

// MXNet pads symmetrically and rounds the output down; with the right
// padding equal to the left one oneDNN's (floor) output size is the same.
dnnl::convolution_forward::desc ForwardDesc(const ConvGeometry& g) {
  return dnnl::convolution_forward::desc(
      dnnl::prop_kind::forward_training, dnnl::algorithm::convolution_direct,
      AnyDesc(g.src), AnyDesc(g.weights), BiasDesc(g), AnyDesc(g.dst),
      g.strides, g.dilates, g.pad, g.pad);
}

struct ConvForwardPrim {
  dnnl::convolution_forward prim;
  dnnl::memory::desc bias, scratchpad;
  Relayout src, weights, dst;
};

struct ConvBackwardPrims {
  dnnl::convolution_backward_data data;
  dnnl::convolution_backward_weights weights;
  dnnl::memory::desc bias, data_scratchpad, weights_scratchpad;
  // Backward data: (diff_dst, weights) -> diff_src.
  Relayout data_diff_dst, data_weights, diff_src;
  // Backward weights: (diff_dst, src) -> diff_weights[, diff_bias].
  Relayout weights_diff_dst, weights_src, diff_weights;
};

void ConvForward(const KernelContext&, const Attrs& attrs, Tensors in,
                 const int32_t* req, Tensors out) {
  const std::string op = "Convolution";
  RequireFloat32(op, in, out);
  const ConvGeometry g = GeometryOf(attrs, in[0].shape(), out[0].shape(), op);
  if (in.size() != (g.has_bias ? 3 : 2)) Decline(op, "unexpected inputs");
  OutputBuffer dst(out[0], req[0], {in[0].data<float>(), in[1].data<float>()});
  if (dst.skip()) return;
  auto p = CachedPrimitive<ConvForwardPrim>("conv_fwd:" + g.Key(), [&] {
    auto prim = std::make_shared<ConvForwardPrim>();
    dnnl::convolution_forward::primitive_desc pd(
        ForwardDesc(g), UserScratchpadAttr(), Engine());
    prim->src = Relayout(PlainDesc(g.src), pd.src_desc());
    prim->weights = Relayout(PlainDesc(g.weights), pd.weights_desc());
    prim->dst = Relayout(PlainDesc(g.dst), pd.dst_desc());
    prim->bias = pd.bias_desc();
    prim->scratchpad = pd.scratchpad_desc();
    prim->prim = dnnl::convolution_forward(pd);
    return prim;
  });
  const dnnl::memory result = p->dst.Output(dst.data(), kSlotDst);
  std::unordered_map<int, dnnl::memory> args{
      {DNNL_ARG_SRC, p->src.Input(in[0].data<float>(), kSlotSrc)},
      {DNNL_ARG_WEIGHTS, p->weights.Input(in[1].data<float>(), kSlotWeights)},
      {DNNL_ARG_DST, result}};
  if (g.has_bias) {
    args.emplace(DNNL_ARG_BIAS, Wrap(p->bias, in[2].data<float>()));
  }
  Execute(p->prim, p->scratchpad, std::move(args));
  p->dst.Finish(result, dst.data());
  dst.Finish();
}

// (out_grad, data, weight) -> (data_grad, weight_grad[, bias_grad]).
void ConvBackward(const KernelContext&, const Attrs& attrs, Tensors in,
                  const int32_t* req, Tensors out) {
  const std::string op = "_backward_Convolution";
  RequireFloat32(op, in, out);
  const ConvGeometry g = GeometryOf(attrs, in[1].shape(), in[0].shape(), op);
  if (out.size() != (g.has_bias ? 3 : 2)) Decline(op, "unexpected outputs");
  auto p = CachedPrimitive<ConvBackwardPrims>("conv_bwd:" + g.Key(), [&] {
    auto prims = std::make_shared<ConvBackwardPrims>();
    dnnl::convolution_forward::primitive_desc hint(ForwardDesc(g), Engine());
    dnnl::convolution_backward_data::primitive_desc data_pd(
        dnnl::convolution_backward_data::desc(
            dnnl::algorithm::convolution_direct, AnyDesc(g.src),
            AnyDesc(g.weights), AnyDesc(g.dst), g.strides, g.dilates, g.pad,
            g.pad),
        UserScratchpadAttr(), Engine(), hint);
    dnnl::convolution_backward_weights::primitive_desc weights_pd(
        dnnl::convolution_backward_weights::desc(
            dnnl::algorithm::convolution_direct, AnyDesc(g.src),
            AnyDesc(g.weights), BiasDesc(g), AnyDesc(g.dst), g.strides,
            g.dilates, g.pad, g.pad),
        UserScratchpadAttr(), Engine(), hint);
    prims->data_diff_dst = Relayout(PlainDesc(g.dst), data_pd.diff_dst_desc());
    prims->data_weights =
        Relayout(PlainDesc(g.weights), data_pd.weights_desc());
    prims->diff_src = Relayout(PlainDesc(g.src), data_pd.diff_src_desc());
    prims->weights_diff_dst =
        Relayout(PlainDesc(g.dst), weights_pd.diff_dst_desc());
    prims->weights_src = Relayout(PlainDesc(g.src), weights_pd.src_desc());
    prims->diff_weights =
        Relayout(PlainDesc(g.weights), weights_pd.diff_weights_desc());
    prims->bias = weights_pd.diff_bias_desc();
    prims->data_scratchpad = data_pd.scratchpad_desc();
    prims->weights_scratchpad = weights_pd.scratchpad_desc();
    prims->data = dnnl::convolution_backward_data(data_pd);
    prims->weights = dnnl::convolution_backward_weights(weights_pd);
    return prims;
  });
  const float* og = in[0].data<float>();
  const float* x = in[1].data<float>();
  const float* w = in[2].data<float>();
  const std::vector<const void*> inputs{og, x, w};
  const std::optional<dnnl::memory> og_read =
      RunDataBackward(p->data, p->data_scratchpad, p->data_diff_dst, og,
                      p->data_weights, w, p->diff_src, inputs, req[0], out[0]);
  RunWeightsBackward(p->weights, p->weights_scratchpad, p->weights_diff_dst, og,
                     og_read, p->weights_src, x, p->diff_weights, p->bias,
                     g.has_bias, inputs, req, out);
}

// weight dims are (F, C, k...) or (g, F/g, C/g, k...); strides describe
// MXNet's memory order without a copy.
struct DeconvGeometry {
  Dims src, weights, weight_strides, bias, dst, strides, dilates, pad_l, pad_r;
  bool has_bias = false;
  std::string Key() const {
    return DimsKey(src) + ":" + DimsKey(weights) + ":" + DimsKey(dst) + ":s" +
           DimsKey(strides) + ":d" + DimsKey(dilates) + ":p" + DimsKey(pad_l) +
           ":" + DimsKey(pad_r) + (has_bias ? ":bias" : "");
  }
  dnnl::memory::desc Weights() const {
    return StridedDesc(weights, weight_strides);
  }
  dnnl::memory::desc Bias() const {
    return has_bias ? PlainDesc(bias) : dnnl::memory::desc();
  }
};

DeconvGeometry DeconvGeometryOf(const Attrs& attrs,
                                const std::vector<int64_t>& data,
                                const std::vector<int64_t>& output,
                                const std::string& op) {
  // MXNet's Deconvolution has no bias unless asked.
  const WindowAttrs w = ParseWindowAttrs(attrs, data, output, op, "True");
  const std::optional<std::vector<int64_t>> target =
      mxplugin::ParseTuple(attrs.Get("target_shape", "None"));
  if (!target) Decline(op, "cannot read the attributes");
  bool has_target = false;
  for (int64_t v : *target) has_target |= v != 0;
  const size_t rank = w.kernel.size();
  const int64_t g = w.groups, c = data[1], f = w.filters;
  DeconvGeometry geo;
  geo.src = Dims(data.begin(), data.end());
  geo.dst = Dims(output.begin(), output.end());
  geo.strides = w.strides;
  geo.dilates = w.dilates;
  geo.pad_l = geo.pad_r = Dims(rank, 0);
  for (size_t a = 0; a < rank; ++a) {
    // The full transposed output, cropped pad_l on the left and the rest
    // (pad minus adj, or what target_shape leaves) on the right.
    const int64_t full = (data[2 + a] - 1) * w.strides[a] +
                         (w.kernel[a] - 1) * (w.dilates[a] + 1) + 1;
    const int64_t out = output[2 + a];
    geo.pad_l[a] = has_target ? (full - out + 1) / 2 : w.pad[a];
    geo.pad_r[a] = full - out - geo.pad_l[a];
    if (geo.pad_l[a] < 0 || geo.pad_r[a] < 0) {
      Decline(op, "adj beyond the padding");
    }
  }
  int64_t k = 1;
  for (int64_t v : w.kernel) k *= v;
  Dims kstrides(rank, 1);
  for (size_t a = rank; a-- > 1;) kstrides[a - 1] = kstrides[a] * w.kernel[a];
  if (g == 1) {
    geo.weights = {f, c};
    geo.weight_strides = {k, f * k};
  } else {
    geo.weights = {g, f / g, c / g};
    geo.weight_strides = {(c / g) * (f / g) * k, k, (f / g) * k};
  }
  geo.weights.insert(geo.weights.end(), w.kernel.begin(), w.kernel.end());
  geo.weight_strides.insert(geo.weight_strides.end(), kstrides.begin(),
                            kstrides.end());
  geo.has_bias = w.has_bias;
  geo.bias = {f};
  return geo;
}

dnnl::deconvolution_forward::desc DeconvForwardDesc(const DeconvGeometry& g) {
  return dnnl::deconvolution_forward::desc(
      dnnl::prop_kind::forward_training, dnnl::algorithm::deconvolution_direct,
      PlainDesc(g.src), g.Weights(), g.Bias(), PlainDesc(g.dst), g.strides,
      g.dilates, g.pad_l, g.pad_r);
}

struct DeconvForwardPrim {
  dnnl::deconvolution_forward prim;
  dnnl::memory::desc scratchpad;
};

struct DeconvBackwardPrims {
  dnnl::deconvolution_backward_data data;
  dnnl::deconvolution_backward_weights weights;
  dnnl::memory::desc data_scratchpad, weights_scratchpad;
};

void DeconvForward(const KernelContext&, const Attrs& attrs, Tensors in,
                   const int32_t* req, Tensors out) {
  const std::string op = "Deconvolution";
  RequireFloat32(op, in, out);
  const DeconvGeometry g =
      DeconvGeometryOf(attrs, in[0].shape(), out[0].shape(), op);
  if (in.size() != (g.has_bias ? 3 : 2)) Decline(op, "unexpected inputs");
  OutputBuffer dst(out[0], req[0], {in[0].data<float>(), in[1].data<float>()});
  if (dst.skip()) return;
  auto p = CachedPrimitive<DeconvForwardPrim>("deconv_fwd:" + g.Key(), [&] {
    auto prim = std::make_shared<DeconvForwardPrim>();
    dnnl::deconvolution_forward::primitive_desc pd(
        DeconvForwardDesc(g), UserScratchpadAttr(), Engine());
    prim->scratchpad = pd.scratchpad_desc();
    prim->prim = dnnl::deconvolution_forward(pd);
    return prim;
  });
  std::unordered_map<int, dnnl::memory> args{
      {DNNL_ARG_SRC, Wrap(PlainDesc(g.src), in[0].data<float>())},
      {DNNL_ARG_WEIGHTS, Wrap(g.Weights(), in[1].data<float>())},
      {DNNL_ARG_DST, Wrap(PlainDesc(g.dst), dst.data())}};
  if (g.has_bias) {
    args.emplace(DNNL_ARG_BIAS, Wrap(g.Bias(), in[2].data<float>()));
  }
  Execute(p->prim, p->scratchpad, std::move(args));
  dst.Finish();
}

// (out_grad, data, weight) -> (data_grad, weight_grad[, bias_grad]).
void DeconvBackward(const KernelContext&, const Attrs& attrs, Tensors in,
                    const int32_t* req, Tensors out) {
  const std::string op = "_backward_Deconvolution";
  RequireFloat32(op, in, out);
  const DeconvGeometry g =
      DeconvGeometryOf(attrs, in[1].shape(), in[0].shape(), op);
  if (out.size() != (g.has_bias ? 3 : 2)) Decline(op, "unexpected outputs");
  auto p = CachedPrimitive<DeconvBackwardPrims>("deconv_bwd:" + g.Key(), [&] {
    auto prims = std::make_shared<DeconvBackwardPrims>();
    dnnl::deconvolution_forward::primitive_desc hint(DeconvForwardDesc(g),
                                                     Engine());
    dnnl::deconvolution_backward_data::primitive_desc data_pd(
        dnnl::deconvolution_backward_data::desc(
            dnnl::algorithm::deconvolution_direct, PlainDesc(g.src),
            g.Weights(), PlainDesc(g.dst), g.strides, g.dilates, g.pad_l,
            g.pad_r),
        UserScratchpadAttr(), Engine(), hint);
    dnnl::deconvolution_backward_weights::primitive_desc weights_pd(
        dnnl::deconvolution_backward_weights::desc(
            dnnl::algorithm::deconvolution_direct, PlainDesc(g.src),
            g.Weights(), g.Bias(), PlainDesc(g.dst), g.strides, g.dilates,
            g.pad_l, g.pad_r),
        UserScratchpadAttr(), Engine(), hint);
    prims->data_scratchpad = data_pd.scratchpad_desc();
    prims->weights_scratchpad = weights_pd.scratchpad_desc();
    prims->data = dnnl::deconvolution_backward_data(data_pd);
    prims->weights = dnnl::deconvolution_backward_weights(weights_pd);
    return prims;
  });
  const float* og = in[0].data<float>();
  const float* x = in[1].data<float>();
  const float* w = in[2].data<float>();
  const std::vector<const void*> inputs{og, x, w};
  // Plain layouts throughout (the identity Relayout).
  const Relayout src(PlainDesc(g.src)), dst(PlainDesc(g.dst)),
      weights(g.Weights());
  const std::optional<dnnl::memory> og_read =
      RunDataBackward(p->data, p->data_scratchpad, dst, og, weights, w, src,
                      inputs, req[0], out[0]);
  RunWeightsBackward(p->weights, p->weights_scratchpad, dst, og, og_read, src,
                     x, weights, g.Bias(), g.has_bias, inputs, req, out);
}

}  // namespace

void RegisterConvKernels(mxplugin::Plugin& plugin) {
  RegisterCpuKernel(plugin, "Convolution", ConvForward);
  RegisterCpuKernel(plugin, "_backward_Convolution", ConvBackward);
  RegisterCpuKernel(plugin, "Deconvolution", DeconvForward);
  RegisterCpuKernel(plugin, "_backward_Deconvolution", DeconvBackward);
}

}  // namespace mx_onednn
