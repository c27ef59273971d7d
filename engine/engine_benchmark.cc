// Engine overhead: push no-op operations and wait for all of them.
//   Independent/<engine>/<threads>: each op writes its own var.
//   Chain/<engine>/<threads>:       every op writes the same var.
// items_per_second is ops pushed and completed per second.
#include <memory>
#include <vector>

#include "benchmark/benchmark.h"
#include "engine/engine.h"

namespace mx {
namespace engine {
namespace {

constexpr int kOpsPerIteration = 10000;

std::unique_ptr<Engine> MakeEngine(const benchmark::State& state) {
  EngineOptions options;
  options.type = static_cast<EngineType>(state.range(0));
  options.cpu_worker_threads = static_cast<int>(state.range(1));
  return Engine::Create(options);
}

void Label(benchmark::State& state, const Engine& engine) {
  state.SetLabel(std::string(engine.type_name()) +
                 " threads=" + std::to_string(state.range(1)));
  state.SetItemsProcessed(state.iterations() * kOpsPerIteration);
}

void BM_Independent(benchmark::State& state) {
  std::unique_ptr<Engine> engine = MakeEngine(state);
  std::vector<VarHandle> vars(kOpsPerIteration);
  for (VarHandle& v : vars) v = engine->NewVariable();
  const Context cpu = Context::CPU();
  for (auto _ : state) {
    for (const VarHandle& v : vars) {
      engine->PushAsync([](RunContext, CallbackOnComplete done) { done(); },
                        cpu, {}, {v});
    }
    engine->WaitForAll();
  }
  Label(state, *engine);
}

void BM_Chain(benchmark::State& state) {
  std::unique_ptr<Engine> engine = MakeEngine(state);
  VarHandle var = engine->NewVariable();
  const Context cpu = Context::CPU();
  for (auto _ : state) {
    for (int i = 0; i < kOpsPerIteration; ++i) {
      engine->PushAsync([](RunContext, CallbackOnComplete done) { done(); },
                        cpu, {}, {var});
    }
    engine->WaitForAll();
  }
  Label(state, *engine);
}

void EngineArgs(benchmark::internal::Benchmark* b) {
  b->Args({static_cast<int>(EngineType::kNaive), 1});
  for (EngineType type :
       {EngineType::kThreaded, EngineType::kThreadedPerDevice}) {
    b->Args({static_cast<int>(type), 1});
    b->Args({static_cast<int>(type), 2});
  }
  b->ArgNames({"engine", "threads"})->UseRealTime();
}

BENCHMARK(BM_Independent)->Apply(EngineArgs);
BENCHMARK(BM_Chain)->Apply(EngineArgs);

}  // namespace
}  // namespace engine
}  // namespace mx

BENCHMARK_MAIN();
