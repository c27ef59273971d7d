// MXNet's elementwise rules shared by mxcore's CPU kernels and the CUDA
// plugin's, so both give the same answers: host code, and device code where
// nvcc compiles it. Header-only, plain math (no mxcore or plugin types).
// mxnet_math_test.cc checks them on the host.
//
//   mx_math::ModAsMxnet(-7.0f, 3.0f);  // 2: the divisor's sign
//   mx_math::Digamma(0.5);             // -gamma_E - 2 ln 2
//   mx_math::Polygamma(1, 1.0);        // pi^2 / 6
//   mx_math::ScaledSumOfSquares s; s.Add(3e200); s.Add(4e200);
//   s.Norm();                          // 5e200, where sqrt(sum x^2) is inf
#ifndef MXCORE_BACKENDS_COMMON_MXNET_MATH_H_
#define MXCORE_BACKENDS_COMMON_MXNET_MATH_H_

#include <float.h>
#include <math.h>
#include <stdint.h>

#include <type_traits>

#include "backends/common/host_device.h"

namespace mx_math {

// The largest n such that every integer in [0, n] is exact in the dtype of
// MXNet's code (float32 0, float64 1, float16 2, uint8 3, int32 4, int8 5,
// int64 6, bool 7; -1 for another): how far indices of that dtype count
// (argmax's, argsort's). float16's 2049 rounds to 2048, so 2048.
MX_HOST_DEVICE inline int64_t LargestExactIndex(int dtype_code) {
  switch (dtype_code) {
    case 0:
      return int64_t{1} << 24;
    case 1:
      return int64_t{1} << 53;
    case 2:
      return 2048;
    case 3:
      return 255;
    case 4:
      return 2147483647;
    case 5:
      return 127;
    case 6:
      return INT64_MAX;
    case 7:
      return 1;
    default:
      return -1;
  }
}

// MXNet's rint: the floor unless the ceiling is strictly nearer, so halves
// go toward -inf (rint(2.5) = 2, rint(-2.5) = -3), unlike C's rint.
template <typename A>
MX_HOST_DEVICE inline A RintAsMxnet(A x) {
  const A lo = ::floor(x), hi = ::ceil(x);
  return x - lo <= hi - x ? lo : hi;
}

// MXNet's mod (Python's %): the divisor's sign, a mod 0 = 0. Integers
// exactly (MXNet goes through double, inexact above 2^53); floats in double
// through MXNet's own branches, so signed zeros match too.
template <typename A>
MX_HOST_DEVICE inline A ModAsMxnet(A a, A b) {
  if constexpr (std::is_integral<A>::value) {
    if (b == A(0)) return A(0);
    if constexpr (std::is_signed<A>::value) {
      if (b == A(-1)) return A(0);  // Also avoids INT_MIN % -1, which traps.
      const A r = a % b;
      return r != A(0) && ((r < A(0)) != (b < A(0))) ? static_cast<A>(r + b)
                                                     : r;
    } else {
      return a % b;
    }
  } else {
    const double x = a, y = b;
    if (y == 0) return A(0);
    if (y < 0) {
      if (x < 0) return static_cast<A>(-::fmod(-x, -y));
      const double r = ::fmod(x, -y);
      return static_cast<A>(r + (r != 0 ? y : 0));
    }
    if (x < 0) {
      const double r = ::fmod(-x, y);
      return static_cast<A>(-r + (r != 0 ? y : 0));
    }
    return static_cast<A>(::fmod(x, y));
  }
}

// R-CNN's smooth L1 loss of x with sigma, in a floating-point type C:
// 0.5 (sigma x)^2 where |x| < 1/sigma^2, else |x| - 0.5/sigma^2.
template <typename C>
MX_HOST_DEVICE inline C SmoothL1Loss(C x, C sigma) {
  const C sigma2 = sigma * sigma, limit = C(1) / sigma2;
  return x > limit    ? x - C(0.5) * limit
         : x < -limit ? -x - C(0.5) * limit
                      : C(0.5) * x * x * sigma2;
}

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

// The n-th derivative of digamma (n >= 0; NaN for n < 0), in double:
// (-1)^(n+1) n! sum over k >= 0 of (x + k)^-(n+1), summed term by term up
// to x + k >= 16 + 2n and by the Euler-Maclaurin formula (through B_14)
// beyond. At the poles 0, -1, ...: +inf for odd n, NaN for even n (as
// Eigen's). Negative x take |x| terms.
MX_HOST_DEVICE inline double Polygamma(int n, double x) {
  if (n < 0 || x != x || x == -INFINITY) return NAN;
  if (n == 0) return Digamma(x);
  if (x == INFINITY) return 0;
  if (x <= 0 && x == ::floor(x)) return n % 2 == 1 ? INFINITY : NAN;
  const double s = n + 1;
  double sum = 0;
  for (; x < 16 + 2 * n; x += 1) sum += ::pow(x, -s);
  // sum_k (x + k)^-s = x^(1-s) / (s-1) + x^-s / 2
  //                    + sum_j B_2j / (2j)! s (s+1) ... (s+2j-2) x^(1-s-2j).
  constexpr double kBernoulliOverFactorial[] = {
      1.0 / 12,         -1.0 / 720,     1.0 / 30240,
      -1.0 / 1209600,   1.0 / 47900160, -691.0 / 1307674368000,
      1.0 / 74724249600};
  double tail = ::pow(x, 1 - s) / (s - 1) + 0.5 * ::pow(x, -s);
  double rising = s, power = ::pow(x, -s - 1);
  for (int j = 1; j <= 7; ++j) {
    tail += kBernoulliOverFactorial[j - 1] * rising * power;
    rising *= (s + 2 * j - 1) * (s + 2 * j);
    power /= x * x;
  }
  double factorial = 1;
  for (int k = 2; k <= n; ++k) factorial *= k;
  return (n % 2 == 1 ? factorial : -factorial) * (sum + tail);
}

// The 2-norm of values added one at a time (or of merged partial sums)
// without overflow or underflow in the squares: LAPACK's dnrm2 scaling,
// ssq = sum (x/scale)^2 with scale the largest |x| seen (MXNet's nrm2
// reducer does the same). Infinity and NaN come out as from sqrt(sum x^2).
struct ScaledSumOfSquares {
  double scale = 0;
  double ssq = 0;
  bool inf = false;
  bool nan = false;

  MX_HOST_DEVICE void Add(double v) {
    const double a = ::fabs(v);
    if (a != a) {
      nan = true;
    } else if (a > DBL_MAX) {
      inf = true;
    } else if (a != 0) {
      Combine(a, 1);
    }
  }
  MX_HOST_DEVICE void Merge(const ScaledSumOfSquares& o) {
    nan = nan || o.nan;
    inf = inf || o.inf;
    if (o.scale != 0) Combine(o.scale, o.ssq);
  }
  MX_HOST_DEVICE double Norm() const {
    if (nan) return NAN;
    if (inf) return INFINITY;
    return scale * ::sqrt(ssq);
  }

 private:
  // Adds other_ssq * other_scale^2 (other_scale > 0).
  MX_HOST_DEVICE void Combine(double other_scale, double other_ssq) {
    if (scale < other_scale) {
      const double r = scale / other_scale;
      ssq = other_ssq + ssq * r * r;
      scale = other_scale;
    } else {
      const double r = other_scale / scale;
      ssq += other_ssq * r * r;
    }
  }
};

}  // namespace mx_math

#endif  // MXCORE_BACKENDS_COMMON_MXNET_MATH_H_
