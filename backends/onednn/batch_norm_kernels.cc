#include "backends/onednn/batch_norm_kernels.h"

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

// The attributes the kernels read, with the built-in op's defaults.
struct BatchNormAttrs {
  float eps = 1e-3f, momentum = 0.9f;
  bool fix_gamma = true, use_global_stats = false;
};

BatchNormAttrs ParseAttrs(const Attrs& attrs, int ndim, const std::string& op) {
  const std::optional<double> eps =
      mxplugin::ParseFloat(attrs.Get("eps", "1e-3"));
  const std::optional<double> momentum =
      mxplugin::ParseFloat(attrs.Get("momentum", "0.9"));
  const std::optional<bool> fix_gamma =
      mxplugin::ParseBool(attrs.Get("fix_gamma", "True"));
  const std::optional<bool> global =
      mxplugin::ParseBool(attrs.Get("use_global_stats", "False"));
  const std::optional<int64_t> axis =
      mxplugin::ParseInt(attrs.Get("axis", "1"));
  if (!eps || !momentum || !fix_gamma || !global || !axis) {
    Decline(op, "cannot read the attributes");
  }
  if (*axis != 1 && *axis != 1 - ndim) Decline(op, "channel axis other than 1");
  if (ndim < 2 || ndim > 5) Decline(op, "data rank");
  return {static_cast<float>(*eps), static_cast<float>(*momentum), *fix_gamma,
          *global};
}

// Writes `values` into a per-channel output under its request.
void WritePerChannel(const mxplugin::Tensor& out, int32_t req,
                     const float* values) {
  float* dst = out.data<float>();
  const int64_t n = out.size();
  if (req == MX_REQ_ADD) {
    for (int64_t i = 0; i < n; ++i) dst[i] += values[i];
  } else if (req != MX_REQ_NULL) {
    for (int64_t i = 0; i < n; ++i) dst[i] = values[i];
  }
}

// gamma, or ones when fix_gamma treats it as 1.
std::vector<float> ScaleOf(const mxplugin::Tensor& gamma, bool fix_gamma) {
  const int64_t c = gamma.size();
  if (fix_gamma) return std::vector<float>(static_cast<size_t>(c), 1.f);
  const float* g = gamma.data<float>();
  return std::vector<float>(g, g + c);
}

dnnl::normalization_flags Flags(bool global_stats) {
  auto flags = dnnl::normalization_flags::use_scale |
               dnnl::normalization_flags::use_shift;
  if (global_stats) flags |= dnnl::normalization_flags::use_global_stats;
  return flags;
}

std::string Key(const char* what, const Dims& dims, float eps, bool global) {
  return std::string(what) + DimsKey(dims) + ":" + std::to_string(eps) +
         (global ? ":global" : ":batch");
}

struct ForwardPrim {
  dnnl::batch_normalization_forward prim;
  dnnl::memory::desc data, stats, scratchpad;
};

struct BackwardPrim {
  dnnl::batch_normalization_backward prim;
  dnnl::memory::desc data, stats, scratchpad;
};

dnnl::batch_normalization_forward::desc ForwardDesc(const Dims& dims, float eps,
                                                    bool global) {
  return dnnl::batch_normalization_forward::desc(
      global ? dnnl::prop_kind::forward_inference
             : dnnl::prop_kind::forward_training,
      PlainDesc(dims), eps, Flags(global));
}

// (data, gamma, beta, moving_mean, moving_var) -> (output, mean, var).
void BatchNormForward(const KernelContext& ctx, const Attrs& attrs, Tensors in,
                      const int32_t* req, Tensors out) {
  const std::string op = "BatchNorm";
  RequireFloat32(op, in, out);
  if (in.size() != 5 || out.size() != 3) Decline(op, "unexpected arity");
  const std::vector<int64_t> shape = in[0].shape();
  const BatchNormAttrs a =
      ParseAttrs(attrs, static_cast<int>(shape.size()), op);
  const Dims dims(shape.begin(), shape.end());
  const int64_t channels = dims[1];
  const bool batch_stats = ctx.is_train() && !a.use_global_stats;
  const bool global = !batch_stats;
  auto p =
      CachedPrimitive<ForwardPrim>(Key("bn_fwd:", dims, a.eps, global), [&] {
        auto prim = std::make_shared<ForwardPrim>();
        dnnl::batch_normalization_forward::primitive_desc pd(
            ForwardDesc(dims, a.eps, global), UserScratchpadAttr(), Engine());
        prim->data = PlainDesc(dims);
        prim->stats = PlainDesc({channels});
        prim->scratchpad = pd.scratchpad_desc();
        prim->prim = dnnl::batch_normalization_forward(pd);
        return prim;
      });
  float* moving_mean = in[3].data<float>();
  float* moving_var = in[4].data<float>();
  std::vector<float> mean(moving_mean, moving_mean + channels);
  std::vector<float> var(moving_var, moving_var + channels);
  const std::vector<float> scale = ScaleOf(in[1], a.fix_gamma);
  OutputBuffer y(out[0], req[0]);
  Execute(p->prim, p->scratchpad,
          {{DNNL_ARG_SRC, Wrap(p->data, in[0].data<float>())},
           {DNNL_ARG_DST, Wrap(p->data, y.DataOrScratch())},
           {DNNL_ARG_SCALE, Wrap(p->stats, scale.data())},
           {DNNL_ARG_SHIFT, Wrap(p->stats, in[2].data<float>())},
           {DNNL_ARG_MEAN, Wrap(p->stats, mean.data())},
           {DNNL_ARG_VARIANCE, Wrap(p->stats, var.data())}});
  y.Finish();
  WritePerChannel(out[1], req[1], mean.data());
  WritePerChannel(out[2], req[2], var.data());
  if (batch_stats) {
    const float m = a.momentum;
    for (int64_t c = 0; c < channels; ++c) {
      moving_mean[c] = moving_mean[c] * m + mean[c] * (1 - m);
      moving_var[c] = moving_var[c] * m + var[c] * (1 - m);
    }
  }
}

