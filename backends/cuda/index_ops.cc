// GPU kernels for the indexing ops (index_kernels.cu): take, Embedding and
// their gradient _backward_take, pick and _backward_pick, gather_nd and
// _backward_gather_nd, where, argmax, argmin, _arange, cumsum, tril and
// triu. Attributes are
// read as the CPU ops read them; shapes were checked by the host's shape
// inference. Out-of-range indices that are errors on the CPU (take's
// mode=raise, gather_nd) are flagged by the kernel and raised here after
// one synchronization.
#include <cmath>
#include <string>
#include <vector>

#include "backends/common/attr_parse.h"
#include "backends/common/mxnet_math.h"
#include "backends/cuda/cuda_ops.h"
#include "backends/cuda/cuda_util.h"
#include "backends/cuda/elementwise.h"
#include "backends/cuda/index_kernels.h"

namespace mx_cuda {
namespace {

using mxplugin::Attrs;
using mxplugin::Error;
using mxplugin::KernelContext;
using mxplugin::Tensor;
using mxplugin::Tensors;

// ---- take, Embedding, _backward_take. ----

TakeMode ModeAttr(const std::string& op, const Attrs& attrs) {
  const std::string mode = attrs.Get("mode", "clip");
  if (mode == "clip") return TakeMode::kClip;
  if (mode == "wrap") return TakeMode::kWrap;
  if (mode == "raise") return TakeMode::kRaise;
  throw Error(MX_STATUS_INVALID_ARGUMENT,
              op + ": mode=" + mode + " is not one of clip, wrap, raise");
}

// `a` (or the gradient's output, of a's shape) viewed around the axis.
TakeShape TakeShapeOf(const std::string& op, const Attrs& attrs,
                      const Tensor& a, const Tensor& indices) {
  const int axis = AxisAttr(op, attrs, "axis", 0, a.ndim());
  TakeShape s;
  s.outer = Prod(a, 0, axis);
  s.n = a.dim(axis);
  s.m = indices.size();
  s.inner = Prod(a, axis + 1, a.ndim());
  return s;
}

std::string RangeWhy(const TakeShape& s) {
  return "an index of input 1 (indices) is out of range for an axis of "
         "length " +
         std::to_string(s.n) + " (mode=raise)";
}

void RunTake(const std::string& op, const KernelContext& ctx,
             const TakeShape& s, TakeMode mode, const Tensor& a,
             const Tensor& indices, int32_t req, const Tensor& y) {
  if (req == MX_REQ_NULL) return;
  RequireNumeric(op, a);
  const bool check = mode == TakeMode::kRaise;
  int* bad = check ? FlagAndScratch(ctx, op, 0, nullptr) : nullptr;
  CheckLaunch(
      op,
      LaunchTake(a.dtype(), indices.dtype(), s, mode, a.data<void>(),
                 indices.data<void>(), y.data<void>(), req, bad, StreamOf(ctx)),
      indices.dtype());
  if (check) CheckFlag(ctx, op, bad, RangeWhy(s));
}

void Take(const KernelContext& ctx, const Attrs& attrs, Tensors in,
          const int32_t* req, Tensors out) {
  const std::string op = "take";
  RunTake(op, ctx, TakeShapeOf(op, attrs, in[0], in[1]), ModeAttr(op, attrs),
          in[0], in[1], req[0], out[0]);
}

// (data, weight): take of weight's rows, indices clipped.
void Embedding(const KernelContext& ctx, const Attrs& attrs, Tensors in,
               const int32_t* req, Tensors out) {
  const std::string op = "Embedding";
  const double input_dim = NumberAttr(op, attrs, "input_dim", 0);
  const double output_dim = NumberAttr(op, attrs, "output_dim", 0);
  if (input_dim <= 0 || output_dim <= 0) {
    throw Error(MX_STATUS_INVALID_ARGUMENT,
                op + ": input_dim=" + attrs.Get("input_dim") +
                    " and output_dim=" + attrs.Get("output_dim") +
                    " must both be positive");
  }
  const Tensor& w = in[1];
  if (w.ndim() != 2) {
    throw Error(MX_STATUS_SHAPE_ERROR, op + ": weight must be 2-D");
  }
  TakeShape s;
  s.outer = 1;
  s.n = w.dim(0);
  s.m = in[0].size();
  s.inner = w.dim(1);
  RunTake(op, ctx, s, TakeMode::kClip, w, in[0], req[0], out[0]);
}

// (data, indices, like) -> like's shape.
void TakeBackward(const KernelContext& ctx, const Attrs& attrs, Tensors in,
                  const int32_t* req, Tensors out) {
  const std::string op = "_backward_take";
  if (req[0] == MX_REQ_NULL) return;
  RequireNumeric(op, out[0]);
  const TakeShape s = TakeShapeOf(op, attrs, out[0], in[1]);
  const TakeMode mode = ModeAttr(op, attrs);
  void* scratch = nullptr;
  int* bad = FlagAndScratch(
      ctx, op, IndexScratchBytes(out[0].dtype(), out[0].size()), &scratch);
  CheckLaunch(op,
              LaunchTakeBackward(out[0].dtype(), in[1].dtype(), s, mode,
                                 in[0].data<void>(), in[1].data<void>(),
                                 out[0].data<void>(), req[0], bad, scratch,
                                 StreamOf(ctx)),
              in[1].dtype());
  if (mode == TakeMode::kRaise) CheckFlag(ctx, op, bad, RangeWhy(s));
}

// ---- pick, _backward_pick. ----

// data (or the gradient's output, of data's shape) viewed around the axis.
PickShape PickShapeOf(const std::string& op, const Attrs& attrs,
                      const Tensor& data) {
  const int axis = AxisAttr(op, attrs, "axis", -1, data.ndim());
  const std::string mode = attrs.Get("mode", "clip");
  if (mode != "clip" && mode != "wrap") {
    throw Error(MX_STATUS_INVALID_ARGUMENT,
                op + ": mode=" + mode + " is not one of clip, wrap");
  }
  PickShape s;
  s.outer = Prod(data, 0, axis);
  s.n = data.dim(axis);
  s.inner = Prod(data, axis + 1, data.ndim());
  s.wrap = mode == "wrap";
  return s;
}

void Pick(const KernelContext& ctx, const Attrs& attrs, Tensors in,
          const int32_t* req, Tensors out) {
  const std::string op = "pick";
  CheckLaunch(
      op,
      LaunchPick(in[0].dtype(), in[1].dtype(), PickShapeOf(op, attrs, in[0]),
                 in[0].data<void>(), in[1].data<void>(), out[0].data<void>(),
                 req[0], StreamOf(ctx)),
      in[0].dtype());
}

// (out_grad, index, data) -> data's shape.
void PickBackward(const KernelContext& ctx, const Attrs& attrs, Tensors in,
                  const int32_t* req, Tensors out) {
  const std::string op = "_backward_pick";
  CheckLaunch(op,
              LaunchPickBackward(out[0].dtype(), in[1].dtype(),
                                 PickShapeOf(op, attrs, out[0]),
                                 in[0].data<void>(), in[1].data<void>(),
                                 out[0].data<void>(), req[0], StreamOf(ctx)),
              out[0].dtype());
}

// ---- gather_nd, _backward_gather_nd. ----

GatherNdShape GatherNdShapeOf(const std::string& op, const Tensor& data,
                              const Tensor& indices) {
  if (data.ndim() > kMaxDims) {
    Unsupported(op, "data of rank " + std::to_string(data.ndim()));
  }
  if (indices.ndim() < 1 || indices.dim(0) < 1 ||
      indices.dim(0) > data.ndim()) {
    throw Error(MX_STATUS_SHAPE_ERROR,
                op + ": input 1 (indices) must have shape (M, ...) with 1 <= "
                     "M <= the rank of data");
  }
  GatherNdShape s;
  s.ndim = data.ndim();
  for (int d = 0; d < s.ndim; ++d) s.dims[d] = data.dim(d);
  s.m = indices.dim(0);
  s.count = indices.size() / s.m;
  s.slice = Prod(data, static_cast<int>(s.m), data.ndim());
  return s;
}

const char kGatherWhy[] =
    "input 1 (indices) holds an index out of range for its axis of data";

void GatherNd(const KernelContext& ctx, const Attrs&, Tensors in,
              const int32_t* req, Tensors out) {
  const std::string op = "gather_nd";
  if (req[0] == MX_REQ_NULL) return;
  RequireNumeric(op, in[0]);
  const GatherNdShape s = GatherNdShapeOf(op, in[0], in[1]);
  int* bad = FlagAndScratch(ctx, op, 0, nullptr);
  CheckLaunch(op,
              LaunchGatherNd(in[0].dtype(), in[1].dtype(), s,
                             in[0].data<void>(), in[1].data<void>(),
                             out[0].data<void>(), req[0], bad, StreamOf(ctx)),
              in[1].dtype());
  CheckFlag(ctx, op, bad, kGatherWhy);
}

// (out_grad, indices, data) -> data_grad.
void GatherNdBackward(const KernelContext& ctx, const Attrs&, Tensors in,
                      const int32_t* req, Tensors out) {
  const std::string op = "_backward_gather_nd";
  if (req[0] == MX_REQ_NULL) return;
  RequireFloat(op, out[0]);
  const GatherNdShape s = GatherNdShapeOf(op, out[0], in[1]);
  void* scratch = nullptr;
  int* bad = FlagAndScratch(
      ctx, op, IndexScratchBytes(out[0].dtype(), out[0].size()), &scratch);
  CheckLaunch(op,
              LaunchGatherNdBackward(out[0].dtype(), in[1].dtype(), s,
                                     in[0].data<void>(), in[1].data<void>(),
                                     out[0].data<void>(), req[0], bad, scratch,
                                     StreamOf(ctx)),
              in[1].dtype());
  CheckFlag(ctx, op, bad, kGatherWhy);
}

// ---- where. ----

// Element strides of `shape` broadcast to out's rank-`ndim` shape: 0
// along length-1 and missing leading axes.
void BroadcastStrides(const std::vector<int64_t>& shape, int ndim,
                      int64_t* stride) {
  const int r = static_cast<int>(shape.size());
  int64_t step = 1;
  for (int d = ndim - 1; d >= 0; --d) {
    const int sd = d - (ndim - r);
    if (sd < 0 || shape[sd] == 1) {
      stride[d] = 0;
    } else {
      stride[d] = step;
    }
    if (sd >= 0) step *= shape[sd];
  }
}

// One of where's values: an array input, or (array null) a scalar.
struct WhereValue {
  const Tensor* array = nullptr;
  double scalar = 0;
};

// y = condition ? x : z, broadcast; scalars are filled into a workspace
// element of y's dtype (converted as the CPU's fills) read with stride 0.
// row_form: MXNet's legacy where, where a 1-D condition of length
// x.shape[0] with x and z of one shape (rank > 1) picks whole rows.
void RunWhere(const std::string& op, const KernelContext& ctx,
              const Tensor& cond, bool row_form, WhereValue x, WhereValue z,
              int32_t req, const Tensor& y) {
  if (req == MX_REQ_NULL) return;
  RequireNumeric(op, y);
  if (y.ndim() > kMaxDims) {
    Unsupported(op, "output of rank " + std::to_string(y.ndim()));
  }
  std::vector<int64_t> c = cond.shape();
  const std::vector<int64_t> xs =
      x.array ? x.array->shape() : std::vector<int64_t>{};
  const std::vector<int64_t> zs =
      z.array ? z.array->shape() : std::vector<int64_t>{};
  if (row_form && c.size() == 1 && xs.size() >= 2 && xs == zs &&
      c[0] == xs[0]) {
    std::vector<int64_t> rows(xs.size(), 1);
    rows[0] = c[0];
    c = rows;
  }
  const size_t item = DTypeSize(y.dtype());
  const int scalars = (x.array == nullptr) + (z.array == nullptr);
  char* filled = scalars == 0
                     ? nullptr
                     : static_cast<char*>(Workspace(ctx, scalars * item));
  auto data_of = [&](const WhereValue& v) -> const void* {
    if (v.array != nullptr) return v.array->data<void>();
    CheckLaunch(op, LaunchFill(y.dtype(), 1, v.scalar, filled, StreamOf(ctx)),
                y.dtype());
    const void* p = filled;
    filled += item;
    return p;
  };
  const void* xp = data_of(x);
  const void* zp = data_of(z);
  WhereIndex w;
  w.ndim = y.ndim();
  for (int d = 0; d < w.ndim; ++d) w.shape[d] = y.dim(d);
  BroadcastStrides(c, w.ndim, w.c_stride);
  BroadcastStrides(xs, w.ndim, w.x_stride);
  BroadcastStrides(zs, w.ndim, w.z_stride);
  CheckLaunch(
      op,
      LaunchWhere(y.dtype(), cond.dtype(), y.size(), w, cond.data<void>(), xp,
                  zp, y.data<void>(), req, StreamOf(ctx)),
      cond.dtype());
}

// where (kRowForm) and _npi_where: (condition, x, y).
template <bool kRowForm>
void Where(const KernelContext& ctx, const Attrs&, Tensors in,
           const int32_t* req, Tensors out) {
  const Tensor x = in[1], z = in[2];
  RunWhere(kRowForm ? "where" : "_npi_where", ctx, in[0], kRowForm,
           WhereValue{&x}, WhereValue{&z}, req[0], out[0]);
}

// _npi_where_lscalar (kScalarIsX: condition ? scalar : array) and
// _npi_where_rscalar (condition ? array : scalar).
template <bool kScalarIsX>
void WhereScalar(const KernelContext& ctx, const Attrs& attrs, Tensors in,
                 const int32_t* req, Tensors out) {
  const std::string op =
      kScalarIsX ? "_npi_where_lscalar" : "_npi_where_rscalar";
  const WhereValue scalar{nullptr, NumberAttr(op, attrs, "scalar", 0.0)};
  const Tensor data = in[1];
  const WhereValue array{&data};
  RunWhere(op, ctx, in[0], false, kScalarIsX ? scalar : array,
           kScalarIsX ? array : scalar, req[0], out[0]);
}

void WhereScalar2(const KernelContext& ctx, const Attrs& attrs, Tensors in,
                  const int32_t* req, Tensors out) {
  const std::string op = "_npi_where_scalar2";
  RunWhere(op, ctx, in[0], false,
           WhereValue{nullptr, NumberAttr(op, attrs, "x", 0.0)},
           WhereValue{nullptr, NumberAttr(op, attrs, "y", 0.0)}, req[0],
           out[0]);
}

// ---- argmax, argmin. ----

// kChannel: argmax_channel, argmax along the last axis (no attributes).
template <bool kMax, bool kChannel = false>
void ArgReduce(const KernelContext& ctx, const Attrs& attrs, Tensors in,
               const int32_t* req, Tensors out) {
  const std::string op =
      kChannel ? "argmax_channel" : (kMax ? "argmax" : "argmin");
  if (req[0] == MX_REQ_NULL) return;
  RequireNumeric(op, in[0]);
  // int64 (_npi_argmax) or the data's dtype (the legacy op), as the CPU's.
  const int index_type = out[0].dtype();
  if (index_type != MX_DTYPE_INT64 && index_type != in[0].dtype()) {
    throw Error(MX_STATUS_DTYPE_ERROR,
                op + " on gpu: the output must be int64 or the data's dtype");
  }
  const AxisLines l = AxisLinesOf(op, attrs, in[0], kChannel ? "-1" : "None");
  if (l.len - 1 > mx_math::LargestExactIndex(index_type)) {
    throw Error(MX_STATUS_INVALID_ARGUMENT,
                op + " on gpu: indices up to " + std::to_string(l.len - 1) +
                    " are not exact in the data's dtype: cast the data or "
                    "use _npi_" +
                    op + " (int64)");
  }
  CheckLaunch(op,
              LaunchArgReduce(kMax, in[0].dtype(), index_type == MX_DTYPE_INT64,
                              l.outer, l.len, l.inner, in[0].data<void>(),
                              out[0].data<void>(), req[0], StreamOf(ctx)),
              in[0].dtype());
}

// ---- _arange, tril, triu. ----

// cumsum along axis (or the flattened array). With an output dtype other
// than the input's, the input is first cast to the output's accumulator
// (float64 or int64, the CPU's per-element conversion).
void Cumsum(const KernelContext& ctx, const Attrs& attrs, Tensors in,
            const int32_t* req, Tensors out) {
  const std::string op = "cumsum";
  if (req[0] == MX_REQ_NULL) return;
  RequireNumeric(op, in[0]);
  RequireNumeric(op, out[0]);
  int64_t outer = 1, len = in[0].size(), inner = 1;
  const std::string axis_text = attrs.Get("axis", "None");
  if (axis_text != "None") {
    const auto axis = mxplugin::ParseInt(axis_text);
    const int n = in[0].ndim();
    if (!axis || *axis < -n || *axis >= n) {
      throw Error(MX_STATUS_INVALID_ARGUMENT, op + ": axis=" + axis_text);
    }
    const int a = static_cast<int>(*axis < 0 ? *axis + n : *axis);
    for (int d = 0; d < n; ++d) {
      if (d < a) outer *= in[0].dim(d);
      if (d > a) inner *= in[0].dim(d);
    }
    len = in[0].dim(a);
  }
  cudaStream_t s = StreamOf(ctx);
  const void* x = in[0].data<void>();
  const int64_t n = in[0].size();
  const bool cast = out[0].dtype() != in[0].dtype() && n > 0;
  // Both dtypes are numeric (checked above): an error from LaunchCumsum is
  // CUDA's or CUB's, not a dtype the launcher lacks.
  CumsumBuffers scan_buffers;
  const bool scan = n > 0 && CumsumScansTheWholeGpu(outer, len, inner);
  if (scan) {  // CUB's temporary size.
    CheckCuda(LaunchCumsum(out[0].dtype(), outer, len, inner, x, cast,
                           out[0].data<void>(), req[0], &scan_buffers, s),
              op);
  }
  // Accumulators (float64 or int64) of the cast input and of the sums.
  void* converted = nullptr;
  const auto carve = [&](ScratchCarver& c) {
    if (cast) converted = c.Take<int64_t>(n);
    if (scan) {
      scan_buffers.sums = c.Take<int64_t>(n);
      scan_buffers.temp =
          c.Take<char>(static_cast<int64_t>(scan_buffers.temp_bytes));
    }
  };
  CarveWorkspace(ctx, carve);
  if (cast) {
    const int acc = IsFloat(out[0].dtype()) ? MX_DTYPE_FLOAT64 : MX_DTYPE_INT64;
    CheckLaunch(op, LaunchCast(in[0].dtype(), acc, n, x, converted, s),
                in[0].dtype());
    x = converted;
  }
  CheckCuda(LaunchCumsum(out[0].dtype(), outer, len, inner, x, cast,
                         out[0].data<void>(), req[0], &scan_buffers, s),
            op);
}

void Arange(const KernelContext& ctx, const Attrs& attrs, Tensors,
            const int32_t* req, Tensors out) {
  const std::string op = "_arange";
  if (req[0] == MX_REQ_NULL) return;
  if (FlagAttr(op, attrs, "infer_range", "False")) {
    throw Error(MX_STATUS_NOT_IMPLEMENTED,
                op + ": infer_range=True is not supported; give stop");
  }
  const double start = NumberAttr(op, attrs, "start", 0);
  const double stop = NumberAttr(op, attrs, "stop", std::nan(""));
  const double step = NumberAttr(op, attrs, "step", 1);
  const double repeat = NumberAttr(op, attrs, "repeat", 1);
  if (step == 0 || repeat < 1 || repeat != std::floor(repeat)) {
    throw Error(MX_STATUS_INVALID_ARGUMENT,
                op + ": step must be non-zero and repeat a positive integer");
  }
  // Without stop the range is [0, start).
  const double lo = std::isnan(stop) ? 0 : start;
  const int od = out[0].dtype();
  CheckLaunch(
      op,
      LaunchArange(od, out[0].size(), lo, step, static_cast<int64_t>(repeat),
                   out[0].data<void>(), req[0], StreamOf(ctx)),
      od);
}

// _contrib_arange_like: start + step * (i / repeat) over the output,
// which the host shaped like the input (or its axis).
void ArangeLike(const KernelContext& ctx, const Attrs& attrs, Tensors,
                const int32_t* req, Tensors out) {
  const std::string op = "_contrib_arange_like";
  if (req[0] == MX_REQ_NULL) return;
  const double repeat = NumberAttr(op, attrs, "repeat", 1);
  if (repeat < 1 || repeat != std::floor(repeat)) {
    throw Error(MX_STATUS_INVALID_ARGUMENT,
                op + ": repeat must be a positive integer");
  }
  const int od = out[0].dtype();
  CheckLaunch(op,
              LaunchArange(od, out[0].size(), NumberAttr(op, attrs, "start", 0),
                           NumberAttr(op, attrs, "step", 1),
                           static_cast<int64_t>(repeat), out[0].data<void>(),
                           req[0], StreamOf(ctx)),
              od);
}

template <bool kLower>
void Triangle(const KernelContext& ctx, const Attrs& attrs, Tensors in,
              const int32_t* req, Tensors out) {
  const std::string op = kLower ? "tril" : "triu";
  if (req[0] == MX_REQ_NULL) return;
  RequireNumeric(op, in[0]);
  const Tensor& y = out[0];
  if (y.ndim() < 2) {
    throw Error(MX_STATUS_SHAPE_ERROR, op + ": the output must be 2-D or more");
  }
  const double k = NumberAttr(op, attrs, "k", 0);
  CheckLaunch(op,
              LaunchTriangle(kLower, y.dtype(), y.size(), y.dim(y.ndim() - 2),
                             y.dim(y.ndim() - 1), static_cast<int64_t>(k),
                             in[0].ndim() == 1, in[0].data<void>(),
                             y.data<void>(), req[0], StreamOf(ctx)),
              y.dtype());
}

}  // namespace

void RegisterIndexOps(mxplugin::Plugin& plugin) {
  RegisterGpuKernel(plugin, "take", Take);
  RegisterGpuKernel(plugin, "Embedding", Embedding);
  RegisterGpuKernel(plugin, "_backward_take", TakeBackward);
  RegisterGpuKernel(plugin, "pick", Pick);
  RegisterGpuKernel(plugin, "_backward_pick", PickBackward);
  RegisterGpuKernel(plugin, "gather_nd", GatherNd);
  RegisterGpuKernel(plugin, "_backward_gather_nd", GatherNdBackward);
  RegisterGpuKernel(plugin, "where", Where<true>);
  RegisterGpuKernel(plugin, "_npi_where", Where<false>);
  RegisterGpuKernel(plugin, "_npi_where_lscalar", WhereScalar<true>);
  RegisterGpuKernel(plugin, "_npi_where_rscalar", WhereScalar<false>);
  RegisterGpuKernel(plugin, "_npi_where_scalar2", WhereScalar2);
  RegisterGpuKernel(plugin, "argmax", ArgReduce<true>);
  RegisterGpuKernel(plugin, "argmin", ArgReduce<false>);
  RegisterGpuKernel(plugin, "argmax_channel", ArgReduce<true, true>);
  RegisterGpuKernel(plugin, "_npi_argmax", ArgReduce<true>);
  RegisterGpuKernel(plugin, "_npi_argmin", ArgReduce<false>);
  RegisterGpuKernel(plugin, "_arange", Arange);
  RegisterGpuKernel(plugin, "_contrib_arange_like", ArangeLike);
  RegisterGpuKernel(plugin, "cumsum", Cumsum);
  RegisterGpuKernel(plugin, "tril", Triangle<true>);
  RegisterGpuKernel(plugin, "triu", Triangle<false>);
}

}  // namespace mx_cuda
