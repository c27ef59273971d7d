// MXNet's fused attention products (BERT's and the transformer's, from
// GluonNLP): _contrib_interleaved_matmul_{selfatt,encdec}_{qk,valatt} and
// their gradients, described once as per-head matrix products that the
// CPU kernels (gather + Gemm) and the CUDA plugin (strided batched cuBLAS)
// both execute.
//
// The interleaved layouts, with E = heads * head_dim:
//   queries_keys_values (seq, batch, 3 * E): head h's q, k, v are columns
//     [(3h + 0..2) * head_dim, +head_dim);
//   keys_values (seq, batch, 2 * E): head h's k, v at (2h + 0..1) * head_dim;
//   queries and outputs (seq, batch, E): head h at h * head_dim.
//   attention (batch * heads, q_seq, k_seq), matrix b * heads + h.
// qk scales the product by 1 / sqrt(head_dim) (MXNet scales q first).
//
//   Plan plan;
//   std::string why = PlanOf(Kind::kSelfAttQK, false, heads, {x_shape},
//                            &plan);   // empty when the shapes fit
#ifndef MXCORE_BACKENDS_COMMON_INTERLEAVED_MATMUL_H_
#define MXCORE_BACKENDS_COMMON_INTERLEAVED_MATMUL_H_

#include <array>
#include <cstdint>
#include <string>
#include <vector>

namespace mx_attention {

enum class Kind { kSelfAttQK, kSelfAttValAtt, kEncDecQK, kEncDecValAtt };

// The op's name (_contrib_interleaved_matmul_...; backward: _backward_...).
std::string OpName(Kind kind, bool backward);

// Matrix bh (= b * heads + h) of an array: element (i, j) at
// offset + bh * stride + i * ld + j, of rows x cols.
struct HeadMatrix {
  int64_t rows = 0, cols = 0, ld = 0, stride = 0, offset = 0;
};

// An input or output of the op, seen as its per-head matrices.
struct Operand {
  bool output = false;
  int index = 0;
  HeadMatrix m;
};

// c = scale * op(a) op(b) for every head matrix (op: transposed when ta,
// tb); written as the output's request says.
struct Product {
  Operand a, b, c;
  bool ta = false, tb = false;
  double scale = 1;
};

struct Plan {
  int64_t matrices = 0;  // batch * heads
  std::vector<Product> products;
};

using Shape3 = std::array<int64_t, 3>;

// The products of the op (forward, or its backward from (out_grad, the
// forward's inputs...)) for inputs of these shapes, and the output shapes.
// Returns why the shapes do not fit (empty when they do). Outputs not
// entirely covered by products (the gradient's untouched parts) are to be
// zeroed first when written.
std::string PlanOf(Kind kind, bool backward, int64_t heads,
                   const std::vector<Shape3>& inputs, Plan* plan,
                   std::vector<Shape3>* outputs);

}  // namespace mx_attention

#endif  // MXCORE_BACKENDS_COMMON_INTERLEAVED_MATMUL_H_
