// Deconvolution and _backward_Deconvolution on cuDNN. A transposed
// convolution from data (N, C, in...) to output (N, F, out...) with weight
// (C, F/g, k...) is the data gradient of the convolution from the output's
// shape to the data's with that weight read as a convolution weight (C
// outputs, F/g inputs per group). So the forward is
// cudnnConvolutionBackwardData, the data gradient cudnnConvolutionForward
// and the weight gradient cudnnConvolutionBackwardFilter, all on one
// ConvPlan (conv_plan.h) whose x is the Deconvolution's output. An odd
// target_shape crop (one more position cut at the start than at the end)
// runs on an output one position longer with symmetric padding, then
// cropped (crop_kernels.h); its gradients pad out_grad back the same way.
#include <algorithm>
#include <string>
#include <vector>

#include "backends/common/attr_parse.h"
#include "backends/cuda/conv_plan.h"
#include "backends/cuda/crop_kernels.h"
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

// A Deconvolution as cuDNN runs it: the convolution geometry, and where
// its x (`padded`) is longer than the real output (`out`) by one leading
// position on the axes of an odd crop.
struct DeconvPlan {
  ConvGeometry g;
  std::vector<int64_t> out, padded;
  bool uneven = false;
  // out from padded (a crop), or padded from out (a pad with zeros).
  CropIndex Crop(bool to_padded) const {
    CropIndex c;
    c.ndim = static_cast<int>(out.size());
    for (int d = 0; d < c.ndim; ++d) {
      c.dst[d] = to_padded ? padded[d] : out[d];
      c.src[d] = to_padded ? out[d] : padded[d];
      const int64_t extra = padded[d] - out[d];
      c.begin[d] = to_padded ? -extra : extra;
    }
    return c;
  }
};

// The convolution plan of a Deconvolution with data, weight and output
// shape `out_shape` (the host's shape inference made it, so only what
// cuDNN cannot express is checked here).
DeconvPlan DeconvGeometry(const std::string& op, const Attrs& attrs,
                          const Tensor& data, const Tensor& weight,
                          const std::vector<int64_t>& out_shape) {
  // MXNet's Deconvolution has no bias unless asked for.
  const ConvAttrs a = ParseConvAttrs(op, attrs, "True");
  const auto target = mxplugin::ParseTuple(attrs.Get("target_shape", "None"));
  if (!target) {
    throw Error(MX_STATUS_INVALID_ARGUMENT,
                op + ": cannot read target_shape=\"" +
                    attrs.Get("target_shape", "None") + "\"");
  }
  const size_t rank = a.kernel.size();
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
  DeconvPlan plan;
  plan.out = out_shape;
  plan.padded = out_shape;
  for (size_t i = 0; i < rank; ++i) {
    const int64_t in = data.dim(2 + static_cast<int>(i));
    int64_t out = out_shape[2 + i];
    const int64_t span = dilate[i] * (a.kernel[i] - 1) + 1;
    if (has_target) {
      // As the CPU's shape inference: the crop split evenly, the larger
      // half first.
      const int64_t full = stride[i] * (in - 1) + span;
      const int64_t total = full - (*target)[i];
      pad[i] = (total + 1) / 2;
      if (total % 2 != 0 && pad[i] >= 1) {
        // The CPU crops pad at the start and pad - 1 at the end: compute
        // one more leading position with pad - 1 on both ends.
        pad[i] -= 1;
        out += 1;
        plan.padded[2 + i] = out;
        plan.uneven = true;
      }
    }
    // Anything else cuDNN's symmetric padding cannot give is an output
    // that is not the convolution's input: left to a CPU kernel.
    const int64_t covered = out + 2 * pad[i] - span;
    if (covered < 0 || covered / stride[i] + 1 != in) {
      Unsupported(op, "an output of extent " + std::to_string(out) + " from " +
                          std::to_string(in) + " needs uneven padding");
    }
  }
  ConvGeometry& g = plan.g;
  g.dtype = data.dtype();
  g.groups = static_cast<int>(a.groups);
  g.has_bias = !a.no_bias;
  g.bias_on_x = true;
  g.x = Ints(plan.padded);
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
  return plan;
}

// Scratch for the padded output (when uneven) followed by cuDNN's
// workspace, from one per-thread buffer.
struct Scratch {
  void* padded = nullptr;
  void* ws = nullptr;
};
Scratch ScratchFor(const KernelContext& ctx, const DeconvPlan& plan,
                   size_t ws_bytes) {
  size_t padded_bytes = 0;
  if (plan.uneven) {
    int64_t n = 1;
    for (int64_t d : plan.padded) n *= d;
    padded_bytes =
        AlignedBytes(static_cast<size_t>(n) * DTypeSize(plan.g.dtype));
  }
  char* base = static_cast<char*>(Workspace(ctx, padded_bytes + ws_bytes));
  Scratch s;
  s.padded = plan.uneven ? base : nullptr;
  s.ws = base + padded_bytes;
  return s;
}

