// MXNet's LRN (local response normalization across channels, as in
// AlexNet and Caffe) for one element of data (N, C, S), forward and
// backward, host and device code shared by the CPU kernel and the CUDA
// plugin's (one thread per element):
//   norm = knorm + alpha / nsize * sum of x^2 over channels [c - nsize/2,
//          c + nsize/2] (clipped to the channels; as MXNet's chpool, an
//          even nsize spans nsize + 1 channels)
//   y = x * norm^-beta
// and the gradient (the window is symmetric, so it is its own transpose)
//   dx = g * norm^-beta
//        - 2 beta alpha / nsize * x * sum over the window of
//          g' x' norm'^(-beta - 1)
//
//   mx_lrn::LrnSpec s{c, spatial, nsize, alpha, beta, knorm};
//   for (i...) y[i] = mx_lrn::LrnForwardAt<float>(s, x, i, &norm[i]);
#ifndef MXCORE_BACKENDS_COMMON_LRN_H_
#define MXCORE_BACKENDS_COMMON_LRN_H_

#include <math.h>
#include <stdint.h>

#include "backends/common/host_device.h"

namespace mx_lrn {

struct LrnSpec {
  int64_t channels, spatial;  // C and the product of the dims after it.
  int64_t nsize;
  double alpha, beta, knorm;
};

// Element i's channel window [*lo, *hi) and the stride between channels.
MX_HOST_DEVICE inline int64_t WindowOf(const LrnSpec& s, int64_t i, int64_t* lo,
                                       int64_t* hi) {
  const int64_t c = (i / s.spatial) % s.channels, half = s.nsize / 2;
  *lo = c < half ? 0 : c - half;
  *hi = c + half + 1 < s.channels ? c + half + 1 : s.channels;
  return c;
}

// y[i]; writes norm[i]. T is the storage type, A the arithmetic one.
template <typename A, typename T>
MX_HOST_DEVICE inline A LrnForwardAt(const LrnSpec& s, const T* x, int64_t i,
                                     A* norm) {
  int64_t lo, hi;
  const int64_t c = WindowOf(s, i, &lo, &hi);
  const T* first = x + i - (c - lo) * s.spatial;
  A sum = 0;
  for (int64_t k = 0; k < hi - lo; ++k) {
    const A v = static_cast<A>(first[k * s.spatial]);
    sum += v * v;
  }
  *norm = static_cast<A>(s.knorm) + static_cast<A>(s.alpha / s.nsize) * sum;
  return static_cast<A>(x[i]) * pow(*norm, static_cast<A>(-s.beta));
}

// dx[i] from the output gradient g, the data and the forward's norm.
template <typename A, typename T, typename N>
MX_HOST_DEVICE inline A LrnBackwardAt(const LrnSpec& s, const T* g, const T* x,
                                      const N* norm, int64_t i) {
  int64_t lo, hi;
  const int64_t c = WindowOf(s, i, &lo, &hi);
  const int64_t first = i - (c - lo) * s.spatial;
  const A beta = static_cast<A>(s.beta);
  A sum = 0;
  for (int64_t k = 0; k < hi - lo; ++k) {
    const int64_t j = first + k * s.spatial;
    sum += static_cast<A>(g[j]) * static_cast<A>(x[j]) *
           pow(static_cast<A>(norm[j]), -beta - A(1));
  }
  return static_cast<A>(g[i]) * pow(static_cast<A>(norm[i]), -beta) -
         A(2) * beta * static_cast<A>(s.alpha / s.nsize) *
             static_cast<A>(x[i]) * sum;
}

}  // namespace mx_lrn

#endif  // MXCORE_BACKENDS_COMMON_LRN_H_
