#include "backends/cpu/gemm.h"

#include <Eigen/Core>
#include <algorithm>

#include "base/parallel.h"

namespace mx {
namespace cpu {
namespace {

template <typename A>
using RowMajor =
    Eigen::Matrix<A, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

// A slice of one product handed to a kernel thread does at least this many
// multiply-adds: waking a pool thread costs microseconds.
constexpr int64_t kMinGemmSliceMacs = int64_t{1} << 20;

}  // namespace

template <typename A>
void Gemm(const A* a, const A* b, A* c, int64_t m, int64_t n, int64_t k,
          bool ta, bool tb, bool accumulate) {
  Eigen::Map<RowMajor<A>> cm(c, m, n);
  // An empty contraction: zeros (nothing to add). Its operands are empty
  // and may be null, and a column slice of a null map would offset it.
  if (k == 0) {
    if (!accumulate) cm.setZero();
    return;
  }
  Eigen::Map<const RowMajor<A>> am(a, ta ? k : m, ta ? m : k);
  Eigen::Map<const RowMajor<A>> bm(b, tb ? n : k, tb ? k : n);
  const bool by_rows = m >= n;
  const int64_t lines = by_rows ? m : n;
  const int64_t macs_per_line = std::max<int64_t>(1, (by_rows ? n : m) * k);
  const int64_t min_lines =
      std::max<int64_t>(1, kMinGemmSliceMacs / macs_per_line);
  auto run = [&](const auto& lhs, const auto& rhs) {
    ParallelFor(lines, min_lines, [&](int64_t s, int64_t e) {
      if (by_rows) {
        auto dst = cm.middleRows(s, e - s);
        if (accumulate) {
          dst.noalias() += lhs.middleRows(s, e - s) * rhs;
        } else {
          dst.noalias() = lhs.middleRows(s, e - s) * rhs;
        }
      } else {
        auto dst = cm.middleCols(s, e - s);
        if (accumulate) {
          dst.noalias() += lhs * rhs.middleCols(s, e - s);
        } else {
          dst.noalias() = lhs * rhs.middleCols(s, e - s);
        }
      }
    });
  };
  if (ta && tb) {
    run(am.transpose(), bm.transpose());
  } else if (ta) {
    run(am.transpose(), bm);
  } else if (tb) {
    run(am, bm.transpose());
  } else {
    run(am, bm);
  }
}

template void Gemm<float>(const float*, const float*, float*, int64_t, int64_t,
                          int64_t, bool, bool, bool);
template void Gemm<double>(const double*, const double*, double*, int64_t,
                           int64_t, int64_t, bool, bool, bool);

}  // namespace cpu
}  // namespace mx
