// Float results reaching integer dtypes, and reductions of empty arrays:
// defined results, never undefined behaviour (issue 16 F12, F13). The UB
// itself shows under --config=asan (UBSan); the values below pin the
// documented saturating behaviour in every build.
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "backends/cpu/kernel_util.h"
#include "base/error.h"
#include "gtest/gtest.h"
#include "imperative/imperative.h"
#include "imperative/nd.h"
#include "testing/op_test_util.h"

namespace mx {
namespace testing {
namespace {

TEST(SaturatingCast, NaNIsZeroAndOutOfRangeSaturates) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const double inf = std::numeric_limits<double>::infinity();
  EXPECT_EQ(cpu::SaturatingCast<int8_t>(nan), 0);
  EXPECT_EQ(cpu::SaturatingCast<int8_t>(-1470), -128);
  EXPECT_EQ(cpu::SaturatingCast<int8_t>(inf), 127);
  EXPECT_EQ(cpu::SaturatingCast<uint8_t>(-2), 0);
  EXPECT_EQ(cpu::SaturatingCast<int64_t>(1e300),
            std::numeric_limits<int64_t>::max());
  EXPECT_EQ(cpu::SaturatingCast<int64_t>(-inf),
            std::numeric_limits<int64_t>::lowest());
  EXPECT_EQ(cpu::SaturatingCast<int32_t>(-7.9), -7);
  EXPECT_EQ(cpu::SaturatingCast<float>(1e300),
            std::numeric_limits<float>::infinity());
}

std::vector<double> RunOp(const std::string& op, const NDArray& x,
                          const AttrDict& attrs) {
  return ToDouble(imperative::Invoke(op, {x}, attrs)[0]);
}

TEST(IntegerDTypes, ScalarAttributesOutsideTheDTypeSaturate) {
  // -2 as uint8 saturates to 0: 0 / x.
  EXPECT_EQ(RunOp("_rdiv_scalar", ArrayOf({2}, {1, 5}, DType::kUInt8),
                  {{"scalar", "-2"}}),
            (std::vector<double>{0, 0}));
  // nan as int8 is 0: x + 0.
  EXPECT_EQ(RunOp("_plus_scalar", ArrayOf({2}, {3, -4}, DType::kInt8),
                  {{"scalar", "nan"}}),
            (std::vector<double>{3, -4}));
}

TEST(IntegerDTypes, PowerOverflowSaturates) {
  // 0^-3 is inf, which saturates to 127 in int8.
  EXPECT_EQ(RunOp("_power_scalar", ArrayOf({1}, {0}, DType::kInt8),
                  {{"scalar", "-3"}}),
            (std::vector<double>{127}));
}

TEST(IntegerDTypes, ReduceSumLikeOverflowSaturates) {
  NDArray x = ArrayOf({15}, std::vector<double>(15, -98), DType::kInt8);
  NDArray like = ArrayOf({1}, {0}, DType::kInt8);
  EXPECT_EQ(ToDouble(imperative::Invoke("_reduce_sum_like", {x, like})[0]),
            (std::vector<double>{-128}));
}

TEST(Reduce, MeanOverAnEmptyLeadingAxisIsNaN) {
  NDArray x = ArrayOf({0, 2}, {});
  const std::vector<double> m = ToDouble(nd::mean(x, {0}));
  ASSERT_EQ(m.size(), 2u);
  EXPECT_TRUE(std::isnan(m[0]) && std::isnan(m[1]));
  EXPECT_EQ(ToDouble(nd::sum(x, {0})), (std::vector<double>{0, 0}));
}

// Integer +, -, *, negation, abs and square wrap modulo 2^bits as in NumPy
// instead of overflowing a signed type (undefined behaviour; found by
// //fuzz:op_attrs_fuzzer: int64 square of 281483583422977).
TEST(IntegerDTypes, SignedArithmeticWraps) {
  const int64_t kMin = std::numeric_limits<int64_t>::lowest();
  const int64_t kMax = std::numeric_limits<int64_t>::max();
  NDArray big = NDArray::FromVector<int64_t>({3}, {int64_t{1} << 48, kMin, 3});
  EXPECT_EQ(imperative::Invoke("square", {big})[0].ToVector<int64_t>(),
            (std::vector<int64_t>{0, 0, 9}));
  EXPECT_EQ(imperative::Invoke("negative", {big})[0].ToVector<int64_t>(),
            (std::vector<int64_t>{-(int64_t{1} << 48), kMin, -3}));
  EXPECT_EQ(imperative::Invoke("abs", {big})[0].ToVector<int64_t>(),
            (std::vector<int64_t>{int64_t{1} << 48, kMin, 3}));
  NDArray a = NDArray::FromVector<int64_t>({2}, {kMax, kMin});
  NDArray one = NDArray::FromVector<int64_t>({2}, {1, 1});
  EXPECT_EQ(imperative::Invoke("elemwise_add", {a, one})[0].ToVector<int64_t>(),
            (std::vector<int64_t>{kMin, kMin + 1}));
  EXPECT_EQ(imperative::Invoke("broadcast_sub", {a, one})[0].ToVector<int64_t>(),
            (std::vector<int64_t>{kMax - 1, kMax}));
  EXPECT_EQ(imperative::Invoke("elemwise_mul", {a, a})[0].ToVector<int64_t>(),
            (std::vector<int64_t>{1, 0}));
  NDArray i32 = NDArray::FromVector<int32_t>({1}, {1 << 30});
  EXPECT_EQ(imperative::Invoke("_mul_scalar", {i32}, {{"scalar", "4"}})[0]
                .ToVector<int32_t>(),
            (std::vector<int32_t>{0}));
  NDArray m1 = NDArray::FromVector<int64_t>({2}, {-1, -1});
  EXPECT_EQ(imperative::Invoke("elemwise_div", {a, m1})[0].ToVector<int64_t>(),
            (std::vector<int64_t>{-kMax, kMin}));
}

}  // namespace
}  // namespace testing
}  // namespace mx
