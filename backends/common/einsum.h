// np.einsum (MXNet 2's _npi_einsum), shared by the CPU kernels and the
// CUDA plugin: EinsumPlanOf reads the subscripts against the operands'
// shapes (NumPy's rules: letters a-z and A-Z, repeated letters in one
// operand take a diagonal, "..." broadcasts NumPy-style, implicit output
// = the ellipsis axes then the letters used once, in ASCII order; axes of
// length 1 broadcast), and an EinsumContraction computes one target
// tensor: the output from the operands, or one operand's gradient from
// out_grad and the other operands. Each element of the target fixes the
// labels of its axes and sums, over every label it leaves free, the
// product of the factors (MXNet 2's optimize=0 path: no intermediate
// tensors, no contraction order).
//
//   EinsumPlan p;
//   std::string why = EinsumPlanOf("bij,bjk->bik", {{2, 3, 4}, {2, 4, 5}}, &p);
//   // why empty; p.output_shape (2, 3, 5)
//   EinsumContraction c = ForwardContraction(p, shapes);
//   for (int64_t e = 0; e < 30; ++e)
//     y[e] = ContractElement<double>(c, e, [&](int f, int64_t at) {
//       return x[f][at]; });
#ifndef MXCORE_BACKENDS_COMMON_EINSUM_H_
#define MXCORE_BACKENDS_COMMON_EINSUM_H_

#include <cstdint>
#include <string>
#include <vector>

#include "backends/common/host_device.h"

namespace mx_math {

// Limits of one contraction: labels (letters and ellipsis axes), axes of
// an operand and factors (so at most 8 operands, as the gradient's
// factors are out_grad and the 7 others).
constexpr int kMaxEinsumLabels = 32;
constexpr int kMaxEinsumRank = 8;
constexpr int kMaxEinsumFactors = 8;

struct EinsumPlan {
  std::vector<int64_t> label_size;               // per label id
  std::vector<std::vector<int>> operand_labels;  // per operand, per axis
  std::vector<int> output_labels;                // per output axis
  std::vector<int64_t> output_shape;
};

// Fills *plan for operands of these shapes; returns why the subscripts do
// not fit them (empty when they do).
std::string EinsumPlanOf(const std::string& subscripts,
                         const std::vector<std::vector<int64_t>>& shapes,
                         EinsumPlan* plan);

struct EinsumContraction {
  int num_labels = 0;
  int64_t label_size[kMaxEinsumLabels];
  int target_ndim = 0;
  int target_label[kMaxEinsumRank];
  int64_t target_dim[kMaxEinsumRank];
  int num_factors = 0;
  // Element step of factor f per unit of label l: the strides of its axes
  // labelled l added (a diagonal), 0 where it lacks l or broadcasts it.
  int64_t stride[kMaxEinsumFactors][kMaxEinsumLabels];
};

// The output from the operands (factors: the operands in order).
EinsumContraction ForwardContraction(
    const EinsumPlan& plan, const std::vector<std::vector<int64_t>>& shapes);
// Operand k's gradient (factors: out_grad, then the other operands).
EinsumContraction GradientContraction(
    const EinsumPlan& plan, const std::vector<std::vector<int64_t>>& shapes,
    int k);

// Element e (row-major) of c's target: 0 off a diagonal its repeated
// labels ask for, else the sum over its free labels of the product of
// load(f, offset of factor f), in A.
template <typename A, typename Load>
MX_HOST_DEVICE A ContractElement(const EinsumContraction& c, int64_t e,
                                 const Load& load) {
  int64_t value[kMaxEinsumLabels];
  for (int l = 0; l < c.num_labels; ++l) value[l] = -1;
  for (int a = c.target_ndim - 1; a >= 0; --a) {
    const int64_t i = e % c.target_dim[a];
    e /= c.target_dim[a];
    const int l = c.target_label[a];
    // An axis of length 1 under a longer label broadcasts: its gradient
    // sums over the label.
    if (c.target_dim[a] == 1 && c.label_size[l] != 1) continue;
    if (value[l] >= 0 && value[l] != i) return A(0);  // Off the diagonal.
    value[l] = i;
  }
  int free[kMaxEinsumLabels];
  int num_free = 0;
  int64_t at[kMaxEinsumFactors];
  for (int f = 0; f < c.num_factors; ++f) at[f] = 0;
  for (int l = 0; l < c.num_labels; ++l) {
    if (value[l] < 0) {
      if (c.label_size[l] == 0) return A(0);  // An empty sum.
      free[num_free++] = l;
      value[l] = 0;
    }
    for (int f = 0; f < c.num_factors; ++f) at[f] += value[l] * c.stride[f][l];
  }
  A sum = A(0);
  for (;;) {
    A product = A(1);
    for (int f = 0; f < c.num_factors; ++f) product *= load(f, at[f]);
    sum += product;
    // The next assignment of the free labels (the last fastest).
    int j = num_free - 1;
    for (; j >= 0; --j) {
      const int l = free[j];
      if (++value[l] < c.label_size[l]) {
        for (int f = 0; f < c.num_factors; ++f) at[f] += c.stride[f][l];
        break;
      }
      for (int f = 0; f < c.num_factors; ++f) {
        at[f] -= (c.label_size[l] - 1) * c.stride[f][l];
      }
      value[l] = 0;
    }
    if (j < 0) break;
  }
  return sum;
}

}  // namespace mx_math

#endif  // MXCORE_BACKENDS_COMMON_EINSUM_H_
