// Convolution and _backward_Convolution on cuDNN (1-D as 2-D with height
// 1, 2-D, 3-D; groups, stride, dilation, padding, bias). The fastest
// algorithm for each (shapes, dtype, attributes) is found once and cached
// (conv_plan.h).
#include <string>
#include <vector>

#include "backends/common/attr_parse.h"
#include "backends/cuda/conv_plan.h"
#include "backends/cuda/cuda_ops.h"
#include "backends/cuda/cuda_util.h"

namespace mx_cuda {
namespace {

using mxplugin::Attrs;
using mxplugin::Error;
using mxplugin::KernelContext;
using mxplugin::Tensor;
using mxplugin::Tensors;

ConvGeometry Geometry(const std::string& op, const Attrs& attrs,
                      const Tensor& data, const Tensor& weight,
                      const std::vector<int64_t>& out_shape) {
  const ConvAttrs a = ParseConvAttrs(op, attrs, "False");
  const size_t rank = a.kernel.size();
  ConvGeometry g;
  g.dtype = data.dtype();
  g.groups = static_cast<int>(a.groups);
  g.has_bias = !a.no_bias;
  g.x = Ints(data.shape());
  g.w = Ints(weight.shape());
  g.y = Ints(out_shape);
  g.stride = Ints(PerAxis(op, attrs, "stride", rank, 1));
  g.dilate = Ints(PerAxis(op, attrs, "dilate", rank, 1));
  g.pad = Ints(PerAxis(op, attrs, "pad", rank, 0));
  if (rank == 1) {  // As 2-D with a height of 1.
    for (auto* v : {&g.x, &g.w, &g.y}) v->insert(v->begin() + 2, 1);
    g.stride.insert(g.stride.begin(), 1);
    g.dilate.insert(g.dilate.begin(), 1);
    g.pad.insert(g.pad.begin(), 0);
  }
  return g;
}

void ConvForward(const KernelContext& ctx, const Attrs& attrs, Tensors in,
                 const int32_t* req, Tensors out) {
  const std::string op = "Convolution";
  if (req[0] == MX_REQ_NULL) return;
  const ConvGeometry g = Geometry(op, attrs, in[0], in[1], out[0].shape());
  cudnnHandle_t h =
      DnnHandle(ctx.dev_id(), static_cast<cudaStream_t>(ctx.stream()));
  auto p = GetConvPlan(op, ctx.dev_id(), g);
  FindForward(op, h, p.get());
  const int dt = g.dtype;
  void* ws = Workspace(ctx, p->fwd_ws);
  CheckDnn(cudnnConvolutionForward(h, DnnOne(dt), p->x, in[0].data<void>(),
                                   p->w, in[1].data<void>(), p->conv, p->fwd,
                                   ws, p->fwd_ws, BetaFor(req[0], dt), p->y,
                                   out[0].data<void>()),
           op);
  if (g.has_bias && in.size() > 2) {
    CheckDnn(cudnnAddTensor(h, DnnOne(dt), p->bias, in[2].data<void>(),
                            DnnOne(dt), p->y, out[0].data<void>()),
             op + ": bias");
  }
}

// (out_grad, data, weight) -> (data_grad, weight_grad[, bias_grad]).
void ConvBackward(const KernelContext& ctx, const Attrs& attrs, Tensors in,
                  const int32_t* req, Tensors out) {
  const std::string op = "_backward_Convolution";
  const ConvGeometry g = Geometry(op, attrs, in[1], in[2], in[0].shape());
  cudnnHandle_t h =
      DnnHandle(ctx.dev_id(), static_cast<cudaStream_t>(ctx.stream()));
  auto p = GetConvPlan(op, ctx.dev_id(), g);
  FindBackward(op, h, p.get());
  const int dt = g.dtype;
  if (req[0] != MX_REQ_NULL) {
    void* ws = Workspace(ctx, p->bwd_data_ws);
    CheckDnn(cudnnConvolutionBackwardData(
                 h, DnnOne(dt), p->w, in[2].data<void>(), p->y,
                 in[0].data<void>(), p->conv, p->bwd_data, ws, p->bwd_data_ws,
                 BetaFor(req[0], dt), p->x, out[0].data<void>()),
             op + ": data gradient");
  }
  if (req[1] != MX_REQ_NULL) {
    void* ws = Workspace(ctx, p->bwd_filter_ws);
    CheckDnn(
        cudnnConvolutionBackwardFilter(
            h, DnnOne(dt), p->x, in[1].data<void>(), p->y, in[0].data<void>(),
            p->conv, p->bwd_filter, ws, p->bwd_filter_ws, BetaFor(req[1], dt),
            p->w, out[1].data<void>()),
        op + ": weight gradient");
  }
  if (g.has_bias && out.size() > 2 && req[2] != MX_REQ_NULL) {
    CheckDnn(cudnnConvolutionBackwardBias(
                 h, DnnOne(dt), p->y, in[0].data<void>(), BetaFor(req[2], dt),
                 p->bias, out[2].data<void>()),
             op + ": bias gradient");
  }
}

}  // namespace

void RegisterConvOps(mxplugin::Plugin& plugin) {
  // Read (and checked) now: a bad value fails the plugin's load.
  ReadConvEnv();
  RegisterGpuKernel(plugin, "Convolution", ConvForward);
  RegisterGpuKernel(plugin, "_backward_Convolution", ConvBackward);
}

}  // namespace mx_cuda
