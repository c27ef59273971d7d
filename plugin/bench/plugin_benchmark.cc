// Call overhead of a plugin kernel against a built-in one, in one process
// with the plugin loaded: c = a + b through the plugin's elemwise_add
// kernel vs c = a - b through the built-in elemwise_sub kernel (the same
// kernel template as the built-in add), on 1-element float32 arrays
// through imperative::Invoke on NaiveEngine, repetitions interleaved.
// Run:
//   bazel build --config=opt //plugin/bench:all
//   bazel-bin/plugin/bench/plugin_benchmark (then, as its argument)
//       bazel-bin/plugin/bench/libbench_add_plugin.so
#include <benchmark/benchmark.h>

#include <cstdlib>
#include <iostream>
#include <string>

#include "imperative/imperative.h"
#include "plugin/plugin.h"

namespace {

std::string plugin_path;

void Run(benchmark::State& state, const char* op, float expected) {
  static const bool loaded = [] {
    mx::LoadPlugin(plugin_path);
    return true;
  }();
  (void)loaded;
  mx::NDArray a({1}), b({1});
  const float one = 1;
  a.SyncCopyFromCPU(&one, 1);
  b.SyncCopyFromCPU(&one, 1);
  const mx::NodeAttrs attrs =
      mx::MakeAttrs(mx::OpRegistry::Get()->Lookup(op), {});
  std::vector<mx::NDArray> out = {mx::NDArray({1})};
  for (auto _ : state) {
    mx::imperative::Invoke(attrs, {a, b}, &out);
  }
  out[0].WaitToRead();
  if (out[0].ToVector<float>()[0] != expected) {
    state.SkipWithError("wrong result");
  }
}

void BM_BuiltinKernel_Sub(benchmark::State& state) {
  Run(state, "elemwise_sub", 0);
}
void BM_PluginKernel_Add(benchmark::State& state) {
  Run(state, "elemwise_add", 2);
}

BENCHMARK(BM_BuiltinKernel_Sub)->Repetitions(10)->ReportAggregatesOnly(true);
BENCHMARK(BM_PluginKernel_Add)->Repetitions(10)->ReportAggregatesOnly(true);

}  // namespace

int main(int argc, char** argv) {
  setenv("MX_ENGINE_TYPE", "NaiveEngine", 0);
  benchmark::Initialize(&argc, argv);
  if (argc != 2) {
    std::cerr << "usage: plugin_benchmark <libbench_add_plugin.so>\n";
    return 2;
  }
  plugin_path = argv[1];
  benchmark::RunSpecifiedBenchmarks();
  return 0;
}
