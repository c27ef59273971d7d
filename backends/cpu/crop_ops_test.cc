#include <vector>

#include "base/error.h"
#include "gtest/gtest.h"
#include "imperative/nd.h"
#include "testing/op_test_util.h"

namespace mx {
namespace testing {
namespace {

TEST(Crop, ToHwAtOffsetCentredAndLikeAnotherArray) {
  std::vector<double> values(2 * 4 * 5);
  for (size_t i = 0; i < values.size(); ++i) values[i] = i;
  const NDArray x = ArrayOf({1, 2, 4, 5}, values);
  NDArray y =
      nd::Call("Crop", {x},
               {{"num_args", "1"}, {"h_w", "(2, 3)"}, {"offset", "(1, 2)"}});
  EXPECT_EQ(y.shape(), TShape({1, 2, 2, 3}));
  EXPECT_EQ(ToDouble(y),
            (std::vector<double>{7, 8, 9, 12, 13, 14, 27, 28, 29, 32, 33, 34}));
  // Centred: ((4 - 2) / 2, (5 - 2) / 2) = (1, 1).
  y = nd::Call("Crop", {x, RandomArray({3, 1, 2, 2})},
               {{"num_args", "2"}, {"center_crop", "True"}});
  EXPECT_EQ(y.shape(), TShape({1, 2, 2, 2}));
  EXPECT_EQ(ToDouble(y), (std::vector<double>{6, 7, 11, 12, 26, 27, 31, 32}));
  // The whole array is a copy.
  ExpectNear(nd::Call("Crop", {x}, {{"num_args", "1"}, {"h_w", "(4, 5)"}}), x,
             0, 0);
}

TEST(Crop, WindowsOutsideTheDataAreTypedErrors) {
  const NDArray x = RandomArray({1, 1, 4, 4});
  ExpectError<ShapeError>(
      [&] {
        nd::Call("Crop", {x},
                 {{"num_args", "1"}, {"h_w", "(3, 3)"}, {"offset", "(2, 0)"}});
      },
      {"op \"Crop\"", "(3, 3) crop at (2, 0)", "(1,1,4,4)"});
  EXPECT_THROW(nd::Call("Crop", {x}, {{"num_args", "1"}}), ShapeError);
  EXPECT_THROW(nd::Call("Crop", {x},
                        {{"num_args", "1"},
                         {"h_w", "(2, 2)"},
                         {"offset", "(9223372036854775807, 0)"}}),
               ShapeError);
  EXPECT_THROW(
      nd::Call("Crop", {x, RandomArray({1, 1, 5, 2})}, {{"num_args", "2"}}),
      ShapeError);
  EXPECT_THROW(nd::Call("Crop", {x}, {{"num_args", "3"}}), InvalidArgument);
  EXPECT_THROW(nd::Call("Crop", {x}, {{"num_args", "0"}}), InvalidArgument);
  EXPECT_THROW(nd::Call("Crop", {x}, {}), InvalidArgument);
  EXPECT_THROW(nd::Call("Crop", {RandomArray({4, 4})},
                        {{"num_args", "1"}, {"h_w", "(1, 1)"}}),
               ShapeError);
}

}  // namespace
}  // namespace testing
}  // namespace mx
