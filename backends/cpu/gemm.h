// Internal: row-major matrix products through Eigen for the CPU kernels
// (dot, FullyConnected, Convolution's im2col). One place, so that large
// products can be routed to a faster library later.
#ifndef MXCORE_BACKENDS_CPU_GEMM_H_
#define MXCORE_BACKENDS_CPU_GEMM_H_

#include <Eigen/Core>
#include <cstdint>

namespace mx {
namespace cpu {

template <typename A>
using RowMajor =
    Eigen::Matrix<A, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

// c (m x n) = op(a) * op(b), or += when `accumulate`. a holds (m x k)
// row-major, (k x m) when `ta`; b holds (k x n), (n x k) when `tb`.
template <typename A>
void Gemm(const A* a, const A* b, A* c, int64_t m, int64_t n, int64_t k,
          bool ta, bool tb, bool accumulate) {
  Eigen::Map<RowMajor<A>> cm(c, m, n);
  Eigen::Map<const RowMajor<A>> am(a, ta ? k : m, ta ? m : k);
  Eigen::Map<const RowMajor<A>> bm(b, tb ? n : k, tb ? k : n);
  auto run = [&](const auto& lhs, const auto& rhs) {
    if (accumulate) {
      cm.noalias() += lhs * rhs;
    } else {
      cm.noalias() = lhs * rhs;
    }
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

}  // namespace cpu
}  // namespace mx

#endif  // MXCORE_BACKENDS_CPU_GEMM_H_
