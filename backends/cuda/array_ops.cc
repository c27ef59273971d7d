// GPU kernels for shape and layout ops (reshapes, broadcast_to/_like/_axis,
// transpose, slice, slice_axis: strided gathers), joins (Concat and its
// gradient), Cast, fills, random numbers, one_hot and the optimizer
// updates.
#include <algorithm>
#include <optional>
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

// Ops whose output holds the input's bytes unchanged (row-major reshapes
// and identities): one device-to-device copy, none when in place.
void SameBytes(const KernelContext& ctx, const Attrs&, Tensors in,
               const int32_t* req, Tensors out) {
  if (req[0] == MX_REQ_NULL) return;
  if (req[0] == MX_REQ_ADD) {
    RequireNumeric("identity (add to)", in[0]);
    CheckCuda(
        LaunchBinary(Binary::kAdd, in[0].dtype(), out[0].size(),
                     out[0].data<void>(), in[0].data<void>(),
                     out[0].data<void>(), MX_REQ_WRITE, nullptr, StreamOf(ctx)),
        "identity");
    return;
  }
  const size_t bytes = ByteSize(out[0]);
  if (out[0].data<void>() == in[0].data<void>() || bytes == 0) return;
  CheckCuda(cudaMemcpyAsync(out[0].data<void>(), in[0].data<void>(), bytes,
                            cudaMemcpyDeviceToDevice, StreamOf(ctx)),
            "reshape copy");
}

void ZerosLike(const KernelContext& ctx, const Attrs&, Tensors,
               const int32_t* req, Tensors out) {
  ZeroUnlessAdding("zeros_like", ctx, out[0], req[0]);
}

template <bool kMomentum>
void SgdUpdate(const KernelContext& ctx, const Attrs& attrs, Tensors in,
               const int32_t* req, Tensors out) {
  const std::string op = kMomentum ? "sgd_mom_update" : "sgd_update";
  RequireFloat(op, in[0]);
  SgdParams p;
  p.lr = NumberAttr(op, attrs, "lr", 0.0);
  p.wd = NumberAttr(op, attrs, "wd", 0.0);
  p.rescale = NumberAttr(op, attrs, "rescale_grad", 1.0);
  p.clip = NumberAttr(op, attrs, "clip_gradient", -1.0);
  p.momentum = NumberAttr(op, attrs, "momentum", 0.0);
  CheckCuda(
      LaunchSgd(in[0].dtype(), in[0].size(), in[0].data<void>(),
                in[1].data<void>(), kMomentum ? in[2].data<void>() : nullptr,
                out[0].data<void>(), req[0], p, StreamOf(ctx)),
      op);
}

void Fill(const std::string& op, const KernelContext& ctx, Tensors out,
          const int32_t* req, double value) {
  if (req[0] == MX_REQ_NULL) return;
  RequireNumeric(op, out[0]);
  if (req[0] == MX_REQ_ADD) Unsupported(op, "adding to the output");
  CheckCuda(LaunchFill(out[0].dtype(), out[0].size(), value,
                       out[0].data<void>(), StreamOf(ctx)),
            op);
}

template <bool kNormal>
void RandomOp(const KernelContext& ctx, const Attrs& attrs, Tensors,
              const int32_t* req, Tensors out) {
  const std::string op = kNormal ? "_random_normal" : "_random_uniform";
  if (req[0] == MX_REQ_NULL) return;
  RequireFloat(op, out[0]);
  if (req[0] == MX_REQ_ADD) Unsupported(op, "adding to the output");
  const double a = NumberAttr(op, attrs, kNormal ? "loc" : "low", 0.0);
  const double b = NumberAttr(op, attrs, kNormal ? "scale" : "high", 1.0);
  CheckCuda(LaunchRandom(kNormal, out[0].dtype(), out[0].size(), a, b,
                         ctx.RandomU64(), out[0].data<void>(), StreamOf(ctx)),
            op);
}

