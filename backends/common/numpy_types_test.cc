#include "backends/common/numpy_types.h"

#include "gtest/gtest.h"

namespace mx_numpy {
namespace {

constexpr int kAll[] = {kFloat32, kFloat64, kFloat16, kUInt8,
                        kInt32,   kInt8,    kInt64,   kBool};

TEST(NumpyTypes, PromotionTableAsMxnet) {
  // Rows and columns in code order: float32 float64 float16 uint8 int32
  // int8 int64 bool (MXNet's get_more_precise_type / np_binary_out_infer).
  const int f32 = kFloat32, f64 = kFloat64, f16 = kFloat16, u8 = kUInt8,
            i32 = kInt32, i8 = kInt8, i64 = kInt64, b = kBool;
  const int expected[8][8] = {
      {f32, f64, f32, f32, f32, f32, f32, f32},
      {f64, f64, f64, f64, f64, f64, f64, f64},
      {f32, f64, f16, f16, f16, f16, f16, f16},
      {f32, f64, f16, u8, i32, i32, i64, u8},
      {f32, f64, f16, i32, i32, i32, i64, i32},
      {f32, f64, f16, i32, i32, i8, i64, i8},
      {f32, f64, f16, i64, i64, i64, i64, i64},
      {f32, f64, f16, u8, i32, i8, i64, b},
  };
  for (int a : kAll) {
    for (int c : kAll) {
      EXPECT_EQ(PromoteTypes(a, c), expected[a][c]) << a << " with " << c;
    }
  }
}

TEST(NumpyTypes, TrueDivideIsFloat) {
  EXPECT_EQ(TrueDivideType(kInt32, kInt32), kFloat32);
  EXPECT_EQ(TrueDivideType(kInt64, kBool), kFloat32);
  EXPECT_EQ(TrueDivideType(kInt64, kFloat16), kFloat16);
  EXPECT_EQ(TrueDivideType(kFloat16, kFloat64), kFloat64);
  for (int a : kAll) {
    for (int c : kAll) EXPECT_TRUE(IsFloatCode(TrueDivideType(a, c)));
  }
}

TEST(NumpyTypes, ScalarOps) {
  EXPECT_EQ(ScalarOpType(kInt32, true), kInt32);
  EXPECT_EQ(ScalarOpType(kInt32, false), kFloat64);
  EXPECT_EQ(ScalarOpType(kUInt8, false), kFloat64);
  EXPECT_EQ(ScalarOpType(kBool, true), kInt64);
  EXPECT_EQ(ScalarOpType(kBool, false), kFloat64);
  EXPECT_EQ(ScalarOpType(kFloat16, false), kFloat16);
  EXPECT_EQ(ScalarOpType(kFloat16, true), kFloat16);
  EXPECT_EQ(FloatResultType(kInt64), kFloat32);
  EXPECT_EQ(FloatResultType(kBool), kFloat32);
  EXPECT_EQ(FloatResultType(kFloat64), kFloat64);
}

}  // namespace
}  // namespace mx_numpy
