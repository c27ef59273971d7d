#include "backends/onednn/conv_kernels.h"

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "backends/onednn/attr_parse.h"
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

// Geometry from the attributes, data (N, C, spatial...) and output shapes.
ConvGeometry GeometryOf(const Attrs& attrs, const std::vector<int64_t>& data,
                        const std::vector<int64_t>& output,
                        const std::string& op) {
  const std::optional<std::vector<int64_t>> kernel =
      ParseTuple(attrs.Get("kernel", "None"));
  const std::optional<int64_t> filters = ParseInt(attrs.Get("num_filter", ""));
  const std::optional<int64_t> groups = ParseInt(attrs.Get("num_group", "1"));
  const std::optional<bool> no_bias = ParseBool(attrs.Get("no_bias", "False"));
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
  const int64_t g = *groups, c = data[1], f = *filters;
  if (c % g != 0 || f % g != 0) Decline(op, "channels do not divide");
  ConvGeometry geo;
  geo.src = Dims(data.begin(), data.end());
  geo.dst = Dims(output.begin(), output.end());
  geo.strides = PerAxis(ParseTuple(attrs.Get("stride", "None")), rank, 1, op);
  Dims dilate = PerAxis(ParseTuple(attrs.Get("dilate", "None")), rank, 1, op);
  geo.pad = PerAxis(ParseTuple(attrs.Get("pad", "None")), rank, 0, op);
  for (int64_t& d : dilate) d -= 1;
  geo.dilates = dilate;
  geo.weights = g == 1 ? Dims{f, c} : Dims{g, f / g, c / g};
  geo.weights.insert(geo.weights.end(), kernel->begin(), kernel->end());
  geo.has_bias = !*no_bias;
  geo.bias = {f};
  return geo;
}

dnnl::memory::desc BiasDesc(const ConvGeometry& g) {
  return g.has_bias ? PlainDesc(g.bias) : dnnl::memory::desc();
}

// MXNet pads symmetrically and rounds the output down; with the right
// padding equal to the left one oneDNN's (floor) output size is the same.
dnnl::convolution_forward::desc ForwardDesc(const ConvGeometry& g) {
  return dnnl::convolution_forward::desc(
      dnnl::prop_kind::forward_training, dnnl::algorithm::convolution_direct,
      PlainDesc(g.src), PlainDesc(g.weights), BiasDesc(g), PlainDesc(g.dst),
      g.strides, g.dilates, g.pad, g.pad);
}

struct ConvForwardPrim {
  dnnl::convolution_forward prim;
  dnnl::memory::desc src, weights, bias, dst, scratchpad;
};

struct ConvBackwardPrims {
  dnnl::convolution_backward_data data;
  dnnl::convolution_backward_weights weights;
  dnnl::memory::desc src, wei, bias, dst, data_scratchpad, weights_scratchpad;
};

void ConvForward(const KernelContext&, const Attrs& attrs, Tensors in,
                 const int32_t* req, Tensors out) {
  const std::string op = "Convolution";
  RequireFloat32(op, in, out);
  const ConvGeometry g = GeometryOf(attrs, in[0].shape(), out[0].shape(), op);
  if (in.size() != (g.has_bias ? 3 : 2)) Decline(op, "unexpected inputs");
  OutputBuffer dst(out[0], req[0], {in[0].data<float>(), in[1].data<float>()});
  if (dst.skip()) return;
  auto p = PrimitiveCache::Global().GetOrCreate<ConvForwardPrim>(
      "conv_fwd:" + g.Key(), [&] {
        auto prim = std::make_shared<ConvForwardPrim>();
        dnnl::convolution_forward::primitive_desc pd(
            ForwardDesc(g), UserScratchpadAttr(), Engine());
        prim->src = pd.src_desc();
        prim->weights = pd.weights_desc();
        prim->bias = pd.bias_desc();
        prim->dst = pd.dst_desc();
        prim->scratchpad = pd.scratchpad_desc();
        prim->prim = dnnl::convolution_forward(pd);
        return prim;
      });
  std::unordered_map<int, dnnl::memory> args{
      {DNNL_ARG_SRC, Wrap(p->src, in[0].data<float>())},
      {DNNL_ARG_WEIGHTS, Wrap(p->weights, in[1].data<float>())},
      {DNNL_ARG_DST, Wrap(p->dst, dst.data())}};
  if (g.has_bias) {
    args.emplace(DNNL_ARG_BIAS, Wrap(p->bias, in[2].data<float>()));
  }
  Execute(p->prim, p->scratchpad, std::move(args));
  dst.Finish();
}

