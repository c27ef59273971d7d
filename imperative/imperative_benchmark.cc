// Imperative dispatch overhead and CPU kernel throughput.
//   Dispatch/AddSmall: c = a + b on 1-element float32 arrays, per op.
//   FullyConnected:    batch 64, 784 -> 256, float32.
//   Convolution:       batch 64, 1 -> 32 channels, 3x3, 28x28, float32.
// The engine comes from MX_ENGINE_TYPE (tools/bench/run.sh runs both).
#include <string>

#include "benchmark/benchmark.h"
#include "engine/engine.h"
#include "imperative/nd.h"

namespace mx {
namespace {

void SetEngineLabel(benchmark::State& state) {
  state.SetLabel(engine::Engine::Get()->type_name());
}

void BM_DispatchAddSmall(benchmark::State& state) {
  NDArray a = NDArray::FromVector<float>({1}, {1}),
          b = NDArray::FromVector<float>({1}, {2});
  constexpr int kBatch = 1000;
  for (auto _ : state) {
    NDArray c;
    for (int i = 0; i < kBatch; ++i) c = a + b;
    c.WaitToRead();
  }
  state.SetItemsProcessed(state.iterations() * kBatch);
  SetEngineLabel(state);
}
BENCHMARK(BM_DispatchAddSmall)->UseRealTime();

void BM_FullyConnected(benchmark::State& state) {
  NDArray x = nd::random_uniform(-1, 1, {64, 784});
  NDArray w = nd::random_uniform(-0.05, 0.05, {256, 784});
  NDArray bias = nd::zeros({256});
  for (auto _ : state) {
    nd::FullyConnected(x, w, bias, 256).WaitToRead();
  }
  const double flops = 2.0 * 64 * 784 * 256;
  state.counters["GFLOP/s"] = benchmark::Counter(
      flops * state.iterations() / 1e9, benchmark::Counter::kIsRate);
  SetEngineLabel(state);
}
BENCHMARK(BM_FullyConnected)->UseRealTime();

void BM_Convolution(benchmark::State& state) {
  NDArray x = nd::random_uniform(-1, 1, {64, 1, 28, 28});
  NDArray w = nd::random_uniform(-0.1, 0.1, {32, 1, 3, 3});
  NDArray bias = nd::zeros({32});
  for (auto _ : state) {
    nd::Convolution(x, w, bias, {3, 3}, 32).WaitToRead();
  }
  const double flops = 2.0 * 64 * 32 * 26 * 26 * 9;
  state.counters["GFLOP/s"] = benchmark::Counter(
      flops * state.iterations() / 1e9, benchmark::Counter::kIsRate);
  SetEngineLabel(state);
}
BENCHMARK(BM_Convolution)->UseRealTime();

}  // namespace
}  // namespace mx

BENCHMARK_MAIN();
