// GPU kernels for LRN and _backward_LRN (one thread per element over the
// shared rules of backends/common/lrn.h); semantics as
// backends/cpu/lrn_ops.cc.
#include <cstdint>
#include <string>

#include "backends/common/attr_parse.h"
#include "backends/cuda/cuda_ops.h"
#include "backends/cuda/cuda_util.h"
#include "backends/cuda/lrn_kernels.h"

namespace mx_cuda {
namespace {

using mxplugin::Attrs;
using mxplugin::Error;
using mxplugin::KernelContext;
using mxplugin::Tensor;
using mxplugin::Tensors;

mx_lrn::LrnSpec SpecOf(const std::string& op, const Attrs& attrs,
                       const Tensor& data) {
  RequireFloat(op, data);
  if (data.ndim() != 4) {
    throw Error(MX_STATUS_SHAPE_ERROR, op + ": data must be 4-D (N, C, H, W)");
  }
  const auto nsize = mxplugin::ParseInt(attrs.Get("nsize", ""));
  if (!nsize || *nsize < 1) {
    throw Error(MX_STATUS_INVALID_ARGUMENT, op + ": nsize must be >= 1");
  }
  return {data.dim(1),
          data.dim(2) * data.dim(3),
          *nsize,
          NumberAttr(op, attrs, "alpha", 1e-4),
          NumberAttr(op, attrs, "beta", 0.75),
          NumberAttr(op, attrs, "knorm", 2)};
}

// data -> (output, tmp_norm).
void LrnForward(const KernelContext& ctx, const Attrs& attrs, Tensors in,
                const int32_t* req, Tensors out) {
  const std::string op = "LRN";
  const mx_lrn::LrnSpec s = SpecOf(op, attrs, in[0]);
  CheckLaunch(op,
              LaunchLrnForward(in[0].dtype(), s, in[0].size(),
                               in[0].data<void>(), out[0].data<void>(), req[0],
                               out[1].data<void>(), req[1], StreamOf(ctx)),
              in[0].dtype());
}

// (out_grad, data, tmp_norm) -> data_grad.
void LrnBackward(const KernelContext& ctx, const Attrs& attrs, Tensors in,
                 const int32_t* req, Tensors out) {
  const std::string op = "_backward_LRN";
  const mx_lrn::LrnSpec s = SpecOf(op, attrs, in[1]);
  CheckLaunch(
      op,
      LaunchLrnBackward(in[1].dtype(), s, in[1].size(), in[0].data<void>(),
                        in[1].data<void>(), in[2].data<void>(),
                        out[0].data<void>(), req[0], StreamOf(ctx)),
      in[1].dtype());
}

}  // namespace

void RegisterLrnOps(mxplugin::Plugin& plugin) {
  RegisterGpuKernel(plugin, "LRN", LrnForward);
  RegisterGpuKernel(plugin, "_backward_LRN", LrnBackward);
}

}  // namespace mx_cuda
