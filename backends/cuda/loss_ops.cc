// GPU kernels for the output layers: SoftmaxOutput (softmax forward; its
// gradient softmax - onehot(label), scaled as grad_scale, normalization,
// use_ignore, smooth_alpha and out_grad say), SoftmaxActivation and
// softmax_cross_entropy with its gradient (loss_kernels.cu; the softmax
// itself is elementwise.h's LaunchSoftmax). A label outside the classes is
// InvalidArgument as on the CPU: the kernels flag it in device memory and
// the host reads the flag back, so these calls synchronize their stream.
#include <cstdint>
#include <string>

#include "backends/common/attr_parse.h"
#include "backends/cuda/cuda_ops.h"
#include "backends/cuda/cuda_util.h"
#include "backends/cuda/elementwise.h"
#include "backends/cuda/norm_kernels.h"

namespace mx_cuda {
namespace {

using mxplugin::Attrs;
using mxplugin::Error;
using mxplugin::KernelContext;
using mxplugin::Tensor;
using mxplugin::Tensors;

constexpr uint64_t kNoBadRow = ~uint64_t{0};

// The softmax lines of data d: over axis 1 at every position
// (multi_output), over the last axis (preserve_shape), else over all axes
// but the first.
Lines SoftmaxLines(const Tensor& d, bool multi_output, bool preserve_shape) {
  Lines l;
  if (d.ndim() == 0) return l;
  if (multi_output) {
    l.outer = d.dim(0);
    l.len = d.ndim() > 1 ? d.dim(1) : 1;
    l.inner = Prod(d, 2, d.ndim());
  } else if (preserve_shape) {
    l.len = d.dim(d.ndim() - 1);
    l.outer = Prod(d, 0, d.ndim() - 1);
  } else {
    l.outer = d.dim(0);
    l.len = Prod(d, 1, d.ndim());
  }
  return l;
}

void RunSoftmax(const std::string& op, const KernelContext& ctx, const Lines& l,
                const Tensor& x, int32_t req, const Tensor& y) {
  RequireFloat(op, x);
  CheckLaunch(
      op,
      LaunchSoftmax(false, x.dtype(), l.outer, l.len, l.inner, 1.0, nullptr,
                    x.data<void>(), y.data<void>(), req, StreamOf(ctx)),
      x.dtype());
}

// (data, label) -> output.
void SoftmaxOutput(const KernelContext& ctx, const Attrs& attrs, Tensors in,
                   const int32_t* req, Tensors out) {
  const std::string op = "SoftmaxOutput";
  const Lines l =
      SoftmaxLines(in[0], FlagAttr(op, attrs, "multi_output", "False"),
                   FlagAttr(op, attrs, "preserve_shape", "False"));
  RunSoftmax(op, ctx, l, in[0], req[0], out[0]);
}

void SoftmaxActivation(const KernelContext& ctx, const Attrs& attrs, Tensors in,
                       const int32_t* req, Tensors out) {
  const std::string op = "SoftmaxActivation";
  const std::string mode = attrs.Get("mode", "instance");
  if (mode != "instance" && mode != "channel") {
    throw Error(MX_STATUS_INVALID_ARGUMENT,
                op + ": mode=" + mode + " is not one of instance, channel");
  }
  const bool channel = mode == "channel";
  if (in[0].ndim() < (channel ? 3 : 1)) {
    throw Error(MX_STATUS_SHAPE_ERROR, op + ": data has " +
                                           std::to_string(in[0].ndim()) +
                                           " axes, too few for mode=" + mode);
  }
  RunSoftmax(op, ctx, SoftmaxLines(in[0], channel, false), in[0], req[0],
             out[0]);
}

void CheckLabelDType(const std::string& op, const Tensor& label) {
  if (label.dtype() == MX_DTYPE_BOOL || DTypeSize(label.dtype()) == 0) {
    throw Error(MX_STATUS_DTYPE_ERROR, op + " on gpu: labels of " +
                                           DTypeName(label.dtype()) +
                                           " are not supported");
  }
}

// (out_grad, output, label) -> data_grad.
void SoftmaxOutputBackward(const KernelContext& ctx, const Attrs& attrs,
                           Tensors in, const int32_t* req, Tensors out) {
  const std::string op = "_backward_SoftmaxOutput";
  if (req[0] == MX_REQ_NULL) return;
  RequireFloat(op, in[1]);
  CheckLabelDType(op, in[2]);
  const bool multi_output = FlagAttr(op, attrs, "multi_output", "False");
  SoftmaxOutputArgs a;
  a.l = SoftmaxLines(in[1], multi_output,
                     FlagAttr(op, attrs, "preserve_shape", "False"));
  a.use_ignore = FlagAttr(op, attrs, "use_ignore", "False");
  a.out_grad = FlagAttr(op, attrs, "out_grad", "False");
  a.ignore_label = NumberAttr(op, attrs, "ignore_label", -1);
  // As MXNet: no label smoothing with multi_output.
  a.smooth_alpha = multi_output ? 0 : NumberAttr(op, attrs, "smooth_alpha", 0);
  const double grad_scale = NumberAttr(op, attrs, "grad_scale", 1);
  const std::string norm_mode = attrs.Get("normalization", "null");
  if (norm_mode != "null" && norm_mode != "batch" && norm_mode != "valid") {
    throw Error(MX_STATUS_INVALID_ARGUMENT,
                op + ": normalization=" + norm_mode +
                    " is not one of null, batch, valid");
  }
  const int64_t rows = a.l.outer * a.l.inner;
  if (in[2].size() != rows) {
    throw Error(MX_STATUS_SHAPE_ERROR, op + ": input 2 (label) has " +
                                           std::to_string(in[2].size()) +
                                           " values but the data needs " +
                                           std::to_string(rows) + " labels");
  }
  cudaStream_t s = StreamOf(ctx);
  // Device words: the first bad row, then the count of rows kept (double).
  void* check = Workspace(ctx, 2 * sizeof(uint64_t));
  CheckLaunch(
      op,
      LaunchSoftmaxOutputCheck(in[2].dtype(), a, in[2].data<void>(), check, s),
      in[2].dtype());
  struct {
    uint64_t bad;
    double valid;
  } host = {kNoBadRow, 0};
  static_assert(sizeof(host) == 2 * sizeof(uint64_t), "two device words");
  ReadBack(op, s, check, &host, sizeof(host));
  if (host.bad != kNoBadRow) {
    throw Error(MX_STATUS_INVALID_ARGUMENT,
                op + ": input 2 (label) holds a value outside the " +
                    std::to_string(a.l.len) + " classes [0, " +
                    std::to_string(a.l.len) + ") at position " +
                    std::to_string(host.bad));
  }
  // As the CPU (MXNet's rule): with multi_output, null and batch also
  // divide by the positions per image.
  double norm = multi_output ? static_cast<double>(a.l.inner) : 1;
  if (norm_mode == "batch") {
    norm = static_cast<double>(rows);
  } else if (norm_mode == "valid") {
    norm = host.valid < 1 ? 1 : host.valid;
  }
  a.scale = grad_scale / norm;
  CheckLaunch(op,
              LaunchSoftmaxOutputGrad(in[1].dtype(), in[2].dtype(), a,
                                      in[0].data<void>(), in[1].data<void>(),
                                      in[2].data<void>(), out[0].data<void>(),
                                      req[0], s),
              in[1].dtype());
}

// data (rows, classes) and labels (rows) as the CPU's shape inference
// makes them.
void CheckCrossEntropyShapes(const std::string& op, const Tensor& data,
                             const Tensor& label) {
  if (data.ndim() != 2 || label.size() != data.dim(0)) {
    throw Error(MX_STATUS_SHAPE_ERROR,
                op + ": data must be (batch, classes) with one label per row");
  }
}

void ThrowBadLabel(const std::string& op, uint64_t row, int64_t classes) {
  throw Error(MX_STATUS_INVALID_ARGUMENT,
              op + ": the label of row " + std::to_string(row) +
                  " is outside the " + std::to_string(classes) +
                  " classes [0, " + std::to_string(classes) + ") of data");
}

// (data, label) -> (1,) loss.
void CrossEntropy(const KernelContext& ctx, const Attrs&, Tensors in,
                  const int32_t* req, Tensors out) {
  const std::string op = "softmax_cross_entropy";
  RequireFloat(op, in[0]);
  CheckLabelDType(op, in[1]);
  CheckCrossEntropyShapes(op, in[0], in[1]);
  const int64_t rows = in[0].dim(0), classes = in[0].dim(1);
  cudaStream_t s = StreamOf(ctx);
  // The row losses, then the bad-row word.
  char* scratch = static_cast<char*>(
      Workspace(ctx, CrossEntropyScratchBytes(rows) + sizeof(uint64_t)));
  auto* bad =
      reinterpret_cast<uint64_t*>(scratch + CrossEntropyScratchBytes(rows));
  CheckCuda(cudaMemsetAsync(bad, 0xff, sizeof(uint64_t), s), op);
  CheckLaunch(op,
              LaunchCrossEntropy(in[0].dtype(), in[1].dtype(), rows, classes,
                                 in[0].data<void>(), in[1].data<void>(),
                                 out[0].data<void>(), req[0], bad, scratch, s),
              in[0].dtype());
  uint64_t host_bad = kNoBadRow;
  ReadBack(op, s, bad, &host_bad, sizeof(host_bad));
  if (host_bad != kNoBadRow) ThrowBadLabel(op, host_bad, classes);
}

// (out_grad (1,), data, label) -> data_grad.
void CrossEntropyBackward(const KernelContext& ctx, const Attrs&, Tensors in,
                          const int32_t* req, Tensors out) {
  const std::string op = "_backward_softmax_cross_entropy";
  if (req[0] == MX_REQ_NULL) return;
  RequireFloat(op, in[1]);
  CheckLabelDType(op, in[2]);
  CheckCrossEntropyShapes(op, in[1], in[2]);
  if (in[0].size() != 1) {
    throw Error(MX_STATUS_SHAPE_ERROR, op + ": out_grad must have 1 element");
  }
  const int64_t rows = in[1].dim(0), classes = in[1].dim(1);
  cudaStream_t s = StreamOf(ctx);
  auto* bad = static_cast<uint64_t*>(Workspace(ctx, sizeof(uint64_t)));
  CheckCuda(cudaMemsetAsync(bad, 0xff, sizeof(uint64_t), s), op);
  CheckLaunch(op,
              LaunchCrossEntropyGrad(in[1].dtype(), in[2].dtype(), rows,
                                     classes, in[0].data<void>(),
                                     in[1].data<void>(), in[2].data<void>(),
                                     out[0].data<void>(), req[0], bad, s),
              in[1].dtype());
  uint64_t host_bad = kNoBadRow;
  ReadBack(op, s, bad, &host_bad, sizeof(host_bad));
  if (host_bad != kNoBadRow) ThrowBadLabel(op, host_bad, classes);
}

}  // namespace

void RegisterLossOps(mxplugin::Plugin& plugin) {
  RegisterGpuKernel(plugin, "SoftmaxOutput", SoftmaxOutput);
  RegisterGpuKernel(plugin, "_backward_SoftmaxOutput", SoftmaxOutputBackward);
  RegisterGpuKernel(plugin, "SoftmaxActivation", SoftmaxActivation);
  RegisterGpuKernel(plugin, "softmax_cross_entropy", CrossEntropy);
  RegisterGpuKernel(plugin, "_backward_softmax_cross_entropy",
                    CrossEntropyBackward);
}

}  // namespace mx_cuda
