// Numerical checks of the reductions' gradients (sum, mean, max, min over
// several axis / keepdims / exclude combinations), of
// _broadcast_reduced_like, and of argmax (zero).
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "testing/grad_check.h"
#include "testing/op_test_util.h"

namespace mx {
namespace testing {
namespace {

// Reduction attributes to check, on a (2, 3, 4) input.
const std::vector<AttrDict>& AxisVariants() {
  static const auto* variants = new std::vector<AttrDict>{
      {},
      {{"keepdims", "1"}},
      {{"axis", "1"}},
      {{"axis", "-1"}, {"keepdims", "True"}},
      {{"axis", "(0,2)"}},
      {{"axis", "(0,-1)"}, {"keepdims", "1"}},
      {{"axis", "1"}, {"exclude", "1"}},
      {{"axis", "(0,1)"}, {"exclude", "1"}, {"keepdims", "1"}},
      {{"axis", "()"}},
  };
  return *variants;
}

std::string Describe(const AttrDict& attrs) {
  std::string s;
  for (const auto& [k, v] : attrs) s += k + "=" + v + " ";
  return s;
}

TEST(ReduceGradient, SumAndMean) {
  for (const char* op : {"sum", "mean", "sum_axis"}) {
    for (const AttrDict& attrs : AxisVariants()) {
      EXPECT_TRUE(CheckGradient(op, attrs, {RandomArray({2, 3, 4})}))
          << op << " " << Describe(attrs);
    }
  }
}

TEST(ReduceGradient, MaxAndMin) {
  // Distinct values: the extremum is unique and the gradient defined.
  for (const char* op : {"max", "min"}) {
    for (const AttrDict& attrs : AxisVariants()) {
      EXPECT_TRUE(CheckGradient(op, attrs, {RandomArray({2, 3, 4})}))
          << op << " " << Describe(attrs);
    }
  }
}

// MXNet: g * (x == max), so every tied element gets the whole gradient.
TEST(ReduceGradient, MaxTiesEachGetTheGradient) {
  const NDArray x = ArrayOf({2, 3}, {1, 3, 3, 2, 2, 2});
  auto g = Gradients("max", {{"axis", "1"}}, {x}, {ArrayOf({2}, {1, 6})});
  EXPECT_EQ(g[0], (std::vector<double>{0, 1, 1, 6, 6, 6}));
  g = Gradients("min", {}, {x}, {ArrayOf(TShape::Scalar(), {4})});
  EXPECT_EQ(g[0], (std::vector<double>{4, 0, 0, 0, 0, 0}));
  g = Gradients("min", {{"axis", "1"}, {"keepdims", "1"}}, {x},
                {ArrayOf({2, 1}, {1, 6})});
  EXPECT_EQ(g[0], (std::vector<double>{1, 0, 0, 6, 6, 6}));
}

TEST(ReduceGradient, BroadcastReducedLike) {
  GradCheckOptions o;
  o.skip = {1};  // `like` lends its shape only.
  const NDArray like = RandomArray({2, 3, 4});
  EXPECT_TRUE(CheckGradient("_broadcast_reduced_like", {{"axis", "1"}},
                            {RandomArray({2, 4}), like}, o));
  EXPECT_TRUE(
      CheckGradient("_broadcast_reduced_like",
                    {{"axis", "(0,2)"}, {"keepdims", "1"}, {"normalize", "1"}},
                    {RandomArray({1, 3, 1}), like}, o));
  EXPECT_TRUE(
      CheckGradient("_broadcast_reduced_like",
                    {{"axis", "0"}, {"exclude", "1"}, {"normalize", "1"}},
                    {RandomArray({2}), like}, o));
  EXPECT_TRUE(CheckGradient("_broadcast_reduced_like", {},
                            {RandomArray(TShape::Scalar()), like}, o));
}

TEST(ReduceGradient, ArgmaxIsZero) {
  EXPECT_TRUE(CheckGradient("argmax", {{"axis", "1"}}, {RandomArray({2, 3})}));
  EXPECT_TRUE(CheckGradient("argmax", {}, {RandomArray({2, 3})}));
}

}  // namespace
}  // namespace testing
}  // namespace mx
