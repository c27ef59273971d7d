// GPU kernels for npx.index_add, npx.index_update, their gradients
// (_backward_index_add_val, _backward_index_update_val,
// _backward_index_update_a) and npx.constraint_check
// (index_modify_kernels.cu). The geometry is the CPU's
// (backends/common/index_modify_geometry.h); indices out of range, and a
// false element for constraint_check, are flagged by the kernels and
// raised here after one synchronization, as for gather_nd.
#include <string>
#include <vector>

#include "backends/common/index_modify_geometry.h"
#include "backends/cuda/cuda_ops.h"
#include "backends/cuda/cuda_util.h"
#include "backends/cuda/index_modify_kernels.h"

namespace mx_cuda {
namespace {

using mxplugin::Attrs;
using mxplugin::Error;
using mxplugin::KernelContext;
using mxplugin::Tensor;
using mxplugin::Tensors;

// The device form of the geometry of a, ind and val (val's shape () for
// index_update's a gradient, which has none).
IndexModifyShape ShapeOf(const std::string& op, const Tensor& a,
                         const Tensor& ind, const std::vector<int64_t>& val) {
  mx_math::IndexModifyGeometry g;
  const std::string why =
      mx_math::IndexModifyGeometryOf(a.shape(), ind.shape(), val, &g);
  if (!why.empty()) throw Error(MX_STATUS_SHAPE_ERROR, op + ": " + why);
  if (a.ndim() > kMaxDims) {
    Unsupported(op, "a of rank " + std::to_string(a.ndim()));
  }
  IndexModifyShape s;
  s.k = static_cast<int>(g.k);
  for (int j = 0; j < s.k; ++j) s.lead[j] = g.lead[j];
  s.count = g.count;
  s.tail = g.tail;
  s.rows = g.rows;
  s.tail_ndim = static_cast<int>(g.tail_dims.size());
  for (int d = 0; d < s.tail_ndim; ++d) {
    s.tail_dims[d] = g.tail_dims[d];
    s.val_tail_step[d] = g.val_tail_step[d];
  }
  s.val_index_step = g.val_index_step;
  s.val_size = 1;
  for (int64_t d : val) s.val_size *= d;
  return s;
}

const char kRangeWhy[] =
    "input 1 (ind) holds an index outside [0, length) of its axis of a";

template <bool kUpdate>
void IndexModify(const KernelContext& ctx, const Attrs&, Tensors in,
                 const int32_t* req, Tensors out) {
  const std::string op = kUpdate ? "_npx_index_update" : "_npx_index_add";
  RequireNumeric(op, in[0]);
  const IndexModifyShape s = ShapeOf(op, in[0], in[1], in[2].shape());
  void* scratch = nullptr;
  const size_t bytes = kUpdate ? IndexUpdateScratchBytes(s)
                               : IndexAddScratchBytes(in[0].dtype(), s);
  int* bad = FlagAndScratch(ctx, op, bytes, &scratch);
  const auto launch = kUpdate ? LaunchIndexUpdate : LaunchIndexAdd;
  CheckLaunch(op,
              launch(in[0].dtype(), in[1].dtype(), s, in[0].data<void>(),
                     in[1].data<void>(), in[2].data<void>(),
                     out[0].data<void>(), req[0], bad, scratch, StreamOf(ctx)),
              in[1].dtype() == MX_DTYPE_INT32 || in[1].dtype() == MX_DTYPE_INT64
                  ? in[0].dtype()
                  : in[1].dtype());
  CheckFlag(ctx, op, bad, kRangeWhy);
}

// (out_grad, ind, val) -> val_grad.
template <bool kUpdate>
void ValGrad(const KernelContext& ctx, const Attrs&, Tensors in,
             const int32_t* req, Tensors out) {
  const std::string op =
      kUpdate ? "_backward_index_update_val" : "_backward_index_add_val";
  RequireFloat(op, out[0]);
  const IndexModifyShape s = ShapeOf(op, in[0], in[1], in[2].shape());
  void* scratch = nullptr;
  int* bad = FlagAndScratch(
      ctx, op, IndexValGradScratchBytes(out[0].dtype(), s, kUpdate), &scratch);
  CheckLaunch(op,
              LaunchIndexValGrad(out[0].dtype(), in[1].dtype(), s, kUpdate,
                                 in[0].data<void>(), in[1].data<void>(),
                                 out[0].data<void>(), req[0], bad, scratch,
                                 StreamOf(ctx)),
              in[1].dtype());
  CheckFlag(ctx, op, bad, kRangeWhy);
}

// (out_grad, ind) -> a_grad of index_update.
void UpdateAGrad(const KernelContext& ctx, const Attrs&, Tensors in,
                 const int32_t* req, Tensors out) {
  const std::string op = "_backward_index_update_a";
  RequireFloat(op, out[0]);
  const IndexModifyShape s = ShapeOf(op, in[0], in[1], {});
  void* scratch = nullptr;
  int* bad = FlagAndScratch(ctx, op, IndexUpdateScratchBytes(s), &scratch);
  CheckLaunch(op,
              LaunchIndexUpdateAGrad(out[0].dtype(), in[1].dtype(), s,
                                     in[0].data<void>(), in[1].data<void>(),
                                     out[0].data<void>(), req[0], bad, scratch,
                                     StreamOf(ctx)),
              in[1].dtype());
  CheckFlag(ctx, op, bad, kRangeWhy);
}

void ConstraintCheck(const KernelContext& ctx, const Attrs& attrs, Tensors in,
                     const int32_t*, Tensors out) {
  const std::string op = "_npx_constraint_check";
  if (in[0].dtype() != MX_DTYPE_BOOL) {
    throw Error(MX_STATUS_DTYPE_ERROR, op + ": input 0 (input) must be bool");
  }
  int* bad = FlagAndScratch(ctx, op, 0, nullptr);
  CheckLaunch(op,
              LaunchAllTrue(in[0].size(), in[0].data<bool>(),
                            out[0].data<bool>(), bad, StreamOf(ctx)),
              in[0].dtype());
  CheckFlag(ctx, op, bad, attrs.Get("msg", "Constraint violated."));
}

}  // namespace

void RegisterIndexModifyOps(mxplugin::Plugin& plugin) {
  RegisterGpuKernel(plugin, "_npx_index_add", IndexModify<false>);
  RegisterGpuKernel(plugin, "_npx_index_update", IndexModify<true>);
  RegisterGpuKernel(plugin, "_backward_index_add_val", ValGrad<false>);
  RegisterGpuKernel(plugin, "_backward_index_update_val", ValGrad<true>);
  RegisterGpuKernel(plugin, "_backward_index_update_a", UpdateAGrad);
  RegisterGpuKernel(plugin, "_npx_constraint_check", ConstraintCheck);
}

}  // namespace mx_cuda
