#include <cmath>
#include <limits>
#include <sstream>

#include "base/error.h"
#include "gtest/gtest.h"
#include "imperative/nd.h"
#include "testing/op_test_util.h"
#include "testing/reshape_cases.h"

namespace mx {
namespace testing {
namespace {

const std::vector<DType> kAllDTypes = {
    DType::kFloat32, DType::kFloat64, DType::kFloat16, DType::kUInt8,
    DType::kInt32,   DType::kInt8,    DType::kInt64,   DType::kBool};

// ---- Reshape. ----

TEST(Reshape, SpecialCodesGiveDocumentedShapes) {
  for (const ReshapeCase& c : DocumentedReshapeCases()) {
    NDArray x = RandomArray(c.in, DType::kFloat32, -1, 1, 3);
    NDArray y = nd::reshape(x, c.codes, c.reverse);
    EXPECT_EQ(y.shape(), c.expected)
        << c.in << " to " << c.codes << " reverse " << c.reverse;
    EXPECT_EQ(ToDouble(y), ToDouble(x));  // Same data, row-major order.
    // NDArray::Reshape (the view) reads the codes the same way.
    NDArray view = x.Reshape(c.codes, c.reverse);
    EXPECT_EQ(view.shape(), c.expected)
        << "view " << c.in << " to " << c.codes << " reverse " << c.reverse;
    EXPECT_TRUE(view.SharesChunkWith(x));
  }
}

TEST(Reshape, KeepsDataForEveryDType) {
  for (DType dt : kAllDTypes) {
    NDArray x = RandomArray({2, 3, 4}, dt, -3, 3, 9);
    NDArray y = nd::Call("reshape", {x}, {{"shape", "(4,-1)"}});
    EXPECT_EQ(y.shape(), TShape({4, 6}));
    EXPECT_EQ(y.dtype(), dt);
    EXPECT_EQ(ToDouble(y), ToDouble(x)) << DTypeName(dt);
  }
}

TEST(Reshape, BadTargetsAreShapeErrorsNamingOpInputAndTarget) {
  NDArray x = RandomArray({2, 3});
  const std::vector<std::pair<TShape, bool>> bad = {
      {{4, -1}, false},      // 6 is not a multiple of 4.
      {{5}, false},          // Size differs.
      {{-1, -1}, false},     // Two -1.
      {{0, 0, 0}, false},    // 0 with no input dim left.
      {{-3, -3}, false},     // -3 with one dim left.
      {{-4, 4, -1}, false},  // 2 cannot split as (4, ?).
      {{-4, -1, -1}, false},
      {{-4, 2}, false},         // -4 needs two values.
      {{-5, 6}, false},         // Unknown code.
      {{-2, -4, 1, 3}, false},  // -2 used everything.
      {{0, 0, 0}, true},
  };
  for (const auto& target : bad) {
    // Named copies: clang 14 cannot capture structured bindings.
    const auto& codes = target.first;
    const bool reverse = target.second;
    ExpectError<ShapeError>(
        [&] { nd::reshape(x, codes, reverse); },
        {"op \"Reshape\"", "(2,3)", "shape=" + codes.ToString()});
    ExpectError<ShapeError>(
        [&] { x.Reshape(codes, reverse); },
        {"NDArray::Reshape", "(2,3)", "shape=" + codes.ToString()});
  }
  ExpectError<ShapeError>(
      [&] {
        nd::reshape(ArrayOf({0, 3}, {}), {0, -1});
      },
      {"op \"Reshape\"", "(0,3)", "-1"});
  EXPECT_THROW(nd::Call("Reshape", {x}, {}), InvalidArgument);
}

TEST(Reshape, TargetsWhoseSizeOverflowsAreShapeErrors) {
  NDArray x = RandomArray({2, 3});
  constexpr int64_t kHuge = int64_t{1} << 62;
  const std::vector<TShape> bad = {
      {kHuge, 4}, {-2, kHuge, 4}, {-4, kHuge, 4, -2}, {kHuge, 4, -1}};
  for (const TShape& codes : bad) {
    ExpectError<ShapeError>([&] { nd::reshape(x, codes, false); },
                            {"op \"Reshape\"", "does not fit in int64"});
  }
}

// ---- Flatten, expand_dims, squeeze. ----

TEST(Flatten, CollapsesTrailingAxes) {
  const std::vector<std::pair<TShape, TShape>> cases = {{{2, 3, 4}, {2, 12}},
                                                        {{5}, {5, 1}},
                                                        {{0, 3}, {0, 3}},
                                                        {{3, 0, 2}, {3, 0}},
                                                        {{2, 1, 2, 2}, {2, 4}}};
  for (DType dt : {DType::kFloat32, DType::kInt8, DType::kFloat16}) {
    for (const auto& [in, out] : cases) {
      NDArray x = RandomArray(in, dt, -3, 3);
      NDArray y = nd::flatten(x);
      EXPECT_EQ(y.shape(), out) << in;
      EXPECT_EQ(y.dtype(), dt);
      EXPECT_EQ(ToDouble(y), ToDouble(x));
    }
  }
  EXPECT_EQ(nd::Call("flatten", {RandomArray({2, 2})}).shape(), TShape({2, 2}));
  ExpectError<ShapeError>([] { nd::flatten(RandomArray(TShape::Scalar())); },
                          {"op \"Flatten\"", "()"});
}

TEST(ExpandDims, EveryPositionIncludingNegative) {
  const TShape in{2, 3};
  NDArray x = RandomArray(in, DType::kInt32, -5, 5);
  for (int axis = -3; axis <= 2; ++axis) {
    const int a = axis < 0 ? axis + 3 : axis;
    std::vector<int64_t> dims{2, 3};
    dims.insert(dims.begin() + a, 1);
    NDArray y = nd::expand_dims(x, axis);
    EXPECT_EQ(y.shape(), TShape(dims)) << axis;
    EXPECT_EQ(ToDouble(y), ToDouble(x));
  }
  EXPECT_EQ(nd::expand_dims(RandomArray(TShape::Scalar()), -1).shape(),
            TShape({1}));
  for (int bad : {3, -4}) {
    ExpectError<ShapeError>([&] { nd::expand_dims(x, bad); },
                            {"op \"expand_dims\"", "(2,3)"});
  }
  EXPECT_THROW(nd::Call("expand_dims", {x}, {}), InvalidArgument);
}

TEST(Squeeze, DropsLengthOneAxes) {
  NDArray x = RandomArray({1, 3, 1, 2}, DType::kFloat64);
  EXPECT_EQ(nd::squeeze(x).shape(), TShape({3, 2}));
  EXPECT_EQ(nd::squeeze(x, {0}).shape(), TShape({3, 1, 2}));
  EXPECT_EQ(nd::squeeze(x, {-2}).shape(), TShape({1, 3, 2}));
  EXPECT_EQ(nd::squeeze(x, {2, 0}).shape(), TShape({3, 2}));
  EXPECT_EQ(ToDouble(nd::squeeze(x)), ToDouble(x));
  EXPECT_EQ(nd::squeeze(RandomArray({0, 1})).shape(), TShape({0}));
}

// MXNet's legacy squeeze keeps one axis when all would go (its
// SqueezeShape's "(1, 1, 1, 1)" case); NumPy's, _npi_squeeze, gives 0-d.
TEST(Squeeze, LegacyKeepsOneAxisNumPyGivesZeroD) {
  const NDArray ones = ArrayOf({1, 1, 1}, {7});
  EXPECT_EQ(nd::squeeze(ones).shape(), TShape({1}));
  EXPECT_EQ(nd::squeeze(ones, {0, 2, 1}).shape(), TShape({1}));
  EXPECT_EQ(nd::squeeze(ones, {1}).shape(), TShape({1, 1}));
  EXPECT_EQ(nd::squeeze(RandomArray(TShape::Scalar())).shape(), TShape({1}));
  const NDArray np = nd::Call("_npi_squeeze", {ones}, {});
  EXPECT_EQ(np.shape(), TShape::Scalar());
  EXPECT_EQ(ToDouble(np), (std::vector<double>{7}));
  EXPECT_EQ(nd::Call("_npi_squeeze", {ones}, {{"axis", "(0, 2)"}}).shape(),
            TShape({1}));
  EXPECT_EQ(nd::Call("_npi_squeeze", {RandomArray({1, 3, 1})}, {}).shape(),
            TShape({3}));
  ExpectError<ShapeError>(
      [&] {
        nd::Call("_npi_squeeze", {RandomArray({2})}, {{"axis", "0"}});
      },
      {"op \"_npi_squeeze\"", "axis 0"});
}

TEST(Squeeze, NonUnitAxisIsShapeError) {
  NDArray x = RandomArray({1, 3, 1});
  ExpectError<ShapeError>([&] { nd::squeeze(x, {1}); },
                          {"op \"squeeze\"", "axis 1", "(1,3,1)"});
  ExpectError<ShapeError>([&] { nd::squeeze(x, {3}); },
                          {"op \"squeeze\"", "(1,3,1)"});
  EXPECT_THROW(nd::squeeze(x, {0, -3}), InvalidArgument);  // Repeated.
}

// ---- Cast. ----

// The reference conversion: NumPy's for in-range values; integers wrap
// modulo 2^bits, floats saturate at the integer's range.
double RefConvert(double v, DType from, DType to) {
  if (to == DType::kBool) return v != 0;
  if (IsInteger(to) && !IsFloat(from)) {
    const int64_t i = static_cast<int64_t>(v);
    if (to == DType::kUInt8) return static_cast<uint8_t>(i);
    if (to == DType::kInt8) return static_cast<int8_t>(i);
    if (to == DType::kInt32) return static_cast<int32_t>(i);
    return static_cast<double>(i);
  }
  if (IsInteger(to)) {
    if (std::isnan(v)) return 0;
    double lo = 0, hi = 0;
    switch (to) {
      case DType::kUInt8:
        lo = 0, hi = 255;
        break;
      case DType::kInt8:
        lo = -128, hi = 127;
        break;
      case DType::kInt32:
        lo = -2147483648.0, hi = 2147483647.0;
        break;
      default:
        lo = -9223372036854775808.0, hi = 9223372036854775807.0;
    }
    return std::min(std::max(std::trunc(v), lo), hi);
  }
  if (to == DType::kFloat32) return static_cast<float>(v);
  if (to == DType::kFloat16) return static_cast<float>(float16(v));
  return v;
}

TEST(Cast, EveryDTypeToEveryDType) {
  const std::vector<double> values = {0, 1, -1, 2.75, -2.75, 100.5, 0.25, 7};
  for (DType from : kAllDTypes) {
    std::vector<double> v = values;
    if (from == DType::kUInt8) {
      for (double& e : v) e = std::fabs(e);  // In range for the source.
    }
    NDArray x = ArrayOf({2, 4}, v, from);
    const std::vector<double> xv = ToDouble(x);
    for (DType to : kAllDTypes) {
      NDArray y = nd::cast(x, to);
      EXPECT_EQ(y.dtype(), to);
      EXPECT_EQ(y.shape(), TShape({2, 4}));
      std::vector<double> expected;
      for (double v : xv) expected.push_back(RefConvert(v, from, to));
      EXPECT_TRUE(AllClose(ToDouble(y), expected, 0, 0))
          << DTypeName(from) << " -> " << DTypeName(to);
    }
  }
}

TEST(Cast, FloatToIntTruncatesAndFloatToBoolIsNonZero) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  NDArray x = ArrayOf({6}, {-1.9, -0.5, 0.0, 0.5, 1.9, nan}, DType::kFloat32);
  EXPECT_EQ(nd::cast(x, DType::kInt32).ToVector<int32_t>(),
            (std::vector<int32_t>{-1, 0, 0, 0, 1, 0}));
  EXPECT_EQ(nd::cast(x, DType::kBool).ToVector<bool>(),
            (std::vector<bool>{true, true, false, true, true, true}));
  NDArray big = ArrayOf({2}, {1e20, -1e20}, DType::kFloat64);
  EXPECT_EQ(nd::cast(big, DType::kInt64).ToVector<int64_t>(),
            (std::vector<int64_t>{std::numeric_limits<int64_t>::max(),
                                  std::numeric_limits<int64_t>::min()}));
  EXPECT_EQ(nd::cast(ArrayOf({2}, {300, -5}, DType::kInt32), DType::kUInt8)
                .ToVector<uint8_t>(),
            (std::vector<uint8_t>{44, 251}));  // Integers wrap, as in C.
}

TEST(Cast, ZeroSizeScalarAndAlias) {
  EXPECT_EQ(nd::cast(ArrayOf({0, 2}, {}), DType::kInt8).shape(),
            TShape({0, 2}));
  NDArray s = nd::Call("Cast", {ArrayOf(TShape::Scalar(), {3.5})},
                       {{"dtype", "int64"}});
  EXPECT_EQ(s.ToVector<int64_t>(), (std::vector<int64_t>{3}));
  EXPECT_THROW(nd::Call("cast", {ArrayOf({1}, {1})}, {}), InvalidArgument);
  EXPECT_THROW(nd::Call("cast", {ArrayOf({1}, {1})}, {{"dtype", "int3"}}),
               InvalidArgument);
}

}  // namespace
}  // namespace testing
}  // namespace mx
