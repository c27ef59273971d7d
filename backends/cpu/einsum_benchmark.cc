// np.einsum on the CPU, float32, attention scores "bhqd,bhkd->bhqk" with
// (batch 8, heads 8, 128 queries and keys, dim 64):
//   EinsumOp:           _npi_einsum through imperative::Invoke (the
//                       matrix-product path, einsum_gemm.h; each batch's
//                       matrices are read in place).
//   EinsumOpPacked:     the same with (batch, length, heads, dim)
//                       operands, "bqhd,bkhd->bhqk": the path copies both
//                       operands into (batch, heads) matrices first.
//   BatchDotOp:         the same product as batch_dot with transpose_b on
//                       (64, 128, 64) arrays: the target for EinsumOp.
//   DirectContraction:  the element-by-element contraction the op used
//                       before (ContractElement in double, as
//                       einsum_ops.cc still does for what the path declines).
// Run: tools/bench/run.sh, or bazel run --config=opt
// //backends/cpu:einsum_benchmark.
#include <string>
#include <vector>

#include "backends/common/einsum.h"
#include "benchmark/benchmark.h"
#include "imperative/imperative.h"
#include "imperative/nd.h"

namespace mx {
namespace {

constexpr int64_t kBatch = 8, kHeads = 8, kLen = 128, kDim = 64;

void SetFlops(benchmark::State& state) {
  const double flops = 2.0 * kBatch * kHeads * kLen * kLen * kDim;
  state.counters["GFLOP/s"] = benchmark::Counter(
      flops * state.iterations() / 1e9, benchmark::Counter::kIsRate);
}

// _npi_einsum on two arrays of `shape`.
void RunEinsum(benchmark::State& state, const TShape& shape,
               const std::string& subscripts) {
  const NDArray q = nd::random_uniform(-1, 1, shape);
  const NDArray k = nd::random_uniform(-1, 1, shape);
  for (auto _ : state) {
    imperative::Invoke("_npi_einsum", {q, k},
                       {{"subscripts", subscripts}, {"num_args", "2"}})[0]
        .WaitToRead();
  }
  SetFlops(state);
}

void BM_EinsumOp(benchmark::State& state) {
  RunEinsum(state, {kBatch, kHeads, kLen, kDim}, "bhqd,bhkd->bhqk");
}
BENCHMARK(BM_EinsumOp)->UseRealTime();

void BM_EinsumOpPacked(benchmark::State& state) {
  RunEinsum(state, {kBatch, kLen, kHeads, kDim}, "bqhd,bkhd->bhqk");
}
BENCHMARK(BM_EinsumOpPacked)->UseRealTime();

void BM_BatchDotOp(benchmark::State& state) {
  const NDArray q = nd::random_uniform(-1, 1, {kBatch * kHeads, kLen, kDim});
  const NDArray k = nd::random_uniform(-1, 1, {kBatch * kHeads, kLen, kDim});
  for (auto _ : state) {
    imperative::Invoke("batch_dot", {q, k}, {{"transpose_b", "true"}})[0]
        .WaitToRead();
  }
  SetFlops(state);
}
BENCHMARK(BM_BatchDotOp)->UseRealTime();

void BM_DirectContraction(benchmark::State& state) {
  const std::vector<std::vector<int64_t>> shapes = {
      {kBatch, kHeads, kLen, kDim}, {kBatch, kHeads, kLen, kDim}};
  mx_math::EinsumPlan plan;
  mx_math::EinsumPlanOf("bhqd,bhkd->bhqk", shapes, &plan);
  const mx_math::EinsumContraction c =
      mx_math::ForwardContraction(plan, shapes);
  const std::vector<float> q =
      nd::random_uniform(-1, 1, {kBatch, kHeads, kLen, kDim}).ToVector<float>();
  const std::vector<float> k =
      nd::random_uniform(-1, 1, {kBatch, kHeads, kLen, kDim}).ToVector<float>();
  const float* f[2] = {q.data(), k.data()};
  std::vector<float> out(kBatch * kHeads * kLen * kLen);
  for (auto _ : state) {
    for (int64_t e = 0; e < static_cast<int64_t>(out.size()); ++e) {
      out[e] = static_cast<float>(mx_math::ContractElement<double>(
          c, e, [&](int i, int64_t at) { return double{f[i][at]}; }));
    }
    benchmark::DoNotOptimize(out.data());
  }
  SetFlops(state);
}
BENCHMARK(BM_DirectContraction)->UseRealTime()->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace mx

BENCHMARK_MAIN();
