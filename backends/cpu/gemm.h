// Internal: row-major matrix products through Eigen for the CPU kernels
// (dot, FullyConnected, Convolution's im2col). One place, so that large
// products can be routed to a faster library later.
#ifndef MXCORE_BACKENDS_CPU_GEMM_H_
#define MXCORE_BACKENDS_CPU_GEMM_H_

#include <cstdint>
#include <type_traits>
#include <vector>

#include "backends/cpu/kernel_util.h"

namespace mx {
namespace cpu {

// c (m x n) = op(a) * op(b), or += when `accumulate`. a holds (m x k)
// row-major, (k x m) when `ta`; b holds (k x n), (n x k) when `tb`. A large
// product splits over the CPU kernel threads (base/parallel.h) along the
// longer side of c, each thread computing its own rows (or columns).
// Defined in gemm.cc for float and double only (float16 products convert
// to float): Eigen's product kernels are compiled once there instead of
// in every op file that multiplies.
template <typename A>
void Gemm(const A* a, const A* b, A* c, int64_t m, int64_t n, int64_t k,
          bool ta, bool tb, bool accumulate);

extern template void Gemm<float>(const float*, const float*, float*, int64_t,
                                 int64_t, int64_t, bool, bool, bool);
extern template void Gemm<double>(const double*, const double*, double*,
                                  int64_t, int64_t, int64_t, bool, bool, bool);

// p[0, n) as floats.
template <typename T>
std::vector<float> ToFloat(const T* p, int64_t n) {
  std::vector<float> v(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) v[i] = static_cast<float>(p[i]);
  return v;
}

// Gemm with the result written to `c` as `req` says; `epilogue(A* c, m, n)`
// then adds a bias or the like to the product (before the write for
// float16, in place otherwise, which is right for kAddTo too).
template <typename T, typename Epilogue>
void GemmReq(const T* a, const T* b, T* c, int64_t m, int64_t n, int64_t k,
             bool ta, bool tb, OpReqType req, Epilogue epilogue) {
  if (req == OpReqType::kNullOp || m * n == 0) return;
  if constexpr (std::is_same_v<T, float16>) {
    std::vector<float> fa = ToFloat(a, m * k), fb = ToFloat(b, k * n);
    std::vector<float> fc(static_cast<size_t>(m * n));
    Gemm(fa.data(), fb.data(), fc.data(), m, n, k, ta, tb, false);
    epilogue(fc.data(), m, n);
    for (int64_t i = 0; i < m * n; ++i) Assign(c + i, req, fc[i]);
  } else {
    Gemm(a, b, c, m, n, k, ta, tb, req == OpReqType::kAddTo);
    epilogue(c, m, n);
  }
}

inline constexpr auto kNoEpilogue = [](auto*, int64_t, int64_t) {};

}  // namespace cpu
}  // namespace mx

#endif  // MXCORE_BACKENDS_CPU_GEMM_H_
