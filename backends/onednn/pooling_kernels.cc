#include "backends/onednn/pooling_kernels.h"

#include <algorithm>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "backends/onednn/dnnl_context.h"
#include "backends/onednn/pool_attrs.h"
#include "backends/onednn/primitive_cache.h"

namespace mx_onednn {
namespace {

using mxplugin::Attrs;
using mxplugin::KernelContext;
using mxplugin::Tensors;

struct PoolGeometry {
  dnnl::algorithm algorithm;
  Dims src, dst, kernel, strides, pad_l, pad_r;
  std::string Key() const {
    return std::to_string(static_cast<int>(algorithm)) + ":" + DimsKey(src) +
           ":" + DimsKey(dst) + ":k" + DimsKey(kernel) + ":s" +
           DimsKey(strides) + ":p" + DimsKey(pad_l) + ":" + DimsKey(pad_r);
  }
};

// A window attribute for `rank` axes: `fill` on each when not given.
Dims PerAxis(const std::vector<int64_t>& given, size_t rank, int64_t fill,
             const std::string& op) {
  if (given.empty()) return Dims(rank, fill);
  if (given.size() != rank) Decline(op, "window attributes of other ranks");
  return Dims(given.begin(), given.end());
}

PoolGeometry GeometryOf(const Attrs& attrs, const std::vector<int64_t>& data,
                        const std::vector<int64_t>& output,
                        const std::string& op) {
  std::string why;
  const std::optional<PoolAttrs> pa = ReadPoolAttrs(attrs, &why);
  if (!pa) Decline(op, why);
  if (data.size() < 3 || data.size() > 5 || output.size() != data.size()) {
    Decline(op, "data rank");
  }
  const size_t rank = data.size() - 2;
  PoolGeometry g;
  g.algorithm = pa->algorithm;
  g.src = Dims(data.begin(), data.end());
  g.dst = Dims(output.begin(), output.end());
  if (pa->global) {
    g.kernel = Dims(data.begin() + 2, data.end());
    g.strides = Dims(rank, 1);
    g.pad_l = Dims(rank, 0);
  } else {
    g.kernel = PerAxis(pa->kernel, rank, 0, op);
    g.strides = PerAxis(pa->stride, rank, 1, op);
    g.pad_l = PerAxis(pa->pad, rank, 0, op);
  }
  g.pad_r = g.pad_l;
  bool asymmetric = false;
  for (size_t a = 0; a < rank; ++a) {
    const int64_t in = g.src[2 + a], out = g.dst[2 + a], k = g.kernel[a];
    const int64_t s = g.strides[a], pl = g.pad_l[a];
    if (k < 1 || s < 1) Decline(op, "kernel or stride below 1");
    // valid rounds down, which oneDNN does with symmetric padding; full
    // rounds up: pad the right end until the last window fits.
    if (pa->full) g.pad_r[a] = std::max(pl, (out - 1) * s + k - in - pl);
    asymmetric |= g.pad_r[a] != pl;
    if ((in + pl + g.pad_r[a] - k) / s + 1 != out) {
      Decline(op, "output size does not match oneDNN's");
    }
    // A window entirely in the padding: the built-in max gives 0 there.
    if (k <= pl || (out - 1) * s - pl >= in) {
      Decline(op, "a window lies entirely in the padding");
    }
  }
  // The built-in kernel counts only the symmetric padding; oneDNN would
  // count full's extra right padding too.
  if (pa->algorithm == dnnl::algorithm::pooling_avg_include_padding &&
      asymmetric) {
    Decline(op, "avg over full's extra padding");
  }
  return g;
}

dnnl::pooling_forward::desc ForwardDesc(const PoolGeometry& g,
                                        dnnl::prop_kind prop) {
  return dnnl::pooling_forward::desc(prop, g.algorithm, PlainDesc(g.src),
                                     PlainDesc(g.dst), g.strides, g.kernel,
                                     g.pad_l, g.pad_r);
}

struct PoolForwardPrim {
  dnnl::pooling_forward prim;
  dnnl::memory::desc scratchpad;
};

struct PoolBackwardPrims {
  dnnl::pooling_forward forward;  // Training: writes the max workspace.
  dnnl::pooling_backward backward;
  dnnl::memory::desc workspace, forward_scratchpad, backward_scratchpad;
};

void PoolForward(const KernelContext&, const Attrs& attrs, Tensors in,
                 const int32_t* req, Tensors out) {
  const std::string op = "Pooling";
  // Max pooling's hidden output 1 holds each window's argmax, which the
  // host's _backward_Pooling_max reads; oneDNN's workspace has another
  // (implementation-defined) format, so the built-in kernel writes both.
  if (out.size() > 1 && req[1] != MX_REQ_NULL) {
    Decline(op, "max pooling with its argmax output requested");
  }
  RequireFloat32(op, in, Tensors(out[0].c(), 1));
  const PoolGeometry g = GeometryOf(attrs, in[0].shape(), out[0].shape(), op);
  OutputBuffer dst(out[0], req[0], {in[0].data<float>()});
  if (dst.skip()) return;
  auto p = CachedPrimitive<PoolForwardPrim>("pool_fwd:" + g.Key(), [&] {
    auto prim = std::make_shared<PoolForwardPrim>();
    dnnl::pooling_forward::primitive_desc pd(
        ForwardDesc(g, dnnl::prop_kind::forward_inference),
        UserScratchpadAttr(), Engine());
    prim->scratchpad = pd.scratchpad_desc();
    prim->prim = dnnl::pooling_forward(pd);
    return prim;
  });
  Execute(p->prim, p->scratchpad,
          {{DNNL_ARG_SRC, Wrap(PlainDesc(g.src), in[0].data<float>())},
           {DNNL_ARG_DST, Wrap(PlainDesc(g.dst), dst.data())}});
  dst.Finish();
}

// (out_grad, data) -> data_grad.
void PoolBackward(const KernelContext&, const Attrs& attrs, Tensors in,
                  const int32_t* req, Tensors out) {
  const std::string op = "_backward_Pooling";
  RequireFloat32(op, in, out);
  const PoolGeometry g = GeometryOf(attrs, in[1].shape(), in[0].shape(), op);
  OutputBuffer dx(out[0], req[0], {in[0].data<float>(), in[1].data<float>()});
  if (dx.skip()) return;
  const bool is_max = g.algorithm == dnnl::algorithm::pooling_max;
  auto p = CachedPrimitive<PoolBackwardPrims>("pool_bwd:" + g.Key(), [&] {
    auto prims = std::make_shared<PoolBackwardPrims>();
    dnnl::pooling_forward::primitive_desc hint(
        ForwardDesc(g, dnnl::prop_kind::forward_training), UserScratchpadAttr(),
        Engine());
    dnnl::pooling_backward::primitive_desc pd(
        dnnl::pooling_backward::desc(g.algorithm, PlainDesc(g.src),
                                     PlainDesc(g.dst), g.strides, g.kernel,
                                     g.pad_l, g.pad_r),
        UserScratchpadAttr(), Engine(), hint);
    prims->forward = dnnl::pooling_forward(hint);
    prims->backward = dnnl::pooling_backward(pd);
    prims->workspace = hint.workspace_desc();
    prims->forward_scratchpad = hint.scratchpad_desc();
    prims->backward_scratchpad = pd.scratchpad_desc();
    return prims;
  });
  std::unordered_map<int, dnnl::memory> args{
      {DNNL_ARG_DIFF_DST, Wrap(PlainDesc(g.dst), in[0].data<float>())},
      {DNNL_ARG_DIFF_SRC, Wrap(PlainDesc(g.src), dx.data())}};
  std::vector<char> workspace;
  if (is_max) {
    std::vector<float> pooled(static_cast<size_t>(in[0].size()));
    workspace.resize(p->workspace.get_size());
    const dnnl::memory ws = Wrap(p->workspace, workspace.data());
    Execute(p->forward, p->forward_scratchpad,
            {{DNNL_ARG_SRC, Wrap(PlainDesc(g.src), in[1].data<float>())},
             {DNNL_ARG_DST, Wrap(PlainDesc(g.dst), pooled.data())},
             {DNNL_ARG_WORKSPACE, ws}});
    args.emplace(DNNL_ARG_WORKSPACE, ws);
  }
  Execute(p->backward, p->backward_scratchpad, std::move(args));
  dx.Finish();
}

}  // namespace

void RegisterPoolingKernels(mxplugin::Plugin& plugin) {
  RegisterCpuKernel(plugin, "Pooling", PoolForward);
  RegisterCpuKernel(plugin, "_backward_Pooling", PoolBackward);
}

}  // namespace mx_onednn
