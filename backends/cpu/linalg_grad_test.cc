// Numerical checks of the gradients of dot, batch_dot, FullyConnected and
// the reshaping ops they use.
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "testing/cpu_reference.h"
#include "testing/grad_check.h"
#include "testing/op_test_util.h"

namespace mx {
namespace testing {
namespace {

AttrDict Transposes(bool ta, bool tb) {
  return {{"transpose_a", ta ? "True" : "False"},
          {"transpose_b", tb ? "True" : "False"}};
}

TEST(LinalgGradient, Dot2DEveryTranspose) {
  for (bool ta : {false, true}) {
    for (bool tb : {false, true}) {
      const TShape a = ta ? TShape{4, 3} : TShape{3, 4};
      const TShape b = tb ? TShape{5, 4} : TShape{4, 5};
      EXPECT_TRUE(CheckGradient("dot", Transposes(ta, tb),
                                {RandomArray(a, DType::kFloat32, -1, 1, 1),
                                 RandomArray(b, DType::kFloat32, -1, 1, 2)}))
          << ta << tb;
    }
  }
}

TEST(LinalgGradient, DotNDAndVectors) {
  struct Case {
    TShape a, b;
    bool ta, tb;
  };
  const std::vector<Case> cases = {
      {{2, 3, 4}, {4, 2, 3}, false, false}, {{4, 2, 3}, {4, 5}, true, false},
      {{2, 3}, {2, 2, 3}, false, true},     {{3}, {3, 4}, false, false},
      {{3, 4}, {4}, false, false},          {{5}, {5}, false, false},
  };
  for (const Case& c : cases) {
    EXPECT_TRUE(CheckGradient("dot", Transposes(c.ta, c.tb),
                              {RandomArray(c.a, DType::kFloat32, -1, 1, 1),
                               RandomArray(c.b, DType::kFloat32, -1, 1, 2)}))
        << c.a.ToString() << " " << c.b.ToString();
  }
}

TEST(LinalgGradient, BatchDotEveryTranspose) {
  for (bool ta : {false, true}) {
    for (bool tb : {false, true}) {
      const TShape a = ta ? TShape{2, 4, 3} : TShape{2, 3, 4};
      const TShape b = tb ? TShape{2, 5, 4} : TShape{2, 4, 5};
      EXPECT_TRUE(CheckGradient("batch_dot", Transposes(ta, tb),
                                {RandomArray(a, DType::kFloat32, -1, 1, 1),
                                 RandomArray(b, DType::kFloat32, -1, 1, 2)}))
          << ta << tb;
    }
  }
  // Two batch axes.
  EXPECT_TRUE(
      CheckGradient("batch_dot", Transposes(false, true),
                    {RandomArray({2, 2, 3, 2}, DType::kFloat32, -1, 1, 1),
                     RandomArray({2, 2, 4, 2}, DType::kFloat32, -1, 1, 2)}));
}

TEST(LinalgGradient, FullyConnectedWithAndWithoutBias) {
  for (bool no_bias : {false, true}) {
    std::vector<NDArray> in = {RandomArray({3, 4}, DType::kFloat32, -1, 1, 1),
                               RandomArray({5, 4}, DType::kFloat32, -1, 1, 2)};
    if (!no_bias) in.push_back(RandomArray({5}, DType::kFloat32, -1, 1, 3));
    EXPECT_TRUE(CheckGradient(
        "FullyConnected",
        {{"num_hidden", "5"}, {"no_bias", no_bias ? "True" : "False"}}, in))
        << no_bias;
  }
}

TEST(LinalgGradient, FullyConnectedFlattensNDData) {
  EXPECT_TRUE(CheckGradient("FullyConnected", {{"num_hidden", "3"}},
                            {RandomArray({2, 2, 3}, DType::kFloat32, -1, 1, 1),
                             RandomArray({3, 6}, DType::kFloat32, -1, 1, 2),
                             RandomArray({3}, DType::kFloat32, -1, 1, 3)}));
}

TEST(LinalgGradient, FullyConnectedOnLastAxis) {
  EXPECT_TRUE(CheckGradient("FullyConnected",
                            {{"num_hidden", "3"}, {"flatten", "False"}},
                            {RandomArray({2, 2, 4}, DType::kFloat32, -1, 1, 1),
                             RandomArray({3, 4}, DType::kFloat32, -1, 1, 2),
                             RandomArray({3}, DType::kFloat32, -1, 1, 3)}));
}

TEST(LinalgGradient, ReshapingOps) {
  const NDArray x = RandomArray({2, 3, 2});
  EXPECT_TRUE(CheckGradient("Reshape", {{"shape", "(3,-1)"}}, {x}));
  EXPECT_TRUE(CheckGradient("Flatten", {}, {x}));
  EXPECT_TRUE(CheckGradient("expand_dims", {{"axis", "1"}}, {x}));
  EXPECT_TRUE(CheckGradient("squeeze", {}, {RandomArray({2, 1, 3})}));
  GradCheckOptions o;
  o.skip = {1};
  EXPECT_TRUE(CheckGradient("reshape_like", {}, {x, RandomArray({6, 2})}, o));
}

// _backward_dot accumulates into its outputs under kAddTo.
TEST(LinalgGradient, BackwardDotAddsTo) {
  const NDArray og = RandomArray({3, 5}, DType::kFloat32, -1, 1, 1);
  const NDArray a = RandomArray({3, 4}, DType::kFloat32, -1, 1, 2);
  const NDArray b = RandomArray({4, 5}, DType::kFloat32, -1, 1, 3);
  EXPECT_TRUE(AddToAccumulates("_backward_dot", {}, {og, a, b}));
}

}  // namespace
}  // namespace testing
}  // namespace mx
