#include <cmath>
#include <vector>

#include "base/error.h"
#include "gtest/gtest.h"
#include "imperative/nd.h"
#include "testing/op_test_util.h"

namespace mx {
namespace testing {
namespace {

NDArray Resize(const NDArray& x, AttrDict attrs) {
  return nd::Call("_contrib_BilinearResize2D", {x}, attrs);
}

// align_corners: out[y, x] interpolates at (y * (H-1)/(OH-1), ...); the
// reference evaluates the bilinear form directly.
double Bilinear(const std::vector<double>& v, int64_t w, double y, double x,
                int64_t h) {
  const int64_t y0 = std::min<int64_t>(static_cast<int64_t>(y), h - 1);
  const int64_t x0 = std::min<int64_t>(static_cast<int64_t>(x), w - 1);
  const int64_t y1 = std::min(y0 + 1, h - 1), x1 = std::min(x0 + 1, w - 1);
  const double fy = y - y0, fx = x - x0;
  return (1 - fy) * ((1 - fx) * v[y0 * w + x0] + fx * v[y0 * w + x1]) +
         fy * ((1 - fx) * v[y1 * w + x0] + fx * v[y1 * w + x1]);
}

TEST(BilinearResize2D, AlignCornersAndHalfPixelMatchTheFormula) {
  const NDArray x = RandomArray({1, 1, 3, 4}, DType::kFloat64, -1, 1, 5);
  const std::vector<double> v = ToDouble(x);
  for (bool align : {true, false}) {
    const NDArray y = Resize(x, {{"height", "5"},
                                 {"width", "7"},
                                 {"align_corners", align ? "1" : "0"}});
    ASSERT_EQ(y.shape(), TShape({1, 1, 5, 7}));
    const std::vector<double> yv = ToDouble(y);
    for (int oy = 0; oy < 5; ++oy) {
      for (int ox = 0; ox < 7; ++ox) {
        double sy =
            align ? oy * 2.0 / 4 : std::max(0.0, (oy + 0.5) * 3 / 5 - 0.5);
        double sx =
            align ? ox * 3.0 / 6 : std::max(0.0, (ox + 0.5) * 4 / 7 - 0.5);
        EXPECT_NEAR(yv[oy * 7 + ox], Bilinear(v, 4, sy, sx, 3), 1e-12)
            << align << " " << oy << " " << ox;
      }
    }
  }
  // Corners are kept exactly with align_corners; the same size is a copy.
  const NDArray up = Resize(x, {{"height", "6"}, {"width", "9"}});
  const std::vector<double> u = ToDouble(up);
  EXPECT_EQ(u[0], v[0]);
  EXPECT_EQ(u[8], v[3]);
  EXPECT_EQ(u[53], v[11]);
  ExpectNear(Resize(x, {{"height", "3"}, {"width", "4"}}), x, 0, 0);
}

TEST(BilinearResize2D, SizeModes) {
  const NDArray x = RandomArray({2, 3, 5, 6});
  const auto shape = [&](AttrDict attrs) { return Resize(x, attrs).shape(); };
  EXPECT_EQ(shape({{"scale_height", "2"}, {"scale_width", "0.5"}}),
            TShape({2, 3, 10, 3}));
  EXPECT_EQ(
      shape(
          {{"mode", "odd_scale"}, {"scale_height", "2"}, {"scale_width", "2"}}),
      TShape({2, 3, 9, 12}));
  EXPECT_EQ(shape({{"mode", "to_even_down"}}), TShape({2, 3, 4, 6}));
  EXPECT_EQ(shape({{"mode", "to_even_up"}}), TShape({2, 3, 6, 6}));
  EXPECT_EQ(shape({{"mode", "to_odd_down"}}), TShape({2, 3, 5, 5}));
  EXPECT_EQ(shape({{"mode", "to_odd_up"}}), TShape({2, 3, 5, 7}));
  const NDArray like = RandomArray({1, 1, 8, 2});
  EXPECT_EQ(nd::Call("_contrib_BilinearResize2D", {x, like}, {{"mode", "like"}})
                .shape(),
            TShape({2, 3, 8, 2}));
}

TEST(BilinearResize2D, BadInputsAreTypedErrors) {
  const NDArray x = RandomArray({1, 1, 4, 4});
  ExpectError<InvalidArgument>(
      [&] {
        Resize(x, {{"mode", "odd_scale"}});
      },
      {"_contrib_BilinearResize2D", "scale_height"});
  ExpectError<ShapeError>(
      [&] {
        Resize(x, {{"height", "0"}});
      },
      {"output height would be 0"});
  ExpectError<InvalidArgument>(
      [&] {
        Resize(x, {{"scale_height", "1e12"}, {"scale_width", "1"}});
      },
      {"scale_height"});
  EXPECT_THROW(Resize(RandomArray({4, 4}), {}), ShapeError);
  // An empty plane has nothing to read from.
  ExpectError<ShapeError>(
      [] {
        Resize(RandomArray({1, 1, 0, 3}), {{"height", "2"}});
      },
      {"(1,1,0,3)", "at least 1"});
  EXPECT_THROW(Resize(x, {{"mode", "nearest"}}), InvalidArgument);
  EXPECT_THROW(Resize(ArrayOf({1, 1, 1, 1}, {1}, DType::kInt32), {}),
               DTypeError);
}

}  // namespace
}  // namespace testing
}  // namespace mx
