// Autograd cost.
//   MLPTrainStep: forward + backward + SGD step of an MLP 784-256-256-10
//                 (ReLU, softmax cross-entropy) at batch 64, float32.
//   Record/<n>:   a chain of `n` scalar multiplies on a 1-element array,
//                 with recording (Record) and without (NoRecord); the
//                 difference per op is the cost of recording.
//   RecordedAdd:  c = a + b on 1-element arrays while recording, `a`
//                 with an attached gradient (per op; compare
//                 imperative_benchmark's Dispatch/AddSmall, not recorded).
// The engine comes from MX_ENGINE_TYPE (tools/bench/run.sh runs both).
#include <vector>

#include "autograd/autograd.h"
#include "benchmark/benchmark.h"
#include "engine/engine.h"
#include "imperative/nd.h"

namespace mx {
namespace {

void BM_MLPTrainStep(benchmark::State& state) {
  const int64_t batch = 64;
  NDArray x = nd::random_uniform(0, 1, {batch, 784});
  std::vector<float> y(batch);
  for (int64_t i = 0; i < batch; ++i) y[i] = static_cast<float>(i % 10);
  NDArray label = NDArray::FromVector<float>({batch}, y);
  const std::vector<std::pair<int64_t, int64_t>> layers = {
      {256, 784}, {256, 256}, {10, 256}};
  std::vector<NDArray> params;
  for (const auto& [out, in] : layers) {
    params.push_back(nd::random_uniform(-0.05, 0.05, {out, in}));
    params.push_back(nd::zeros({out}));
  }
  for (NDArray& p : params) autograd::AttachGrad(&p);
  for (auto _ : state) {
    NDArray loss;
    {
      autograd::RecordScope record;
      NDArray h = x;
      for (size_t l = 0; l < layers.size(); ++l) {
        h = nd::FullyConnected(h, params[2 * l], params[2 * l + 1],
                               layers[l].first);
        if (l + 1 < layers.size()) h = nd::relu(h);
      }
      loss = nd::softmax_cross_entropy(h, label);
    }
    autograd::Backward({loss});
    for (NDArray& p : params) {
      nd::sgd_update(p, p.grad(), 0.1, 0, 1.0 / batch);
    }
    engine::Engine::Get()->WaitForAll();
  }
  state.SetItemsProcessed(state.iterations() * batch);
  state.SetLabel(engine::Engine::Get()->type_name());
}
BENCHMARK(BM_MLPTrainStep)->Unit(benchmark::kMillisecond)->UseRealTime();

void Chain(benchmark::State& state, bool record) {
  const int n = static_cast<int>(state.range(0));
  NDArray x = NDArray::FromVector<float>({1}, {1});
  autograd::AttachGrad(&x);
  for (auto _ : state) {
    autograd::RecordScope scope;
    imperative::RecordingScope on(record);
    NDArray y = x;
    for (int i = 0; i < n; ++i) y = y * 1.0001;
    y.WaitToRead();
  }
  state.SetItemsProcessed(state.iterations() * n);
  state.SetLabel(engine::Engine::Get()->type_name());
}
void BM_RecordedAdd(benchmark::State& state) {
  NDArray a = NDArray::FromVector<float>({1}, {1}),
          b = NDArray::FromVector<float>({1}, {2});
  autograd::AttachGrad(&a);
  constexpr int kBatch = 1000;
  autograd::RecordScope scope;
  for (auto _ : state) {
    NDArray c;
    for (int i = 0; i < kBatch; ++i) c = a + b;
    c.WaitToRead();
  }
  state.SetItemsProcessed(state.iterations() * kBatch);
  state.SetLabel(engine::Engine::Get()->type_name());
}
BENCHMARK(BM_RecordedAdd)->UseRealTime();

void BM_Record(benchmark::State& state) { Chain(state, true); }
void BM_NoRecord(benchmark::State& state) { Chain(state, false); }
BENCHMARK(BM_Record)->Arg(1000)->UseRealTime();
BENCHMARK(BM_NoRecord)->Arg(1000)->UseRealTime();

}  // namespace
}  // namespace mx

BENCHMARK_MAIN();