// (data, weight[, bias]) -> output.
void DeconvForward(const KernelContext& ctx, const Attrs& attrs, Tensors in,
                   const int32_t* req, Tensors out) {
  const std::string op = "Deconvolution";
  if (req[0] == MX_REQ_NULL) return;
  RequireFloat(op, in[0]);
  const DeconvPlan plan =
      DeconvGeometry(op, attrs, in[0], in[1], out[0].shape());
  const ConvGeometry& g = plan.g;
  cudnnHandle_t h =
      DnnHandle(ctx.dev_id(), static_cast<cudaStream_t>(ctx.stream()));
  auto p = GetConvPlan(op, ctx.dev_id(), g);
  FindBackward(op, h, p.get());
  const int dt = g.dtype;
  const Scratch scratch = ScratchFor(ctx, plan, p->bwd_data_ws);
  // Uneven: the longer output is written, then cropped into out[0].
  void* y = plan.uneven ? scratch.padded : out[0].data<void>();
  const int32_t req_y = plan.uneven ? MX_REQ_WRITE : req[0];
  CheckDnn(cudnnConvolutionBackwardData(h, DnnOne(dt), p->w, in[1].data<void>(),
                                        p->y, in[0].data<void>(), p->conv,
                                        p->bwd_data, scratch.ws, p->bwd_data_ws,
                                        BetaFor(req_y, dt), p->x, y),
           op);
  if (g.has_bias && in.size() > 2) {
    CheckDnn(cudnnAddTensor(h, DnnOne(dt), p->bias, in[2].data<void>(),
                            DnnOne(dt), p->x, y),
             op + ": bias");
  }
  if (plan.uneven) {
    CheckLaunch(op,
                LaunchCrop(dt, plan.Crop(false), y, out[0].data<void>(), req[0],
                           StreamOf(ctx)),
                dt);
  }
}

// (out_grad, data, weight) -> (data_grad, weight_grad[, bias_grad]).
void DeconvBackward(const KernelContext& ctx, const Attrs& attrs, Tensors in,
                    const int32_t* req, Tensors out) {
  const std::string op = "_backward_Deconvolution";
  RequireFloat(op, in[1]);
  const DeconvPlan plan =
      DeconvGeometry(op, attrs, in[1], in[2], in[0].shape());
  const ConvGeometry& g = plan.g;
  cudnnHandle_t h =
      DnnHandle(ctx.dev_id(), static_cast<cudaStream_t>(ctx.stream()));
  auto p = GetConvPlan(op, ctx.dev_id(), g);
  const int dt = g.dtype;
  FindForward(op, h, p.get());
  FindBackward(op, h, p.get());
  const size_t ws_bytes = std::max(p->fwd_ws, p->bwd_filter_ws);
  const Scratch scratch = ScratchFor(ctx, plan, ws_bytes);
  // Uneven: out_grad padded with a leading zero where the output was cut.
  const void* og = in[0].data<void>();
  if (plan.uneven) {
    CheckLaunch(op,
                LaunchCrop(dt, plan.Crop(true), og, scratch.padded,
                           MX_REQ_WRITE, StreamOf(ctx)),
                dt);
    og = scratch.padded;
  }
  if (req[0] != MX_REQ_NULL) {
    CheckDnn(cudnnConvolutionForward(h, DnnOne(dt), p->x, og, p->w,
                                     in[2].data<void>(), p->conv, p->fwd,
                                     scratch.ws, p->fwd_ws, BetaFor(req[0], dt),
                                     p->y, out[0].data<void>()),
             op + ": data gradient");
  }
  if (req[1] != MX_REQ_NULL) {
    CheckDnn(cudnnConvolutionBackwardFilter(
                 h, DnnOne(dt), p->x, og, p->y, in[1].data<void>(), p->conv,
                 p->bwd_filter, scratch.ws, p->bwd_filter_ws,
                 BetaFor(req[1], dt), p->w, out[1].data<void>()),
             op + ": weight gradient");
  }
  if (g.has_bias && out.size() > 2 && req[2] != MX_REQ_NULL) {
    CheckDnn(cudnnConvolutionBackwardBias(h, DnnOne(dt), p->x, og,
                                          BetaFor(req[2], dt), p->bias,
                                          out[2].data<void>()),
             op + ": bias gradient");
  }
}

}  // namespace

void RunDeconvolution(const mxplugin::KernelContext& ctx,
                      const mxplugin::Attrs& attrs, mxplugin::Tensors in,
                      const int32_t* req, mxplugin::Tensors out) {
  DeconvForward(ctx, attrs, in, req, out);
}

void RegisterDeconvOps(mxplugin::Plugin& plugin) {
  RegisterGpuKernel(plugin, "Deconvolution", DeconvForward);
  RegisterGpuKernel(plugin, "_backward_Deconvolution", DeconvBackward);
}

}  // namespace mx_cuda
