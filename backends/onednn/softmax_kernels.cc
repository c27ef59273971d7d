#include "backends/onednn/softmax_kernels.h"

#include <memory>
#include <string>
#include <type_traits>
#include <vector>

#include "backends/common/attr_parse.h"
#include "backends/onednn/dnnl_context.h"
#include "backends/onednn/primitive_cache.h"

namespace mx_onednn {
namespace {

using mxplugin::Attrs;
using mxplugin::KernelContext;
using mxplugin::Tensors;

struct SoftmaxPrim {
  dnnl::primitive prim;
  dnnl::memory::desc md, scratchpad;
};

// The axis in [0, ndim), declining a temperature other than 1.
int AxisOf(const Attrs& attrs, int ndim, const std::string& op) {
  const std::optional<int64_t> axis =
      mxplugin::ParseInt(attrs.Get("axis", "-1"));
  const std::string temperature = attrs.Get("temperature", "None");
  if (temperature != "None" && mxplugin::ParseFloat(temperature) != 1.0) {
    Decline(op, "temperature " + temperature);
  }
  if (!axis || *axis < -ndim || *axis >= ndim) Decline(op, "axis");
  return static_cast<int>(*axis < 0 ? *axis + ndim : *axis);
}

template <bool kLog>
std::shared_ptr<const SoftmaxPrim> Forward(const Dims& dims, int axis) {
  const std::string key =
      std::string(kLog ? "logsoftmax_fwd:" : "softmax_fwd:") + DimsKey(dims) +
      ":" + std::to_string(axis);
  return CachedPrimitive<SoftmaxPrim>(key, [&] {
    auto p = std::make_shared<SoftmaxPrim>();
    p->md = PlainDesc(dims);
    using Fwd = std::conditional_t<kLog, dnnl::logsoftmax_forward,
                                   dnnl::softmax_forward>;
    typename Fwd::primitive_desc pd(
        typename Fwd::desc(dnnl::prop_kind::forward_training, p->md, axis),
        UserScratchpadAttr(), Engine());
    p->scratchpad = pd.scratchpad_desc();
    p->prim = Fwd(pd);
    return p;
  });
}

template <bool kLog>
void SoftmaxForward(const KernelContext&, const Attrs& attrs, Tensors in,
                    const int32_t* req, Tensors out) {
  const std::string op = kLog ? "log_softmax" : "softmax";
  RequireFloat32(op, in, out);
  if (in.size() != 1 || out.size() != 1) Decline(op, "unexpected arity");
  const std::vector<int64_t> shape = in[0].shape();
  const int axis = AxisOf(attrs, static_cast<int>(shape.size()), op);
  // oneDNN's logsoftmax is off by up to ~1.5e-6 where the exact answer is
  // 0 (its log(sum) of 1.0); along an axis of length 1 every output is.
  if (kLog && shape[axis] == 1) Decline(op, "an axis of length 1");
  OutputBuffer y(out[0], req[0]);  // oneDNN softmax runs in place.
  if (y.skip()) return;
  auto p = Forward<kLog>(Dims(shape.begin(), shape.end()), axis);
  Execute(p->prim, p->scratchpad,
          {{DNNL_ARG_SRC, Wrap(p->md, in[0].data<float>())},
           {DNNL_ARG_DST, Wrap(p->md, y.data())}});
  y.Finish();
}

// (out_grad, output) -> data_grad.
template <bool kLog>
void SoftmaxBackward(const KernelContext&, const Attrs& attrs, Tensors in,
                     const int32_t* req, Tensors out) {
  const std::string op = kLog ? "_backward_log_softmax" : "_backward_softmax";
  RequireFloat32(op, in, out);
  if (in.size() != 2 || out.size() != 1) Decline(op, "unexpected arity");
  const std::vector<int64_t> shape = in[1].shape();
  const int axis = AxisOf(attrs, static_cast<int>(shape.size()), op);
  const Dims dims(shape.begin(), shape.end());
  OutputBuffer dx(out[0], req[0], {in[0].data<float>(), in[1].data<float>()});
  if (dx.skip()) return;
  const std::string key =
      std::string(kLog ? "logsoftmax_bwd:" : "softmax_bwd:") + DimsKey(dims) +
      ":" + std::to_string(axis);
  auto p = CachedPrimitive<SoftmaxPrim>(key, [&] {
    auto prim = std::make_shared<SoftmaxPrim>();
    prim->md = PlainDesc(dims);
    using Fwd = std::conditional_t<kLog, dnnl::logsoftmax_forward,
                                   dnnl::softmax_forward>;
    using Bwd = std::conditional_t<kLog, dnnl::logsoftmax_backward,
                                   dnnl::softmax_backward>;
    typename Fwd::primitive_desc hint(
        typename Fwd::desc(dnnl::prop_kind::forward_training, prim->md, axis),
        Engine());
    typename Bwd::primitive_desc pd(
        typename Bwd::desc(prim->md, prim->md, axis), UserScratchpadAttr(),
        Engine(), hint);
    prim->scratchpad = pd.scratchpad_desc();
    prim->prim = Bwd(pd);
    return prim;
  });
  Execute(p->prim, p->scratchpad,
          {{DNNL_ARG_DIFF_DST, Wrap(p->md, in[0].data<float>())},
           {DNNL_ARG_DST, Wrap(p->md, in[1].data<float>())},
           {DNNL_ARG_DIFF_SRC, Wrap(p->md, dx.data())}});
  dx.Finish();
}

}  // namespace

void RegisterSoftmaxKernels(mxplugin::Plugin& plugin) {
  RegisterCpuKernel(plugin, "softmax", SoftmaxForward<false>);
  RegisterCpuKernel(plugin, "log_softmax", SoftmaxForward<true>);
  RegisterCpuKernel(plugin, "_backward_softmax", SoftmaxBackward<false>);
  RegisterCpuKernel(plugin, "_backward_log_softmax", SoftmaxBackward<true>);
}

}  // namespace mx_onednn
