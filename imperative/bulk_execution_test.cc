// Bulk execution in GraphRunner (CachedOp and Executor): consecutive ops
// run as one engine operation of at most MX_EXEC_BULK_MAX_NODES ops, with
// the same results as op by op. Also run with MX_EXEC_BULK_MAX_NODES=1
// (off) and 4 (segments end mid-chain) by the BUILD file.
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

#include "base/error.h"
#include "engine/engine.h"
#include "gtest/gtest.h"
#include "imperative/cached_op.h"
#include "imperative/graph_runner.h"
#include "imperative/imperative.h"
#include "imperative/nd.h"
#include "testing/op_test_util.h"

namespace mx {
namespace {

using testing::ArrayOf;
using testing::ExpectError;
using testing::RandomArray;
using testing::ToDouble;

int MaxNodes() {
  const char* v = std::getenv("MX_EXEC_BULK_MAX_NODES");
  return v == nullptr ? 15 : std::atoi(v);
}

// Engine operations for `ops` bulkable ops in a row.
size_t Pushes(size_t ops) {
  const size_t n = static_cast<size_t>(MaxNodes());
  return n <= 1 ? ops : (ops + n - 1) / n;
}

// x -> (sin, +1, *0.5) repeated: 3 * rounds ops.
Symbol Chain(const Symbol& x, int rounds) {
  Symbol y = x;
  for (int r = 0; r < rounds; ++r) {
    y = Symbol::Create("sin", {y});
    y = Symbol::Create("_plus_scalar", {y}, {{"scalar", "1"}});
    y = Symbol::Create("_mul_scalar", {y}, {{"scalar", "0.5"}});
  }
  return y;
}

NDArray ChainReference(NDArray x, int rounds) {
  for (int r = 0; r < rounds; ++r) x = (nd::sin(x) + 1.0) * 0.5;
  return x;
}

TEST(BulkExecution, ChainsRunInSegmentsWithTheSameResults) {
  const Symbol y = Chain(Symbol::Variable("x"), 14);  // 42 ops.
  GraphRunner runner(y, Context::CPU(), {TShape{3, 5}}, {DType::kFloat32},
                     "test");
  const NDArray x = RandomArray({3, 5}, DType::kFloat32, -2, 2, 1);
  const std::vector<NDArray> out = runner.Run({x}, false, true, true);
  EXPECT_EQ(runner.last_pushes(), Pushes(42));
  // The same kernels in the same order: identical values.
  EXPECT_EQ(ToDouble(out[0]), ToDouble(ChainReference(x, 14)));
}

TEST(BulkExecution, OpsWithoutAPlainKernelRunAloneBetweenSegments) {
  // Dropout draws random numbers (from the context's generator var): it
  // runs through Invoke, splitting the chain.
  const Symbol x = Symbol::Variable("x");
  const Symbol mid =
      Symbol::Create("Dropout", {Chain(x, 2)}, {{"p", "0.5"}}, "drop");
  const Symbol y = Chain(mid, 2);
  GraphRunner runner(y, Context::CPU(), {TShape{64}}, {DType::kFloat32},
                     "test");
  const NDArray in = RandomArray({64}, DType::kFloat32, -1, 1, 2);
  const std::vector<NDArray> out =
      runner.Run({in}, /*is_train=*/true, true, true);
  EXPECT_EQ(runner.last_pushes(), Pushes(6) + 1 + Pushes(6));
  // Dropout zeroes some and scales the others by 2: recompute from its
  // pattern.
  const std::vector<double> before = ToDouble(ChainReference(in, 2));
  const std::vector<double> got = ToDouble(out[0]);
  const std::vector<double> zero_path =
      ToDouble(ChainReference(nd::zeros_like(in), 2));
  int dropped = 0;
  for (size_t i = 0; i < got.size(); ++i) {
    const double kept =
        ToDouble(ChainReference(ArrayOf({1}, {2 * before[i]}), 2))[0];
    const bool is_zero = std::abs(got[i] - zero_path[i]) < 1e-6;
    const bool is_kept = std::abs(got[i] - kept) < 1e-5;
    EXPECT_TRUE(is_zero || is_kept) << i;
    dropped += is_zero && !is_kept;
  }
  EXPECT_GT(dropped, 0);
}

TEST(BulkExecution, HybridizedTrainingStepMatchesImperative) {
  // A recorded CachedOp call runs forward and backward in segments.
  const Symbol x = Symbol::Variable("x"), w = Symbol::Variable("w");
  const Symbol y = Symbol::Create(
      "sum", {Symbol::Create("tanh", {Symbol::Create("dot", {x, w})})});
  CachedOp op(y);
  NDArray xv = RandomArray({4, 6}, DType::kFloat32, -1, 1, 3);
  NDArray wv = RandomArray({6, 5}, DType::kFloat32, -1, 1, 4);
  const std::vector<NDArray> out = op.Forward({xv, wv});
  EXPECT_NEAR(ToDouble(out[0])[0],
              ToDouble(nd::sum(nd::tanh(nd::dot(xv, wv))))[0], 1e-5);
}

TEST(BulkExecution, KernelErrorsReachTheCallerAtTheWait) {
  // The argmax is an input, so the bad position is seen only by the
  // kernel, inside a segment.
  const Symbol og = Symbol::Variable("og"), at = Symbol::Variable("argmax"),
               data = Symbol::Variable("data");
  const Symbol grad = Symbol::Create(
      "_backward_Pooling_max",
      {Symbol::Create("relu", {og}), at, Symbol::Create("relu", {data})},
      {{"kernel", "(2,2)"}, {"stride", "(2,2)"}});
  const Symbol y = Symbol::Create("relu", {grad});
  GraphRunner runner(
      y, Context::CPU(),
      {TShape{1, 1, 1, 1}, TShape{1, 1, 1, 1}, TShape{1, 1, 2, 2}},
      {DType::kFloat32, DType::kInt32, DType::kFloat32}, "test");
  const NDArray bad = ArrayOf({1, 1, 1, 1}, {7}, DType::kInt32);
  ExpectError<InvalidArgument>(
      [&] {
        const std::vector<NDArray> out = runner.Run(
            {RandomArray({1, 1, 1, 1}), bad, RandomArray({1, 1, 2, 2})}, false,
            true, true);
        out[0].WaitToRead();
      },
      {"_backward_Pooling_max", "argmax", "holds 7"});
  // The runner is usable afterwards.
  const NDArray good = ArrayOf({1, 1, 1, 1}, {3}, DType::kInt32);
  const std::vector<NDArray> out =
      runner.Run({ArrayOf({1, 1, 1, 1}, {2}), good, RandomArray({1, 1, 2, 2})},
                 false, true, true);
  EXPECT_EQ(ToDouble(out[0]), (std::vector<double>{0, 0, 0, 2}));
}

TEST(BulkExecution, InputsOtherThanPlannedAreTypedErrors) {
  GraphRunner runner(Chain(Symbol::Variable("x"), 1), Context::CPU(),
                     {TShape{2, 3}}, {DType::kFloat32}, "test");
  ExpectError<ShapeError>(
      [&] {
        runner.Run({RandomArray({3, 2})}, false, true, true);
      },
      {"graph input 0 (x)", "(3,2)", "(2,3)"});
  ExpectError<DTypeError>(
      [&] {
        runner.Run({RandomArray({2, 3}, DType::kFloat64)}, false, true, true);
      },
      {"graph input 0 (x)", "float64"});
}

TEST(BulkExecution, ConcurrentCallsOfOneCachedOp) {
  CachedOp op(Chain(Symbol::Variable("x"), 10));
  const NDArray x = RandomArray({8, 8}, DType::kFloat32, -1, 1, 5);
  const std::vector<double> want = ToDouble(ChainReference(x, 10));
  std::vector<std::thread> threads;
  std::vector<std::vector<double>> got(4);
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 20; ++i) got[t] = ToDouble(op.Forward({x})[0]);
    });
  }
  for (std::thread& t : threads) t.join();
  for (const auto& g : got) EXPECT_EQ(g, want);
}

