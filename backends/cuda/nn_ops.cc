// GPU kernels for Pooling (max with its hidden argmax output, avg, sum;
// global; 1-, 2-, 3-D) and its two gradients, BatchNorm and its gradient,
// and Dropout (nn_kernels.cu).
#include <string>

#include "backends/common/attr_parse.h"
#include "backends/cuda/cuda_ops.h"
#include "backends/cuda/cuda_util.h"
#include "backends/cuda/dnn_calls.h"
#include "backends/cuda/elementwise.h"
#include "backends/cuda/nn_kernels.h"

namespace mx_cuda {
namespace {

using mxplugin::Attrs;
using mxplugin::Error;
using mxplugin::KernelContext;
using mxplugin::Tensor;
using mxplugin::Tensors;

struct PoolAttrs {
  PoolType type = PoolType::kMax;
  bool include_pad = true;
  PoolShape shape;
};

// The pooling geometry of data (N, C, spatial...) and output shapes.
PoolAttrs ParsePool(const std::string& op, const Attrs& attrs,
                    const Tensor& data, const Tensor& output) {
  PoolAttrs a;
  const std::string type = attrs.Get("pool_type", "max");
  const std::string convention = attrs.Get("pooling_convention", "valid");
  if (type == "max") {
    a.type = PoolType::kMax;
  } else if (type == "avg") {
    a.type = PoolType::kAvg;
  } else if (type == "sum") {
    a.type = PoolType::kSum;
  } else {
    Unsupported(op, "pool_type=" + type);
  }
  if (convention != "valid" && convention != "full") {
    Unsupported(op, "pooling_convention=" + convention);
  }
  a.include_pad = FlagAttr(op, attrs, "count_include_pad", "True");
  const bool global = FlagAttr(op, attrs, "global_pool", "False");
  const int rank = data.ndim() - 2;
  if (rank < 1 || rank > 3 || output.ndim() != data.ndim()) {
    Unsupported(op, "data of rank " + std::to_string(data.ndim()));
  }
  const auto kernel = mxplugin::ParseTuple(attrs.Get("kernel", "None"));
  const auto stride = mxplugin::ParseTuple(attrs.Get("stride", "None"));
  const auto pad = mxplugin::ParseTuple(attrs.Get("pad", "None"));
  if (!kernel || !stride || !pad ||
      (!global && static_cast<int>(kernel->size()) != rank)) {
    throw Error(MX_STATUS_INVALID_ARGUMENT,
                op + ": cannot read kernel/stride/pad for " +
                    std::to_string(rank) + "-D data");
  }
  PoolShape& g = a.shape;
  g.planes = data.dim(0) * data.dim(1);
  for (int i = 0; i < rank; ++i) {
    const int slot = 3 - rank + i;
    g.in[slot] = data.dim(2 + i);
    g.out[slot] = output.dim(2 + i);
    if (global) {
      g.k[slot] = g.in[slot];
    } else {
      g.k[slot] = (*kernel)[i];
      if (!stride->empty()) g.s[slot] = (*stride)[i];
      if (!pad->empty()) g.p[slot] = (*pad)[i];
    }
  }
  return a;
}

void CheckArgmaxFits(const std::string& op, const PoolShape& g) {
  if (g.in[0] * g.in[1] * g.in[2] > 2147483647) {
    Unsupported(op, "planes too large for int32 argmax positions");
  }
}

void PoolingForward(const KernelContext& ctx, const Attrs& attrs, Tensors in,
                    const int32_t* req, Tensors out) {
  const std::string op = "Pooling";
  const PoolAttrs a = ParsePool(op, attrs, in[0], out[0]);
  const bool want_argmax = out.size() > 1 && req[1] != MX_REQ_NULL;
  if (req[0] == MX_REQ_NULL && !want_argmax) return;
  if (want_argmax) {
    CheckArgmaxFits(op, a.shape);
  } else if (DnnPoolForward(op, ctx, a.type, a.include_pad, in[0].dtype(),
                            in[0].dim(1), a.shape, in[0].data<void>(),
                            out[0].data<void>(), req[0])) {
    return;
  }
  const cudaError_t err = LaunchPoolForward(
      a.type, a.include_pad, in[0].dtype(), a.shape, in[0].data<void>(),
      out[0].data<void>(), req[0],
      want_argmax ? out[1].data<int32_t>() : nullptr, StreamOf(ctx));
  if (err == cudaErrorInvalidValue) {
    throw Error(
        MX_STATUS_DTYPE_ERROR,
        op + " on gpu: " + DTypeName(in[0].dtype()) + " is not supported");
  }
  CheckCuda(err, op);
}

// (out_grad, [argmax,] data) -> data_grad.
void PoolingBackward(const std::string& op, const KernelContext& ctx,
                     const Attrs& attrs, const Tensor& og,
                     const int32_t* argmax, const Tensor& data, int32_t req,
                     const Tensor& dx) {
  const PoolAttrs a = ParsePool(op, attrs, data, og);
  if (argmax != nullptr && a.type != PoolType::kMax) {
    throw Error(MX_STATUS_INVALID_ARGUMENT, op + ": pool_type must be max");
  }
  int* bad = static_cast<int*>(Workspace(ctx, sizeof(int)));
  cudaStream_t s = StreamOf(ctx);
  if (argmax != nullptr) CheckCuda(cudaMemsetAsync(bad, 0, sizeof(int), s), op);
  const cudaError_t err = LaunchPoolBackward(
      a.type, a.include_pad, data.dtype(), a.shape, og.data<void>(),
      data.data<void>(), argmax, dx.data<void>(), req, bad, s);
  if (err == cudaErrorInvalidValue) {
    throw Error(
        MX_STATUS_DTYPE_ERROR,
        op + " on gpu: " + DTypeName(data.dtype()) + " is not supported");
  }
  CheckCuda(err, op);
  if (argmax != nullptr) {
    int host_bad = 0;
    ReadBack(op, s, bad, &host_bad, sizeof(host_bad));
    if (host_bad != 0) {
      throw Error(MX_STATUS_INVALID_ARGUMENT,
                  op + ": input 1 (argmax) holds a position outside its "
                       "window's plane");
    }
  }
}

BatchNormArgs ParseBatchNorm(const std::string& op, const KernelContext& ctx,
                             const Attrs& attrs, const Tensor& data) {
  BatchNormArgs a;
  a.eps = NumberAttr(op, attrs, "eps", 1e-3);
  a.momentum = NumberAttr(op, attrs, "momentum", 0.9);
  a.fix_gamma = FlagAttr(op, attrs, "fix_gamma", "True");
  const bool global = FlagAttr(op, attrs, "use_global_stats", "False");
  const auto axis = mxplugin::ParseInt(attrs.Get("axis", "1"));
  const int n = data.ndim();
  if (!axis || *axis < -n || *axis >= n) {
    throw Error(MX_STATUS_INVALID_ARGUMENT,
                op + ": axis=" + attrs.Get("axis", "1") + " for " +
                    std::to_string(n) + " dims");
  }
  const int ax = static_cast<int>(*axis < 0 ? *axis + n : *axis);
  a.outer = a.inner = 1;
  for (int d = 0; d < ax; ++d) a.outer *= data.dim(d);
  for (int d = ax + 1; d < n; ++d) a.inner *= data.dim(d);
  a.channels = data.dim(ax);
  a.batch_stats = ctx.is_train() && !global && a.outer * a.inner > 0;
  return a;
}

// (data, gamma, beta, moving_mean, moving_var) -> (output, mean, var).
void BatchNormForward(const KernelContext& ctx, const Attrs& attrs, Tensors in,
                      const int32_t* req, Tensors out) {
  const std::string op = "BatchNorm";
  const BatchNormArgs a = ParseBatchNorm(op, ctx, attrs, in[0]);
  if (DnnBatchNormTrain(op, ctx, a, in[0].dtype(), in[0].data<void>(),
                        in[1].data<void>(), in[2].data<void>(),
                        in[3].data<void>(), in[4].data<void>(),
                        out[0].data<void>(), req[0], out[1].data<void>(),
                        req[1], out[2].data<void>(), req[2])) {
    return;
  }
  CheckLaunch(op,
              LaunchBatchNormForward(
                  in[0].dtype(), a, in[0].data<void>(), in[1].data<void>(),
                  in[2].data<void>(), in[3].data<void>(), in[4].data<void>(),
                  out[0].data<void>(), req[0], out[1].data<void>(), req[1],
                  out[2].data<void>(), req[2],
                  Workspace(ctx, BatchNormScratchBytes(a)), StreamOf(ctx)),
              in[0].dtype());
}

// (out_grad, data, gamma, mean, var) -> (data_grad, gamma_grad, beta_grad).
void BatchNormBackward(const KernelContext& ctx, const Attrs& attrs, Tensors in,
                       const int32_t* req, Tensors out) {
  const std::string op = "_backward_BatchNorm";
  const BatchNormArgs a = ParseBatchNorm(op, ctx, attrs, in[1]);
  CheckLaunch(op,
              LaunchBatchNormBackward(
                  in[1].dtype(), a, in[0].data<void>(), in[1].data<void>(),
                  in[2].data<void>(), in[3].data<void>(), in[4].data<void>(),
                  out[0].data<void>(), req[0], out[1].data<void>(), req[1],
                  out[2].data<void>(), req[2],
                  Workspace(ctx, BatchNormScratchBytes(a)), StreamOf(ctx)),
              in[1].dtype());
}

// data -> (output, mask): the mask is 1 outside training (and mode
// "always"), else 0 or 1/(1-p); output = data * mask (broadcast).
void Dropout(const KernelContext& ctx, const Attrs& attrs, Tensors in,
             const int32_t* req, Tensors out) {
  const std::string op = "Dropout";
  const double p = NumberAttr(op, attrs, "p", 0.5);
  const std::string mode = attrs.Get("mode", "training");
  const bool active = (ctx.is_train() || mode == "always") && p > 0;
  cudaStream_t s = StreamOf(ctx);
  const int dt = in[0].dtype();
  const Tensor mask = out[1];
  // The mask is written even when not requested: the output needs it.
  if (active) {
    CheckLaunch(op,
                LaunchDropoutMask(dt, mask.size(), p, ctx.RandomU64(),
                                  mask.data<void>(), s),
                dt);
  } else {
    CheckLaunch(op, LaunchFill(dt, mask.size(), 1.0, mask.data<void>(), s), dt);
  }
  if (req[0] == MX_REQ_NULL) return;
  BroadcastIndex bc;
  const bool same = mask.shape() == in[0].shape();
  if (!same) {
    const int n = in[0].ndim();
    if (n > kMaxDims) Unsupported(op, "more than 8 dimensions");
    bc.ndim = n;
    int64_t sa = 1, sb = 1;
    for (int d = n - 1; d >= 0; --d) {
      bc.shape[d] = in[0].dim(d);
      bc.a_stride[d] = sa;
      bc.b_stride[d] = mask.dim(d) == 1 ? 0 : sb;
      sa *= in[0].dim(d);
      sb *= mask.dim(d);
    }
  }
  CheckLaunch(op,
              LaunchBinary(Binary::kMul, dt, in[0].size(), in[0].data<void>(),
                           mask.data<void>(), out[0].data<void>(), req[0],
                           same ? nullptr : &bc, s),
              dt);
}

}  // namespace

void RegisterNnOps(mxplugin::Plugin& plugin) {
  OwnKernelsOnly();  // Read (and checked) now: a bad value fails the load.
  RegisterGpuKernel(plugin, "Pooling", PoolingForward);
  RegisterGpuKernel(plugin, "_backward_Pooling",
                    [](const KernelContext& ctx, const Attrs& attrs, Tensors in,
                       const int32_t* req, Tensors out) {
                      PoolingBackward("_backward_Pooling", ctx, attrs, in[0],
                                      nullptr, in[1], req[0], out[0]);
                    });
  RegisterGpuKernel(
      plugin, "_backward_Pooling_max",
      [](const KernelContext& ctx, const Attrs& attrs, Tensors in,
         const int32_t* req, Tensors out) {
        if (in[1].dtype() != MX_DTYPE_INT32) {
          throw Error(MX_STATUS_DTYPE_ERROR,
                      "_backward_Pooling_max: argmax must be int32");
        }
        PoolingBackward("_backward_Pooling_max", ctx, attrs, in[0],
                        in[1].data<int32_t>(), in[2], req[0], out[0]);
      });
  RegisterGpuKernel(plugin, "BatchNorm", BatchNormForward);
  RegisterGpuKernel(plugin, "_backward_BatchNorm", BatchNormBackward);
  RegisterGpuKernel(plugin, "Dropout", Dropout);
}

}  // namespace mx_cuda
