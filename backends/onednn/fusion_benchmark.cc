// ResNet-18 v1 inference (the real MXNet symbol of
// ../shared/mxnet-models/resnet18_v1-symbol.json, random weights, 224x224)
// with the oneDNN plugin's kernels, unfused and partitioned with the
// "onednn" property (conv + BatchNorm + ReLU + residual add fused), at
// batch 1 and 32:
//   export MX_PLUGINS=bazel-bin/backends/onednn/libmx_onednn.so
//   MX_CPU_KERNEL_NTHREADS=2 bazel-bin/backends/onednn/fusion_benchmark
// MX_MXNET_MODELS_DIR overrides the models directory.
#include <cstdlib>
#include <fstream>
#include <random>
#include <sstream>
#include <string>

#include "base/error.h"
#include "benchmark/benchmark.h"
#include "graph/symbol.h"
#include "imperative/executor.h"
#include "plugin/plugin.h"
#include "subgraph/partition_graph.h"

namespace mx {
namespace {

Symbol ResNet18() {
  const char* dir = std::getenv("MX_MXNET_MODELS_DIR");
  const std::string path = std::string(dir ? dir : "../shared/mxnet-models") +
                           "/resnet18_v1-symbol.json";
  std::ifstream f(path);
  std::stringstream s;
  s << f.rdbuf();
  if (s.str().empty()) throw NotFound(path + " (set MX_MXNET_MODELS_DIR)");
  return Symbol::FromJSON(s.str());
}

void BM_ResNet18Inference(benchmark::State& state) {
  const bool fused = state.range(0) != 0;
  const int64_t batch = state.range(1);
  LoadEnvPlugins();
  Symbol net = ResNet18();
  if (fused) net = PartitionGraph(net, "onednn");
  auto exec = Executor::SimpleBind(net, Context::CPU(),
                                   {{"data", {batch, 3, 224, 224}}}, {},
                                   OpReqType::kNullOp);
  std::mt19937 rng(1);
  auto fill = [&](const std::string& name, NDArray a) {
    const bool positive = name.find("var") != std::string::npos;
    std::uniform_real_distribution<float> u(positive ? 0.5f : -0.1f,
                                            0.1f + positive);
    std::vector<float> v(a.size());
    for (float& x : v) x = u(rng);
    a.SyncCopyFromCPU(v.data(), v.size());
  };
  for (auto& [name, a] : exec->arg_dict()) fill(name, a);
  for (auto& [name, a] : exec->aux_dict()) fill(name, a);
  exec->Forward(false);  // Plans, primitives and prepared weights.
  exec->outputs()[0].WaitToRead();
  for (auto _ : state) {
    exec->Forward(false);
    exec->outputs()[0].WaitToRead();
  }
  state.counters["img_per_s"] =
      benchmark::Counter(static_cast<double>(batch * state.iterations()),
                         benchmark::Counter::kIsRate);
}

BENCHMARK(BM_ResNet18Inference)
    ->ArgNames({"fused", "batch"})
    ->Args({0, 1})
    ->Args({1, 1})
    ->Args({0, 32})
    ->Args({1, 32})
    ->UseRealTime()
    ->MinTime(2)
    ->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace mx

BENCHMARK_MAIN();