// The requests the last run of _test_two_outputs saw.
std::vector<OpReqType>& SeenRequests() {
  static std::vector<OpReqType> seen;
  return seen;
}

TEST(GraphRunnerRequests, OutputsNothingReadsAreNullRequests) {
  // (x + 1, x + 2), writing each output only when asked to.
  static const bool registered = [] {
    OpRegistry::Get()
        ->Register("_test_two_outputs")
        .SetNumInputs(1)
        .SetNumOutputs(2)
        .SetInferShape(SameShape)
        .SetInferType(SameType)
        .SetCompute(Context::kCPU, [](const OpContext&, const NodeAttrs&,
                                      const std::vector<TBlob>& in,
                                      const std::vector<OpReqType>& req,
                                      const std::vector<TBlob>& out) {
          SeenRequests() = req;
          const float* x = in[0].data<float>();
          for (int k = 0; k < 2; ++k) {
            if (req[k] == OpReqType::kNullOp) continue;
            float* y = out[k].data<float>();
            for (int64_t i = 0; i < in[0].Size(); ++i) {
              y[i] = x[i] + static_cast<float>(k + 1);
            }
          }
        });
    return true;
  }();
  ASSERT_TRUE(registered);
  const Symbol two =
      Symbol::Create("_test_two_outputs", {Symbol::Variable("x")}, {}, "two");
  const NDArray x = NDArray::FromVector<float>({3}, {1, 2, 3});

  // Only output 1 is returned: output 0 is asked for with kNullOp, on
  // both paths (alone through Invoke, and inside a bulk segment, which the
  // chain after it makes possible).
  const Symbol second =
      Symbol::Create("_mul_scalar", {two[1]}, {{"scalar", "2"}});
  GraphRunner runner(second, Context::CPU(), {TShape{3}}, {DType::kFloat32},
                     "test");
  std::vector<NDArray> out = runner.Run({x}, false, true, true);
  EXPECT_EQ(ToDouble(out[0]), (std::vector<double>{6, 8, 10}));
  EXPECT_EQ(SeenRequests(),
            (std::vector<OpReqType>{OpReqType::kNullOp, OpReqType::kWriteTo}));

  // Both read (one by a node, one returned): both written.
  const Symbol both = Symbol::Group(
      {Symbol::Create("_mul_scalar", {two[0]}, {{"scalar", "2"}}), two[1]});
  GraphRunner both_runner(both, Context::CPU(), {TShape{3}}, {DType::kFloat32},
                          "test");
  out = both_runner.Run({x}, false, true, true);
  EXPECT_EQ(ToDouble(out[0]), (std::vector<double>{4, 6, 8}));
  EXPECT_EQ(ToDouble(out[1]), (std::vector<double>{3, 4, 5}));
  EXPECT_EQ(SeenRequests(),
            (std::vector<OpReqType>{OpReqType::kWriteTo, OpReqType::kWriteTo}));
}

