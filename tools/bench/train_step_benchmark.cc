// One training step (forward, backward, Adam update) of the trainer's
// models at batch 64, imperative vs hybridized (CachedOp), waiting after
// every step or never (a loop that only reads the loss now and then; the
// engine's back-pressure, MX_ENGINE_MAX_PENDING, bounds how far it runs
// ahead). Reports the peak bytes the arrays held (peak_MiB).
//   BM_TrainStepMLP/<hybridized>/<wait every step>, cnn alike.
#include <string>

#include "autograd/autograd.h"
#include "benchmark/benchmark.h"
#include "engine/engine.h"
#include "imperative/nd.h"
#include "ndarray/storage.h"
#include "nn/nn.h"
#include "tools/models.h"

namespace mx {
namespace {

void TrainStep(benchmark::State& state, const std::string& model) {
  const bool hybridize = state.range(0) != 0;
  const bool wait_each_step = state.range(1) != 0;
  const int64_t batch = 64;
  random::Seed(1);
  auto net = models::Make(model);
  net->Initialize(nn::init::Xavier());
  if (hybridize) net->Hybridize();
  nn::SoftmaxCrossEntropyLoss loss_fn;
  nn::Trainer trainer(net->CollectParams(), nn::MakeAdam({}));
  NDArray x = nd::random_uniform(0, 1, {batch, 1, 28, 28});
  NDArray y = nd::cast(nd::random_uniform(0, 10, {batch}), DType::kInt32);
  y = nd::cast(y, DType::kFloat32);
  engine::Engine::Get()->WaitForAll();
  Storage::Get()->ResetPeak(Context::CPU());
  int64_t step = 0;
  for (auto _ : state) {
    NDArray loss;
    {
      autograd::RecordScope record;
      loss = loss_fn({(*net)(x), y})[0];
    }
    autograd::Backward({loss});
    trainer.Step(batch);
    // Without per-step waits, the last step's wait is timed: it is where
    // the work queued by the loop gets done.
    if (wait_each_step || ++step == state.max_iterations) {
      engine::Engine::Get()->WaitForAll();
    }
  }
  state.counters["peak_MiB"] =
      Storage::Get()->GetStats(Context::CPU()).peak_bytes_in_use /
      (1024.0 * 1024.0);
  state.SetItemsProcessed(state.iterations() * batch);
  state.SetLabel(std::string(hybridize ? "hybridized " : "imperative ") +
                 (wait_each_step ? "wait/step " : "no wait ") +
                 engine::Engine::Get()->type_name());
}

void BM_TrainStepMLP(benchmark::State& state) { TrainStep(state, "mlp"); }
void BM_TrainStepCNN(benchmark::State& state) { TrainStep(state, "cnn"); }
BENCHMARK(BM_TrainStepMLP)
    ->ArgsProduct({{0, 1}, {1, 0}})
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();
BENCHMARK(BM_TrainStepCNN)
    ->ArgsProduct({{0, 1}, {1, 0}})
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

}  // namespace
}  // namespace mx

BENCHMARK_MAIN();
