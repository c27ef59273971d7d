// GPU kernels for GroupNorm and InstanceNorm and their gradients, composed
// from the LayerNorm kernels (norm_kernels.cu) and elementwise launches:
// each (sample, group) is a contiguous line normalized with unit gamma and
// zero beta, then the per-channel gamma and beta are applied by broadcast;
// the gradient runs LayerNorm's backward on g * gamma[c] and sums the
// per-channel terms with one strided gather-sum each. Semantics as
// backends/cpu/group_norm_ops.cc.
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

// Data (N, C, S...) as lines of (sample, group), and the op's eps.
struct GroupLayout {
  int64_t n = 0, c = 0, groups = 1, spatial = 1;
  double eps = 0;
  Lines lines() const { return Lines{n * groups, c / groups * spatial, 1}; }
  int64_t size() const { return n * c * spatial; }
};

GroupLayout LayoutOf(const std::string& op, bool instance, const Attrs& attrs,
                     const Tensor& x) {
  if (x.ndim() < 2) {
    throw Error(MX_STATUS_SHAPE_ERROR, op + ": data needs (N, C, ...)");
  }
  GroupLayout g;
  g.n = x.dim(0);
  g.c = x.dim(1);
  for (int d = 2; d < x.ndim(); ++d) g.spatial *= x.dim(d);
  if (instance) {
    g.groups = g.c;
  } else {
    const auto groups = mxplugin::ParseInt(attrs.Get("num_groups", "1"));
    if (!groups || *groups <= 0 || *groups > (g.c > 0 ? g.c : 1) ||
        g.c % *groups != 0) {
      throw Error(MX_STATUS_SHAPE_ERROR,
                  op + ": num_groups must divide the channels");
    }
    g.groups = *groups;
  }
  g.eps = NumberAttr(op, attrs, "eps", instance ? 1e-3 : 1e-5);
  if (!(g.eps >= 0)) {
    throw Error(MX_STATUS_INVALID_ARGUMENT, op + ": eps must be >= 0");
  }
  return g;
}

// Per-channel vector v against data (N, C, S): b's strides in LaunchBinary.
BroadcastIndex PerChannel(const GroupLayout& g) {
  BroadcastIndex bc;
  bc.ndim = 3;
  const int64_t shape[3] = {g.n, g.c, g.spatial};
  const int64_t a_stride[3] = {g.c * g.spatial, g.spatial, 1};
  const int64_t b_stride[3] = {0, 1, 0};
  for (int d = 0; d < 3; ++d) {
    bc.shape[d] = shape[d];
    bc.a_stride[d] = a_stride[d];
    bc.b_stride[d] = b_stride[d];
  }
  return bc;
}

// Scratch buffers carved from one workspace, each AlignedBytes apart.
class Carver {
 public:
  Carver(const KernelContext& ctx, size_t total) : ctx_(ctx), total_(total) {}
  void* Next(size_t bytes) {
    if (base_ == nullptr) base_ = static_cast<char*>(Workspace(ctx_, total_));
    void* p = base_ + used_;
    used_ += AlignedBytes(bytes);
    return p;
  }

 private:
  const KernelContext& ctx_;
  size_t total_;
  char* base_ = nullptr;
  size_t used_ = 0;
};

// Unit gamma and zero beta of a line's length, for the LayerNorm kernels.
void UnitAffine(const std::string& op, int dt, int64_t len, void* ones,
                void* zeros, cudaStream_t s) {
  CheckCuda(LaunchFill(dt, len, 1.0, ones, s), op);
  CheckCuda(LaunchFill(dt, len, 0.0, zeros, s), op);
}

// (data, gamma, beta) -> output (and GroupNorm's mean and std, (N, G)).
template <bool kInstance>
void GroupNormForward(const KernelContext& ctx, const Attrs& attrs, Tensors in,
                      const int32_t* req, Tensors out) {
  const std::string op = kInstance ? "InstanceNorm" : "GroupNorm";
  RequireFloat(op, in[0]);
  const GroupLayout g = LayoutOf(op, kInstance, attrs, in[0]);
  const Lines l = g.lines();
  const int dt = in[0].dtype();
  const size_t esz = DTypeSize(dt);
  if (g.size() == 0) return;
  cudaStream_t s = StreamOf(ctx);
  Carver carve(ctx,
               2 * AlignedBytes(l.len * esz) + AlignedBytes(g.size() * esz));
  void* ones = carve.Next(l.len * esz);
  void* zeros = carve.Next(l.len * esz);
  void* normalized = carve.Next(g.size() * esz);
  UnitAffine(op, dt, l.len, ones, zeros, s);
  const bool stats = !kInstance && out.size() > 2;
  CheckLaunch(
      op,
      LaunchLayerNorm(dt, l, g.eps, in[0].data<void>(), ones, zeros, normalized,
                      MX_REQ_WRITE, stats ? out[1].data<void>() : nullptr,
                      stats ? req[1] : MX_REQ_NULL,
                      stats ? out[2].data<void>() : nullptr,
                      stats ? req[2] : MX_REQ_NULL, s),
      dt);
  if (req[0] == MX_REQ_NULL) return;
  const BroadcastIndex bc = PerChannel(g);
  CheckCuda(LaunchBinary(Binary::kMul, dt, g.size(), normalized,
                         in[1].data<void>(), normalized, MX_REQ_WRITE, &bc, s),
            op);
  CheckCuda(
      LaunchBinary(Binary::kAdd, dt, g.size(), normalized, in[2].data<void>(),
                   out[0].data<void>(), req[0], &bc, s),
      op);
}