// (out_grad, data, weight) -> (data_grad, weight_grad[, bias_grad]).
void ConvBackward(const KernelContext&, const Attrs& attrs, Tensors in,
                  const int32_t* req, Tensors out) {
  const std::string op = "_backward_Convolution";
  RequireFloat32(op, in, out);
  const ConvGeometry g = GeometryOf(attrs, in[1].shape(), in[0].shape(), op);
  if (out.size() != (g.has_bias ? 3 : 2)) Decline(op, "unexpected outputs");
  auto p = PrimitiveCache::Global().GetOrCreate<ConvBackwardPrims>(
      "conv_bwd:" + g.Key(), [&] {
        auto prims = std::make_shared<ConvBackwardPrims>();
        dnnl::convolution_forward::primitive_desc hint(ForwardDesc(g),
                                                       Engine());
        dnnl::convolution_backward_data::primitive_desc data_pd(
            dnnl::convolution_backward_data::desc(
                dnnl::algorithm::convolution_direct, PlainDesc(g.src),
                PlainDesc(g.weights), PlainDesc(g.dst), g.strides, g.dilates,
                g.pad, g.pad),
            UserScratchpadAttr(), Engine(), hint);
        dnnl::convolution_backward_weights::primitive_desc weights_pd(
            dnnl::convolution_backward_weights::desc(
                dnnl::algorithm::convolution_direct, PlainDesc(g.src),
                PlainDesc(g.weights), BiasDesc(g), PlainDesc(g.dst), g.strides,
                g.dilates, g.pad, g.pad),
            UserScratchpadAttr(), Engine(), hint);
        prims->src = PlainDesc(g.src);
        prims->wei = PlainDesc(g.weights);
        prims->bias = BiasDesc(g);
        prims->dst = PlainDesc(g.dst);
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
  OutputBuffer dx(out[0], req[0], inputs);
  if (!dx.skip()) {
    Execute(p->data, p->data_scratchpad,
            {{DNNL_ARG_DIFF_DST, Wrap(p->dst, og)},
             {DNNL_ARG_WEIGHTS, Wrap(p->wei, w)},
             {DNNL_ARG_DIFF_SRC, Wrap(p->src, dx.data())}});
    dx.Finish();
  }
  OutputBuffer dw(out[1], req[1], inputs);
  std::optional<OutputBuffer> db;
  if (g.has_bias) db.emplace(out[2], req[2], inputs);
  // One primitive computes both; a skipped bias gradient goes to a
  // temporary (the weight gradient's cost dominates).
  std::vector<float> unused_db;
  if (!dw.skip() || (db && !db->skip())) {
    std::vector<float> unused_dw;
    float* dw_data = dw.data();
    if (dw.skip()) {
      unused_dw.resize(static_cast<size_t>(out[1].size()));
      dw_data = unused_dw.data();
    }
    std::unordered_map<int, dnnl::memory> args{
        {DNNL_ARG_DIFF_DST, Wrap(p->dst, og)},
        {DNNL_ARG_SRC, Wrap(p->src, x)},
        {DNNL_ARG_DIFF_WEIGHTS, Wrap(p->wei, dw_data)}};
    if (db) {
      float* db_data = db->data();
      if (db->skip()) {
        unused_db.resize(static_cast<size_t>(out[2].size()));
        db_data = unused_db.data();
      }
      args.emplace(DNNL_ARG_DIFF_BIAS, Wrap(p->bias, db_data));
    }
    Execute(p->weights, p->weights_scratchpad, std::move(args));
    dw.Finish();
    if (db) db->Finish();
  }
}

// ---- Deconvolution (transposed convolution). ----

// MXNet's weight is (C, F/g, k...): input channels first. oneDNN's logical
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
  const std::optional<std::vector<int64_t>> kernel =
      ParseTuple(attrs.Get("kernel", "None"));
  const std::optional<int64_t> filters = ParseInt(attrs.Get("num_filter", ""));
  const std::optional<int64_t> groups = ParseInt(attrs.Get("num_group", "1"));
  // MXNet's Deconvolution has no bias unless asked.
  const std::optional<bool> no_bias = ParseBool(attrs.Get("no_bias", "True"));
  const std::optional<std::vector<int64_t>> target =
      ParseTuple(attrs.Get("target_shape", "None"));
  const std::string layout = attrs.Get("layout", "None");
  if (!kernel || kernel->empty() || kernel->size() > 3 || !filters || !groups ||
      *groups < 1 || !no_bias || !target) {
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
  const int64_t g = *groups, c = data[1], f = *filters;
  if (c % g != 0 || f % g != 0) Decline(op, "channels do not divide");
  bool has_target = false;
  for (int64_t v : *target) has_target |= v != 0;
  DeconvGeometry geo;
  geo.src = Dims(data.begin(), data.end());
  geo.dst = Dims(output.begin(), output.end());
  geo.strides = PerAxis(ParseTuple(attrs.Get("stride", "None")), rank, 1, op);
  Dims dilate = PerAxis(ParseTuple(attrs.Get("dilate", "None")), rank, 1, op);
  const Dims pad = PerAxis(ParseTuple(attrs.Get("pad", "None")), rank, 0, op);
  geo.pad_l = geo.pad_r = Dims(rank, 0);
  for (size_t a = 0; a < rank; ++a) {
    // The full transposed output, cropped pad_l on the left and the rest
    // (pad minus adj, or what target_shape leaves) on the right.
    const int64_t full =
        (data[2 + a] - 1) * geo.strides[a] + ((*kernel)[a] - 1) * dilate[a] + 1;
    const int64_t out = output[2 + a];
    geo.pad_l[a] = has_target ? (full - out + 1) / 2 : pad[a];
    geo.pad_r[a] = full - out - geo.pad_l[a];
    if (geo.pad_l[a] < 0 || geo.pad_r[a] < 0) {
      Decline(op, "adj beyond the padding");
    }
  }
  for (int64_t& d : dilate) d -= 1;
  geo.dilates = dilate;
  int64_t k = 1;
  for (int64_t v : *kernel) k *= v;
  Dims kstrides(rank, 1);
  for (size_t a = rank; a-- > 1;) kstrides[a - 1] = kstrides[a] * (*kernel)[a];
  if (g == 1) {
    geo.weights = {f, c};
    geo.weight_strides = {k, f * k};
  } else {
    geo.weights = {g, f / g, c / g};
    geo.weight_strides = {(c / g) * (f / g) * k, k, (f / g) * k};
  }
  geo.weights.insert(geo.weights.end(), kernel->begin(), kernel->end());
  geo.weight_strides.insert(geo.weight_strides.end(), kstrides.begin(),
                            kstrides.end());
  geo.has_bias = !*no_bias;
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
  auto p = PrimitiveCache::Global().GetOrCreate<DeconvForwardPrim>(
      "deconv_fwd:" + g.Key(), [&] {
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
  auto p = PrimitiveCache::Global().GetOrCreate<DeconvBackwardPrims>(
      "deconv_bwd:" + g.Key(), [&] {
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
  OutputBuffer dx(out[0], req[0], inputs);
  if (!dx.skip()) {
    Execute(p->data, p->data_scratchpad,
            {{DNNL_ARG_DIFF_DST, Wrap(PlainDesc(g.dst), og)},
             {DNNL_ARG_WEIGHTS, Wrap(g.Weights(), w)},
             {DNNL_ARG_DIFF_SRC, Wrap(PlainDesc(g.src), dx.data())}});
    dx.Finish();
  }
  OutputBuffer dw(out[1], req[1], inputs);
  std::optional<OutputBuffer> db;
  if (g.has_bias) db.emplace(out[2], req[2], inputs);
  if (dw.skip() && (!db || db->skip())) return;
  // One primitive computes both; a skipped one goes to a temporary.
  std::vector<float> unused_dw, unused_db;
  float* dw_data = dw.data();
  if (dw.skip()) {
    unused_dw.resize(static_cast<size_t>(out[1].size()));
    dw_data = unused_dw.data();
  }
  std::unordered_map<int, dnnl::memory> args{
      {DNNL_ARG_DIFF_DST, Wrap(PlainDesc(g.dst), og)},
      {DNNL_ARG_SRC, Wrap(PlainDesc(g.src), x)},
      {DNNL_ARG_DIFF_WEIGHTS, Wrap(g.Weights(), dw_data)}};
  if (db) {
    float* db_data = db->data();
    if (db->skip()) {
      unused_db.resize(static_cast<size_t>(out[2].size()));
      db_data = unused_db.data();
    }
    args.emplace(DNNL_ARG_DIFF_BIAS, Wrap(g.Bias(), db_data));
  }
  Execute(p->weights, p->weights_scratchpad, std::move(args));
  dw.Finish();
  if (db) db->Finish();
}

}  // namespace

void RegisterConvKernels(mxplugin::Plugin& plugin) {
  plugin.RegisterKernel("Convolution", MX_DEVICE_CPU, ConvForward);
  plugin.RegisterKernel("_backward_Convolution", MX_DEVICE_CPU, ConvBackward);
  plugin.RegisterKernel("Deconvolution", MX_DEVICE_CPU, DeconvForward);
  plugin.RegisterKernel("_backward_Deconvolution", MX_DEVICE_CPU,
                        DeconvBackward);
}

}  // namespace mx_onednn
