// Special functions the CUDA math library lacks, for the plugin's kernels
// (digamma, for the gradients of gamma and gammaln). Host and device code:
// compiled by nvcc into the kernels and by the host compiler into a test
// against Eigen's digamma (special_math_test.cc), which needs no GPU.
//
//   const double psi = mx_cuda::Digamma(0.5);  // -gamma_E - 2 ln 2
#ifndef MXCORE_BACKENDS_CUDA_SPECIAL_MATH_H_
#define MXCORE_BACKENDS_CUDA_SPECIAL_MATH_H_

#include <math.h>

#ifdef __CUDACC__
#define MX_HOST_DEVICE __host__ __device__
#else
#define MX_HOST_DEVICE
#endif

namespace mx_cuda {

// psi(x) in double: NaN at the poles 0, -1, -2, ... and at -inf. Negative x
// by the reflection psi(x) = psi(1 - x) - pi cot(pi x) (cot's period taken
// out first, so x near a pole or large keeps its precision), then the
// recurrence psi(x) = psi(x + 1) - 1/x up to x >= 10 and the asymptotic series
// there (relative error near 1e-15).
MX_HOST_DEVICE inline double Digamma(double x) {
  constexpr double kPi = 3.14159265358979323846;
  if (x != x || x == -INFINITY) return NAN;
  if (x == INFINITY) return INFINITY;
  double result = 0;
  if (x <= 0) {
    // cot(pi x) = cot(pi r) for r = x - round(x) in [-1/2, 1/2], which
    // the subtraction gives exactly: x near a pole keeps its precision.
    const double r = x - ::round(x);
    if (r == 0) return NAN;
    result = -kPi / ::tan(kPi * r);
    x = 1 - x;
  }
  for (; x < 10; x += 1) result -= 1 / x;
  // ln x - 1/(2x) - sum B_2k / (2k x^2k), through B_14.
  const double f = 1 / (x * x);
  const double series =
      f * (1.0 / 12 -
           f * (1.0 / 120 -
                f * (1.0 / 252 -
                     f * (1.0 / 240 -
                          f * (1.0 / 132 - f * (691.0 / 32760 - f / 12))))));
  return result + ::log(x) - 0.5 / x - series;
}

}  // namespace mx_cuda

#endif  // MXCORE_BACKENDS_CUDA_SPECIAL_MATH_H_
