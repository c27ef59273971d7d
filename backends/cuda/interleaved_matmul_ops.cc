// GPU kernels for MXNet's fused attention products
// (_contrib_interleaved_matmul_{selfatt,encdec}_{qk,valatt} and their
// gradients): the per-head products of backends/common/interleaved_matmul.h,
// each one strided batched cuBLAS call straight on the interleaved layouts
// (a head's matrix is rows `ld` apart, heads `stride` apart). Semantics as
// backends/cpu/interleaved_matmul_ops.cc.
#include <string>
#include <vector>

#include "backends/common/interleaved_matmul.h"
#include "backends/cuda/cuda_ops.h"
#include "backends/cuda/cuda_util.h"

namespace mx_cuda {
namespace {

using mx_attention::Kind;
using mxplugin::Attrs;
using mxplugin::Error;
using mxplugin::KernelContext;
using mxplugin::Tensor;
using mxplugin::Tensors;

template <Kind kKind, bool kBackward>
void InterleavedMatmul(const KernelContext& ctx, const Attrs& attrs, Tensors in,
                       const int32_t* req, Tensors out) {
  const std::string op = mx_attention::OpName(kKind, kBackward);
  RequireFloat(op, in[0]);
  const int dt = in[0].dtype();
  std::vector<mx_attention::Shape3> shapes;
  for (size_t i = 0; i < in.size(); ++i) {
    const Tensor t = in[i];
    if (t.ndim() != 3) {
      throw Error(MX_STATUS_SHAPE_ERROR,
                  op + ": input " + std::to_string(i) + " needs 3 axes");
    }
    shapes.push_back({t.dim(0), t.dim(1), t.dim(2)});
  }
  mx_attention::Plan plan;
  std::vector<mx_attention::Shape3> outputs;
  const std::string why = mx_attention::PlanOf(
      kKind, kBackward, static_cast<int64_t>(NumberAttr(op, attrs, "heads", 0)),
      shapes, &plan, &outputs);
  if (!why.empty()) throw Error(MX_STATUS_SHAPE_ERROR, op + ": " + why);
  const size_t elem = DTypeSize(dt);
  // A written output starts at 0 (the gradients leave parts untouched);
  // every product then adds to its own part.
  for (size_t o = 0; o < out.size(); ++o)
    ZeroUnlessAdding(op, ctx, out[o], req[o]);
  const auto at = [&](const Tensor& t, int64_t offset) {
    return static_cast<char*>(t.data<void>()) + offset * elem;
  };
  for (const mx_attention::Product& p : plan.products) {
    if (req[p.c.index] == MX_REQ_NULL) continue;
    const int64_t k = p.ta ? p.a.m.rows : p.a.m.cols;
    StridedGemm(op, ctx, dt, p.ta, p.tb, p.c.m.rows, p.c.m.cols, k, p.scale,
                {at(in[p.a.index], p.a.m.offset), p.a.m.ld, p.a.m.stride},
                {at(in[p.b.index], p.b.m.offset), p.b.m.ld, p.b.m.stride},
                at(out[p.c.index], p.c.m.offset), p.c.m.ld, p.c.m.stride,
                /*accumulate=*/true, plan.matrices);
  }
}

template <Kind kKind>
void RegisterBoth(mxplugin::Plugin& plugin) {
  RegisterGpuKernel(plugin, mx_attention::OpName(kKind, false).c_str(),
                    InterleavedMatmul<kKind, false>);
  RegisterGpuKernel(plugin, mx_attention::OpName(kKind, true).c_str(),
                    InterleavedMatmul<kKind, true>);
}

}  // namespace

void RegisterInterleavedMatmulOps(mxplugin::Plugin& plugin) {
  RegisterBoth<Kind::kSelfAttQK>(plugin);
  RegisterBoth<Kind::kSelfAttValAtt>(plugin);
  RegisterBoth<Kind::kEncDecQK>(plugin);
  RegisterBoth<Kind::kEncDecValAtt>(plugin);
}

}  // namespace mx_cuda
