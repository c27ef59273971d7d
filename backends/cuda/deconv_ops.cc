// Deconvolution and _backward_Deconvolution on cuDNN. A transposed
// convolution from data (N, C, in...) to output (N, F, out...) with weight
// (C, F/g, k...) is the data gradient of the convolution from the output's
// shape to the data's with that weight read as a convolution weight (C
// outputs, F/g inputs per group). So the forward is
// cudnnConvolutionBackwardData, the data gradient cudnnConvolutionForward
// and the weight gradient cudnnConvolutionBackwardFilter, all on one
// ConvPlan (conv_plan.h) whose x is the Deconvolution's output.
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

// Whether target_shape decides the output (MXNet: any entry non-zero).
bool HasTarget(const std::vector<int64_t>& target) {
  for (int64_t v : target) {
    if (v != 0) return true;
  }
  return false;
}

// The convolution plan of a Deconvolution with data, weight and output
// shape `out_shape` (the host's shape inference made it, so only what
// cuDNN cannot express is checked here).
ConvGeometry DeconvGeometry(const std::string& op, const Attrs& attrs,
                            const Tensor& data, const Tensor& weight,
                            const std::vector<int64_t>& out_shape) {
  const auto kernel = mxplugin::ParseTuple(attrs.Get("kernel", "None"));
  const auto groups = mxplugin::ParseInt(attrs.Get("num_group", "1"));
  // MXNet's Deconvolution has no bias unless asked for.
  const auto no_bias = mxplugin::ParseBool(attrs.Get("no_bias", "True"));
  const auto target = mxplugin::ParseTuple(attrs.Get("target_shape", "None"));
  const std::string layout = attrs.Get("layout", "None");
  if (!kernel || kernel->empty() || kernel->size() > 3 || !groups ||
      *groups < 1 || !no_bias || !target) {
    throw Error(MX_STATUS_INVALID_ARGUMENT,
                op + ": cannot read the attributes");
  }
  if (layout != "None" && layout != "NCW" && layout != "NCHW" &&
      layout != "NCDHW") {
    Unsupported(op, "layout " + layout);
  }
  const size_t rank = kernel->size();
  if (data.ndim() != static_cast<int>(rank) + 2 ||
      weight.ndim() != data.ndim() ||
      out_shape.size() != static_cast<size_t>(data.ndim())) {
    throw Error(MX_STATUS_INVALID_ARGUMENT,
                op + ": data, weight and output ranks do not fit a " +
                    std::to_string(rank) + "-D kernel");
  }
  const std::vector<int64_t> stride = PerAxis(op, attrs, "stride", rank, 1);
  const std::vector<int64_t> dilate = PerAxis(op, attrs, "dilate", rank, 1);
  std::vector<int64_t> pad = PerAxis(op, attrs, "pad", rank, 0);
  const bool has_target = HasTarget(*target);
  if (has_target && target->size() != rank) {
    throw Error(MX_STATUS_INVALID_ARGUMENT,
                op + ": target_shape has " + std::to_string(target->size()) +
                    " values for a " + std::to_string(rank) + "-D kernel");
  }
  for (size_t i = 0; i < rank; ++i) {
    const int64_t in = data.dim(2 + static_cast<int>(i));
    const int64_t out = out_shape[2 + i];
    const int64_t span = dilate[i] * ((*kernel)[i] - 1) + 1;
    if (has_target) {
      // As the CPU's shape inference: the crop split evenly, the larger
      // half first.
      const int64_t full = stride[i] * (in - 1) + span;
      pad[i] = (full - (*target)[i] + 1) / 2;
    }
    // cuDNN pads both ends alike; an odd crop (target_shape) or an output
    // that is not the convolution's input is left to the CPU kernel.
    const int64_t covered = out + 2 * pad[i] - span;
    if (covered < 0 || covered / stride[i] + 1 != in) {
      Unsupported(op, "an output of extent " + std::to_string(out) + " from " +
                          std::to_string(in) + " needs uneven padding");
    }
  }
  ConvGeometry g;
  g.dtype = data.dtype();
  g.groups = static_cast<int>(*groups);
  g.has_bias = !*no_bias;
  g.bias_on_x = true;
  g.x = Ints(out_shape);
  g.w = Ints(weight.shape());
  g.y = Ints(data.shape());
  g.stride = Ints(stride);
  g.dilate = Ints(dilate);
  g.pad = Ints(pad);
  if (rank == 1) {  // As 2-D with a height of 1.
    for (auto* v : {&g.x, &g.w, &g.y}) v->insert(v->begin() + 2, 1);
    g.stride.insert(g.stride.begin(), 1);
    g.dilate.insert(g.dilate.begin(), 1);
    g.pad.insert(g.pad.begin(), 0);
  }
  return g;
}