void OneHot(const KernelContext& ctx, const Attrs& attrs, Tensors in,
            const int32_t* req, Tensors out) {
  if (req[0] == MX_REQ_NULL) return;
  RequireNumeric("one_hot", out[0]);
  if (req[0] == MX_REQ_ADD) Unsupported("one_hot", "adding to the output");
  const int64_t n = in[0].size();
  const int64_t depth = n == 0 ? 0 : out[0].size() / n;
  const cudaError_t err =
      LaunchOneHot(out[0].dtype(), in[0].dtype(), n, depth, in[0].data<void>(),
                   NumberAttr("one_hot", attrs, "on_value", 1.0),
                   NumberAttr("one_hot", attrs, "off_value", 0.0),
                   out[0].data<void>(), StreamOf(ctx));
  if (err == cudaErrorInvalidValue) {
    throw Error(MX_STATUS_DTYPE_ERROR,
                std::string("one_hot on gpu: indices of ") +
                    DTypeName(in[0].dtype()) + " are not supported");
  }
  CheckCuda(err, "one_hot");
}

void AdamUpdate(const KernelContext& ctx, const Attrs& attrs, Tensors in,
                const int32_t* req, Tensors out) {
  const std::string op = "adam_update";
  RequireFloat(op, in[0]);
  AdamParams p;
  p.lr = NumberAttr(op, attrs, "lr", 0.0);
  p.wd = NumberAttr(op, attrs, "wd", 0.0);
  p.rescale = NumberAttr(op, attrs, "rescale_grad", 1.0);
  p.clip = NumberAttr(op, attrs, "clip_gradient", -1.0);
  p.beta1 = NumberAttr(op, attrs, "beta1", 0.9);
  p.beta2 = NumberAttr(op, attrs, "beta2", 0.999);
  p.epsilon = NumberAttr(op, attrs, "epsilon", 1e-8);
  CheckCuda(
      LaunchAdam(in[0].dtype(), in[0].size(), in[0].data<void>(),
                 in[1].data<void>(), in[2].data<void>(), in[3].data<void>(),
                 out[0].data<void>(), req[0], p, StreamOf(ctx)),
      op);
}

// Concat and its gradient _split_like: pieces along `dim` copied as 2-D
// blocks (rows: the dims before `dim`; a row: the piece's extent along
// `dim` times the dims after it).
struct JoinGeometry {
  int64_t outer = 1, inner = 1, total = 0;
};

// The geometry of `whole` along the axis in attribute `key` (Concat's and
// _split_like's "dim", SliceChannel's "axis", and stack's "axis" counted
// on its output, where the new axis is one of the output's).
JoinGeometry JoinOf(const std::string& op, const Attrs& attrs,
                    const Tensor& whole, const char* key = "dim",
                    const char* fallback = "1") {
  const int n = whole.ndim();
  const auto dim = mxplugin::ParseInt(attrs.Get(key, fallback));
  if (!dim || *dim < -n || *dim >= n) {
    throw Error(MX_STATUS_INVALID_ARGUMENT,
                op + ": " + key + "=" + attrs.Get(key, fallback) + " for " +
                    std::to_string(n) + " dims");
  }
  const int ax = static_cast<int>(*dim < 0 ? *dim + n : *dim);
  JoinGeometry g;
  for (int d = 0; d < ax; ++d) g.outer *= whole.dim(d);
  for (int d = ax + 1; d < n; ++d) g.inner *= whole.dim(d);
  g.total = whole.dim(ax);
  return g;
}

// Copies each piece to or from its columns of the whole, the first from
// `first` along the axis on.
void JoinCopy(const std::string& op, const KernelContext& ctx,
              const JoinGeometry& g, const Tensor& whole,
              const std::vector<Tensor>& pieces, bool to_whole,
              const std::vector<bool>& skip = {}, int64_t first = 0) {
  const size_t es = DTypeSize(whole.dtype());
  const size_t row = static_cast<size_t>(g.total * g.inner) * es;
  size_t offset = static_cast<size_t>(first * g.inner) * es;
  char* base = static_cast<char*>(whole.data<void>());
  for (size_t i = 0; i < pieces.size(); ++i) {
    const Tensor& p = pieces[i];
    const int64_t cols = g.outer == 0 ? 0 : p.size() / g.outer;
    const size_t width = static_cast<size_t>(cols) * es;
    if (width > 0 && g.outer > 0 && !(i < skip.size() && skip[i])) {
      char* w = base + offset;
      char* q = static_cast<char*>(p.data<void>());
      CheckCuda(
          to_whole ? cudaMemcpy2DAsync(w, row, q, width, width, g.outer,
                                       cudaMemcpyDeviceToDevice, StreamOf(ctx))
                   : cudaMemcpy2DAsync(q, width, w, row, width, g.outer,
                                       cudaMemcpyDeviceToDevice, StreamOf(ctx)),
          op);
    }
    offset += width;
  }
}

