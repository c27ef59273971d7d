// np.matmul (MXNet 2's _npi_matmul) and its gradient: products of the
// last two axes with NumPy-broadcast batch dimensions, 1-D operands
// promoted to a row (first) or column (second) whose axis the result drops
// (backends/common/matmul_geometry.h). Float dtypes, both operands of one
// (MXNet 2 does not promote). The gradient is one kernel,
// _backward_npi_matmul, because the 1-D promotions depend on ranks that
// are unknown when the gradient graph is built (as for dot): dA = g B^T
// and dB = A^T g per output matrix, summed over the batches an operand was
// broadcast along.
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "backends/common/matmul_geometry.h"
#include "backends/cpu/gemm.h"
#include "backends/cpu/grad_util.h"
#include "backends/cpu/kernel_util.h"
#include "base/error.h"

namespace mx {
namespace cpu {
namespace {

mx_math::MatmulGeometry GeometryOf(const NodeAttrs& attrs, const TShape& a,
                                   const TShape& b) {
  mx_math::MatmulGeometry g;
  const std::string why =
      mx_math::MatmulGeometryOf(std::vector<int64_t>(a.begin(), a.end()),
                                std::vector<int64_t>(b.begin(), b.end()), &g);
  if (!why.empty()) {
    throw ShapeError(absl::StrCat(OpLabel(attrs), ": a ", a.ToString(),
                                  " and b ", b.ToString(), ": ", why));
  }
  return g;
}

void MatmulShape(const NodeAttrs& attrs, std::vector<TShape>* in,
                 std::vector<TShape>* out) {
  if (!(*in)[0].is_known() || !(*in)[1].is_known()) return;
  AssignShape(attrs, out, 0,
              TShape(GeometryOf(attrs, (*in)[0], (*in)[1]).out_shape), true);
}

void MatmulCompute(const OpContext&, const NodeAttrs& attrs,
                   const std::vector<TBlob>& in,
                   const std::vector<OpReqType>& req,
                   const std::vector<TBlob>& out) {
  if (req[0] == OpReqType::kNullOp || out[0].Size() == 0) return;
  const mx_math::MatmulGeometry g = GeometryOf(attrs, in[0].shape, in[1].shape);
  const int64_t mk = g.m * g.k, kn = g.k * g.n, mn = g.m * g.n;
  MX_FLOAT_DTYPE_SWITCH(in[0].dtype, T, {
    const T* a = in[0].data<T>();
    const T* b = in[1].data<T>();
    T* c = out[0].data<T>();
    ParallelFor(g.batch_count(), 1, [&](int64_t s, int64_t e) {
      for (int64_t i = s; i < e; ++i) {
        GemmReq(a + g.a_index(i) * mk, b + g.b_index(i) * kn, c + i * mn, g.m,
                g.n, g.k, false, false, req[0], kNoEpilogue);
      }
    });
  });
}

// (out_grad, a, b) -> (a_grad, b_grad). An operand broadcast along batches
// gathers several products, added in batch order (one thread: they may
// land on the same matrix; each product splits over the threads itself).
void MatmulBackwardCompute(const OpContext&, const NodeAttrs& attrs,
                           const std::vector<TBlob>& in,
                           const std::vector<OpReqType>& req,
                           const std::vector<TBlob>& out) {
  const mx_math::MatmulGeometry g = GeometryOf(attrs, in[1].shape, in[2].shape);
  const int64_t mk = g.m * g.k, kn = g.k * g.n, mn = g.m * g.n;
  MX_FLOAT_DTYPE_SWITCH(in[0].dtype, T, {
    const T* dc = in[0].data<T>();
    const T* a = in[1].data<T>();
    const T* b = in[2].data<T>();
    for (int which : {0, 1}) {
      if (req[which] == OpReqType::kNullOp) continue;
      T* d = out[which].data<T>();
      const int64_t size = which == 0 ? g.a_matrices * mk : g.b_matrices * kn;
      if (req[which] != OpReqType::kAddTo) std::fill(d, d + size, T(0));
      for (int64_t i = 0; i < g.batch_count(); ++i) {
        if (which == 0) {  // dA (m x k) += dC (m x n) B^T
          GemmReq(dc + i * mn, b + g.b_index(i) * kn, d + g.a_index(i) * mk,
                  g.m, g.k, g.n, false, true, OpReqType::kAddTo, kNoEpilogue);
        } else {  // dB (k x n) += A^T dC
          GemmReq(a + g.a_index(i) * mk, dc + i * mn, d + g.b_index(i) * kn,
                  g.k, g.n, g.m, true, false, OpReqType::kAddTo, kNoEpilogue);
        }
      }
    }
  });
}

MX_REGISTER_OP(_npi_matmul)
    .Describe(
        "np.matmul: products of the last two axes, batch axes broadcast; a "
        "1-D a is a row and a 1-D b a column, whose axis the result drops.")
    .SetNumInputs(2)
    .SetInputNames({"a", "b"})
    .SetInferShape(MatmulShape)
    .SetInferType(SameFloatType)
    .SetCompute(Context::kCPU, MatmulCompute);

MX_REGISTER_OP(_backward_npi_matmul)
    .Describe("Gradients of _npi_matmul: (out_grad, a, b) -> (a_grad, b_grad).")
    .SetNumInputs(3)
    .SetInputNames({"out_grad", "a", "b"})
    .SetNumOutputs(2)
    .SetOutputNames({"a_grad", "b_grad"})
    .SetInferShape([](const NodeAttrs& attrs, std::vector<TShape>* in,
                      std::vector<TShape>* out) {
      AssignShape(attrs, out, 0, (*in)[1], true);
      AssignShape(attrs, out, 1, (*in)[2], true);
      AssignShape(attrs, in, 1, (*out)[0], false);
      AssignShape(attrs, in, 2, (*out)[1], false);
      std::vector<TShape> operands{(*in)[1], (*in)[2]}, product{TShape()};
      MatmulShape(attrs, &operands, &product);
      AssignShape(attrs, in, 0, product[0], false);
    })
    .SetInferType(SameFloatType)
    .SetCompute(Context::kCPU, MatmulBackwardCompute);

[[maybe_unused]] const bool kGradientRegistered = [] {
  SetGradient("_npi_matmul", [](GradBuilder& b,
                                const std::vector<NodeEntry>& g) {
    const NodeEntry both = b.Op("_backward_npi_matmul", {g[0], b.x(0), b.x(1)});
    return std::vector<NodeEntry>{both, NodeEntry{both.node, 1, 0}};
  });
  return true;
}();

}  // namespace
}  // namespace cpu
}  // namespace mx
