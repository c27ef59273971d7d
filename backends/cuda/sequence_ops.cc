// GPU kernels for the sequence ops (sequence_kernels.cu): SequenceMask,
// SequenceLast and _backward_SequenceLast, SequenceReverse; attributes read
// as the CPU ops read them (backends/cpu/sequence_ops.cc), shapes checked by
// the host's shape inference. Lengths the CPU refuses (SequenceLast's
// outside [1, T], SequenceReverse's outside [0, T]) are flagged by the
// kernel and raised here after one synchronization.
#include <string>

#include "backends/cuda/cuda_ops.h"
#include "backends/cuda/cuda_util.h"
#include "backends/cuda/sequence_kernels.h"

namespace mx_cuda {
namespace {

using mxplugin::Attrs;
using mxplugin::Error;
using mxplugin::KernelContext;
using mxplugin::Tensor;
using mxplugin::Tensors;

// data's layout and its lengths input (null without use_sequence_length):
// data is input `data`, the lengths follow it.
struct SequenceArgs {
  SequenceShape shape;
  const void* lengths = nullptr;
  int length_dtype = MX_DTYPE_FLOAT32;
};

SequenceArgs ArgsOf(const std::string& op, const Attrs& attrs, Tensors in,
                    int data, int max_axis) {
  const Tensor& x = in[data];
  RequireNumeric(op, x);
  const double axis = NumberAttr(op, attrs, "axis", 0);
  if (axis != 0 && !(axis == 1 && max_axis == 1)) {
    throw Error(MX_STATUS_INVALID_ARGUMENT,
                op + ": axis=" + attrs.Get("axis") +
                    (max_axis == 1 ? " must be 0 or 1" : " must be 0"));
  }
  if (x.ndim() < 2) {
    throw Error(MX_STATUS_SHAPE_ERROR,
                op + ": data needs at least 2 axes (time, batch)");
  }
  SequenceArgs a;
  a.shape = {x.dim(0), x.dim(1), Prod(x, 2, x.ndim()), static_cast<int>(axis)};
  if (FlagAttr(op, attrs, "use_sequence_length", "False")) {
    if (static_cast<int>(in.size()) < data + 2) {
      throw Error(MX_STATUS_INVALID_ARGUMENT,
                  op + ": use_sequence_length=True needs sequence_length");
    }
    a.lengths = in[data + 1].data<void>();
    a.length_dtype = in[data + 1].dtype();
  }
  return a;
}

void SequenceMask(const KernelContext& ctx, const Attrs& attrs, Tensors in,
                  const int32_t* req, Tensors out) {
  const std::string op = "SequenceMask";
  if (req[0] == MX_REQ_NULL) return;
  const SequenceArgs a = ArgsOf(op, attrs, in, 0, 1);
  CheckLaunch(op,
              LaunchSequenceMask(in[0].dtype(), a.length_dtype, a.shape,
                                 in[0].data<void>(), a.lengths,
                                 NumberAttr(op, attrs, "value", 0),
                                 out[0].data<void>(), req[0], StreamOf(ctx)),
              a.length_dtype);
}

constexpr char kLastWhy[] = "a sequence_length is outside [1, T]";

// SequenceLast of data without steps (and no lengths) has no last step to
// take; the CPU raises the same.
void RequireSteps(const std::string& op, const SequenceArgs& a) {
  const SequenceShape& s = a.shape;
  const int64_t steps = s.axis == 0 ? s.d0 : s.d1;
  const int64_t batch = s.axis == 0 ? s.d1 : s.d0;
  if (a.lengths == nullptr && steps < 1 && batch > 0) {
    throw Error(MX_STATUS_INVALID_ARGUMENT,
                op + ": the data has 0 steps; at least 1 needed");
  }
}

void SequenceLast(const KernelContext& ctx, const Attrs& attrs, Tensors in,
                  const int32_t* req, Tensors out) {
  const std::string op = "SequenceLast";
  if (req[0] == MX_REQ_NULL) return;
  const SequenceArgs a = ArgsOf(op, attrs, in, 0, 1);
  RequireSteps(op, a);
  int* bad = FlagAndScratch(ctx, op, 0, nullptr);
  CheckLaunch(op,
              LaunchSequenceLast(
                  in[0].dtype(), a.length_dtype, a.shape, in[0].data<void>(),
                  a.lengths, out[0].data<void>(), req[0], bad, StreamOf(ctx)),
              a.length_dtype);
  if (a.lengths != nullptr) CheckFlag(ctx, op, bad, kLastWhy);
}

// (out_grad, data[, sequence_length]) -> data_grad.
void SequenceLastBackward(const KernelContext& ctx, const Attrs& attrs,
                          Tensors in, const int32_t* req, Tensors out) {
  const std::string op = "_backward_SequenceLast";
  if (req[0] == MX_REQ_NULL) return;
  const SequenceArgs a = ArgsOf(op, attrs, in, 1, 1);
  RequireSteps(op, a);
  cudaStream_t s = StreamOf(ctx);
  int* bad = FlagAndScratch(ctx, op, 0, nullptr);
  ZeroUnlessAdding(op, ctx, out[0], req[0]);
  CheckLaunch(op,
              LaunchSequenceLastBackward(out[0].dtype(), a.length_dtype,
                                         a.shape, in[0].data<void>(), a.lengths,
                                         out[0].data<void>(), bad, s),
              a.length_dtype);
  if (a.lengths != nullptr) CheckFlag(ctx, op, bad, kLastWhy);
}

void SequenceReverse(const KernelContext& ctx, const Attrs& attrs, Tensors in,
                     const int32_t* req, Tensors out) {
  const std::string op = "SequenceReverse";
  if (req[0] == MX_REQ_NULL) return;
  const SequenceArgs a = ArgsOf(op, attrs, in, 0, 0);
  int* bad = FlagAndScratch(ctx, op, 0, nullptr);
  CheckLaunch(op,
              LaunchSequenceReverse(
                  in[0].dtype(), a.length_dtype, a.shape, in[0].data<void>(),
                  a.lengths, out[0].data<void>(), req[0], bad, StreamOf(ctx)),
              a.length_dtype);
  if (a.lengths != nullptr) {
    CheckFlag(ctx, op, bad, "a sequence_length is outside [0, T]");
  }
}

}  // namespace

void RegisterSequenceOps(mxplugin::Plugin& plugin) {
  RegisterGpuKernel(plugin, "SequenceMask", SequenceMask);
  RegisterGpuKernel(plugin, "SequenceLast", SequenceLast);
  RegisterGpuKernel(plugin, "_backward_SequenceLast", SequenceLastBackward);
  RegisterGpuKernel(plugin, "SequenceReverse", SequenceReverse);
}

}  // namespace mx_cuda
