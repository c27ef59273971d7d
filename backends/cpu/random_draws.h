// Draws the CPU kernels share: uniform doubles and dropout masks from the
// op's RandomEngine (OpContext::random()).
//
//   double u = Canonical(ctx.random());  // [0, 1)
#ifndef MXCORE_BACKENDS_CPU_RANDOM_DRAWS_H_
#define MXCORE_BACKENDS_CPU_RANDOM_DRAWS_H_

#include <cstdint>

#include "graph/random_engine.h"

namespace mx {
namespace cpu {

// A uniform double in [0, 1) from the top 53 bits of one draw.
inline double Canonical(RandomEngine& rng) {
  return static_cast<double>(rng() >> 11) * 0x1.0p-53;
}

// Dropout's mask: each of n elements 0 with probability p, else 1/(1-p)
// (0 for p = 1, which MXNet allows; the draws still happen so later random
// ops see the same stream). One draw per element.
template <typename T>
void DrawDropoutMask(RandomEngine& rng, double p, T* mask, int64_t n) {
  const T keep = static_cast<T>(p < 1 ? 1.0 / (1.0 - p) : 0.0);
  for (int64_t i = 0; i < n; ++i) mask[i] = Canonical(rng) < p ? T(0.0f) : keep;
}

}  // namespace cpu
}  // namespace mx

#endif  // MXCORE_BACKENDS_CPU_RANDOM_DRAWS_H_
