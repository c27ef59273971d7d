// Pad against NumPy's np.pad results (constant, edge, reflect) and its
// attribute errors.
#include <cmath>
#include <vector>

#include "base/error.h"
#include "gtest/gtest.h"
#include "imperative/nd.h"
#include "testing/op_test_util.h"

namespace mx {
namespace testing {
namespace {

const NDArray& Row() {
  static const NDArray* x = new NDArray(ArrayOf({4}, {1, 2, 3, 4}));
  return *x;
}

TEST(Pad, ConstantMode) {
  // np.pad([1,2,3,4], (2,1), constant_values=9)
  const NDArray y = nd::pad(Row(), {2, 1}, "constant", 9);
  EXPECT_EQ(y.shape(), (TShape{7}));
  EXPECT_EQ(ToDouble(y), (std::vector<double>{9, 9, 1, 2, 3, 4, 9}));
}

TEST(Pad, EdgeMode) {
  // np.pad([1,2,3,4], (2,3), mode="edge")
  EXPECT_EQ(ToDouble(nd::pad(Row(), {2, 3}, "edge")),
            (std::vector<double>{1, 1, 1, 2, 3, 4, 4, 4, 4}));
}

TEST(Pad, ReflectMode) {
  // np.pad([1,2,3,4], (3,2), mode="reflect")
  EXPECT_EQ(ToDouble(nd::pad(Row(), {3, 2}, "reflect")),
            (std::vector<double>{4, 3, 2, 1, 2, 3, 4, 3, 2}));
}

TEST(Pad, MXNetFourDSpatialPadding) {
  // MXNet's usual call: NCHW data, pads on H and W only.
  const NDArray x = ArrayOf({1, 1, 2, 2}, {1, 2, 3, 4});
  const NDArray c = nd::pad(x, {0, 0, 0, 0, 1, 0, 0, 1}, "constant", 0);
  EXPECT_EQ(c.shape(), (TShape{1, 1, 3, 3}));
  EXPECT_EQ(ToDouble(c), (std::vector<double>{0, 0, 0, 1, 2, 0, 3, 4, 0}));
  const NDArray e = nd::pad(x, {0, 0, 0, 0, 1, 1, 1, 1}, "edge");
  EXPECT_EQ(ToDouble(e), (std::vector<double>{1, 1, 2, 2, 1, 1, 2, 2,  //
                                              3, 3, 4, 4, 3, 3, 4, 4}));
  const NDArray r = nd::pad(ArrayOf({1, 1, 2, 3}, {1, 2, 3, 4, 5, 6}),
                            {0, 0, 0, 0, 1, 1, 2, 1}, "reflect");
  // np.pad([[1,2,3],[4,5,6]], ((1,1),(2,1)), mode="reflect")
  EXPECT_EQ(r.shape(), (TShape{1, 1, 4, 6}));
  EXPECT_EQ(ToDouble(r),
            (std::vector<double>{6, 5, 4, 5, 6, 5, 3, 2, 1, 2, 3, 2,  //
                                 6, 5, 4, 5, 6, 5, 3, 2, 1, 2, 3, 2}));
}

TEST(Pad, EveryAxisOfAnyRankAndIntegerDTypes) {
  const NDArray x = ArrayOf({2, 1, 2}, {1, 2, 3, 4}, DType::kInt32);
  const NDArray y = nd::pad(x, {1, 0, 0, 1, 0, 0}, "constant", 7);
  EXPECT_EQ(y.dtype(), DType::kInt32);
  EXPECT_EQ(y.shape(), (TShape{3, 2, 2}));
  EXPECT_EQ(ToDouble(y),
            (std::vector<double>{7, 7, 7, 7, 1, 2, 7, 7, 3, 4, 7, 7}));
  // A constant outside the dtype's range saturates (the GPU's too), NaN
  // is 0: a plain cast of either is undefined.
  const NDArray small = nd::cast(ArrayOf({2}, {1, 2}), DType::kInt8);
  EXPECT_EQ(ToDouble(nd::pad(small, {1, 1}, "constant", 300)),
            (std::vector<double>{127, 1, 2, 127}));
  EXPECT_EQ(ToDouble(nd::pad(small, {1, 0}, "constant", -1e30)),
            (std::vector<double>{-128, 1, 2}));
  EXPECT_EQ(ToDouble(nd::pad(small, {0, 1}, "constant", std::nan(""))),
            (std::vector<double>{1, 2, 0}));
}

TEST(Pad, ZeroPadsCopy) {
  const NDArray x = RandomArray({2, 3});
  EXPECT_EQ(ToDouble(nd::pad(x, {0, 0, 0, 0}, "reflect")), ToDouble(x));
}

TEST(Pad, PadWidthOfTheWrongLengthIsAnError) {
  ExpectError<InvalidArgument>(
      [] {
        nd::pad(RandomArray({2, 3}), {1, 1});
      },
      {"\"Pad\"", "pad_width=(1,1)", "shape (2,3)", "2 * 2 entries"});
}

TEST(Pad, NegativePadIsAnError) {
  ExpectError<InvalidArgument>(
      [] {
        nd::pad(Row(), {-1, 1});
      },
      {"pad_width=(-1,1)", ">= 0"});
}

TEST(Pad, ReflectPadAsLargeAsTheAxisIsAnError) {
  ExpectError<InvalidArgument>(
      [] {
        nd::pad(Row(), {4, 0}, "reflect");
      },
      {"reflect", "axis 0 has size 4"});
}

TEST(Pad, EdgeOfAnEmptyAxisIsAnError) {
  ExpectError<InvalidArgument>(
      [] {
        nd::pad(nd::zeros({0}), {1, 0}, "edge");
      },
      {"edge", "empty"});
}

TEST(Pad, UnknownModeIsAnError) {
  ExpectError<InvalidArgument>(
      [] {
        nd::pad(Row(), {1, 1}, "wrap");
      },
      {"mode", "wrap"});
}

TEST(Pad, LowercaseAliasAndBoolIsADTypeError) {
  EXPECT_EQ(ToDouble(nd::Call("pad", {Row()}, {{"pad_width", "(1,0)"}})),
            (std::vector<double>{0, 1, 2, 3, 4}));
  ExpectError<DTypeError>(
      [] {
        nd::pad(ArrayOf({1}, {1}, DType::kBool), {1, 0});
      },
      {"bool"});
}

}  // namespace
}  // namespace testing
}  // namespace mx
