// Training steps on the GPU, to compare with PyTorch eager on the same
// machine (tools/gpu/torch_peer.py): the trainer's CNN at batch 64 on
// 28x28 inputs, and MXNet's ResNet-18 v1 (the model zoo's symbol file,
// random weights) at batch 32 on 224x224 inputs; SGD with momentum,
// softmax cross-entropy, hybridized, each step waited for.
//
//   MX_CUDA_PLUGIN=.../libmx_cuda.so
//   MX_RESNET18_JSON=.../resnet18_v1-symbol.json
//   bazel-bin/backends/cuda/cuda_train_benchmark
#include <cuda_runtime.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "autograd/autograd.h"
#include "backends/cuda/gpu_benchmark_util.h"
#include "benchmark/benchmark.h"
#include "engine/engine.h"
#include "imperative/nd.h"
#include "nn/nn.h"
#include "plugin/plugin.h"
#include "tools/models.h"

namespace mx {
namespace {

void TrainSteps(benchmark::State& state, nn::HybridBlock& net, int64_t batch,
                const TShape& input) {
  const Context gpu = Context::GPU(0);
  net.Initialize(nn::init::Xavier(), gpu);
  net.Hybridize();
  nn::SoftmaxCrossEntropyLoss loss_fn;
  nn::SGDOptions sgd;
  sgd.learning_rate = 0.01;
  sgd.momentum = 0.9;
  nn::Trainer trainer(net.CollectParams(), nn::MakeSGD(sgd));
  std::vector<int64_t> dims{batch};
  for (int64_t d : input) dims.push_back(d);
  const TShape shape(dims);
  const NDArray x = nd::random_uniform(0, 1, shape, gpu);
  const NDArray y =
      nd::cast(nd::cast(nd::random_uniform(0, 10, {batch}), DType::kInt32),
               DType::kFloat32)
          .Copy(gpu);
  for (auto _ : state) {
    NDArray loss;
    {
      autograd::RecordScope record;
      loss = loss_fn({net(x), y})[0];
    }
    autograd::Backward({loss});
    trainer.Step(batch);
    engine::Engine::Get()->WaitForAll();
  }
  state.SetItemsProcessed(state.iterations() * batch);
}

void BM_GpuTrainStepCNN(benchmark::State& state) {
  if (!HasGpu()) return state.SkipWithError("no GPU");
  random::Seed(1);
  auto net = models::Make("cnn");
  TrainSteps(state, *net, 64, {1, 28, 28});
}
BENCHMARK(BM_GpuTrainStepCNN)->Unit(benchmark::kMillisecond)->UseRealTime();

void BM_GpuTrainStepResNet18(benchmark::State& state) {
  if (!HasGpu()) return state.SkipWithError("no GPU");
  const char* path = std::getenv("MX_RESNET18_JSON");
  std::ifstream file(path == nullptr ? "" : path);
  if (!file) return state.SkipWithError("set MX_RESNET18_JSON");
  std::stringstream json;
  json << file.rdbuf();
  random::Seed(1);
  nn::SymbolBlock net(Symbol::FromJSON(json.str()), {"data"});
  TrainSteps(state, net, state.range(0), {3, 224, 224});
}
BENCHMARK(BM_GpuTrainStepResNet18)
    ->Arg(32)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

}  // namespace
}  // namespace mx

BENCHMARK_MAIN();