// (out_grad, data, gamma, mean, var) -> (data_grad, gamma_grad, beta_grad);
// mean and var are the statistics the forward normalized with.
void BatchNormBackward(const KernelContext& ctx, const Attrs& attrs, Tensors in,
                       const int32_t* req, Tensors out) {
  const std::string op = "_backward_BatchNorm";
  RequireFloat32(op, in, out);
  if (in.size() != 5 || out.size() != 3) Decline(op, "unexpected arity");
  const std::vector<int64_t> shape = in[1].shape();
  const BatchNormAttrs a =
      ParseAttrs(attrs, static_cast<int>(shape.size()), op);
  const Dims dims(shape.begin(), shape.end());
  const int64_t channels = dims[1];
  // Without batch statistics mean and var are constants (dx = og * scale).
  const bool global = !(ctx.is_train() && !a.use_global_stats);
  auto p =
      CachedPrimitive<BackwardPrim>(Key("bn_bwd:", dims, a.eps, global), [&] {
        auto prim = std::make_shared<BackwardPrim>();
        prim->data = PlainDesc(dims);
        prim->stats = PlainDesc({channels});
        dnnl::batch_normalization_forward::primitive_desc hint(
            dnnl::batch_normalization_forward::desc(
                dnnl::prop_kind::forward_training, prim->data, a.eps,
                Flags(global)),
            Engine());
        dnnl::batch_normalization_backward::primitive_desc pd(
            dnnl::batch_normalization_backward::desc(dnnl::prop_kind::backward,
                                                     prim->data, prim->data,
                                                     a.eps, Flags(global)),
            UserScratchpadAttr(), Engine(), hint);
        prim->scratchpad = pd.scratchpad_desc();
        prim->prim = dnnl::batch_normalization_backward(pd);
        return prim;
      });
  const std::vector<float> scale = ScaleOf(in[2], a.fix_gamma);
  std::vector<float> dscale(static_cast<size_t>(channels)),
      dshift(static_cast<size_t>(channels));
  OutputBuffer dx(out[0], req[0], {in[0].data<float>(), in[1].data<float>()});
  Execute(p->prim, p->scratchpad,
          {{DNNL_ARG_SRC, Wrap(p->data, in[1].data<float>())},
           {DNNL_ARG_DIFF_DST, Wrap(p->data, in[0].data<float>())},
           {DNNL_ARG_MEAN, Wrap(p->stats, in[3].data<float>())},
           {DNNL_ARG_VARIANCE, Wrap(p->stats, in[4].data<float>())},
           {DNNL_ARG_SCALE, Wrap(p->stats, scale.data())},
           // oneDNN 2.6 wants the shift bound too (use_shift), though the
           // gradients do not depend on it.
           {DNNL_ARG_SHIFT, Wrap(p->stats, scale.data())},
           {DNNL_ARG_DIFF_SRC, Wrap(p->data, dx.DataOrScratch())},
           {DNNL_ARG_DIFF_SCALE, Wrap(p->stats, dscale.data())},
           {DNNL_ARG_DIFF_SHIFT, Wrap(p->stats, dshift.data())}});
  dx.Finish();
  // A fixed gamma gets no gradient (as the built-in kernel and MXNet).
  if (a.fix_gamma) std::fill(dscale.begin(), dscale.end(), 0.f);
  WritePerChannel(out[1], req[1], dscale.data());
  WritePerChannel(out[2], req[2], dshift.data());
}

}  // namespace

void RegisterBatchNormKernels(mxplugin::Plugin& plugin) {
  RegisterCpuKernel(plugin, "BatchNorm", BatchNormForward);
  RegisterCpuKernel(plugin, "_backward_BatchNorm", BatchNormBackward);
}

}  // namespace mx_onednn