// The inputs written as the pieces of out[0] (Concat, stack).
void JoinInto(const std::string& op, const KernelContext& ctx,
              const JoinGeometry& g, Tensors in, const int32_t* req,
              Tensors out) {
  if (req[0] == MX_REQ_NULL) return;
  if (req[0] == MX_REQ_ADD) Unsupported(op, "adding to the output");
  std::vector<Tensor> pieces;
  for (int i = 0; i < in.size(); ++i) pieces.push_back(in[i]);
  JoinCopy(op, ctx, g, out[0], pieces, true);
}

// `whole` split into the outputs (_split_like, SliceChannel, _split_v2),
// from `first` along the axis on.
void SplitInto(const std::string& op, const KernelContext& ctx,
               const JoinGeometry& g, const Tensor& whole, const int32_t* req,
               Tensors out, int64_t first = 0) {
  std::vector<Tensor> pieces;
  std::vector<bool> skip;
  for (int i = 0; i < out.size(); ++i) {
    if (req[i] == MX_REQ_ADD) Unsupported(op, "adding to outputs");
    pieces.push_back(out[i]);
    skip.push_back(req[i] == MX_REQ_NULL);
  }
  JoinCopy(op, ctx, g, whole, pieces, false, skip, first);
}

void Concat(const KernelContext& ctx, const Attrs& attrs, Tensors in,
            const int32_t* req, Tensors out) {
  JoinInto("Concat", ctx, JoinOf("Concat", attrs, out[0]), in, req, out);
}

// MXNet 2's np.concatenate: Concat with `axis` (default 0) for `dim`;
// axis=None joins the flattened inputs (one row of the output vector).
void NumpyConcatenate(const KernelContext& ctx, const Attrs& attrs, Tensors in,
                      const int32_t* req, Tensors out) {
  if (attrs.Get("axis", "0") == "None") {
    JoinInto("_npi_concatenate", ctx, JoinGeometry{1, 1, out[0].size()}, in,
             req, out);
    return;
  }
  const mxplugin::OwnedAttrs concat(
      {{"num_args", attrs.Get("num_args")}, {"dim", attrs.Get("axis", "0")}});
  Concat(ctx, concat.view(), in, req, out);
}

// (data, like_1..like_n) -> n pieces of data shaped like the others.
void SplitLike(const KernelContext& ctx, const Attrs& attrs, Tensors in,
               const int32_t* req, Tensors out) {
  SplitInto("_split_like", ctx, JoinOf("_split_like", attrs, in[0]), in[0], req,
            out);
}

// stack: input i is block i along the output's new axis.
void Stack(const KernelContext& ctx, const Attrs& attrs, Tensors in,
           const int32_t* req, Tensors out) {
  JoinInto("stack", ctx, JoinOf("stack", attrs, out[0], "axis", "0"), in, req,
           out);
}

// SliceChannel (split): num_outputs equal pieces along `axis` (squeezed or
// not, the bytes are the same).
void SliceChannel(const KernelContext& ctx, const Attrs& attrs, Tensors in,
                  const int32_t* req, Tensors out) {
  SplitInto("SliceChannel", ctx,
            JoinOf("SliceChannel", attrs, in[0], "axis", "1"), in[0], req, out);
}

// _split_v2 (_npi_split): consecutive pieces from indices[0] on (0 with
// `sections`); the host's shape inference has checked the indices.
void SplitV2(const KernelContext& ctx, const Attrs& attrs, Tensors in,
             const int32_t* req, Tensors out) {
  const std::string op = "_split_v2";
  int64_t first = 0;
  const auto sections = mxplugin::ParseInt(attrs.Get("sections", "0"));
  if (!sections || *sections <= 0) {
    const auto indices = mxplugin::ParseTuple(attrs.Get("indices", "()"));
    if (!indices || indices->empty() || indices->front() < 0) {
      throw Error(MX_STATUS_INVALID_ARGUMENT,
                  op + ": indices=" + attrs.Get("indices", "()"));
    }
    first = indices->front();
  }
  SplitInto(op, ctx, JoinOf(op, attrs, in[0], "axis", "1"), in[0], req, out,
            first);
}

