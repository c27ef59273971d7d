// TShape arithmetic on hostile sizes: overflow is a ShapeError, never a
// wrapped or saturated number (issue 16, findings F15, F17).
#include "ndarray/shape.h"

#include <cstdint>
#include <limits>

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
