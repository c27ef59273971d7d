// GPU kernels for the spatial resampling ops: _contrib_BilinearResize2D
// (resize_kernels.cu) and Crop (a strided gather; its gradient a scatter
// into zeros), with their gradients. The host's shape inference chose the
// output size: the kernels read it from the output's (or the gradient's)
// shape.
#include <string>
#include <vector>

#include "backends/common/attr_parse.h"
#include "backends/cuda/cuda_ops.h"
#include "backends/cuda/cuda_util.h"
#include "backends/cuda/elementwise.h"
#include "backends/cuda/resize_kernels.h"

namespace mx_cuda {
namespace {

using mxplugin::Attrs;
using mxplugin::Error;
using mxplugin::KernelContext;
using mxplugin::Tensor;
using mxplugin::Tensors;

// data (N, C, H, W) resized to large's (.., OH, OW).
ResizeShape ShapeOf(const std::string& op, const Attrs& attrs,
                    const Tensor& data, const Tensor& large) {
  RequireFloat(op, data);
  if (data.ndim() != 4 || large.ndim() != 4) {
    throw Error(MX_STATUS_SHAPE_ERROR, op + ": needs NCHW arrays");
  }
  ResizeShape r;
  r.planes = data.dim(0) * data.dim(1);
  r.in_h = data.dim(2);
  r.in_w = data.dim(3);
  r.out_h = large.dim(2);
  r.out_w = large.dim(3);
  r.align_corners = FlagAttr(op, attrs, "align_corners", "True");
  return r;
}

void Resize(const KernelContext& ctx, const Attrs& attrs, Tensors in,
            const int32_t* req, Tensors out) {
  const std::string op = "_contrib_BilinearResize2D";
  if (req[0] == MX_REQ_NULL) return;
  const ResizeShape r = ShapeOf(op, attrs, in[0], out[0]);
  CheckLaunch(op,
              LaunchBilinearResize(in[0].dtype(), r, in[0].data<void>(),
                                   out[0].data<void>(), req[0], StreamOf(ctx)),
              in[0].dtype());
}

// (ograd, data[, like]) -> (data_grad[, zeros for like]).
void ResizeBackward(const KernelContext& ctx, const Attrs& attrs, Tensors in,
                    const int32_t* req, Tensors out) {
  const std::string op = "_backward_contrib_BilinearResize2D";
  cudaStream_t s = StreamOf(ctx);
  if (out.size() > 1) FillOutput(op, s, out[1], req[1], 0.0);
  if (req[0] == MX_REQ_NULL) return;
  const ResizeShape r = ShapeOf(op, attrs, in[1], in[0]);
  const size_t bytes = static_cast<size_t>(out[0].size()) * sizeof(double);
  double* acc = static_cast<double*>(Workspace(ctx, bytes));
  CheckLaunch(op,
              LaunchBilinearResizeBackward(in[1].dtype(), r, in[0].data<void>(),
                                           out[0].data<void>(), req[0], acc, s),
              in[1].dtype());
}

// Crop of data (N, C, H, W) to `crop`'s (h, w): the window as a strided
// view of data (the corner from offset or centred, as the CPU's).
GatherIndex CropIndex(const std::string& op, const Attrs& attrs,
                      const Tensor& data, const Tensor& crop) {
  if (data.ndim() != 4 || crop.ndim() != 4) {
    throw Error(MX_STATUS_SHAPE_ERROR, op + ": needs NCHW arrays");
  }
  const int64_t h = crop.dim(2), w = crop.dim(3);
  int64_t y, x;
  if (FlagAttr(op, attrs, "center_crop", "False")) {
    y = (data.dim(2) - h) / 2;
    x = (data.dim(3) - w) / 2;
  } else {
    const auto offset = mxplugin::ParseTuple(attrs.Get("offset", "(0, 0)"));
    if (!offset || offset->size() != 2) {
      throw Error(MX_STATUS_INVALID_ARGUMENT, op + ": offset must be (y, x)");
    }
    y = (*offset)[0];
    x = (*offset)[1];
  }
  if (y < 0 || x < 0 || y + h > data.dim(2) || x + w > data.dim(3)) {
    throw Error(MX_STATUS_SHAPE_ERROR, op + ": the crop leaves the data");
  }
  const std::vector<int64_t> strides = StridesOf(data);
  GatherIndex gi;
  gi.ndim = 4;
  for (int d = 0; d < 4; ++d) {
    gi.shape[d] = crop.dim(d);
    gi.stride[d] = strides[d];
  }
  gi.offset = y * data.dim(3) + x;
  return gi;
}

void Crop(const KernelContext& ctx, const Attrs& attrs, Tensors in,
          const int32_t* req, Tensors out) {
  const std::string op = "Crop";
  RunGather(op, ctx, CropIndex(op, attrs, in[0], out[0]), in[0], out[0],
            req[0]);
}

// (ograd, data[, crop_like]) -> (data_grad[, zeros for crop_like]).
void CropBackward(const KernelContext& ctx, const Attrs& attrs, Tensors in,
                  const int32_t* req, Tensors out) {
  const std::string op = "_backward_Crop";
  if (out.size() > 1) FillOutput(op, StreamOf(ctx), out[1], req[1], 0.0);
  RunScatter(op, ctx, CropIndex(op, attrs, in[1], in[0]), in[0], out[0],
             req[0]);
}

}  // namespace

void RegisterResizeOps(mxplugin::Plugin& plugin) {
  RegisterGpuKernel(plugin, "Crop", Crop);
  RegisterGpuKernel(plugin, "_backward_Crop", CropBackward);
  RegisterGpuKernel(plugin, "_contrib_BilinearResize2D", Resize);
  RegisterGpuKernel(plugin, "_backward_contrib_BilinearResize2D",
                    ResizeBackward);
}

}  // namespace mx_cuda
