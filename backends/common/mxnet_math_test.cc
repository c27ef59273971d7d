// The shared MXNet rules (mxnet_math.h) on the host: digamma against
// Eigen's, the others against MXNet's examples. The CUDA kernels compile
// the same code for the device.
#include "backends/common/mxnet_math.h"

#include <cmath>
#include <cstdint>
#include <random>

#include "Eigen/Core"
#include "gtest/gtest.h"
#include "unsupported/Eigen/SpecialFunctions"

namespace mx_math {
namespace {

TEST(Digamma, MatchesEigenOverTheRealLine) {
  std::mt19937 gen(5);
  std::uniform_real_distribution<double> uniform(-60, 60);
  for (int i = 0; i < 20000; ++i) {
    const double x = i < 10000 ? uniform(gen) : uniform(gen) / 100;
    const double expected = Eigen::numext::digamma(x);
    EXPECT_NEAR(Digamma(x), expected, 1e-13 * (1 + std::abs(expected)))
        << "x = " << x;
  }
  EXPECT_NEAR(Digamma(1e6), Eigen::numext::digamma(1e6), 1e-12);
  EXPECT_NEAR(Digamma(1e-9), Eigen::numext::digamma(1e-9), 1e-5);
}

TEST(Digamma, KnownValuesAndPoles) {
  const double euler = 0.57721566490153286061;
  EXPECT_NEAR(Digamma(1), -euler, 1e-15);
  EXPECT_NEAR(Digamma(0.5), -euler - 2 * std::log(2.0), 1e-15);
  EXPECT_NEAR(Digamma(-0.5), 2 - euler - 2 * std::log(2.0), 1e-14);
  for (double pole : {0.0, -1.0, -7.0, -1e6}) {
    EXPECT_TRUE(std::isnan(Digamma(pole))) << pole;
  }
  EXPECT_TRUE(std::isnan(Digamma(NAN)));
  EXPECT_TRUE(std::isnan(Digamma(-INFINITY)));
  EXPECT_EQ(Digamma(INFINITY), INFINITY);
}

TEST(Polygamma, MatchesEigen) {
  std::mt19937 gen(6);
  std::uniform_real_distribution<double> uniform(-20, 40);
  for (int n = 0; n <= 6; ++n) {
    for (int i = 0; i < 2000; ++i) {
      const double x = uniform(gen);
      const double expected = Eigen::numext::polygamma(double(n), x);
      EXPECT_NEAR(Polygamma(n, x), expected, 1e-11 * (1 + std::abs(expected)))
          << "n = " << n << ", x = " << x;
    }
  }
  EXPECT_NEAR(Polygamma(1, 1),
              3.14159265358979323846 * 3.14159265358979323846 / 6, 1e-15);
  EXPECT_EQ(Polygamma(1, 0), INFINITY);
  EXPECT_TRUE(std::isnan(Polygamma(2, -3)));
  EXPECT_TRUE(std::isnan(Polygamma(-1, 2)));
  EXPECT_EQ(Polygamma(3, INFINITY), 0);
}

TEST(RintAsMxnet, HalvesGoDown) {
  EXPECT_EQ(RintAsMxnet(2.5), 2);
  EXPECT_EQ(RintAsMxnet(-2.5f), -3);
  EXPECT_EQ(RintAsMxnet(2.6), 3);
  EXPECT_EQ(RintAsMxnet(-0.5), -1);
}

TEST(ModAsMxnet, DivisorsSign) {
  EXPECT_EQ(ModAsMxnet(7.0, -3.0), -2);
  EXPECT_EQ(ModAsMxnet(-7.0f, 3.0f), 2);
  EXPECT_EQ(ModAsMxnet(-7, -3), -1);
  EXPECT_EQ(ModAsMxnet(7, 0), 0);
  EXPECT_EQ(ModAsMxnet<int64_t>(INT64_MIN, -1), 0);
  EXPECT_EQ(ModAsMxnet<uint8_t>(250, 7), 5);
}

TEST(SmoothL1Loss, BothPieces) {
  EXPECT_DOUBLE_EQ(SmoothL1Loss(0.1, 2.0), 0.02);
  EXPECT_DOUBLE_EQ(SmoothL1Loss(-3.0, 2.0), 2.875);
}

TEST(ScaledSumOfSquares, MatchesSqrtOfSumOfSquaresAndDoesNotOverflow) {
  ScaledSumOfSquares s;
  EXPECT_EQ(s.Norm(), 0);
  for (double v : {3.0, -4.0, 0.0, 12.0}) s.Add(v);
  EXPECT_DOUBLE_EQ(s.Norm(), 13);
  // sqrt(sum x^2) overflows to inf above 1e154 and underflows to 0 below
  // 1e-162; the scaled sum does neither.
  for (double scale : {1e200, 1e-200, 1e300}) {
    ScaledSumOfSquares big;
    big.Add(3 * scale);
    big.Add(-4 * scale);
    EXPECT_NEAR(big.Norm() / scale, 5, 1e-15) << scale;
  }
  // Partial sums merged in any order give the sequential answer.
  ScaledSumOfSquares all, left, right;
  for (int i = 0; i < 100; ++i) {
    const double v = (i % 7 - 3) * std::pow(10.0, i % 5 - 2);
    all.Add(v);
    (i < 37 ? left : right).Add(v);
  }
  ScaledSumOfSquares merged = right;
  merged.Merge(left);
  EXPECT_NEAR(merged.Norm(), all.Norm(), 1e-14 * all.Norm());
  ScaledSumOfSquares empty;
  merged.Merge(empty);
  empty.Merge(all);
  EXPECT_NEAR(empty.Norm(), all.Norm(), 1e-14 * all.Norm());
}

TEST(ScaledSumOfSquares, InfinityAndNan) {
  ScaledSumOfSquares s;
  s.Add(1);
  s.Add(-INFINITY);
  s.Add(INFINITY);
  EXPECT_EQ(s.Norm(), INFINITY);
  s.Add(NAN);
  EXPECT_TRUE(std::isnan(s.Norm()));
  ScaledSumOfSquares t;
  t.Add(2);
  t.Merge(s);
  EXPECT_TRUE(std::isnan(t.Norm()));
}

// Every integer up to the bound is exact, the next one is not (or is
// past the type's range).
TEST(LargestExactIndex, IsTheLastIntegerBeforeAGap) {
  const int64_t f32 = LargestExactIndex(0), f64 = LargestExactIndex(1);
  EXPECT_EQ(static_cast<int64_t>(static_cast<float>(f32 - 1)), f32 - 1);
  EXPECT_EQ(static_cast<int64_t>(static_cast<float>(f32)), f32);
  EXPECT_NE(static_cast<int64_t>(static_cast<float>(f32 + 1)), f32 + 1);
  EXPECT_EQ(static_cast<int64_t>(static_cast<double>(f64)), f64);
  EXPECT_NE(static_cast<int64_t>(static_cast<double>(f64 + 1)), f64 + 1);
  const int64_t f16 = LargestExactIndex(2);
  for (int64_t i = f16 - 3; i <= f16; ++i) {
    EXPECT_EQ(static_cast<float>(Eigen::half(static_cast<float>(i))), i);
  }
  EXPECT_NE(static_cast<float>(Eigen::half(static_cast<float>(f16 + 1))),
            f16 + 1);
  EXPECT_EQ(LargestExactIndex(3), 255);        // uint8
  EXPECT_EQ(LargestExactIndex(4), INT32_MAX);  // int32
  EXPECT_EQ(LargestExactIndex(5), 127);        // int8
  EXPECT_EQ(LargestExactIndex(6), INT64_MAX);  // int64
  EXPECT_EQ(LargestExactIndex(7), 1);          // bool
  EXPECT_EQ(LargestExactIndex(9), -1);
}

}  // namespace
}  // namespace mx_math
