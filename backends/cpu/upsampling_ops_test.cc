// UpSampling (nearest) against hand-computed values and against repeat,
// with several inputs (concat and sum), and its errors.
#include <vector>

#include "base/error.h"
#include "gtest/gtest.h"
#include "imperative/nd.h"
#include "testing/op_test_util.h"

namespace mx {
namespace testing {
namespace {

AttrDict Nearest(int scale, int num_args = 1, const char* mode = "concat") {
  return {{"scale", std::to_string(scale)},
          {"sample_type", "nearest"},
          {"num_args", std::to_string(num_args)},
          {"multi_input_mode", mode}};
}

TEST(UpSampling, CopiesEachPixelIntoABlock) {
  const NDArray x = ArrayOf({1, 1, 2, 2}, {1, 2, 3, 4});
  const NDArray y = nd::Call("UpSampling", {x}, Nearest(2));
  EXPECT_EQ(y.shape(), TShape({1, 1, 4, 4}));
  EXPECT_EQ(ToDouble(y), (std::vector<double>{1, 1, 2, 2, 1, 1, 2, 2,  //
                                              3, 3, 4, 4, 3, 3, 4, 4}));
}

TEST(UpSampling, EqualsRepeatOnBothSpatialAxes) {
  for (DType dt :
       {DType::kFloat32, DType::kFloat16, DType::kFloat64, DType::kInt32}) {
    const NDArray x = RandomArray({2, 3, 4, 5}, dt, -4, 4, 3);
    const NDArray y = nd::Call("UpSampling", {x}, Nearest(3));
    const NDArray rows =
        nd::Call("repeat", {x}, {{"repeats", "3"}, {"axis", "2"}});
    const NDArray expected =
        nd::Call("repeat", {rows}, {{"repeats", "3"}, {"axis", "3"}});
    EXPECT_EQ(y.dtype(), dt);
    EXPECT_EQ(y.shape(), TShape({2, 3, 12, 15}));
    EXPECT_EQ(ToDouble(y), ToDouble(expected)) << DTypeName(dt);
  }
  // scale 1 is a copy.
  const NDArray x = RandomArray({1, 2, 3, 3});
  EXPECT_EQ(ToDouble(nd::Call("UpSampling", {x}, Nearest(1))), ToDouble(x));
}

TEST(UpSampling, SeveralInputsConcatOrSum) {
  // arg0 doubles to 4x4; arg1 (1x1) grows by 4; arg2 (4x4) stays.
  const NDArray a = ArrayOf({1, 1, 2, 2}, {1, 2, 3, 4});
  const NDArray b = ArrayOf({1, 2, 1, 1}, {5, 6});
  const NDArray c = RandomArray({1, 1, 4, 4});
  const NDArray y = nd::Call("UpSampling", {a, b, c}, Nearest(2, 3));
  EXPECT_EQ(y.shape(), TShape({1, 4, 4, 4}));
  const std::vector<double> v = ToDouble(y);
  const std::vector<double> up_a =
      ToDouble(nd::Call("UpSampling", {a}, Nearest(2)));
  EXPECT_EQ(std::vector<double>(v.begin(), v.begin() + 16), up_a);
  EXPECT_EQ(std::vector<double>(v.begin() + 16, v.begin() + 32),
            std::vector<double>(16, 5));
  EXPECT_EQ(std::vector<double>(v.begin() + 32, v.begin() + 48),
            std::vector<double>(16, 6));
  EXPECT_EQ(std::vector<double>(v.begin() + 48, v.end()), ToDouble(c));

  // sum: channels must agree; the enlarged inputs add.
  const NDArray d = ArrayOf({1, 1, 1, 1}, {10});
  const NDArray s = nd::Call("UpSampling", {a, d}, Nearest(2, 2, "sum"));
  EXPECT_EQ(s.shape(), TShape({1, 1, 4, 4}));
  std::vector<double> expected = up_a;
  for (double& e : expected) e += 10;
  EXPECT_EQ(ToDouble(s), expected);
  EXPECT_EQ(ToDouble(nd::UpSampling({a, d}, 2, "sum")), expected);
  EXPECT_EQ(ToDouble(nd::UpSampling({a}, 2)), up_a);
}

TEST(UpSampling, BadInputsAreTypedErrors) {
  const NDArray x = RandomArray({1, 2, 2, 2});
  ExpectError<InvalidArgument>([&] { nd::Call("UpSampling", {x}, Nearest(0)); },
                               {"UpSampling", "scale=0"});
  ExpectError<ShapeError>(
      [&] {
        nd::Call("UpSampling", {RandomArray({2, 2, 2})}, Nearest(2));
      },
      {"UpSampling", "(2,2,2)", "4-D"});
  // 4 / 3 is not an integer factor.
  ExpectError<ShapeError>(
      [&] {
        nd::Call("UpSampling", {x, RandomArray({1, 1, 3, 3})}, Nearest(2, 2));
      },
      {"input 1", "(1,1,3,3)", "4x4"});
  // sum needs equal channels.
  ExpectError<ShapeError>(
      [&] {
        nd::Call("UpSampling", {x, RandomArray({1, 3, 1, 1})},
                 Nearest(2, 2, "sum"));
      },
      {"input 1", "channels"});
  ExpectError<NotImplemented>(
      [&] {
        nd::Call(
            "UpSampling", {x, RandomArray({2, 1, 4, 4})},
            {{"scale", "2"}, {"sample_type", "bilinear"}, {"num_filter", "2"}});
      },
      {"UpSampling", "bilinear"});
  ExpectError<InvalidArgument>(
      [&] {
        nd::Call("UpSampling", {x}, {{"scale", "2"}, {"sample_type", "cubic"}});
      },
      {"sample_type", "cubic"});
  // An arity no graph could hold is refused before anything is sized by it.
  ExpectError<InvalidArgument>(
      [&] {
        nd::Call("UpSampling", {x},
                 {{"scale", "2"},
                  {"sample_type", "nearest"},
                  {"num_args", "2000000000"}});
      },
      {"UpSampling", "num_args"});
}

}  // namespace
}  // namespace testing
}  // namespace mx
