// Internal: one random generator per context, ordered by an engine var so
// that random ops draw in push order (same seed, same numbers).
#ifndef MXCORE_IMPERATIVE_RANDOM_H_
#define MXCORE_IMPERATIVE_RANDOM_H_

#include "graph/op.h"
#include "graph/random_engine.h"

namespace mx {
namespace random_internal {

struct Generator {
  RandomEngine engine;
  engine::VarHandle var;
};

// Created on first use, seeded from the last global seed; never freed.
Generator* GetGenerator(Context ctx);

}  // namespace random_internal
}  // namespace mx

#endif  // MXCORE_IMPERATIVE_RANDOM_H_
