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

// Distinct streams per device from one user seed.
uint64_t DeviceSeed(uint64_t seed, Context ctx) {
  return seed * 0x9E3779B97F4A7C15ull +
         static_cast<uint64_t>(ctx.dev_type) * 131 +
         static_cast<uint64_t>(ctx.dev_id);
}

void Reseed(Generator* gen, uint64_t seed, Context ctx) {
  engine::Engine::Get()->PushSync(
      [gen, s = DeviceSeed(seed, ctx)](engine::RunContext) {
        gen->engine.seed(s);
      },
      ctx, {}, {gen->var}, engine::FnProperty::kNormal, 0, "random::Seed");
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
  for (auto& [ctx, gen] : g.by_ctx) random_internal::Reseed(gen, seed, ctx);
}

void Seed(uint64_t seed, Context ctx) {
  random_internal::Generator* gen = random_internal::GetGenerator(ctx);
  random_internal::Reseed(gen, seed, ctx);
}

}  // namespace random
}  // namespace mx
