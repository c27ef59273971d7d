// A 2-layer LSTM (nn::LSTM over the fused RNN op) on a word-language-model
// shape: T 35, N 32, input and hidden 256. Inference (forward) and a train
// step (forward, backward from a fixed head gradient into every parameter
// and the input), hybridized, waiting for the results each iteration.
// tools/bench/lstm_compare.sh runs it side by side with LibTorch's LSTM.
//   BM_LstmInference, BM_LstmTrainStep
#include "autograd/autograd.h"
#include "benchmark/benchmark.h"
#include "engine/engine.h"
#include "imperative/nd.h"
#include "nn/nn.h"

namespace mx {
namespace {

constexpr int64_t kSteps = 35, kBatch = 32, kSize = 256;

std::shared_ptr<nn::LSTM> MakeLstm() {
  random::Seed(1);
  nn::LSTM::Options o;
  o.num_layers = 2;
  o.input_size = kSize;
  auto lstm = std::make_shared<nn::LSTM>(kSize, o);
  lstm->Initialize(nn::init::Uniform(1 / 16.0));  // 1/sqrt(H), as PyTorch's
  lstm->Hybridize();
  return lstm;
}

void BM_LstmInference(benchmark::State& state) {
  auto lstm = MakeLstm();
  const NDArray x = nd::random_uniform(-1, 1, {kSteps, kBatch, kSize});
  for (auto _ : state) {
    NDArray y = (*lstm)(x);
    y.WaitToRead();
  }
  state.SetItemsProcessed(state.iterations() * kSteps * kBatch);
}

void BM_LstmTrainStep(benchmark::State& state) {
  auto lstm = MakeLstm();
  NDArray x = nd::random_uniform(-1, 1, {kSteps, kBatch, kSize});
  autograd::AttachGrad(&x);
  const NDArray head = nd::random_uniform(-1, 1, {kSteps, kBatch, kSize});
  for (auto _ : state) {
    NDArray y;
    {
      autograd::RecordScope record;
      y = (*lstm)(x);
    }
    autograd::Backward({y}, {head});
    engine::Engine::Get()->WaitForAll();
  }
  state.SetItemsProcessed(state.iterations() * kSteps * kBatch);
}

BENCHMARK(BM_LstmInference)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_LstmTrainStep)->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace
}  // namespace mx

BENCHMARK_MAIN();