// (out_grad, data, gamma) -> (data_grad, gamma_grad, beta_grad).
template <bool kInstance>
void GroupNormBackward(const KernelContext& ctx, const Attrs& attrs, Tensors in,
                       const int32_t* req, Tensors out) {
  const std::string op =
      kInstance ? "_backward_InstanceNorm" : "_backward_GroupNorm";
  RequireFloat(op, in[1]);
  const GroupLayout g = LayoutOf(op, kInstance, attrs, in[1]);
  const Lines l = g.lines();
  const int dt = in[1].dtype();
  const size_t esz = DTypeSize(dt);
  cudaStream_t s = StreamOf(ctx);
  if (g.size() == 0) {  // No elements: the channel sums are 0.
    for (int k = 1; k < 3; ++k) FillOutput(op, s, out[k], req[k], 0.0);
    return;
  }
  const size_t line_bytes = AlignedBytes(l.len * esz);
  const size_t data_bytes = AlignedBytes(g.size() * esz);
  Carver carve(ctx, 2 * line_bytes + 2 * data_bytes +
                        AlignedBytes(LayerNormScratchBytes(l)));
  void* ones = carve.Next(l.len * esz);
  void* zeros = carve.Next(l.len * esz);
  void* xhat = carve.Next(g.size() * esz);
  void* tmp = carve.Next(g.size() * esz);
  void* ln_scratch = carve.Next(LayerNormScratchBytes(l));
  UnitAffine(op, dt, l.len, ones, zeros, s);
  const void* og = in[0].data<void>();
  const BroadcastIndex bc = PerChannel(g);
  if (req[0] != MX_REQ_NULL) {
    // dx: LayerNorm's gradient (unit gamma) of g * gamma[c].
    CheckCuda(LaunchBinary(Binary::kMul, dt, g.size(), og, in[2].data<void>(),
                           tmp, MX_REQ_WRITE, &bc, s),
              op);
    CheckLaunch(op,
                LaunchLayerNormBackward(dt, l, g.eps, tmp, in[1].data<void>(),
                                        ones, out[0].data<void>(), req[0],
                                        nullptr, MX_REQ_NULL, nullptr,
                                        MX_REQ_NULL, ln_scratch, s),
                dt);
  }
  // dgamma[c] = sum over (n, s) of g * xhat, dbeta[c] = sum of g.
  GatherIndex per_channel;
  per_channel.ndim = 1;
  per_channel.shape[0] = g.c;
  per_channel.stride[0] = g.spatial;
  per_channel.rdim = 2;
  per_channel.rshape[0] = g.n;
  per_channel.rstride[0] = g.c * g.spatial;
  per_channel.rshape[1] = g.spatial;
  per_channel.rstride[1] = 1;
  if (req[1] != MX_REQ_NULL) {
    CheckLaunch(op,
                LaunchLayerNorm(dt, l, g.eps, in[1].data<void>(), ones, zeros,
                                xhat, MX_REQ_WRITE, nullptr, MX_REQ_NULL,
                                nullptr, MX_REQ_NULL, s),
                dt);
    CheckCuda(LaunchBinary(Binary::kMul, dt, g.size(), og, xhat, tmp,
                           MX_REQ_WRITE, nullptr, s),
              op);
    CheckCuda(LaunchGatherSum(dt, g.c, per_channel, tmp, out[1].data<void>(),
                              req[1], s),
              op);
  }
  if (req[2] != MX_REQ_NULL) {
    CheckCuda(LaunchGatherSum(dt, g.c, per_channel, og, out[2].data<void>(),
                              req[2], s),
              op);
  }
}

}  // namespace

void RegisterGroupNormOps(mxplugin::Plugin& plugin) {
  RegisterGpuKernel(plugin, "GroupNorm", GroupNormForward<false>);
  RegisterGpuKernel(plugin, "InstanceNorm", GroupNormForward<true>);
  RegisterGpuKernel(plugin, "_backward_GroupNorm", GroupNormBackward<false>);
  RegisterGpuKernel(plugin, "_backward_InstanceNorm", GroupNormBackward<true>);
}

}  // namespace mx_cuda
