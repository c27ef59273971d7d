// GPU kernels of the reductions over axes (sum, mean, max, min, prod,
// nansum, nanprod, norm, moments), prod's gradient, and the reduce/broadcast
// pair behind the sum and mean gradients (_reduce_sum_like,
// _broadcast_reduced_like); the kernels are in reduce_kernels.cu and
// prod_norm_kernels.cu.
#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "backends/common/attr_parse.h"
#include "backends/cuda/cuda_ops.h"
#include "backends/cuda/cuda_util.h"
#include "backends/cuda/elementwise.h"

namespace mx_cuda {
namespace {

using mxplugin::Attrs;
using mxplugin::Error;
using mxplugin::KernelContext;
using mxplugin::Tensor;
using mxplugin::Tensors;

// Which dims of an n-dim array attrs' axis/exclude reduce.
std::vector<bool> ReducedDims(const std::string& op, const Attrs& attrs, int n,
                              const char* axis_key = "axis") {
  std::vector<bool> reduced(n, false);
  const auto axis = mxplugin::ParseTuple(attrs.Get(axis_key, "None"));
  const auto exclude = mxplugin::ParseBool(attrs.Get("exclude", "False"));
  if (!axis || !exclude) {
    throw Error(MX_STATUS_INVALID_ARGUMENT, op + ": cannot read axis/exclude");
  }
  if (axis->empty()) return std::vector<bool>(n, true);
  for (int64_t a : *axis) {
    const int64_t d = a < 0 ? a + n : a;
    if (d < 0 || d >= n || reduced[d]) {
      throw Error(MX_STATUS_INVALID_ARGUMENT,
                  op + ": axis " + std::to_string(a) +
                      " is out of range or repeated for " + std::to_string(n) +
                      " dims");
    }
    reduced[d] = true;
  }
  if (*exclude) reduced.flip();
  return reduced;
}

// Dims of `in` that `axis`/`exclude` reduce, as (outer, reduce, inner);
// false (extents meaningless) when the reduced dims are not consecutive
// after dropping length-1 dims.
bool ReduceExtents(const std::vector<bool>& reduced, const Tensor& in,
                   int64_t* outer, int64_t* reduce, int64_t* inner) {
  const int n = in.ndim();
  int first = -1, last = -1;
  for (int d = 0; d < n; ++d) {
    if (reduced[d] && in.dim(d) != 1) {
      if (first < 0) first = d;
      last = d;
    }
  }
  *outer = *reduce = *inner = 1;
  for (int d = 0; d < n; ++d) {
    const bool r = reduced[d] && in.dim(d) != 1;
    if (first >= 0 && d >= first && d <= last && !r && in.dim(d) != 1) {
      return false;
    }
    if (first < 0 || d < first) {
      *outer *= in.dim(d);
    } else if (d <= last) {
      *reduce *= in.dim(d);
    } else {
      *inner *= in.dim(d);
    }
  }
  return true;
}

// A copy of `in` with the kept dims first and the reduced ones last, in
// their order, so that it reduces as (kept, reduced, 1). Length-1 dims
// are left out (they move nothing).
GatherIndex ReducedLast(const std::string& op, const std::vector<bool>& reduced,
                        const Tensor& in, int64_t* outer, int64_t* reduce) {
  const int n = in.ndim();
  int moved = 0;
  for (int d = 0; d < n; ++d) moved += in.dim(d) != 1;
  if (moved > kMaxDims) Unsupported(op, "more than 8 dimensions");
  const std::vector<int64_t> strides = StridesOf(in);
  GatherIndex gi;
  *outer = *reduce = 1;
  for (bool pass_reduced : {false, true}) {
    for (int d = 0; d < n; ++d) {
      if (reduced[d] != pass_reduced || in.dim(d) == 1) continue;
      gi.shape[gi.ndim] = in.dim(d);
      gi.stride[gi.ndim] = strides[d];
      ++gi.ndim;
      (pass_reduced ? *reduce : *outer) *= in.dim(d);
    }
  }
  return gi;
}

// x viewed as (outer, reduce, inner) lines of the reduced dims: x itself
// when they are adjacent, else a copy with the kept dims first and the
// reduced ones last (inner 1) in a new workspace, followed there by
// `extra_scratch` bytes for the caller (`extra`).
struct ReduceLines {
  int64_t outer = 1, reduce = 1, inner = 1;
  const void* x = nullptr;
  bool gathered = false;
  GatherIndex gi;         // The copy's layout in x (gathered only).
  void* extra = nullptr;  // The caller's extra scratch (gathered only).
};

ReduceLines LinesOf(const std::string& op, const KernelContext& ctx,
                    const std::vector<bool>& reduced, const Tensor& x,
                    size_t extra_scratch = 0) {
  ReduceLines l;
  l.x = x.data<void>();
  if (ReduceExtents(reduced, x, &l.outer, &l.reduce, &l.inner)) return l;
  l.inner = 1;
  l.gi = ReducedLast(op, reduced, x, &l.outer, &l.reduce);
  l.gathered = true;
  if (l.reduce != 0 && l.outer != 0) {
    char* scratch =
        static_cast<char*>(Workspace(ctx, ByteSize(x) + extra_scratch));
    l.extra = scratch + ByteSize(x);
    CheckCuda(LaunchGatherSum(x.dtype(), x.size(), l.gi, l.x, scratch,
                              MX_REQ_WRITE, StreamOf(ctx)),
              op);
    l.x = scratch;
  }
  return l;
}

// (g, x) -> g summed over the axes along which it was broadcast to reach
// its shape from x's.
void ReduceSumLike(const KernelContext& ctx, const Attrs&, Tensors in,
                   const int32_t* req, Tensors out) {
  const std::string op = "_reduce_sum_like";
  const Tensor g = in[0], y = out[0];
  const int ng = g.ndim(), ny = y.ndim();
  if (ng > kMaxDims || ny > ng) Unsupported(op, "these ranks");
  GatherIndex gi;
  gi.ndim = ny;
  int64_t stride = 1;
  for (int d = ng - 1; d >= 0; --d) {
    const int dy = d - (ng - ny);
    const int64_t ey = dy >= 0 ? y.dim(dy) : 1;
    if (dy >= 0) {
      gi.shape[dy] = ey;
      gi.stride[dy] = ey == g.dim(d) ? stride : 0;
    }
    if (ey != g.dim(d)) {
      gi.rshape[gi.rdim] = g.dim(d);
      gi.rstride[gi.rdim] = stride;
      ++gi.rdim;
    }
    stride *= g.dim(d);
  }
  // The reduced axes outermost first (the gather's last one varies
  // fastest), so each sum adds in the input's order, as the CPU's: the same
  // double for int64 sums past 2^53.
  std::reverse(gi.rshape, gi.rshape + gi.rdim);
  std::reverse(gi.rstride, gi.rstride + gi.rdim);
  gi.saturate = true;  // Integer sums in double, saturated, as the CPU's.
  RunGather(op, ctx, gi, g, y, req[0]);
}

// (g, x) -> g (reduced over attrs' axes) broadcast back to x's shape.
void BroadcastReducedLike(const KernelContext& ctx, const Attrs& attrs,
                          Tensors in, const int32_t* req, Tensors out) {
  const std::string op = "_broadcast_reduced_like";
  const Tensor g = in[0], y = out[0];
  const int n = y.ndim();
  if (n > kMaxDims) Unsupported(op, "more than 8 dimensions");
  const std::vector<bool> reduced = ReducedDims(op, attrs, n);
  GatherIndex gi;
  gi.ndim = n;
  int64_t stride = 1, count = 1;
  for (int d = n - 1; d >= 0; --d) {
    gi.shape[d] = y.dim(d);
    gi.stride[d] = reduced[d] ? 0 : stride;
    if (!reduced[d]) stride *= y.dim(d);
    if (reduced[d]) count *= y.dim(d);
  }
  // mean's gradient: divided by the number of elements each mean took.
  const auto normalize = mxplugin::ParseBool(attrs.Get("normalize", "False"));
  if (!normalize) {
    throw Error(MX_STATUS_INVALID_ARGUMENT, op + ": cannot read normalize");
  }
  if (*normalize && count > 0) gi.scale = 1.0 / static_cast<double>(count);
  if (stride != g.size()) {
    throw Error(MX_STATUS_SHAPE_ERROR,
                op + ": the gradient does not fit the reduced shape");
  }
  RunGather(op, ctx, gi, g, y, req[0]);
}

// Reduces lines `l` of dtype `dt` into out (its dtype too).
void ReduceLinesInto(const std::string& op, Reduce kind, cudaStream_t s,
                     const ReduceLines& l, int dt, const Tensor& out,
                     int32_t req) {
  if (l.reduce == 0) {
    // As on the CPU: an empty sum is 0, an empty product 1, an empty mean
    // 0/0 (0 for integers); max and min have no identity (shape inference
    // refused them).
    FillOutput(op, s, out, req,
               kind == Reduce::kProd || kind == Reduce::kNanProd ? 1.0
               : kind != Reduce::kMean || !IsFloat(dt)           ? 0.0
                                                       : std::nan(""));
    return;
  }
  CheckCuda(LaunchReduce(kind, dt, l.outer, l.reduce, l.inner, l.x,
                         out.data<void>(), req, s),
            op);
}

void RegisterReduce(mxplugin::Plugin& plugin, const std::string& op,
                    Reduce kind) {
  RegisterGpuKernel(plugin, op,
                    [op, kind](const KernelContext& ctx, const Attrs& attrs,
                               Tensors in, const int32_t* req, Tensors out) {
                      RequireNumeric(op, in[0]);
                      const std::vector<bool> reduced =
                          ReducedDims(op, attrs, in[0].ndim());
                      ReduceLinesInto(op, kind, StreamOf(ctx),
                                      LinesOf(op, ctx, reduced, in[0]),
                                      in[0].dtype(), out[0], req[0]);
                    });
}

// MXNet 2's NumPy reductions (_np_sum, _npi_mean, ...): axis=() is the
// data converted to the output's dtype; otherwise the legacy reduction
// over the data converted to the output's dtype where it differs (after
// the gather of non-adjacent reduced dims, in the same workspace).
void RegisterNumpyReduce(mxplugin::Plugin& plugin, const std::string& op,
                         Reduce kind) {
  RegisterGpuKernel(
      plugin, op,
      [op, kind](const KernelContext& ctx, const Attrs& attrs, Tensors in,
                 const int32_t* req, Tensors out) {
        const Tensor x = in[0];
        const int dt = out[0].dtype();
        const int64_t n = x.size();
        cudaStream_t s = StreamOf(ctx);
        std::string axis = attrs.Get("axis", "None");
        axis.erase(std::remove(axis.begin(), axis.end(), ' '), axis.end());
        if (axis == "()" || axis == "[]") {
          if (req[0] == MX_REQ_ADD) {
            void* tmp = Workspace(ctx, ByteSize(out[0]));
            CheckCuda(LaunchCast(x.dtype(), dt, n, x.data<void>(), tmp, s), op);
            CheckCuda(
                LaunchBinary(Binary::kAdd, dt, n, out[0].data<void>(), tmp,
                             out[0].data<void>(), MX_REQ_WRITE, nullptr, s),
                op);
          } else if (req[0] != MX_REQ_NULL) {
            CheckCuda(LaunchCast(x.dtype(), dt, n, x.data<void>(),
                                 out[0].data<void>(), s),
                      op);
          }
          return;
        }
        if (x.dtype() == dt) RequireNumeric(op, x);
        const std::vector<bool> reduced = ReducedDims(op, attrs, x.ndim());
        const size_t converted =
            x.dtype() == dt ? 0 : static_cast<size_t>(n) * DTypeSize(dt);
        ReduceLines l = LinesOf(op, ctx, reduced, x, converted);
        if (converted > 0 && l.reduce != 0 && l.outer != 0) {
          void* to = l.gathered ? l.extra : Workspace(ctx, converted);
          CheckCuda(LaunchCast(x.dtype(), dt, n, l.x, to, s), op);
          l.x = to;
        }
        ReduceLinesInto(op, kind, s, l, dt, out[0], req[0]);
      });
}

// norm (ord 1 or 2; axis, keepdims, out_dtype as the CPU's).
void Norm(const KernelContext& ctx, const Attrs& attrs, Tensors in,
          const int32_t* req, Tensors out) {
  const std::string op = "norm";
  RequireFloat(op, in[0]);
  RequireFloat(op, out[0]);
  const auto ord = mxplugin::ParseInt(attrs.Get("ord", "2"));
  if (!ord || (*ord != 1 && *ord != 2)) {
    throw Error(MX_STATUS_INVALID_ARGUMENT,
                op + ": ord=" + attrs.Get("ord", "2") + " (1 or 2)");
  }
  if (req[0] == MX_REQ_NULL) return;
  const std::vector<bool> reduced = ReducedDims(op, attrs, in[0].ndim());
  const ReduceLines l = LinesOf(op, ctx, reduced, in[0]);
  cudaStream_t s = StreamOf(ctx);
  if (l.reduce == 0) {  // An empty norm is 0.
    FillOutput(op, s, out[0], req[0], 0.0);
    return;
  }
  CheckLaunch(
      op,
      LaunchNorm(static_cast<int>(*ord), in[0].dtype(), out[0].dtype(), l.outer,
                 l.reduce, l.inner, l.x, out[0].data<void>(), req[0], s),
      out[0].dtype());
}

// moments (axes, keepdims) -> (mean, var).
void Moments(const KernelContext& ctx, const Attrs& attrs, Tensors in,
             const int32_t* req, Tensors out) {
  const std::string op = "moments";
  RequireFloat(op, in[0]);
  const std::vector<bool> reduced =
      ReducedDims(op, attrs, in[0].ndim(), "axes");
  const ReduceLines l = LinesOf(op, ctx, reduced, in[0]);
  cudaStream_t s = StreamOf(ctx);
  if (l.reduce == 0) {  // NaN for both, as the CPU's.
    for (int k = 0; k < 2; ++k) FillOutput(op, s, out[k], req[k], std::nan(""));
    return;
  }
  CheckLaunch(op,
              LaunchMoments(in[0].dtype(), l.outer, l.reduce, l.inner, l.x,
                            out[0].data<void>(), req[0], out[1].data<void>(),
                            req[1], s),
              in[0].dtype());
}

// (ograd, data) -> prod's (skip_nan: nanprod's) gradient.
void ProdGrad(const KernelContext& ctx, const Attrs& attrs, Tensors in,
              const int32_t* req, Tensors out) {
  const std::string op = "_backward_prod";
  const Tensor g = in[0], x = in[1], dx = out[0];
  RequireNumeric(op, x);
  if (req[0] == MX_REQ_NULL || x.size() == 0) return;
  const bool skip_nan = FlagAttr(op, attrs, "skip_nan", "False");
  const std::vector<bool> reduced = ReducedDims(op, attrs, x.ndim());
  // A non-adjacent reduction: x gathered into the workspace, dx computed
  // into the extra scratch after it and scattered back.
  const ReduceLines l = LinesOf(op, ctx, reduced, x, ByteSize(x));
  cudaStream_t s = StreamOf(ctx);
  void* target = l.gathered ? l.extra : dx.data<void>();
  const int target_req = l.gathered ? MX_REQ_WRITE : req[0];
  CheckLaunch(op,
              LaunchProdGrad(skip_nan, x.dtype(), l.outer, l.reduce, l.inner,
                             g.data<void>(), l.x, target, target_req, s),
              x.dtype());
  if (l.gathered) {
    CheckCuda(LaunchScatter(x.dtype(), x.size(), l.gi, target, dx.data<void>(),
                            req[0], s),
              op);
  }
}

}  // namespace

void RegisterReduceOps(mxplugin::Plugin& plugin) {
  RegisterReduce(plugin, "sum", Reduce::kSum);
  RegisterReduce(plugin, "mean", Reduce::kMean);
  RegisterReduce(plugin, "max", Reduce::kMax);
  RegisterReduce(plugin, "min", Reduce::kMin);
  RegisterReduce(plugin, "prod", Reduce::kProd);
  RegisterReduce(plugin, "nansum", Reduce::kNanSum);
  RegisterReduce(plugin, "nanprod", Reduce::kNanProd);
  RegisterNumpyReduce(plugin, "_np_sum", Reduce::kSum);
  RegisterNumpyReduce(plugin, "_npi_mean", Reduce::kMean);
  RegisterNumpyReduce(plugin, "_np_prod", Reduce::kProd);
  RegisterNumpyReduce(plugin, "_np_max", Reduce::kMax);
  RegisterNumpyReduce(plugin, "_np_min", Reduce::kMin);
  RegisterGpuKernel(plugin, "_reduce_sum_like", ReduceSumLike);
  RegisterGpuKernel(plugin, "_broadcast_reduced_like", BroadcastReducedLike);
  RegisterGpuKernel(plugin, "norm", Norm);
  RegisterGpuKernel(plugin, "moments", Moments);
  RegisterGpuKernel(plugin, "_backward_prod", ProdGrad);
}

}  // namespace mx_cuda
