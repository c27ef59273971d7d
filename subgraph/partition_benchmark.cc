// PartitionGraph on generated graphs of 1k, 10k and 100k nodes. Run:
//   bazel run --config=opt //subgraph:partition_benchmark
#include <benchmark/benchmark.h>

#include <random>

#include "subgraph/partition_graph.h"

namespace mx {
namespace {

Symbol Op(const std::string& op, const std::vector<Symbol>& in, int* id) {
  return Symbol::Create(op, in, {}, "n" + std::to_string((*id)++));
}

// sin/cos alternating, all claimed: one subgraph of n nodes.
Symbol Chain(int n) {
  int id = 0;
  Symbol s = Symbol::Variable("x");
  for (int i = 0; i < n; ++i) s = Op(i % 2 ? "cos" : "sin", {s}, &id);
  return s;
}

// Layers 64 wide; each node adds two random nodes of the previous layer or
// applies sin/cos (cos unclaimed): many subgraphs, many outside paths.
Symbol Wide(int n) {
  std::mt19937 rng(1);
  int id = 0;
  std::vector<Symbol> layer;
  for (int i = 0; i < 64; ++i) {
    layer.push_back(Symbol::Variable("x" + std::to_string(i)));
  }
  while (id < n) {
    std::vector<Symbol> next;
    for (int i = 0; i < 64 && id < n; ++i) {
      const Symbol& a = layer[rng() % layer.size()];
      const Symbol& b = layer[rng() % layer.size()];
      switch (rng() % 3) {
        case 0:
          next.push_back(Op("elemwise_add", {a, b}, &id));
          break;
        case 1:
          next.push_back(Op("sin", {a}, &id));
          break;
        default:
          next.push_back(Op("cos", {a}, &id));
          break;
      }
    }
    layer = std::move(next);
  }
  return Symbol::Group(layer);
}

// Blocks s = sin(prev); c = cos(s); a = s + c with cos unclaimed: every
// block closes a cycle that must be broken.
Symbol Cycles(int n) {
  int id = 0;
  Symbol s = Symbol::Variable("x");
  for (int i = 0; i + 3 <= n; i += 3) {
    Symbol a = Op("sin", {s}, &id);
    s = Op("elemwise_add", {a, Op("cos", {a}, &id)}, &id);
  }
  return s;
}

template <Symbol (*Make)(int)>
void BM_Partition(benchmark::State& state) {
  const Symbol sym = Make(static_cast<int>(state.range(0)));
  SetSubgraphPropertyOpNames(
      "default", Make == Chain
                     ? std::vector<std::string>{"sin", "cos"}
                     : std::vector<std::string>{"sin", "elemwise_add"});
  PartitionOptions options;
  options.verbose_from_env = false;
  size_t subgraphs = 0;
  for (auto _ : state) {
    PartitionReport report;
    Symbol out = PartitionGraph(sym, "default", options, &report);
    subgraphs = report.subgraphs.size();
    benchmark::DoNotOptimize(out);
  }
  state.counters["subgraphs"] = static_cast<double>(subgraphs);
  state.SetItemsProcessed(state.iterations() * state.range(0));
  RemoveSubgraphPropertyOpNames("default");
}

BENCHMARK_TEMPLATE(BM_Partition, Chain)
    ->Arg(1000)
    ->Arg(10000)
    ->Arg(100000)
    ->Unit(benchmark::kMillisecond);
// MXNet's cycle breaking regrows a candidate once per excluded node, so
// graphs that force many exclusions grow quadratically per seed (Cycles:
// cubically overall); sizes stay where a run takes seconds.
BENCHMARK_TEMPLATE(BM_Partition, Wide)
    ->Arg(1000)
    ->Arg(10000)
    ->Unit(benchmark::kMillisecond);
BENCHMARK_TEMPLATE(BM_Partition, Cycles)
    ->Arg(100)
    ->Arg(1000)
    ->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace mx

BENCHMARK_MAIN();
