// The statistics LayerNorm, GroupNorm and InstanceNorm normalize with.
//
//   const LineMoments m = MomentsOf(x + base, len, stride, eps);
//   y = (x - m.mean) * m.inv_std;
#ifndef MXCORE_BACKENDS_CPU_LINE_MOMENTS_H_
#define MXCORE_BACKENDS_CPU_LINE_MOMENTS_H_

#include <cmath>
#include <cstdint>

namespace mx {
namespace cpu {

struct LineMoments {
  double mean = 0;
  double inv_std = 0;  // 1 / sqrt(biased variance + eps)
};

// The moments of p[0], p[stride], ..., p[(len - 1) * stride]: two passes
// in double (the mean, then the squared deviations from it), so a large
// offset costs no precision. An empty line gives NaN, as mean's.
template <typename T>
LineMoments MomentsOf(const T* p, int64_t len, int64_t stride, double eps) {
  double sum = 0, var = 0;
  for (int64_t i = 0; i < len; ++i) sum += static_cast<double>(p[i * stride]);
  LineMoments m;
  m.mean = sum / static_cast<double>(len);
  for (int64_t i = 0; i < len; ++i) {
    const double c = static_cast<double>(p[i * stride]) - m.mean;
    var += c * c;
  }
  m.inv_std = 1.0 / std::sqrt(var / static_cast<double>(len) + eps);
  return m;
}

}  // namespace cpu
}  // namespace mx

#endif  // MXCORE_BACKENDS_CPU_LINE_MOMENTS_H_
