// Numerical checks of the broadcasting ops' gradients: broadcast_* binary
// ops (equal, size-1 and rank-mismatched shapes), broadcast_to/_like and
// _reduce_sum_like, clip, the scalar max/min, where and the comparisons.
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "testing/grad_check.h"
#include "testing/op_test_util.h"

namespace mx {
namespace testing {
namespace {

// (lhs, rhs) shape pairs that broadcast together.
const std::vector<std::pair<TShape, TShape>>& ShapePairs() {
  static const auto* pairs = new std::vector<std::pair<TShape, TShape>>{
      {{2, 3}, {2, 3}},    {{2, 3}, {1, 3}},           {{2, 1}, {1, 3}},
      {{2, 3, 4}, {3, 1}}, {{4}, {2, 3, 4}},           {{2, 3}, {1}},
      {{1, 1}, {2, 1, 3}}, {{2, 3}, TShape::Scalar()}, {{3, 1, 2}, {3, 4, 1}},
  };
  return *pairs;
}

TEST(BroadcastGradient, Arithmetic) {
  for (const char* op :
       {"broadcast_add", "broadcast_sub", "broadcast_mul", "broadcast_div",
        "broadcast_maximum", "broadcast_minimum"}) {
    for (const auto& [a, b] : ShapePairs()) {
      EXPECT_TRUE(CheckGradient(op, {},
                                {RandomArray(a, DType::kFloat32, 0.5, 2, 1),
                                 RandomArray(b, DType::kFloat32, 0.5, 2, 2)}))
          << op << " " << a.ToString() << " " << b.ToString();
    }
  }
}

TEST(BroadcastGradient, Power) {
  for (const auto& [a, b] : ShapePairs()) {
    EXPECT_TRUE(CheckGradient("broadcast_power", {},
                              {RandomArray(a, DType::kFloat32, 0.5, 2, 1),
                               RandomArray(b, DType::kFloat32, -2, 2, 2)}))
        << a.ToString() << " " << b.ToString();
  }
}

TEST(BroadcastGradient, AliasesShareTheGradient) {
  EXPECT_TRUE(CheckGradient(
      "multiply", {}, {RandomArray({2, 3}), RandomArray({3}, {}, -1, 1, 3)}));
}

TEST(BroadcastGradient, TiesGoToLhs) {
  const NDArray a = ArrayOf({3}, {1, 2, 5}), b = ArrayOf({3}, {1, 3, 4});
  const NDArray ones = ArrayOf({3}, {1, 1, 1});
  auto g = Gradients("broadcast_maximum", {}, {a, b}, {ones});
  EXPECT_EQ(g[0], (std::vector<double>{1, 0, 1}));
  EXPECT_EQ(g[1], (std::vector<double>{0, 1, 0}));
  g = Gradients("broadcast_minimum", {}, {a, b}, {ones});
  EXPECT_EQ(g[0], (std::vector<double>{1, 1, 0}));
  EXPECT_EQ(g[1], (std::vector<double>{0, 0, 1}));
  // clip passes the gradient at its bounds.
  g = Gradients("clip", {{"a_min", "1"}, {"a_max", "4"}}, {b}, {ones});
  EXPECT_EQ(g[0], (std::vector<double>{1, 1, 1}));
}

TEST(BroadcastGradient, Comparisons) {
  for (const char* op :
       {"broadcast_equal", "broadcast_not_equal", "broadcast_greater",
        "broadcast_greater_equal", "broadcast_lesser", "broadcast_lesser_equal",
        "_npi_equal", "_npi_greater", "_npi_less_equal"}) {
    EXPECT_TRUE(CheckGradient(op, {},
                              {RandomArray({2, 3}, DType::kFloat32, -1, 1, 1),
                               RandomArray({3}, DType::kFloat32, -1, 1, 2)}))
        << op;
  }
  for (const char* op :
       {"_equal_scalar", "_not_equal_scalar", "_greater_scalar",
        "_greater_equal_scalar", "_lesser_scalar", "_lesser_equal_scalar",
        "_npi_not_equal_scalar", "_npi_greater_equal_scalar"}) {
    EXPECT_TRUE(CheckGradient(op, {{"scalar", "0.3"}}, {RandomArray({5})}))
        << op;
  }
  EXPECT_TRUE(CheckGradient("sign", {}, {RandomArray({5})}));
}

TEST(BroadcastGradient, ScalarMaximumMinimumAndClip) {
  const NDArray x = ArrayOf({6}, {-0.9, -0.4, 0.1, 0.35, 0.7, 1.2});
  EXPECT_TRUE(CheckGradient("_maximum_scalar", {{"scalar", "0.2"}}, {x}));
  EXPECT_TRUE(CheckGradient("_minimum_scalar", {{"scalar", "0.2"}}, {x}));
  EXPECT_TRUE(
      CheckGradient("clip", {{"a_min", "-0.5"}, {"a_max", "0.5"}}, {x}));
  EXPECT_TRUE(CheckGradient("clip", {{"a_min", "-2"}, {"a_max", "2"}}, {x}));
}

TEST(BroadcastGradient, BroadcastToAndLike) {
  EXPECT_TRUE(CheckGradient("broadcast_to", {{"shape", "(2,3)"}},
                            {RandomArray({1, 3})}));
  EXPECT_TRUE(CheckGradient("broadcast_to", {{"shape", "(4,0,3)"}},
                            {RandomArray({2, 1})}));
  GradCheckOptions rhs_only_shape;
  rhs_only_shape.skip = {1};
  EXPECT_TRUE(CheckGradient("broadcast_like", {},
                            {RandomArray({3, 1}), RandomArray({2, 3, 4})},
                            rhs_only_shape));
}

TEST(BroadcastGradient, ReduceSumLike) {
  GradCheckOptions o;
  o.skip = {1};  // `like` lends its shape only.
  EXPECT_TRUE(CheckGradient("_reduce_sum_like", {},
                            {RandomArray({2, 3, 4}), RandomArray({3, 1})}, o));
  EXPECT_TRUE(CheckGradient("_reduce_sum_like", {},
                            {RandomArray({2, 3}), RandomArray({2, 3})}, o));
  EXPECT_TRUE(
      CheckGradient("_reduce_sum_like", {},
                    {RandomArray({2, 3}), RandomArray(TShape::Scalar())}, o));
}

TEST(BroadcastGradient, Where) {
  GradCheckOptions o;
  o.skip = {0};  // The condition gets no gradient.
  const NDArray cond = ArrayOf({2, 3}, {1, 0, 1, 0, 0, 1});
  EXPECT_TRUE(CheckGradient("where", {},
                            {cond, RandomArray({2, 3}, {}, -1, 1, 1),
                             RandomArray({2, 3}, {}, -1, 1, 2)},
                            o));
  // Broadcast condition, x and y.
  EXPECT_TRUE(
      CheckGradient("where", {},
                    {ArrayOf({3}, {1, 0, 1}), RandomArray({2, 1}, {}, -1, 1, 1),
                     RandomArray({1, 3}, {}, -1, 1, 2)},
                    o));
  // MXNet's row form: a 1-D condition over the rows of a square x.
  EXPECT_TRUE(
      CheckGradient("where", {},
                    {ArrayOf({3}, {1, 0, 1}), RandomArray({3, 3}, {}, -1, 1, 1),
                     RandomArray({3, 3}, {}, -1, 1, 2)},
                    o));
}

}  // namespace
}  // namespace testing
}  // namespace mx
