#include <cmath>
#include <vector>

#include "base/error.h"
#include "gtest/gtest.h"
#include "imperative/nd.h"
#include "testing/op_test_util.h"

namespace mx {
namespace testing {
namespace {

NDArray Pool(const NDArray& data, const NDArray& rois, const char* pooled,
             const char* scale) {
  return nd::Call("ROIPooling", {data, rois},
                  {{"pooled_size", pooled}, {"spatial_scale", scale}});
}

TEST(ROIPooling, BinsTakeTheirMaximum) {
  // One 4x4 plane 0..15; the region (0, 0)-(3, 3) in 2x2 bins is the four
  // quadrants: maxima 5, 7, 13, 15.
  std::vector<double> v(16);
  for (int i = 0; i < 16; ++i) v[i] = i;
  const NDArray x = ArrayOf({1, 1, 4, 4}, v);
  NDArray y = Pool(x, ArrayOf({1, 5}, {0, 0, 0, 3, 3}), "(2, 2)", "1");
  EXPECT_EQ(y.shape(), TShape({1, 1, 2, 2}));
  EXPECT_EQ(ToDouble(y), (std::vector<double>{5, 7, 13, 15}));
  // spatial_scale 0.5 maps (2, 2)-(6, 4) to (1, 1)-(3, 2): rows 1..2 and
  // columns 1..3 in one bin.
  y = Pool(x, ArrayOf({1, 5}, {0, 2, 2, 6, 4}), "(1, 1)", "0.5");
  EXPECT_EQ(ToDouble(y), (std::vector<double>{11}));
  // A region past the plane is clamped; a negative batch index gives 0.
  y = Pool(x, ArrayOf({2, 5}, {0, 2, 2, 10, 10, -1, 0, 0, 3, 3}), "(1, 1)",
           "1");
  EXPECT_EQ(ToDouble(y), (std::vector<double>{15, 0}));
  // Channels and images are kept apart.
  const NDArray two = RandomArray({2, 3, 5, 5}, DType::kFloat64, -1, 1, 4);
  y = Pool(two, ArrayOf({1, 5}, {1, 0, 0, 4, 4}, DType::kFloat64), "(1, 1)",
           "1");
  EXPECT_EQ(y.shape(), TShape({1, 3, 1, 1}));
  const std::vector<double> tv = ToDouble(two), yv = ToDouble(y);
  for (int ch = 0; ch < 3; ++ch) {
    double m = -1e9;
    for (int i = 0; i < 25; ++i) m = std::max(m, tv[(3 + ch) * 25 + i]);
    EXPECT_EQ(yv[ch], m);
  }
}

TEST(ROIPooling, BadInputsAreTypedErrors) {
  const NDArray x = RandomArray({1, 1, 4, 4});
  ExpectError<InvalidArgument>(
      [&] {
        Pool(x, ArrayOf({1, 5}, {1, 0, 0, 1, 1}), "(1, 1)", "1").WaitToRead();
      },
      {"op \"ROIPooling\"", "row 0", "batch index 1"});
  EXPECT_THROW(Pool(x, ArrayOf({1, 5}, {0, 0, 0, 1, 1}), "(0, 1)", "1"),
               InvalidArgument);
  EXPECT_THROW(Pool(x, ArrayOf({1, 5}, {0, 0, 0, 1, 1}), "(1, 1)", "0"),
               InvalidArgument);
  EXPECT_THROW(Pool(x, ArrayOf({1, 4}, {0, 0, 1, 1}), "(1, 1)", "1"),
               ShapeError);
  EXPECT_THROW(Pool(RandomArray({4, 4}), ArrayOf({1, 5}, {0, 0, 0, 1, 1}),
                    "(1, 1)", "1"),
               ShapeError);
}

}  // namespace
}  // namespace testing
}  // namespace mx
