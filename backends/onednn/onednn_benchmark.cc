// The peers' workloads (/work/shared/peers: LibTorch and bare oneDNN) in
// mxcore, for side-by-side ratios: hybridized train steps at batch 64 with
// SGD (lr 0.01, momentum 0.9) of the MLP 784-256-256-10 and the CNN (conv
// 1->32 3x3 pad 1, relu, maxpool 2, conv 32->64 3x3 pad 1, relu, maxpool
// 2, FC 3136->128, relu, FC 128->10), and a 1024^3 GEMM (nd::dot). Run
// with and without MX_PLUGINS=.../libmx_onednn.so; MX_CPU_KERNEL_NTHREADS
// sets the kernel threads. tools/bench/onednn_compare.sh runs everything.
#include <memory>
#include <string>

#include "autograd/autograd.h"
#include "benchmark/benchmark.h"
#include "engine/engine.h"
#include "imperative/imperative.h"
#include "imperative/nd.h"
#include "nn/layers.h"
#include "nn/nn.h"

namespace mx {
namespace {

std::shared_ptr<nn::HybridSequential> Mlp() {
  auto net = std::make_shared<nn::HybridSequential>();
  net->Add(std::make_shared<nn::Dense>(256, "relu"))
      .Add(std::make_shared<nn::Dense>(256, "relu"))
      .Add(std::make_shared<nn::Dense>(10));
  return net;
}

std::shared_ptr<nn::HybridSequential> Cnn() {
  nn::Conv2D::Options conv;
  conv.activation = "relu";
  conv.padding = TShape{1, 1};
  auto net = std::make_shared<nn::HybridSequential>();
  net->Add(std::make_shared<nn::Conv2D>(32, TShape{3, 3}, conv))
      .Add(std::make_shared<nn::MaxPool2D>())
      .Add(std::make_shared<nn::Conv2D>(64, TShape{3, 3}, conv))
      .Add(std::make_shared<nn::MaxPool2D>())
      .Add(std::make_shared<nn::Flatten>())
      .Add(std::make_shared<nn::Dense>(128, "relu"))
      .Add(std::make_shared<nn::Dense>(10));
  return net;
}

void TrainStep(benchmark::State& state,
               std::shared_ptr<nn::HybridSequential> net,
               const TShape& x_shape) {
  const int64_t batch = x_shape[0];
  random::Seed(1);
  net->Initialize(nn::init::Xavier());
  net->Hybridize();
  nn::SoftmaxCrossEntropyLoss loss_fn;
  nn::SGDOptions sgd;
  sgd.learning_rate = 0.01;
  sgd.momentum = 0.9;
  nn::Trainer trainer(net->CollectParams(), nn::MakeSGD(sgd));
  NDArray x = nd::random_uniform(0, 1, x_shape);
  NDArray y =
      nd::cast(nd::cast(nd::random_uniform(0, 10, {batch}), DType::kInt32),
               DType::kFloat32);
  auto step = [&] {
    NDArray loss;
    {
      autograd::RecordScope record;
      loss = loss_fn({(*net)(x), y})[0];
    }
    autograd::Backward({loss});
    trainer.Step(batch);
    engine::Engine::Get()->WaitForAll();
  };
  for (int i = 0; i < 5; ++i) step();  // Warm-up: primitives, CachedOp.
  for (auto _ : state) step();
  state.SetItemsProcessed(state.iterations() * batch);
}

void BM_MLPStep(benchmark::State& state) { TrainStep(state, Mlp(), {64, 784}); }
void BM_CNNStep(benchmark::State& state) {
  TrainStep(state, Cnn(), {64, 1, 28, 28});
}

void BM_Gemm1024(benchmark::State& state) {
  const int64_t n = 1024;
  NDArray a = nd::random_uniform(-1, 1, {n, n});
  NDArray b = nd::random_uniform(-1, 1, {n, n});
  NDArray c = nd::dot(a, b);
  c.WaitToRead();
  for (auto _ : state) {
    c = nd::dot(a, b);
    c.WaitToRead();
  }
  state.counters["GFLOPs"] = benchmark::Counter(
      2.0 * n * n * n * state.iterations() / 1e9, benchmark::Counter::kIsRate);
}

BENCHMARK(BM_MLPStep)
    ->Unit(benchmark::kMillisecond)
    ->MinTime(2.0)
    ->UseRealTime();
BENCHMARK(BM_CNNStep)
    ->Unit(benchmark::kMillisecond)
    ->MinTime(3.0)
    ->UseRealTime();
BENCHMARK(BM_Gemm1024)
    ->Unit(benchmark::kMillisecond)
    ->MinTime(2.0)
    ->UseRealTime();

}  // namespace
}  // namespace mx

BENCHMARK_MAIN();
