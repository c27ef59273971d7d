// round, rint, fix, trunc, floor and ceil with MXNet's tie rules, on every
// float dtype and on integers (unchanged).
#include <cmath>
#include <functional>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "imperative/nd.h"
#include "testing/op_test_util.h"

namespace mx {
namespace testing {
namespace {

const std::vector<double> kValues = {-2.5, -1.5, -0.5, 0.5, 1.5,
                                     2.5,  -1.7, 1.2,  3};

struct RoundingCase {
  std::string op;
  std::function<NDArray(const NDArray&)> fn;
  std::vector<double> expected;  // At kValues.
};

std::vector<RoundingCase> Cases() {
  return {
      {"round", nd::round, {-3, -2, -1, 1, 2, 3, -2, 1, 3}},
      // MXNet's rint: halves go to the floor (C's rint: to even).
      {"rint", nd::rint, {-3, -2, -1, 0, 1, 2, -2, 1, 3}},
      {"fix", nd::fix, {-2, -1, 0, 0, 1, 2, -1, 1, 3}},
      {"trunc", nd::trunc, {-2, -1, 0, 0, 1, 2, -1, 1, 3}},
      {"floor", nd::floor, {-3, -2, -1, 0, 1, 2, -2, 1, 3}},
      {"ceil", nd::ceil, {-2, -1, 0, 1, 2, 3, -1, 2, 3}},
  };
}

TEST(Rounding, TiesAsMxnetInEveryFloatDType) {
  for (const RoundingCase& c : Cases()) {
    for (DType dt : {DType::kFloat32, DType::kFloat64, DType::kFloat16}) {
      const NDArray y = c.fn(ArrayOf({9}, kValues, dt));
      EXPECT_EQ(y.dtype(), dt) << c.op;
      EXPECT_EQ(ToDouble(y), c.expected) << c.op << " " << DTypeName(dt);
    }
  }
}

TEST(Rounding, SignedZerosNanAndInfinity) {
  // trunc(-0.5) is -0 (MXNet's fix picks the ceiling, -0, there too).
  EXPECT_TRUE(std::signbit(ToDouble(nd::fix(ArrayOf({1}, {-0.5})))[0]));
  EXPECT_TRUE(std::signbit(ToDouble(nd::ceil(ArrayOf({1}, {-0.5})))[0]));
  EXPECT_FALSE(std::signbit(ToDouble(nd::rint(ArrayOf({1}, {0.5})))[0]));
  for (const RoundingCase& c : Cases()) {
    const std::vector<double> y =
        ToDouble(c.fn(ArrayOf({3}, {NAN, INFINITY, -INFINITY})));
    EXPECT_TRUE(std::isnan(y[0])) << c.op;
    EXPECT_EQ(y[1], INFINITY) << c.op;
    EXPECT_EQ(y[2], -INFINITY) << c.op;
  }
}

TEST(Rounding, IntegersAreUnchanged) {
  // 2^24 + 1 is not a float32: rounding through float would change it.
  for (const RoundingCase& c : Cases()) {
    for (DType dt : {DType::kInt32, DType::kInt64, DType::kUInt8}) {
      const std::vector<double> v =
          dt == DType::kUInt8 ? std::vector<double>{0, 7, 255}
                              : std::vector<double>{-16777217, 0, 16777217};
      const NDArray y = c.fn(ArrayOf({3}, v, dt));
      EXPECT_EQ(y.dtype(), dt) << c.op;
      EXPECT_EQ(ToDouble(y), v) << c.op << " " << DTypeName(dt);
    }
  }
}

}  // namespace
}  // namespace testing
}  // namespace mx
