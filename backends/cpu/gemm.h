// Internal: row-major matrix products through Eigen for the CPU kernels
// (dot, FullyConnected, Convolution's im2col). One place, so that large
// products can be routed to a faster library later.
#ifndef MXCORE_BACKENDS_CPU_GEMM_H_
#define MXCORE_BACKENDS_CPU_GEMM_H_

#include <cstdint>

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

}  // namespace cpu
}  // namespace mx

#endif  // MXCORE_BACKENDS_CPU_GEMM_H_
