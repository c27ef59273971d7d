#include "backends/cpu/einsum_gemm.h"

#include <vector>

#include "backends/cpu/gemm.h"
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
  return true;
}

// Visits the elements of the row-major space of `labels` (c's sizes) from
// linear index begin to end, calling visit(i, offset) with the offset
// that `step` (per label) gives each.
template <typename Visit>
void ForEachOffset(const EinsumContraction& c, const std::vector<int>& labels,
                   const int64_t* step, int64_t begin, int64_t end,
                   const Visit& visit) {
  const int rank = static_cast<int>(labels.size());
  int64_t index[kMaxEinsumLabels];
  int64_t offset = 0;
  int64_t rest = begin;
  for (int j = rank - 1; j >= 0; --j) {
    const int l = labels[j];
    index[j] = rest % c.label_size[l];
    rest /= c.label_size[l];
    offset += index[j] * step[l];
  }
  for (int64_t i = begin; i < end; ++i) {
    visit(i, offset);
    for (int j = rank - 1; j >= 0; --j) {
      const int l = labels[j];
      offset += step[l];
      if (++index[j] < c.label_size[l]) break;
      offset -= c.label_size[l] * step[l];
      index[j] = 0;
    }
  }
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
  std::vector<A> packed(static_cast<size_t>(count));
  ParallelFor(count, 1 << 14, [&](int64_t begin, int64_t end) {
    ForEachOffset(c, labels, c.stride[f], begin, end,
                  [&](int64_t i, int64_t at) {
                    packed[i] = static_cast<A>(src[at]);
                  });
  });
  return packed;
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

  const std::vector<A> lhs = Pack<T, A>(c, 0, f0, Concat(g.batch, g.m, g.k),
                                        b * m * k);
  const std::vector<A> rhs = Pack<T, A>(c, 1, f1, Concat(g.batch, g.k, g.n),
                                        b * k * n);
  std::vector<A> product(static_cast<size_t>(b * m * n));
  ParallelFor(b, 1, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) {
      Gemm(lhs.data() + i * m * k, rhs.data() + i * k * n,
           product.data() + i * m * n, m, n, k, false, false, false);
    }
  });
  // The product's (batch, M, N) order to the target's axes; every target
  // element is written once (its labels are all in the product).
  const std::vector<int> product_labels = Concat(g.batch, g.m, g.n);
  ParallelFor(b * m * n, 1 << 14, [&](int64_t begin, int64_t end) {
    ForEachOffset(c, product_labels, g.target_stride, begin, end,
                  [&](int64_t i, int64_t at) {
                    Assign(target + at, req, product[i]);
                  });
  });
  return true;
}

template bool ContractByGemm<float>(const EinsumContraction&, const float*,
                                    int64_t, const float*, int64_t, OpReqType,
                                    float*);
template bool ContractByGemm<double>(const EinsumContraction&, const double*,
                                     int64_t, const double*, int64_t,
                                     OpReqType, double*);
template bool ContractByGemm<float16>(const EinsumContraction&,
                                      const float16*, int64_t,
                                      const float16*, int64_t, OpReqType,
                                      float16*);

}  // namespace cpu
}  // namespace mx
