// Numerical checks of the gradients of the join/split ops (Concat, stack,
// SliceChannel, add_n, _split_like) and the indexing ops (take,
// _backward_take, pick, _backward_pick, one_hot, zeros_like, ones_like).
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "testing/grad_check.h"
#include "testing/op_test_util.h"

namespace mx {
namespace testing {
namespace {

TEST(JoinGradient, Concat) {
  const std::vector<NDArray> in{RandomArray({2, 3}, {}, -1, 1, 1),
                                RandomArray({2, 1}, {}, -1, 1, 2),
                                RandomArray({2, 2}, {}, -1, 1, 3)};
  EXPECT_TRUE(CheckGradient("Concat", {{"num_args", "3"}, {"dim", "1"}}, in));
  EXPECT_TRUE(CheckGradient("concat", {{"num_args", "3"}, {"dim", "-1"}}, in));
  EXPECT_TRUE(CheckGradient(
      "Concat", {{"num_args", "2"}, {"dim", "0"}},
      {RandomArray({1, 3}, {}, -1, 1, 1), RandomArray({2, 3}, {}, -1, 1, 2)}));
  EXPECT_TRUE(CheckGradient("Concat", {{"num_args", "1"}, {"dim", "0"}},
                            {RandomArray({2, 3})}));
}

TEST(JoinGradient, SplitLike) {
  GradCheckOptions o;
  o.skip = {1, 2};  // The likes lend their shapes only.
  EXPECT_TRUE(CheckGradient(
      "_split_like", {{"num_args", "2"}, {"dim", "1"}},
      {RandomArray({2, 5}), RandomArray({2, 3}), RandomArray({2, 2})}, o));
}

TEST(JoinGradient, Stack) {
  const std::vector<NDArray> in{RandomArray({2, 3}, {}, -1, 1, 1),
                                RandomArray({2, 3}, {}, -1, 1, 2)};
  for (const char* axis : {"0", "1", "2", "-1", "-3"}) {
    EXPECT_TRUE(CheckGradient("stack", {{"num_args", "2"}, {"axis", axis}}, in))
        << axis;
  }
}

TEST(JoinGradient, Split) {
  const NDArray x = RandomArray({2, 4, 3});
  EXPECT_TRUE(CheckGradient("SliceChannel", {{"num_outputs", "2"}}, {x}));
  EXPECT_TRUE(
      CheckGradient("split", {{"num_outputs", "3"}, {"axis", "-1"}}, {x}));
  EXPECT_TRUE(CheckGradient(
      "split", {{"num_outputs", "2"}, {"axis", "0"}, {"squeeze_axis", "1"}},
      {x}));
  EXPECT_TRUE(CheckGradient(
      "split", {{"num_outputs", "3"}, {"axis", "-1"}, {"squeeze_axis", "1"}},
      {x}));
}

TEST(JoinGradient, AddN) {
  EXPECT_TRUE(CheckGradient(
      "add_n", {{"num_args", "3"}},
      {RandomArray({2, 3}, {}, -1, 1, 1), RandomArray({2, 3}, {}, -1, 1, 2),
       RandomArray({2, 3}, {}, -1, 1, 3)}));
  EXPECT_TRUE(
      CheckGradient("ElementWiseSum", {{"num_args", "1"}}, {RandomArray({4})}));
}

TEST(IndexingGradient, Take) {
  const NDArray a = RandomArray({4, 3});
  // Repeated and (clipped, wrapped, negative) out-of-range indices.
  const NDArray idx = ArrayOf({2, 3}, {0, 2, 2, -1, 5, 1}, DType::kInt64);
  for (const char* mode : {"clip", "wrap"}) {
    for (const char* axis : {"0", "1", "-1"}) {
      EXPECT_TRUE(
          CheckGradient("take", {{"axis", axis}, {"mode", mode}}, {a, idx}))
          << mode << " " << axis;
    }
  }
  EXPECT_TRUE(CheckGradient("take", {{"mode", "raise"}},
                            {a, ArrayOf({3}, {3, -4, 3}, DType::kInt32)}));
  // Float indices also get no gradient.
  GradCheckOptions o;
  o.skip = {1};
  EXPECT_TRUE(CheckGradient("take", {}, {a, ArrayOf({2}, {1, 3})}, o));
}

TEST(IndexingGradient, Pick) {
  const NDArray a = RandomArray({3, 4, 2});
  // Clipped, wrapped and negative out-of-range indices; the index gets no
  // gradient.
  GradCheckOptions o;
  o.skip = {1};
  for (const char* mode : {"clip", "wrap"}) {
    EXPECT_TRUE(CheckGradient(
        "pick", {{"axis", "1"}, {"mode", mode}},
        {a, ArrayOf({3, 2}, {0, 3, -1, 5, 2, 1}, DType::kInt32)}, o))
        << mode;
    EXPECT_TRUE(CheckGradient(
        "pick", {{"axis", "-1"}, {"mode", mode}, {"keepdims", "True"}},
        {a, ArrayOf({3, 4, 1}, {0, 1, 1, 0, 2, -1, 0, 1, 1, 1, 0, 0})}, o))
        << mode;
  }
  o.skip = {1, 2};  // _backward_pick: data lends its shape only.
  EXPECT_TRUE(CheckGradient(
      "_backward_pick", {{"axis", "0"}},
      {RandomArray({4, 2}), ArrayOf({4, 2}, {0, 2, 1, 1, 2, 0, 5, -1}),
       RandomArray({3, 4, 2})},
      o));
}

TEST(IndexingGradient, BackwardTake) {
  GradCheckOptions o;
  o.skip = {2};
  const NDArray idx = ArrayOf({3}, {0, 2, 0}, DType::kInt64);
  EXPECT_TRUE(CheckGradient("_backward_take", {{"axis", "1"}},
                            {RandomArray({4, 3}), idx, RandomArray({4, 5})},
                            o));
}

TEST(IndexingGradient, ConstantsOfTheirInput) {
  for (const char* op : {"zeros_like", "ones_like"}) {
    EXPECT_TRUE(CheckGradient(op, {}, {RandomArray({2, 3})})) << op;
  }
}

}  // namespace
}  // namespace testing
}  // namespace mx