// shape_array: the input's shape as int64, copied from the host (pageable
// memory: the copy has read it when cudaMemcpyAsync returns).
void ShapeArray(const KernelContext& ctx, const Attrs&, Tensors in,
                const int32_t* req, Tensors out) {
  if (req[0] == MX_REQ_NULL) return;
  if (req[0] == MX_REQ_ADD) Unsupported("shape_array", "adding to the output");
  std::vector<int64_t> dims(in[0].ndim());
  for (int d = 0; d < in[0].ndim(); ++d) dims[d] = in[0].dim(d);
  if (dims.empty()) return;
  CheckCuda(cudaMemcpyAsync(out[0].data<void>(), dims.data(),
                            dims.size() * sizeof(int64_t),
                            cudaMemcpyHostToDevice, StreamOf(ctx)),
            "shape_array");
}

// _multi_sgd_mom_update: inputs (weight, grad, mom) per parameter, outputs
// the new weights; one launch per kMultiUpdateMax parameters.
void MultiSgdMomUpdate(const KernelContext& ctx, const Attrs& attrs, Tensors in,
                       const int32_t* req, Tensors out) {
  const std::string op = "_multi_sgd_mom_update";
  SgdParams p;
  p.lr = NumberAttr(op, attrs, "lr", 0.0);
  p.wd = NumberAttr(op, attrs, "wd", 0.0);
  p.rescale = NumberAttr(op, attrs, "rescale_grad", 1.0);
  p.clip = NumberAttr(op, attrs, "clip_gradient", -1.0);
  p.momentum = NumberAttr(op, attrs, "momentum", 0.0);
  const int dtype = in[0].dtype();
  RequireFloat(op, in[0]);
  MultiSgdTable table;
  auto flush = [&] {
    CheckCuda(LaunchMultiSgdMom(dtype, table, p, StreamOf(ctx)), op);
    table.count = 0;
  };
  for (int k = 0; k < out.size(); ++k) {
    if (in[3 * k].dtype() != dtype) {
      throw Error(MX_STATUS_DTYPE_ERROR,
                  op + " on gpu: every parameter must have one dtype");
    }
    const int t = table.count++;
    table.w[t] = in[3 * k].data<void>();
    table.g[t] = in[3 * k + 1].data<void>();
    table.mom[t] = in[3 * k + 2].data<void>();
    table.out[t] = out[k].data<void>();
    table.n[t] = out[k].size();
    table.req[t] = req[k];
    if (table.count == kMultiUpdateMax) flush();
  }
  if (table.count > 0) flush();
}

// broadcast_to, broadcast_like, broadcast_axis: input 0 broadcast to the
// output's shape (right-aligned; stride 0 where the input has 1).
void BroadcastTo(const std::string& op, const KernelContext& ctx, Tensors in,
                 const int32_t* req, Tensors out) {
  const Tensor x = in[0], y = out[0];
  const int n = y.ndim();
  if (n > kMaxDims || x.ndim() > n) Unsupported(op, "these ranks");
  GatherIndex gi;
  gi.ndim = n;
  const std::vector<int64_t> xs = StridesOf(x);
  for (int d = 0; d < n; ++d) {
    const int dx = d - (n - x.ndim());
    gi.shape[d] = y.dim(d);
    gi.stride[d] = dx < 0 || x.dim(dx) == 1 ? 0 : xs[dx];
  }
  RunGather(op, ctx, gi, x, y, req[0]);
}

// out's axis d is in's axis perm[d].
void Permute(const std::string& op, const KernelContext& ctx,
             const std::vector<int>& perm, const Tensor& in, const Tensor& out,
             int32_t req) {
  const int n = in.ndim();
  if (n > kMaxDims) Unsupported(op, "more than 8 dimensions");
  const std::vector<int64_t> xs = StridesOf(in);
  GatherIndex gi;
  gi.ndim = n;
  for (int d = 0; d < n; ++d) {
    gi.shape[d] = out.dim(d);
    gi.stride[d] = xs[perm[d]];
  }
  RunGather(op, ctx, gi, in, out, req);
}

// in's axis `value` (negative from the end); InvalidArgument outside.
int AxisIn(const std::string& op, int64_t value, int n) {
  if (value < -n || value >= n) {
    throw Error(MX_STATUS_INVALID_ARGUMENT, op + ": axis out of range");
  }
  return static_cast<int>(value < 0 ? value + n : value);
}

