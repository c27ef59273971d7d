// Forward of a chain of 8 elementwise ops on 1M floats through the
// executor, unfused and with the fuse plugin (MX_PLUGINS must name it).
#include <benchmark/benchmark.h>

#include <iostream>

#include "imperative/executor.h"
#include "plugin/plugin.h"
#include "subgraph/partition_graph.h"

namespace mx {
namespace {

Symbol Chain8() {
  Symbol s = Symbol::Variable("x");
  const std::vector<std::pair<std::string, AttrDict>> ops = {
      {"_mul_scalar", {{"scalar", "1.5"}}},
      {"_plus_scalar", {{"scalar", "1"}}},
      {"relu", {}},
      {"square", {}},
      {"_minus_scalar", {{"scalar", "3"}}},
      {"abs", {}},
      {"negative", {}},
      {"_mul_scalar", {{"scalar", "0.5"}}},
  };
  for (const auto& [op, attrs] : ops) s = Symbol::Create(op, {s}, attrs);
  return s;
}

void Run(benchmark::State& state, const std::string& backend) {
  const Symbol net = PartitionGraph(Chain8(), backend);
  auto exec = Executor::SimpleBind(net, Context::CPU(), {{"x", {1 << 20}}}, {},
                                   OpReqType::kNullOp);
  exec->Forward();
  exec->outputs()[0].WaitToRead();
  for (auto _ : state) {
    exec->Forward();
    exec->outputs()[0].WaitToRead();
  }
  state.SetBytesProcessed(state.iterations() * (1 << 20) * 4 * 2);
}

void BM_Chain8Unfused(benchmark::State& state) { Run(state, "NONE"); }
void BM_Chain8Fused(benchmark::State& state) { Run(state, "fuse"); }
BENCHMARK(BM_Chain8Unfused)->Unit(benchmark::kMicrosecond)->UseRealTime();
BENCHMARK(BM_Chain8Fused)->Unit(benchmark::kMicrosecond)->UseRealTime();

}  // namespace
}  // namespace mx

int main(int argc, char** argv) {
  mx::LoadEnvPlugins();
  if (!mx::SubgraphBackendRegistry::Get()->Has("fuse")) {
    std::cerr << "set MX_PLUGINS to bazel-bin/backends/fuse/libfuse.so\n";
    return 2;
  }
  benchmark::Initialize(&argc, argv);
  benchmark::RunSpecifiedBenchmarks();
  return 0;
}
