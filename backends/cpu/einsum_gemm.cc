#include "backends/cpu/einsum_gemm.h"

#include <algorithm>
#include <type_traits>
#include <vector>

#include "backends/cpu/gemm.h"
#include "backends/cpu/strided_gather.h"
#include "base/parallel.h"

namespace mx {
namespace cpu {
namespace {

using mx_math::EinsumContraction;
using mx_math::kMaxEinsumLabels;

// The labels of one contraction sorted into the matrix product's axes.
// Labels of length 1 take part in no offset and are left out.
struct GemmLayout {
  std::vector<int> batch, m, n, k;
  int64_t batch_size = 1, m_size = 1, n_size = 1, k_size = 1;
  // Element step of the target per label (0 for labels it lacks).
  int64_t target_stride[kMaxEinsumLabels] = {};
};

// False when the target repeats or broadcasts a label, a label is empty
// (the direct path handles those), or an axis would pass 2^62 elements.
bool LayoutOf(const EinsumContraction& c, GemmLayout* g) {
  if (c.num_factors != 2) return false;
  bool in_target[kMaxEinsumLabels] = {};
  int64_t step = 1;
  for (int a = c.target_ndim - 1; a >= 0; --a) {
    const int l = c.target_label[a];
    if (in_target[l] || c.target_dim[a] != c.label_size[l]) return false;
    in_target[l] = true;
    g->target_stride[l] = step;
    step *= c.target_dim[a];
  }
  for (int l = 0; l < c.num_labels; ++l) {
    const int64_t size = c.label_size[l];
    if (size == 0) return false;
    if (size == 1) continue;
    const bool in0 = c.stride[0][l] != 0, in1 = c.stride[1][l] != 0;
    std::vector<int>* axis = &g->batch;  // In both factors or in neither.
    int64_t* axis_size = &g->batch_size;
    if (!in_target[l]) {
      // Summed; a factor without the label is repeated along it.
      axis = &g->k;
      axis_size = &g->k_size;
    } else if (in0 && !in1) {
      axis = &g->m;
      axis_size = &g->m_size;
    } else if (in1 && !in0) {
      axis = &g->n;
      axis_size = &g->n_size;
    }
    // Summed labels the factors broadcast along can multiply past int64.
    if (*axis_size > (int64_t{1} << 62) / size) return false;
    axis->push_back(l);
    *axis_size *= size;
  }
  // Orders that let Gemm read and write in place where the layouts allow:
  // batch, M and N as the target has them, K as the first factor has it.
  const auto by_step = [](const int64_t* step) {
    return [step](int x, int y) { return step[x] > step[y]; };
  };
  for (std::vector<int>* v : {&g->batch, &g->m, &g->n}) {
    std::stable_sort(v->begin(), v->end(), by_step(g->target_stride));
  }
  std::stable_sort(g->k.begin(), g->k.end(), by_step(c.stride[0]));
  return true;
}

// The offsets `step` (per label) gives the `count` elements of the
// row-major space of `labels` (c's sizes), in order.
std::vector<int64_t> OffsetsOf(const EinsumContraction& c,
                               const std::vector<int>& labels,
                               const int64_t* step, int64_t count) {
  std::vector<int64_t> offsets(static_cast<size_t>(count));
  int64_t index[kMaxEinsumLabels] = {};
  int64_t offset = 0;
  for (int64_t i = 0; i < count; ++i) {
    offsets[i] = offset;
    for (int j = static_cast<int>(labels.size()) - 1; j >= 0; --j) {
      const int l = labels[j];
      offset += step[l];
      if (++index[j] < c.label_size[l]) break;
      offset -= c.label_size[l] * step[l];
      index[j] = 0;
    }
  }
  return offsets;
}

std::vector<int> Concat(const std::vector<int>& a, const std::vector<int>& b,
                        const std::vector<int>& c) {
  std::vector<int> out(a);
  out.insert(out.end(), b.begin(), b.end());
  out.insert(out.end(), c.begin(), c.end());
  return out;
}

// Factor f's elements in the order of `labels`, as A.
template <typename T, typename A>
std::vector<A> Pack(const EinsumContraction& c, int f, const T* src,
                    const std::vector<int>& labels, int64_t count) {
  std::vector<int64_t> dims, steps;
  for (int l : labels) {
    dims.push_back(c.label_size[l]);
    steps.push_back(c.stride[f][l]);
  }
  std::vector<A> packed(static_cast<size_t>(count));
  StridedGather(src, 0, steps, TShape(dims), packed.data(),
                OpReqType::kWriteTo);
  return packed;
}

// Whether `labels` (with element steps `step`) are one row-major block:
// the last label's step is 1 and each other's the size of the block after
// it.
bool RowMajor(const EinsumContraction& c, const int64_t* step,
              const std::vector<int>& labels) {
  int64_t expect = 1;
  for (auto it = labels.rbegin(); it != labels.rend(); ++it) {
    if (step[*it] != expect) return false;
    expect *= c.label_size[*it];
  }
  return true;
}

// One factor as Gemm reads it: for batch index i, a (rows x cols) matrix
// at data + offset[i], stored as (cols x rows) when `transposed`.
template <typename A>
struct GemmOperand {
  const A* data = nullptr;
  std::vector<A> packed;  // The copy, when the factor needed one.
  std::vector<int64_t> offset;
  bool transposed = false;
};

// Factor f read in place when it is already of type A and each batch
// index's matrix is a row-major block, or the transpose of one; packed
// into (batch, rows, cols) otherwise.
template <typename T, typename A>
GemmOperand<A> OperandOf(const EinsumContraction& c, const GemmLayout& g, int f,
                         const T* src, const std::vector<int>& rows,
                         const std::vector<int>& cols, int64_t block) {
  GemmOperand<A> op;
  const int64_t b = g.batch_size;
  if constexpr (std::is_same_v<T, A>) {
    const bool in_order = RowMajor(c, c.stride[f], Concat(rows, cols, {}));
    if (in_order || RowMajor(c, c.stride[f], Concat(cols, rows, {}))) {
      op.data = src;
      op.transposed = !in_order;
      op.offset = OffsetsOf(c, g.batch, c.stride[f], b);
      return op;
    }
  }
  // Packed with the source's faster-moving of the two innermost labels
  // last, so that the copy reads runs (a transposed pack reads (batch, N,
  // K) where K is contiguous, instead of striding through K for each N).
  op.transposed = !rows.empty() && !cols.empty() &&
                  c.stride[f][rows.back()] < c.stride[f][cols.back()];
  op.packed = Pack<T, A>(
      c, f, src,
      op.transposed ? Concat(g.batch, cols, rows) : Concat(g.batch, rows, cols),
      b * block);
  op.data = op.packed.data();
  op.offset.resize(static_cast<size_t>(b));
  for (int64_t i = 0; i < b; ++i) op.offset[i] = i * block;
  return op;
}

}  // namespace

template <typename T>
bool ContractByGemm(const EinsumContraction& c, const T* f0, int64_t f0_size,
                    const T* f1, int64_t f1_size, OpReqType req, T* target) {
  using A = AccType<T>;
  GemmLayout g;
  if (!LayoutOf(c, &g)) return false;
  const int64_t b = g.batch_size, m = g.m_size, n = g.n_size, k = g.k_size;
  // In double: the four sizes multiplied can pass int64's range.
  const double macs = static_cast<double>(b) * m * n * k;
  const double packed = static_cast<double>(b) * k * (m + n) + b * m * n;
  if (macs < kMinEinsumGemmMacs ||
      packed > 4 * (static_cast<double>(f0_size) + f1_size + b * m * n)) {
    return false;
  }
  if (req == OpReqType::kNullOp) return true;

  const GemmOperand<A> lhs = OperandOf<T, A>(c, g, 0, f0, g.m, g.k, m * k);
  const GemmOperand<A> rhs = OperandOf<T, A>(c, g, 1, f1, g.k, g.n, k * n);
  const std::vector<int> product_labels = Concat(g.batch, g.m, g.n);
  // Gemm writes (or adds to) the target itself when it is laid out as
  // (batch, M, N); otherwise the product is scattered to the target's axes
  // (every target element once: its labels are all in the product).
  bool in_place = false;
  if constexpr (std::is_same_v<T, A>) {
    in_place = RowMajor(c, g.target_stride, product_labels);
  }
  std::vector<A> product;
  A* out = nullptr;
  if constexpr (std::is_same_v<T, A>) out = target;
  if (!in_place) {
    product.resize(static_cast<size_t>(b * m * n));
    out = product.data();
  }
  const bool accumulate = in_place && req == OpReqType::kAddTo;
  ParallelFor(b, 1, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) {
      Gemm(lhs.data + lhs.offset[i], rhs.data + rhs.offset[i], out + i * m * n,
           m, n, k, lhs.transposed, rhs.transposed, accumulate);
    }
  });
  if (in_place) return true;
  // The target in its own order gathers from the product (row-major over
  // product_labels; a target axis of length 1 has step 0).
  int64_t product_step[kMaxEinsumLabels] = {};
  int64_t step = 1;
  for (auto it = product_labels.rbegin(); it != product_labels.rend(); ++it) {
    product_step[*it] = step;
    step *= c.label_size[*it];
  }
  std::vector<int64_t> dims, steps;
  for (int a = 0; a < c.target_ndim; ++a) {
    dims.push_back(c.target_dim[a]);
    steps.push_back(product_step[c.target_label[a]]);
  }
  StridedGather(product.data(), 0, steps, TShape(dims), target, req);
  return true;
}

template bool ContractByGemm<float>(const EinsumContraction&, const float*,
                                    int64_t, const float*, int64_t, OpReqType,
                                    float*);
template bool ContractByGemm<double>(const EinsumContraction&, const double*,
                                     int64_t, const double*, int64_t, OpReqType,
                                     double*);
template bool ContractByGemm<float16>(const EinsumContraction&, const float16*,
                                      int64_t, const float16*, int64_t,
                                      OpReqType, float16*);

}  // namespace cpu
}  // namespace mx