TEST(GraphRunnerRequests, BoundOutputsAreWrittenInPlaceUnderTheirRequest) {
  const Symbol x = Symbol::Variable("x");
  const Symbol chain = Chain(x, 2);
  GraphRunner runner(chain, Context::CPU(), {TShape{3}}, {DType::kFloat32},
                     "test");
  const NDArray xv = NDArray::FromVector<float>({3}, {0.5f, -1, 2});
  const std::vector<double> expected = ToDouble(ChainReference(xv, 2));
  for (OpReqType req : {OpReqType::kWriteTo, OpReqType::kAddTo}) {
    SCOPED_TRACE(req == OpReqType::kAddTo ? "kAddTo" : "kWriteTo");
    NDArray target = NDArray::FromVector<float>({3}, {10, 10, 10});
    GraphRunner::State state = runner.Prepare({xv}, true, true);
    ASSERT_TRUE(runner.BindOutput(&state, 0, target, req));
    runner.RunNodes(&state, 0, runner.num_nodes(), false);
    const NDArray out = runner.Outputs(state)[0];
    EXPECT_TRUE(out.SharesChunkWith(target));
    std::vector<double> want = expected;
    if (req == OpReqType::kAddTo) {
      for (double& v : want) v += 10;
    }
    EXPECT_TRUE(testing::AllClose(ToDouble(target), want));
  }

  // What cannot be bound: an output a node also reads, a graph input,
  // another shape, the graph's input array, a request other than write/add.
  const Symbol read_too =
      Symbol::Group({chain, Symbol::Create("sin", {chain}), x});
  GraphRunner other(read_too, Context::CPU(), {TShape{3}}, {DType::kFloat32},
                    "test");
  GraphRunner::State state = other.Prepare({xv}, true, true);
  const NDArray three = NDArray::FromVector<float>({3}, {0, 0, 0});
  EXPECT_FALSE(other.BindOutput(&state, 0, three, OpReqType::kWriteTo));
  EXPECT_TRUE(other.BindOutput(&state, 1, three, OpReqType::kWriteTo));
  EXPECT_FALSE(other.BindOutput(&state, 2,
                                NDArray::FromVector<float>({3}, {0, 0, 0}),
                                OpReqType::kWriteTo));
  GraphRunner::State fresh = runner.Prepare({xv}, true, true);
  EXPECT_FALSE(runner.BindOutput(
      &fresh, 0, NDArray::FromVector<float>({1}, {0}), OpReqType::kWriteTo));
  EXPECT_FALSE(runner.BindOutput(&fresh, 0, xv, OpReqType::kWriteTo));
  EXPECT_FALSE(runner.BindOutput(&fresh, 0, three, OpReqType::kWriteInplace));
  EXPECT_FALSE(runner.BindOutput(&fresh, 3, three, OpReqType::kWriteTo));
}

}  // namespace
}  // namespace mx
