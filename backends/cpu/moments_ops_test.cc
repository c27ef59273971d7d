#include <cmath>
#include <limits>
#include <vector>

#include "base/error.h"
#include "gtest/gtest.h"
#include "imperative/nd.h"
#include "testing/op_test_util.h"

namespace mx {
namespace testing {
namespace {

TEST(Moments, MeanAndBiasedVarianceOverAxes) {
  const NDArray x = ArrayOf({2, 3}, {1, 2, 6, -1, -1, 2}, DType::kFloat64);
  std::vector<NDArray> m = nd::CallMulti("moments", {x}, {{"axes", "(1,)"}});
  ASSERT_EQ(m.size(), 2u);
  EXPECT_TRUE(AllClose(ToDouble(m[0]), {3, 0}, 1e-15, 1e-15));
  EXPECT_TRUE(AllClose(ToDouble(m[1]), {14.0 / 3, 2}, 1e-15, 1e-15));
  m = nd::CallMulti("moments", {x}, {{"axes", "(0,)"}, {"keepdims", "1"}});
  EXPECT_EQ(m[1].shape(), TShape({1, 3}));
  EXPECT_TRUE(AllClose(ToDouble(m[1]), {1, 2.25, 4}, 1e-15, 1e-15));
  // All axes; agrees with mean and mean of squared deviations.
  const NDArray r = RandomArray({4, 5, 3}, DType::kFloat32, -3, 5, 2);
  m = nd::CallMulti("moments", {r}, {{"axes", "(0,2)"}});
  const NDArray mean = nd::mean(r, {0, 2}, true);
  const NDArray var = nd::mean(nd::square(r - mean), {0, 2});
  ExpectNear(m[0], nd::mean(r, {0, 2}), 1e-6, 1e-6);
  ExpectNear(m[1], var, 1e-5, 1e-6);
  // Large offset: two passes keep the variance exact where E[x^2] - E[x]^2
  // (1e18 in double, spaced 128 apart) would not.
  const NDArray big =
      ArrayOf({3}, {1e9 + 1, 1e9 + 2, 1e9 + 3}, DType::kFloat64);
  m = nd::CallMulti("moments", {big}, {});
  EXPECT_NEAR(ToDouble(m[1])[0], 2.0 / 3, 1e-9);
}

TEST(Moments, EmptyIsNaNAndIntegersAreRefused) {
  std::vector<NDArray> m =
      nd::CallMulti("moments", {ArrayOf({2, 0}, {})}, {{"axes", "(1,)"}});
  EXPECT_TRUE(std::isnan(ToDouble(m[0])[0]) && std::isnan(ToDouble(m[1])[1]));
  EXPECT_THROW(
      nd::CallMulti("moments", {ArrayOf({2}, {1, 2}, DType::kInt32)}, {}),
      DTypeError);
  EXPECT_THROW(
      nd::CallMulti("moments", {ArrayOf({2}, {1, 2})}, {{"axes", "(1,)"}}),
      ShapeError);
}

}  // namespace
}  // namespace testing
}  // namespace mx
