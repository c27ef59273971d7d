// The ops added for gradients honour every write request: kWriteTo
// overwrites, kAddTo adds to what is there, kNullOp leaves it alone.
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "imperative/imperative.h"
#include "imperative/nd.h"
#include "testing/op_test_util.h"

namespace mx {
namespace testing {
namespace {

struct Case {
  std::string op;
  AttrDict attrs;
  std::vector<NDArray> inputs;
};

std::vector<Case> Cases() {
  const NDArray x = RandomArray({2, 3, 4}, DType::kFloat32, -1, 1, 1);
  const NDArray ints = ArrayOf({3}, {0, 2, 0}, DType::kInt64);
  return {
      {"broadcast_to", {{"shape", "(2,3,4)"}}, {RandomArray({3, 1})}},
      {"broadcast_like", {}, {RandomArray({4}), x}},
      {"_reduce_sum_like", {}, {x, RandomArray({3, 1})}},
      {"_broadcast_reduced_like",
       {{"axis", "1"}, {"normalize", "1"}},
       {RandomArray({2, 4}), x}},
      {"reshape_like", {}, {x, RandomArray({6, 4})}},
      {"_cast_like", {}, {x, RandomArray({1}, DType::kFloat64)}},
      {"_backward_slice",
       {{"begin", "(1,)"}, {"end", "(None,)"}, {"step", "(-1,)"}},
       {RandomArray({2, 3, 4}), x}},
      {"_backward_slice_axis",
       {{"axis", "2"}, {"begin", "1"}, {"end", "3"}},
       {RandomArray({2, 3, 2}), x}},
      {"_backward_take", {{"axis", "1"}}, {RandomArray({2, 3, 4}), ints, x}},
      {"_backward_pick",
       {{"axis", "1"}},
       {RandomArray({2, 4}), ArrayOf({2, 4}, {0, 2, 1, 1, 2, 0, 5, -1}), x}},
  };
}

TEST(GradientHelperOps, WriteRequests) {
  for (const Case& c : Cases()) {
    const NDArray written = imperative::Invoke(c.op, c.inputs, c.attrs)[0];
    const std::vector<double> w = ToDouble(written);
    for (OpReqType req : {OpReqType::kAddTo, OpReqType::kNullOp}) {
      const std::vector<double> before(w.size(), 0.5);
      std::vector<NDArray> out{
          ArrayOf(written.shape(), before, written.dtype())};
      imperative::InvokeOptions options;
      options.req = {req};
      imperative::Invoke(MakeAttrs(OpRegistry::Get()->Lookup(c.op), c.attrs),
                         c.inputs, &out, options);
      std::vector<double> expected = before;
      if (req == OpReqType::kAddTo) {
        for (size_t i = 0; i < w.size(); ++i) expected[i] += w[i];
      }
      EXPECT_TRUE(AllClose(ToDouble(out[0]), expected))
          << c.op << (req == OpReqType::kAddTo ? " kAddTo" : " kNullOp");
    }
  }
}

// Integer gradients as the CPU (and the GPU) compute them: a broadcast back
// without normalize copies int64 exactly (past 2^53, where a double would
// round), and sums into a smaller shape saturate into the dtype.
TEST(GradientHelperOps, IntegerGradientsAreExactOrSaturate) {
  const NDArray big = nd::cast(ArrayOf({1}, {9007199254740992.0}),
                               DType::kInt64);  // 2^53.
  const NDArray odd = nd::Call(
      "elemwise_add", {big, nd::cast(ArrayOf({1}, {1}), DType::kInt64)}, {});
  const NDArray spread =
      nd::Call("_broadcast_reduced_like",
               {odd, nd::cast(ArrayOf({3}, {0, 0, 0}), DType::kInt64)},
               {{"axis", "0"}, {"keepdims", "True"}});
  // spread - 2^53 is 1 everywhere: 2^53 + 1 survived.
  EXPECT_EQ(ToDouble(nd::Call("broadcast_sub", {spread, big}, {})),
            (std::vector<double>{1, 1, 1}));
  const NDArray g = nd::cast(ArrayOf({3, 1}, {100, 100, -7}), DType::kInt8);
  EXPECT_EQ(
      ToDouble(nd::Call("_reduce_sum_like",
                        {g, nd::cast(ArrayOf({1}, {0}), DType::kInt8)}, {})),
      (std::vector<double>{127}));
}

TEST(GradientHelperOps, SplitLikeWriteRequests) {
  const NDArray x = ArrayOf({2, 3}, {1, 2, 3, 4, 5, 6});
  std::vector<NDArray> out{ArrayOf({2, 1}, {10, 10}),
                           ArrayOf({2, 2}, {10, 10, 10, 10})};
  imperative::InvokeOptions options;
  options.req = {OpReqType::kAddTo, OpReqType::kNullOp};
  imperative::Invoke(MakeAttrs(OpRegistry::Get()->Lookup("_split_like"),
                               {{"num_args", "2"}, {"dim", "1"}}),
                     {x, RandomArray({2, 1}), RandomArray({2, 2})}, &out,
                     options);
  EXPECT_EQ(ToDouble(out[0]), (std::vector<double>{11, 14}));
  EXPECT_EQ(ToDouble(out[1]), (std::vector<double>{10, 10, 10, 10}));
}

}  // namespace
}  // namespace testing
}  // namespace mx
