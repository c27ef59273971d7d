#include "imperative/random.h"

#include <map>
#include <mutex>

#include "imperative/imperative.h"

namespace mx {
namespace random_internal {
namespace {

struct Generators {
  std::mutex mu;
  uint64_t seed = 0;
  std::map<Context, Generator*> by_ctx;
};

Generators& State() {
  static Generators* g = new Generators();
  return *g;
}

// The generator state for `seed` on devices of ctx's type. MXNet seeds a
// single device with the seed itself, so devices of one type seeded alike
// draw the same numbers ...
uint64_t TypeSeed(uint64_t seed, Context ctx) {
  return seed * 0x9E3779B97F4A7C15ull +
         static_cast<uint64_t>(ctx.dev_type) * 131;
}
// ... while the global seed gives each device its own stream (MXNet adds the
// device id), so data-parallel replicas do not draw identical dropout masks.
uint64_t DeviceSeed(uint64_t seed, Context ctx) {
  return TypeSeed(seed, ctx) + static_cast<uint64_t>(ctx.dev_id);
}

void Reseed(Generator* gen, uint64_t state, Context ctx) {
  engine::Engine::Get()->PushSync(
      [gen, state](engine::RunContext) { gen->engine.seed(state); }, ctx, {},
      {gen->var}, engine::FnProperty::kNormal, 0, "random::Seed");
}

}  // namespace

Generator* GetGenerator(Context ctx) {
  Generators& g = State();
  std::lock_guard<std::mutex> lock(g.mu);
  Generator*& gen = g.by_ctx[ctx];
  if (gen == nullptr) {
    gen = new Generator();
    gen->engine.seed(DeviceSeed(g.seed, ctx));
    gen->var = engine::Engine::Get()->NewVariable();
  }
  return gen;
}

}  // namespace random_internal

namespace random {

void Seed(uint64_t seed) {
  auto& g = random_internal::State();
  std::lock_guard<std::mutex> lock(g.mu);
  g.seed = seed;
  for (auto& [ctx, gen] : g.by_ctx) {
    random_internal::Reseed(gen, random_internal::DeviceSeed(seed, ctx), ctx);
  }
}

void Seed(uint64_t seed, Context ctx) {
  random_internal::Generator* gen = random_internal::GetGenerator(ctx);
  random_internal::Reseed(gen, random_internal::TypeSeed(seed, ctx), ctx);
}

}  // namespace random
}  // namespace mx
