// The random generator a kernel draws from (OpContext::random()): a 64-bit
// Mersenne Twister, one per context, seeded by mx::random::Seed.
//
//   RandomEngine& rng = ctx.random();
//   std::normal_distribution<float> normal(0.f, 1.f);
//   float x = normal(rng);
//
// A class of its own rather than an alias so that graph/op.h can declare it
// without including <random>, which every kernel and test would otherwise
// parse (about 0.5 s per file under the sanitizers).
#ifndef MXCORE_GRAPH_RANDOM_ENGINE_H_
#define MXCORE_GRAPH_RANDOM_ENGINE_H_

#include <random>

namespace mx {

class RandomEngine : public std::mt19937_64 {
 public:
  using std::mt19937_64::mt19937_64;
  RandomEngine() = default;
};

}  // namespace mx

#endif  // MXCORE_GRAPH_RANDOM_ENGINE_H_
