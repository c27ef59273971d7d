// UpSampling (nearest) against hand-computed values and against repeat,
// with several inputs (concat and sum), and its errors; bilinear against
// the Deconvolution it is.
#include <cmath>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
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
  // bilinear: the data's channels are num_filter.
  ExpectError<ShapeError>(
      [&] {
        nd::Call(
            "UpSampling", {x, RandomArray({3, 1, 4, 4})},
            {{"scale", "2"}, {"sample_type", "bilinear"}, {"num_filter", "3"}});
      },
      {"UpSampling", "bilinear", "num_filter=3"});
  ExpectError<InvalidArgument>(
      [&] {
        nd::Call("UpSampling", {x, RandomArray({2, 1, 4, 4})},
                 {{"scale", "2"}, {"sample_type", "bilinear"}});
      },
      {"UpSampling", "num_filter"});
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

// MXNet's Bilinear initializer: the (k, k) filter of bilinear
// interpolation for kernel k.
NDArray BilinearWeight(int64_t channels, int64_t k) {
  const double f = std::ceil(k / 2.0);
  const double c = (2 * f - 1 - static_cast<int64_t>(f) % 2) / (2 * f);
  std::vector<double> w;
  for (int64_t ch = 0; ch < channels; ++ch) {
    for (int64_t i = 0; i < k * k; ++i) {
      const double x = i % k, y = i / k;
      w.push_back((1 - std::fabs(x / f - c)) * (1 - std::fabs(y / f - c)));
    }
  }
  return ArrayOf({channels, 1, k, k}, w);
}

TEST(UpSampling, BilinearIsMXNetsGroupedDeconvolution) {
  const NDArray x = RandomArray({2, 3, 4, 5});
  for (int scale : {2, 3}) {
    const int64_t k = 2 * scale - scale % 2;
    const NDArray w = BilinearWeight(3, k);
    const NDArray y = nd::Call("UpSampling", {x, w},
                               {{"scale", nd::Attr(scale)},
                                {"sample_type", "bilinear"},
                                {"num_filter", "3"}});
    EXPECT_EQ(y.shape(), TShape({2, 3, 4 * scale, 5 * scale}));
    const NDArray want =
        nd::Call("Deconvolution", {x, w},
                 {{"kernel", absl::StrCat("(", k, ",", k, ")")},
                  {"stride", absl::StrCat("(", scale, ",", scale, ")")},
                  {"pad", absl::StrCat("(", scale / 2, ",", scale / 2, ")")},
                  {"num_filter", "3"},
                  {"num_group", "3"},
                  {"no_bias", "True"}});
    ExpectNear(y, want, 1e-6, 1e-6);
  }
  // With the bilinear filter a constant image stays constant inside (the
  // border sees the zero padding).
  const NDArray ones = nd::ones_like(RandomArray({1, 1, 4, 4}));
  const std::vector<double> up = ToDouble(nd::Call(
      "UpSampling", {ones, BilinearWeight(1, 4)},
      {{"scale", "2"}, {"sample_type", "bilinear"}, {"num_filter", "1"}}));
  for (int r = 1; r < 7; ++r) {
    for (int c = 1; c < 7; ++c) EXPECT_NEAR(up[r * 8 + c], 1, 1e-6);
  }
}

}  // namespace
}  // namespace testing
}  // namespace mx
