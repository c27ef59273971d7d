// np.einsum's fast path on the CPU: a contraction of two factors (a
// two-operand einsum, or either operand's gradient: out_grad times the
// other) as batched matrix products, the way MXNet 2's optimize=1 and
// NumPy's tensordot path go. Labels in both factors and the target are
// the batch, labels in one factor and the target are M or N, labels
// outside the target are K; each factor is packed into (batch, M, K) and
// (batch, K, N) matrices, multiplied with Gemm, and the product scattered
// to the target's axis order.
//
//   if (!ContractByGemm(c, a, a_size, b, b_size, req, y)) {
//     ... the direct contraction (backends/common/einsum.h) ...
//   }
#ifndef MXCORE_BACKENDS_CPU_EINSUM_GEMM_H_
#define MXCORE_BACKENDS_CPU_EINSUM_GEMM_H_

#include <cstdint>

#include "backends/common/einsum.h"
#include "backends/cpu/kernel_util.h"

namespace mx {
namespace cpu {

// Products below this many multiply-adds stay on the direct path: packing
// costs more than it saves there.
constexpr int64_t kMinEinsumGemmMacs = 1 << 12;

// Writes c's target (as `req` says) from factors f0 and f1 (f0_size and
// f1_size elements) and returns true, or returns false having written
// nothing when c is not for this path: not two factors, a target label
// repeated (a diagonal) or broadcast (a length-1 axis summing a longer
// label), an empty label, fewer than kMinEinsumGemmMacs multiply-adds, or
// packed matrices more than 4 times the size of the factors and target
// together (a factor broadcast along a long label). Float dtypes
// (float16 multiplies in float); products accumulate in the dtype's
// accumulator as Gemm does, not in double as the direct path.
template <typename T>
bool ContractByGemm(const mx_math::EinsumContraction& c, const T* f0,
                    int64_t f0_size, const T* f1, int64_t f1_size,
                    OpReqType req, T* target);

}  // namespace cpu
}  // namespace mx

#endif  // MXCORE_BACKENDS_CPU_EINSUM_GEMM_H_
