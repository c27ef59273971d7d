#include <cmath>
#include <vector>

#include "base/error.h"
#include "gtest/gtest.h"
#include "imperative/nd.h"
#include "testing/op_test_util.h"

namespace mx {
namespace testing {
namespace {

NDArray Prior(const TShape& shape, AttrDict attrs) {
  return nd::Call("_contrib_MultiBoxPrior", {RandomArray(shape)}, attrs);
}

TEST(MultiBoxPrior, SizesWithTheFirstRatioThenRatiosWithTheFirstSize) {
  const NDArray y =
      Prior({1, 8, 2, 2}, {{"sizes", "(0.5, 0.25)"}, {"ratios", "(1, 2)"}});
  ASSERT_EQ(y.shape(), TShape({1, 2 * 2 * 3, 4}));
  const std::vector<double> v = ToDouble(y);
  const double q = std::sqrt(2.0);
  // Cell (0, 0), centre (0.25, 0.25).
  const std::vector<double> first = {0,
                                     0,
                                     0.5,
                                     0.5,
                                     0.125,
                                     0.125,
                                     0.375,
                                     0.375,
                                     0.25 - 0.5 * q / 2,
                                     0.25 - 0.5 / q / 2,
                                     0.25 + 0.5 * q / 2,
                                     0.25 + 0.5 / q / 2};
  EXPECT_TRUE(AllClose(std::vector<double>(v.begin(), v.begin() + 12), first,
                       1e-6, 1e-6));
  // Cell (1, 0) (row 1, column 0), centre (x 0.25, y 0.75): its first box.
  EXPECT_TRUE(AllClose(std::vector<double>(v.begin() + 24, v.begin() + 28),
                       {0, 0.5, 0.5, 1}, 1e-6, 1e-6));
}

TEST(MultiBoxPrior, WideMapsStepsOffsetsAndClip) {
  // H = 2, W = 4: half-width s * H / W / 2.
  NDArray y = Prior({1, 1, 2, 4}, {{"sizes", "0.4"}});
  ASSERT_EQ(y.shape(), TShape({1, 8, 4}));
  std::vector<double> v = ToDouble(y);
  EXPECT_TRUE(AllClose(std::vector<double>(v.begin(), v.begin() + 4),
                       {0.125 - 0.1, 0.25 - 0.2, 0.125 + 0.1, 0.25 + 0.2}, 1e-6,
                       1e-6));
  y = Prior({1, 1, 1, 1},
            {{"sizes", "0.5"}, {"steps", "(0.2, 0.1)"}, {"offsets", "(0, 1)"}});
  EXPECT_TRUE(
      AllClose(ToDouble(y), {0.1 - 0.25, -0.25, 0.1 + 0.25, 0.25}, 1e-6, 1e-6));
  y = Prior({1, 1, 1, 1}, {{"sizes", "1.5"}, {"clip", "True"}});
  EXPECT_EQ(ToDouble(y), (std::vector<double>{0, 0, 1, 1}));
}

TEST(MultiBoxPrior, BadAttributesAreTypedErrors) {
  ExpectError<InvalidArgument>(
      [] {
        Prior({1, 1, 2, 2}, {{"sizes", "()"}});
      },
      {"_contrib_MultiBoxPrior", "sizes"});
  EXPECT_THROW(Prior({1, 1, 2, 2}, {{"ratios", "(1, -2)"}}), InvalidArgument);
  EXPECT_THROW(Prior({1, 1, 2, 2}, {{"steps", "(0.1)"}}), InvalidArgument);
  EXPECT_THROW(Prior({2, 2}, {}), ShapeError);
}

}  // namespace
}  // namespace testing
}  // namespace mx