// (data, weight[, bias]) -> output.
void DeconvForward(const KernelContext& ctx, const Attrs& attrs, Tensors in,
                   const int32_t* req, Tensors out) {
  const std::string op = "Deconvolution";
  if (req[0] == MX_REQ_NULL) return;
  RequireFloat(op, in[0]);
  const ConvGeometry g =
      DeconvGeometry(op, attrs, in[0], in[1], out[0].shape());
  cudnnHandle_t h =
      DnnHandle(ctx.dev_id(), static_cast<cudaStream_t>(ctx.stream()));
  auto p = GetConvPlan(op, ctx.dev_id(), g);
  FindBackward(op, h, p.get());
  const int dt = g.dtype;
  void* ws = Workspace(ctx.dev_id(), p->bwd_data_ws);
  CheckDnn(cudnnConvolutionBackwardData(
               h, DnnOne(dt), p->w, in[1].data<void>(), p->y,
               in[0].data<void>(), p->conv, p->bwd_data, ws, p->bwd_data_ws,
               BetaFor(req[0], dt), p->x, out[0].data<void>()),
           op);
  if (g.has_bias && in.size() > 2) {
    CheckDnn(cudnnAddTensor(h, DnnOne(dt), p->bias, in[2].data<void>(),
                            DnnOne(dt), p->x, out[0].data<void>()),
             op + ": bias");
  }
}

// (out_grad, data, weight) -> (data_grad, weight_grad[, bias_grad]).
void DeconvBackward(const KernelContext& ctx, const Attrs& attrs, Tensors in,
                    const int32_t* req, Tensors out) {
  const std::string op = "_backward_Deconvolution";
  RequireFloat(op, in[1]);
  const ConvGeometry g = DeconvGeometry(op, attrs, in[1], in[2], in[0].shape());
  cudnnHandle_t h =
      DnnHandle(ctx.dev_id(), static_cast<cudaStream_t>(ctx.stream()));
  auto p = GetConvPlan(op, ctx.dev_id(), g);
  const int dt = g.dtype;
  if (req[0] != MX_REQ_NULL) {
    FindForward(op, h, p.get());
    void* ws = Workspace(ctx.dev_id(), p->fwd_ws);
    CheckDnn(cudnnConvolutionForward(h, DnnOne(dt), p->x, in[0].data<void>(),
                                     p->w, in[2].data<void>(), p->conv, p->fwd,
                                     ws, p->fwd_ws, BetaFor(req[0], dt), p->y,
                                     out[0].data<void>()),
             op + ": data gradient");
  }
  if (req[1] != MX_REQ_NULL) {
    FindBackward(op, h, p.get());
    void* ws = Workspace(ctx.dev_id(), p->bwd_filter_ws);
    CheckDnn(
        cudnnConvolutionBackwardFilter(
            h, DnnOne(dt), p->x, in[0].data<void>(), p->y, in[1].data<void>(),
            p->conv, p->bwd_filter, ws, p->bwd_filter_ws, BetaFor(req[1], dt),
            p->w, out[1].data<void>()),
        op + ": weight gradient");
  }
  if (g.has_bias && out.size() > 2 && req[2] != MX_REQ_NULL) {
    CheckDnn(cudnnConvolutionBackwardBias(
                 h, DnnOne(dt), p->x, in[0].data<void>(), BetaFor(req[2], dt),
                 p->bias, out[2].data<void>()),
             op + ": bias gradient");
  }
}

}  // namespace

void RegisterDeconvOps(mxplugin::Plugin& plugin) {
  RegisterGpuKernel(plugin, "Deconvolution", DeconvForward);
  RegisterGpuKernel(plugin, "_backward_Deconvolution", DeconvBackward);
}

}  // namespace mx_cuda