void Transpose(const KernelContext& ctx, const Attrs& attrs, Tensors in,
               const int32_t* req, Tensors out) {
  const std::string op = "transpose";
  const int n = in[0].ndim();
  const auto axes = mxplugin::ParseTuple(attrs.Get("axes", "()"));
  if (!axes || (!axes->empty() && static_cast<int>(axes->size()) != n)) {
    throw Error(MX_STATUS_INVALID_ARGUMENT, op + ": axes=" + attrs.Get("axes") +
                                                " for " + std::to_string(n) +
                                                " dims");
  }
  std::vector<int> perm(n);
  for (int d = 0; d < n; ++d) {
    perm[d] = axes->empty() ? n - 1 - d : AxisIn(op, (*axes)[d], n);
  }
  Permute(op, ctx, perm, in[0], out[0], req[0]);
}

void SwapAxis(const KernelContext& ctx, const Attrs& attrs, Tensors in,
              const int32_t* req, Tensors out) {
  const std::string op = "SwapAxis";
  const int n = in[0].ndim();
  const auto dim1 = mxplugin::ParseInt(attrs.Get("dim1", "0"));
  const auto dim2 = mxplugin::ParseInt(attrs.Get("dim2", "0"));
  if (!dim1 || !dim2) {
    throw Error(MX_STATUS_INVALID_ARGUMENT,
                op + ": dim1 and dim2 must be integers");
  }
  std::vector<int> perm(n);
  for (int d = 0; d < n; ++d) perm[d] = d;
  std::swap(perm[AxisIn(op, *dim1, n)], perm[AxisIn(op, *dim2, n)]);
  Permute(op, ctx, perm, in[0], out[0], req[0]);
}

// depth_to_space (to_space) and space_to_depth: the output as six dims
// gathered from the NCHW input (backends/cpu/space_depth_ops.cc).
template <bool kToSpace>
void SpaceDepth(const KernelContext& ctx, const Attrs& attrs, Tensors in,
                const int32_t* req, Tensors out) {
  const std::string op = kToSpace ? "depth_to_space" : "space_to_depth";
  const Tensor& x = in[0];
  const auto block = mxplugin::ParseInt(attrs.Get("block_size", "0"));
  if (x.ndim() != 4 || !block || *block <= 0) {
    throw Error(MX_STATUS_INVALID_ARGUMENT,
                op + ": needs an NCHW input and a positive block_size");
  }
  const int64_t b = *block, c = x.dim(1), h = x.dim(2), w = x.dim(3);
  if (kToSpace ? c % (b * b) != 0 : h % b != 0 || w % b != 0) {
    throw Error(MX_STATUS_SHAPE_ERROR,
                op + ": the input does not divide into blocks");
  }
  GatherIndex gi;
  gi.ndim = 6;
  const int64_t cb = c / (b * b);
  const int64_t shape[2][6] = {{x.dim(0), b, b, c, h / b, w / b},
                               {x.dim(0), cb, h, b, w, b}};
  const int64_t stride[2][6] = {
      {c * h * w, w, 1, h * w, b * w, b},
      {c * h * w, h * w, w, b * cb * h * w, 1, cb * h * w}};
  for (int d = 0; d < 6; ++d) {
    gi.shape[d] = shape[kToSpace][d];
    gi.stride[d] = stride[kToSpace][d];
  }
  RunGather(op, ctx, gi, x, out[0], req[0]);
}

void Cast(const KernelContext& ctx, const Attrs&, Tensors in,
          const int32_t* req, Tensors out) {
  if (req[0] == MX_REQ_NULL) return;
  if (req[0] == MX_REQ_ADD) Unsupported("Cast", "adding to the output");
  CheckLaunch(
      "Cast",
      LaunchCast(in[0].dtype(), out[0].dtype(), in[0].size(),
                 in[0].data<void>(), out[0].data<void>(), StreamOf(ctx)),
      in[0].dtype());
}

