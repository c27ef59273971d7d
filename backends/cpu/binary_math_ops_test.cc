// mod, hypot and smooth_l1 against MXNet's definitions.
#include <cmath>
#include <vector>

#include "gtest/gtest.h"
#include "imperative/nd.h"
#include "testing/op_test_util.h"

namespace mx {
namespace testing {
namespace {

TEST(Mod, TakesTheDivisorsSignAndModZeroIsZero) {
  const NDArray a = ArrayOf({7}, {7, -7, 7, -7, 5.5, 3, 0});
  const NDArray b = ArrayOf({7}, {3, 3, -3, -3, 2, 0, 5});
  const std::vector<double> expected = {1, 2, -2, -1, 1.5, 0, 0};
  EXPECT_EQ(ToDouble(nd::mod(a, b)), expected);
  EXPECT_EQ(ToDouble(nd::Call("_mod", {a, b})), expected);
  EXPECT_EQ(ToDouble(nd::Call("_Mod", {a, b})), expected);
  EXPECT_EQ(ToDouble(nd::mod(ArrayOf({7}, ToDouble(a), DType::kFloat64),
                             ArrayOf({7}, ToDouble(b), DType::kFloat64))),
            expected);
  EXPECT_EQ(ToDouble(nd::mod(ArrayOf({7}, ToDouble(a), DType::kFloat16),
                             ArrayOf({7}, ToDouble(b), DType::kFloat16))),
            expected);
  // NaN stays NaN.
  EXPECT_TRUE(
      std::isnan(ToDouble(nd::mod(ArrayOf({1}, {NAN}), ArrayOf({1}, {2})))[0]));
}

TEST(Mod, SignedZerosAsMxnet) {
  // MXNet: -4 mod 2 = -fmod(4, 2) + 0 = +0; -4 mod -2 = -fmod(4, 2) = -0.
  const std::vector<double> y =
      ToDouble(nd::mod(ArrayOf({2}, {-4, -4}), ArrayOf({2}, {2, -2})));
  EXPECT_FALSE(std::signbit(y[0]));
  EXPECT_TRUE(std::signbit(y[1]));
}

TEST(Mod, IntegersExactly) {
  for (DType dt : {DType::kInt32, DType::kInt64, DType::kInt8}) {
    const NDArray a = ArrayOf({6}, {7, -7, 7, -7, 3, 0}, dt);
    const NDArray b = ArrayOf({6}, {3, 3, -3, -3, 0, 5}, dt);
    const NDArray y = nd::mod(a, b);
    EXPECT_EQ(y.dtype(), dt);
    EXPECT_EQ(ToDouble(y), (std::vector<double>{1, 2, -2, -1, 0, 0}))
        << DTypeName(dt);
  }
  // INT_MIN mod -1 is 0, not a trap.
  EXPECT_EQ(ToDouble(nd::mod(ArrayOf({1}, {-2147483648.0}, DType::kInt32),
                             ArrayOf({1}, {-1}, DType::kInt32))),
            (std::vector<double>{0}));
  // Above 2^53, where going through double (as MXNet) would not be exact.
  const NDArray big = ArrayOf({1}, {9007199254740992.0}, DType::kInt64);
  const NDArray big_plus_one = nd::add(big, 1.0);
  EXPECT_EQ(ToDouble(nd::mod(big_plus_one, 2.0)), (std::vector<double>{1}));
  EXPECT_EQ(ToDouble(nd::mod(ArrayOf({2}, {250, 7}, DType::kUInt8), 7.0)),
            (std::vector<double>{5, 0}));
}

TEST(Mod, BroadcastAndScalarForms) {
  // MXNet's broadcast_mod example.
  const NDArray x = ArrayOf({2, 3}, {8, 8, 8, 8, 8, 8});
  const NDArray y = ArrayOf({2, 1}, {2, 3});
  EXPECT_EQ(ToDouble(nd::mod(x, y)), (std::vector<double>{0, 0, 0, 2, 2, 2}));
  const NDArray v = ArrayOf({4}, {5, -5, 2.5, 0});
  EXPECT_EQ(ToDouble(nd::mod(v, 3)), (std::vector<double>{2, 1, 2.5, 0}));
  EXPECT_EQ(ToDouble(nd::mod(v, -3)), (std::vector<double>{-1, -2, -0.5, 0}));
  // scalar mod x: 7 mod 5 = 2, 7 mod -5 = -3, 7 mod 2.5 = 2, 7 mod 0 = 0.
  EXPECT_EQ(ToDouble(nd::mod(7, v)), (std::vector<double>{2, -3, 2, 0}));
  EXPECT_EQ(ToDouble(nd::Call("_RModScalar", {v}, {{"scalar", "7"}})),
            (std::vector<double>{2, -3, 2, 0}));
}

TEST(Hypot, AllForms) {
  const NDArray a = ArrayOf({3}, {3, -5, 0}), b = ArrayOf({3}, {4, 12, -2});
  EXPECT_TRUE(AllClose(ToDouble(nd::hypot(a, b)), {5, 13, 2}));
  EXPECT_TRUE(AllClose(ToDouble(nd::Call("_Hypot", {a, b})), {5, 13, 2}));
  EXPECT_TRUE(AllClose(ToDouble(nd::hypot(a, 4)), {5, std::sqrt(41.0), 4}));
  EXPECT_TRUE(AllClose(
      ToDouble(nd::hypot(ArrayOf({2, 1}, {3, 6}), ArrayOf({1, 2}, {4, 8}))),
      {5, std::sqrt(73.0), std::sqrt(52.0), 10}));
  // No overflow where a^2 + b^2 would: hypot's point.
  EXPECT_TRUE(AllClose(ToDouble(nd::hypot(ArrayOf({1}, {3e30}), 4e30)), {5e30},
                       1e-6, 0));
  EXPECT_EQ(ToDouble(nd::hypot(ArrayOf({2}, {3, 1}, DType::kInt32),
                               ArrayOf({2}, {4, 1}, DType::kInt32))),
            (std::vector<double>{5, 1}));  // sqrt(2) truncated.
}

TEST(SmoothL1, QuadraticInsideLinearOutside) {
  const NDArray x = ArrayOf({5}, {-2, -0.5, 0, 0.5, 2});
  EXPECT_TRUE(
      AllClose(ToDouble(nd::smooth_l1(x, 1)), {1.5, 0.125, 0, 0.125, 1.5}));
  // sigma 2: the quadratic part is |x| < 0.25, continuous at the boundary.
  const NDArray z = ArrayOf({4}, {0.1, 1, -0.25, -3});
  EXPECT_TRUE(
      AllClose(ToDouble(nd::smooth_l1(z, 2)), {0.02, 0.875, 0.125, 2.875}));
  EXPECT_TRUE(
      AllClose(ToDouble(nd::Call("_npx_smooth_l1", {z}, {{"scalar", "2"}})),
               {0.02, 0.875, 0.125, 2.875}));
  EXPECT_TRUE(AllClose(
      ToDouble(nd::smooth_l1(ArrayOf({2}, {0.1, -3}, DType::kFloat64), 2)),
      {0.02, 2.875}, 1e-12, 0));
}

}  // namespace
}  // namespace testing
}  // namespace mx
