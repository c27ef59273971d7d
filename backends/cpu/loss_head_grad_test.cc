// The loss heads' gradients as MXNet computes them: they ignore the head
// gradient, so they are checked against MXNet's formulas, not central
// differences.
#include <cmath>
#include <vector>

#include "gtest/gtest.h"
#include "testing/grad_check.h"
#include "testing/op_test_util.h"

namespace mx {
namespace testing {
namespace {

// A head gradient the heads must ignore.
NDArray Head() { return ArrayOf({2, 3}, {5, 5, 5, 5, 5, 5}); }

TEST(LossHeadGradient, RegressionScalesByElementsPerSample) {
  const NDArray x = ArrayOf({2, 3}, {1, 2, 3, 4, 5, 6});
  const NDArray label = ArrayOf({2, 3}, {0, 2, 4, 4, 7, 6.5});
  auto g = Gradients("LinearRegressionOutput", {{"grad_scale", "1.5"}},
                     {x, label}, {Head()});
  // 1.5 / 3 * (out - label), whatever the head gradient.
  EXPECT_TRUE(AllClose(g[0], {0.5, 0, -0.5, 0, -1, -0.25}));
  EXPECT_EQ(g[1], std::vector<double>(6, 0));
  g = Gradients("MAERegressionOutput", {}, {x, label}, {Head()});
  // 1 where out > label, else -1 (ties too), over 3 elements per sample.
  EXPECT_TRUE(AllClose(
      g[0], {1.0 / 3, -1.0 / 3, -1.0 / 3, -1.0 / 3, -1.0 / 3, -1.0 / 3}));
  g = Gradients("LogisticRegressionOutput", {}, {x, label}, {Head()});
  std::vector<double> expected;
  const std::vector<double> xs = ToDouble(x), ls = ToDouble(label);
  for (int i = 0; i < 6; ++i) {
    expected.push_back((1 / (1 + std::exp(-xs[i])) - ls[i]) / 3);
  }
  EXPECT_TRUE(AllClose(g[0], expected));
  // (n, 1) data with an (n,) label: one element per sample.
  g = Gradients("LinearRegressionOutput", {},
                {ArrayOf({2, 1}, {1, 2}), ArrayOf({2}, {3, 1})},
                {ArrayOf({2, 1}, {1, 1})});
  EXPECT_TRUE(AllClose(g[0], {-2, 1}));
  // 1-D data: one element per sample.
  g = Gradients("LinearRegressionOutput", {},
                {ArrayOf({3}, {1, 2, 3}), ArrayOf({3}, {0, 0, 0})},
                {ArrayOf({3}, {1, 1, 1})});
  EXPECT_TRUE(AllClose(g[0], {1, 2, 3}));
}

TEST(LossHeadGradient, MakeLossNormalizations) {
  const NDArray x = ArrayOf({2, 3}, {-1, 0.5, 2, 0, 3, 0.1});
  auto g = Gradients("MakeLoss", {{"grad_scale", "3"}}, {x}, {Head()});
  EXPECT_EQ(g[0], std::vector<double>(6, 3));
  g = Gradients("MakeLoss", {{"grad_scale", "3"}, {"normalization", "batch"}},
                {x}, {Head()});
  EXPECT_EQ(g[0], std::vector<double>(6, 1.5));
  // 4 elements above 0.
  g = Gradients("make_loss", {{"grad_scale", "2"}, {"normalization", "valid"}},
                {x}, {Head()});
  EXPECT_EQ(g[0], std::vector<double>(6, 0.5));
  // None above: divided by 1.
  g = Gradients("MakeLoss",
                {{"normalization", "valid"}, {"valid_thresh", "10"}}, {x},
                {Head()});
  EXPECT_EQ(g[0], std::vector<double>(6, 1));
}

}  // namespace
}  // namespace testing
}  // namespace mx