// amp_multicast: each input cast to its output's dtype (the host's type
// inference picked them).
void AmpMultiCast(const KernelContext& ctx, const Attrs&, Tensors in,
                  const int32_t* req, Tensors out) {
  for (size_t i = 0; i < in.size(); ++i) {
    if (req[i] == MX_REQ_NULL) continue;
    if (req[i] == MX_REQ_ADD)
      Unsupported("amp_multicast", "adding to an output");
    CheckLaunch(
        "amp_multicast",
        LaunchCast(in[i].dtype(), out[i].dtype(), in[i].size(),
                   in[i].data<void>(), out[i].data<void>(), StreamOf(ctx)),
        in[i].dtype());
  }
}

}  // namespace

void RegisterArrayOps(mxplugin::Plugin& plugin) {
  for (const char* op :
       {"Reshape", "_npx_reshape", "_np_reshape", "Flatten", "reshape_like",
        "expand_dims", "BlockGrad", "_copy", "squeeze", "_npi_squeeze"}) {
    RegisterGpuKernel(plugin, op, SameBytes);
  }
  // Loss heads whose forward is the data (the label feeds only the
  // gradient, a graph of other ops).
  for (const char* op :
       {"LinearRegressionOutput", "MAERegressionOutput", "MakeLoss"}) {
    RegisterGpuKernel(plugin, op, SameBytes);
  }
  RegisterGpuKernel(plugin, "zeros_like", ZerosLike);
  RegisterGpuKernel(
      plugin, "_zeros",
      [](const KernelContext& ctx, const Attrs&, Tensors, const int32_t* req,
         Tensors out) { Fill("_zeros", ctx, out, req, 0.0); });
  RegisterGpuKernel(
      plugin, "_ones",
      [](const KernelContext& ctx, const Attrs&, Tensors, const int32_t* req,
         Tensors out) { Fill("_ones", ctx, out, req, 1.0); });
  RegisterGpuKernel(
      plugin, "ones_like",
      [](const KernelContext& ctx, const Attrs&, Tensors, const int32_t* req,
         Tensors out) { Fill("ones_like", ctx, out, req, 1.0); });
  RegisterGpuKernel(plugin, "Concat", Concat);
  RegisterGpuKernel(plugin, "_npi_concatenate", NumpyConcatenate);
  RegisterGpuKernel(plugin, "_split_like", SplitLike);
  RegisterGpuKernel(plugin, "_split_v2", SplitV2);
  RegisterGpuKernel(plugin, "stack", Stack);
  RegisterGpuKernel(plugin, "SliceChannel", SliceChannel);
  RegisterGpuKernel(plugin, "shape_array", ShapeArray);
  RegisterGpuKernel(plugin, "_full",
                    [](const KernelContext& ctx, const Attrs& attrs, Tensors,
                       const int32_t* req, Tensors out) {
                      Fill("_full", ctx, out, req,
                           NumberAttr("_full", attrs, "value", 0.0));
                    });
  RegisterGpuKernel(plugin, "_random_uniform", RandomOp<false>);
  RegisterGpuKernel(plugin, "_random_normal", RandomOp<true>);
  RegisterGpuKernel(plugin, "one_hot", OneHot);
  RegisterGpuKernel(plugin, "sgd_update", SgdUpdate<false>);
  RegisterGpuKernel(plugin, "adam_update", AdamUpdate);
  RegisterGpuKernel(plugin, "sgd_mom_update", SgdUpdate<true>);
  for (const char* op : {"broadcast_to", "broadcast_like", "broadcast_axis"}) {
    const std::string name = op;
    RegisterGpuKernel(plugin, op,
                      [name](const KernelContext& ctx, const Attrs&, Tensors in,
                             const int32_t* req, Tensors out) {
                        BroadcastTo(name, ctx, in, req, out);
                      });
  }
  RegisterGpuKernel(plugin, "transpose", Transpose);
  RegisterGpuKernel(plugin, "SwapAxis", SwapAxis);
  RegisterGpuKernel(plugin, "depth_to_space", SpaceDepth<true>);
  RegisterGpuKernel(plugin, "space_to_depth", SpaceDepth<false>);
  RegisterGpuKernel(plugin, "_multi_sgd_mom_update", MultiSgdMomUpdate);
  RegisterGpuKernel(plugin, "Cast", Cast);
  RegisterGpuKernel(plugin, "_cast_like", Cast);
  RegisterGpuKernel(plugin, "amp_cast", Cast);
  RegisterGpuKernel(plugin, "amp_multicast", AmpMultiCast);
}

}  // namespace mx_cuda
