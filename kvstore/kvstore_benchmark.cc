// Allreduce bandwidth of the dist_sync KVStore, 1 KB to 64 MB of float32,
// under mpirun (tools/bench/kvstore_compare.sh runs it with 2 ranks):
//   mpirun -np 2 bazel-bin/kvstore/kvstore_benchmark
// Iteration counts are fixed (not chosen by timing) so every rank runs the
// same collectives; rank 0 reports.
#include <unistd.h>

#include <cstdio>
#include <cstdlib>

#include "benchmark/benchmark.h"
#include "imperative/nd.h"
#include "kvstore/kvstore.h"

namespace mx {
namespace kvstore {
namespace {

KVStore& Store() {
  static std::unique_ptr<KVStore> kv = KVStore::Create("dist_sync");
  return *kv;
}

void BM_AllReduce(benchmark::State& state) {
  const int64_t bytes = state.range(0);
  NDArray a = nd::ones({bytes / 4});
  a.WaitToRead();
  KVStore& kv = Store();
  kv.Barrier();
  for (auto _ : state) {
    kv.PushPull({0}, {a}, {a});
    a.WaitToRead();
  }
  state.SetBytesProcessed(state.iterations() * bytes);
  state.counters["ranks"] = kv.num_workers();
  // Bus bandwidth as NCCL's tests define it for allreduce: 2 (n-1)/n of
  // the algorithm bandwidth, comparable across rank counts.
  const double n = kv.num_workers();
  state.counters["busbw_GBps"] = benchmark::Counter(
      2 * (n - 1) / n * static_cast<double>(bytes) * state.iterations() / 1e9,
      benchmark::Counter::kIsRate);
}

void Sizes(benchmark::internal::Benchmark* b) {
  for (int64_t bytes = 1 << 10; bytes <= int64_t{64} << 20; bytes *= 4) {
    b->Args({bytes});
  }
}

BENCHMARK(BM_AllReduce)
    ->Apply(Sizes)
    ->Iterations(64)
    ->UseRealTime()
    ->Unit(benchmark::kMicrosecond);

}  // namespace
}  // namespace kvstore
}  // namespace mx

int main(int argc, char** argv) {
  // Every rank runs the benchmarks (they are collectives); only rank 0's
  // report is printed.
  const char* rank = std::getenv("OMPI_COMM_WORLD_RANK");
  if (rank != nullptr && std::atoi(rank) != 0) {
    if (std::freopen("/dev/null", "w", stdout) == nullptr) return 1;
  }
  benchmark::Initialize(&argc, argv);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
