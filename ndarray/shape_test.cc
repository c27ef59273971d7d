// TShape arithmetic on hostile sizes: overflow is a ShapeError, never a
// wrapped or saturated number (issue 16, findings F15, F17).
#include "ndarray/shape.h"

#include <cstdint>
#include <limits>
#include <utility>

#include "base/error.h"
#include "gtest/gtest.h"
#include "ndarray/ndarray.h"

namespace mx {
namespace {

constexpr int64_t kMax = std::numeric_limits<int64_t>::max();

TEST(CheckedProduct, MultipliesOrReportsOverflow) {
  EXPECT_EQ(CheckedProduct({}), 1);
  EXPECT_EQ(CheckedProduct({2, 3, 4}), 24);
  EXPECT_EQ(CheckedProduct({2, 3}, 8), 48);
  EXPECT_EQ(CheckedProduct({kMax, 1}), kMax);
  EXPECT_EQ(CheckedProduct({0, kMax, kMax}), 0);
  EXPECT_EQ(CheckedProduct({int64_t{1} << 62, 4}), std::nullopt);
  EXPECT_EQ(CheckedProduct({int64_t{1} << 32, int64_t{1} << 32}), std::nullopt);
  EXPECT_EQ(CheckedProduct({int64_t{1} << 61}, 8), std::nullopt);
}

TEST(TShape, SizeThatOverflowsIsAShapeError) {
  const TShape big{int64_t{1} << 62, 4};
  EXPECT_THROW(big.Size(), ShapeError);
  EXPECT_THROW(big.ProdDims(0, 2), ShapeError);
  EXPECT_EQ(big.ProdDims(1, 2), 4);
  EXPECT_EQ(TShape({kMax, 1}).Size(), kMax);
}

TEST(TShape, CopyMoveAndCompare) {
  const TShape small{2, 3};
  const TShape big{1, 2, 3, 4, 5, 6, 7, 8};  // Dims beyond the inline six.
  TShape s;
  s = small;
  EXPECT_EQ(s, small);
  s = big;
  EXPECT_EQ(s, big);
  EXPECT_EQ(s.Size(), 40320);
  s = small;  // From heap dims back to inline ones.
  EXPECT_EQ(s, small);
  const TShape& alias = s;
  s = alias;  // Self-assignment.
  EXPECT_EQ(s, small);

  TShape moved_to(std::move(s));
  EXPECT_EQ(moved_to, small);
  EXPECT_FALSE(s.ndim_known());  // NOLINT(bugprone-use-after-move)
  TShape target{9};
  target = std::move(moved_to);
  EXPECT_EQ(target, small);
  EXPECT_FALSE(moved_to.ndim_known());  // NOLINT(bugprone-use-after-move)
  TShape& self = target;
  target = std::move(self);  // Self-move keeps the value.
  EXPECT_EQ(target, small);

  EXPECT_NE(TShape({2, 3}), TShape({2, 4}));
  EXPECT_NE(TShape({2, 3}), TShape({2, 3, 1}));
  EXPECT_NE(TShape(), TShape::Scalar());
  EXPECT_EQ(TShape(), TShape());
  EXPECT_EQ(TShape::Filled(2, -1), TShape({-1, -1}));
}

TEST(TShape, ParseRefusesDimensionsOutsideInt64) {
  EXPECT_THROW(TShape::Parse("(99999999999999999999,1)"), InvalidArgument);
  EXPECT_THROW(TShape::Parse("(-99999999999999999999)"), InvalidArgument);
  EXPECT_EQ(TShape::Parse("(9223372036854775807,1)"), TShape({kMax, 1}));
}

TEST(NDArray, ShapeWhoseSizeOrByteCountOverflowsIsAShapeError) {
  EXPECT_THROW(NDArray(TShape{int64_t{1} << 62, 4}), ShapeError);
  // 2^61 float64 elements: the count fits, the byte count does not.
  EXPECT_THROW(
      NDArray(TShape{int64_t{1} << 61}, Context::CPU(), DType::kFloat64),
      ShapeError);
}

}  // namespace
}  // namespace mx
