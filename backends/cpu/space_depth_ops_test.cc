#include <string>
#include <vector>

#include "base/error.h"
#include "gtest/gtest.h"
#include "imperative/nd.h"
#include "testing/op_test_util.h"

namespace mx {
namespace testing {
namespace {

NDArray Call(const std::string& op, const NDArray& x, int block) {
  return op == "depth_to_space" ? nd::depth_to_space(x, block)
                                : nd::space_to_depth(x, block);
}

// MXNet's definitions: reshape to six dims, transpose, reshape back.
NDArray DepthToSpaceByReshapes(const NDArray& x, int64_t b) {
  const TShape& s = x.shape();
  const int64_t c = s[1] / (b * b);
  NDArray t = nd::reshape(x, {s[0], b, b, c, s[2], s[3]});
  t = nd::transpose(t, {0, 3, 4, 1, 5, 2});
  return nd::reshape(t, {s[0], c, s[2] * b, s[3] * b});
}
NDArray SpaceToDepthByReshapes(const NDArray& x, int64_t b) {
  const TShape& s = x.shape();
  NDArray t = nd::reshape(x, {s[0], s[1], s[2] / b, b, s[3] / b, b});
  t = nd::transpose(t, {0, 3, 5, 1, 2, 4});
  return nd::reshape(t, {s[0], s[1] * b * b, s[2] / b, s[3] / b});
}

TEST(SpaceDepth, MatchReshapeTransposeReshapeAndInvertEachOther) {
  for (DType dt : {DType::kFloat32, DType::kInt32, DType::kFloat16}) {
    for (int b : {1, 2, 3}) {
      const NDArray x = RandomArray({2, 2 * b * b, 3, 2}, dt, -5, 5, b);
      const NDArray y = Call("depth_to_space", x, b);
      EXPECT_EQ(y.shape(), TShape({2, 2, 3 * b, 2 * b}));
      ExpectNear(y, DepthToSpaceByReshapes(x, b), 0, 0);
      ExpectNear(Call("space_to_depth", y, b), x, 0, 0);
      ExpectNear(Call("space_to_depth", y, b), SpaceToDepthByReshapes(y, b), 0,
                 0);
    }
  }
  // One element by hand: y[n, c, h*b + i, w*b + j] = x[n, (i*b + j)*C' + c,
  // h, w] with b = 2, C' = 1.
  const NDArray x = ArrayOf({1, 4, 1, 1}, {10, 11, 12, 13});
  EXPECT_EQ(ToDouble(Call("depth_to_space", x, 2)),
            (std::vector<double>{10, 11, 12, 13}));
  const NDArray x2 = ArrayOf({1, 4, 1, 2}, {0, 1, 2, 3, 4, 5, 6, 7});
  // (i, j) = (0, 1) holds channel 1: the second column of the first row.
  EXPECT_EQ(ToDouble(Call("depth_to_space", x2, 2)),
            (std::vector<double>{0, 2, 1, 3, 4, 6, 5, 7}));
}

TEST(SpaceDepth, BadShapesAndBlocksAreTypedErrors) {
  const NDArray x = RandomArray({1, 8, 4, 6});
  ExpectError<ShapeError>([&] { Call("depth_to_space", x, 3); },
                          {"op \"depth_to_space\"", "(1,8,4,6)", "9"});
  ExpectError<ShapeError>([&] { Call("space_to_depth", x, 4); },
                          {"op \"space_to_depth\"", "block_size = 4"});
  ExpectError<InvalidArgument>([&] { Call("space_to_depth", x, 0); },
                               {"block_size=0"});
  ExpectError<ShapeError>(
      [&] {
        Call("depth_to_space", RandomArray({8, 4}), 2);
      },
      {"NCHW"});
  EXPECT_THROW(nd::Call("depth_to_space", {x}, {}), InvalidArgument);
  // An empty input divides by any block; the enlarged extents must fit.
  ExpectError<ShapeError>(
      [] {
        Call("space_to_depth", RandomArray({1, 4, 0, 0}), 2147483647);
      },
      {"does not fit in 64 bits"});
}

}  // namespace
}  // namespace testing
}  // namespace mx
