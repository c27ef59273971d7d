#include "backends/onednn/eltwise_kernels.h"

#include <memory>
#include <string>

#include "backends/common/attr_parse.h"
#include "backends/onednn/dnnl_context.h"
#include "backends/onednn/primitive_cache.h"

namespace mx_onednn {
namespace {

using mxplugin::Attrs;
using mxplugin::KernelContext;
using mxplugin::Tensors;

struct EltwisePrim {
  dnnl::eltwise_forward prim;
  dnnl::memory::desc md, scratchpad;
};

// y = f(x) over all elements, viewed as one 1-D array (the op is
// elementwise, so the shape does not matter; fewer cache entries).
void RunEltwise(const std::string& op, dnnl::algorithm algorithm, float alpha,
                Tensors in, const int32_t* req, Tensors out) {
  RequireFloat32(op, in, out);
  if (in.size() != 1 || out.size() != 1) Decline(op, "unexpected arity");
  // oneDNN eltwise runs in place, so an in-place request writes directly.
  OutputBuffer y(out[0], req[0]);
  if (y.skip()) return;
  const Dims dims{in[0].size()};
  const std::string key =
      "eltwise:" + std::to_string(static_cast<int>(algorithm)) + ":" +
      std::to_string(alpha) + ":" + DimsKey(dims);
  auto p = CachedPrimitive<EltwisePrim>(key, [&] {
    auto prim = std::make_shared<EltwisePrim>();
    prim->md = PlainDesc(dims);
    dnnl::eltwise_forward::primitive_desc pd(
        dnnl::eltwise_forward::desc(dnnl::prop_kind::forward_inference,
                                    algorithm, prim->md, alpha, 0.f),
        UserScratchpadAttr(), Engine());
    prim->scratchpad = pd.scratchpad_desc();
    prim->prim = dnnl::eltwise_forward(pd);
    return prim;
  });
  Execute(p->prim, p->scratchpad,
          {{DNNL_ARG_SRC, Wrap(p->md, in[0].data<float>())},
           {DNNL_ARG_DST, Wrap(p->md, y.data())}});
  y.Finish();
}

void Activation(const KernelContext&, const Attrs& attrs, Tensors in,
                const int32_t* req, Tensors out) {
  const std::string act = attrs.Get("act_type");
  dnnl::algorithm algorithm;
  if (act == "relu") {
    algorithm = dnnl::algorithm::eltwise_relu;
  } else if (act == "sigmoid") {
    algorithm = dnnl::algorithm::eltwise_logistic;
  } else if (act == "tanh") {
    algorithm = dnnl::algorithm::eltwise_tanh;
  } else if (act == "softrelu") {
    algorithm = dnnl::algorithm::eltwise_soft_relu;
  } else {
    Decline("Activation", "act_type " + act);
  }
  RunEltwise("Activation", algorithm, 0.f, in, req, out);
}

void LeakyReLU(const KernelContext&, const Attrs& attrs, Tensors in,
               const int32_t* req, Tensors out) {
  const std::string act = attrs.Get("act_type", "leaky");
  const std::optional<double> slope =
      mxplugin::ParseFloat(attrs.Get("slope", "0.25"));
  if (act != "leaky" || !slope) Decline("LeakyReLU", "act_type " + act);
  RunEltwise("LeakyReLU", dnnl::algorithm::eltwise_relu,
             static_cast<float>(*slope), in, req, out);
}

}  // namespace

void RegisterEltwiseKernels(mxplugin::Plugin& plugin) {
  RegisterCpuKernel(plugin, "Activation", Activation);
  RegisterCpuKernel(plugin, "LeakyReLU", LeakyReLU);
}

}  // namespace mx_onednn
