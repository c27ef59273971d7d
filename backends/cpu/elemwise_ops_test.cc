#include <cmath>
#include <functional>
#include <utility>
#include <vector>

#include "base/error.h"
#include "gtest/gtest.h"
#include "imperative/imperative.h"
#include "imperative/nd.h"
#include "testing/op_test_util.h"

namespace mx {
namespace testing {
namespace {

std::vector<double> Map(const std::vector<double>& x,
                        const std::function<double(double)>& f) {
  std::vector<double> y;
  for (double v : x) y.push_back(f(v));
  return y;
}

struct UnaryCase {
  const char* name;
  std::function<NDArray(const NDArray&)> op;
  std::function<double(double)> ref;
  double lo, hi;
};

TEST(ElemwiseUnary, FloatOpsMatchReference) {
  const std::vector<UnaryCase> cases = {
      {"negative", nd::negative, [](double x) { return -x; }, -3, 3},
      {"abs", nd::abs, [](double x) { return std::fabs(x); }, -3, 3},
      {"sign", nd::sign, [](double x) { return (x > 0) - (x < 0); }, -3, 3},
      {"exp", nd::exp, [](double x) { return std::exp(x); }, -3, 3},
      {"log", nd::log, [](double x) { return std::log(x); }, 0.1, 5},
      {"sqrt", nd::sqrt, [](double x) { return std::sqrt(x); }, 0, 5},
      {"square", nd::square, [](double x) { return x * x; }, -3, 3},
      {"reciprocal", nd::reciprocal, [](double x) { return 1 / x; }, 0.5, 3},
      {"sin", nd::sin, [](double x) { return std::sin(x); }, -3, 3},
      {"cos", nd::cos, [](double x) { return std::cos(x); }, -3, 3},
      {"tanh", nd::tanh, [](double x) { return std::tanh(x); }, -3, 3},
      {"sigmoid", nd::sigmoid, [](double x) { return 1 / (1 + std::exp(-x)); },
       -5, 5},
      {"relu", nd::relu, [](double x) { return x > 0 ? x : 0; }, -3, 3},
      {"erf", nd::erf, [](double x) { return std::erf(x); }, -2, 2},
  };
  const std::vector<TShape> shapes = {TShape::Scalar(), TShape({0}),
                                      TShape({7}), TShape({3, 4, 5})};
  for (const UnaryCase& c : cases) {
    for (DType dtype : {DType::kFloat32, DType::kFloat64, DType::kFloat16}) {
      for (const TShape& shape : shapes) {
        NDArray x = RandomArray(shape, dtype, c.lo, c.hi);
        NDArray y = c.op(x);
        EXPECT_EQ(y.shape(), shape);
        EXPECT_EQ(y.dtype(), dtype);
        const double tol = dtype == DType::kFloat16 ? 2e-3 : 1e-6;
        EXPECT_TRUE(AllClose(ToDouble(y), Map(ToDouble(x), c.ref), tol, tol))
            << c.name << " " << DTypeName(dtype) << " " << shape;
      }
    }
  }
}

TEST(ElemwiseUnary, IntegerOps) {
  NDArray x = ArrayOf({5}, {-2, -1, 0, 1, 3}, DType::kInt32);
  EXPECT_EQ(nd::negative(x).ToVector<int32_t>(),
            (std::vector<int32_t>{2, 1, 0, -1, -3}));
  EXPECT_EQ(nd::abs(x).ToVector<int32_t>(),
            (std::vector<int32_t>{2, 1, 0, 1, 3}));
  EXPECT_EQ(nd::square(x).ToVector<int32_t>(),
            (std::vector<int32_t>{4, 1, 0, 1, 9}));
  EXPECT_EQ(nd::relu(x).ToVector<int32_t>(),
            (std::vector<int32_t>{0, 0, 0, 1, 3}));
  EXPECT_EQ(nd::sign(x).ToVector<int32_t>(),
            (std::vector<int32_t>{-1, -1, 0, 1, 1}));
  EXPECT_EQ(nd::clip(x, -1, 2).ToVector<int32_t>(),
            (std::vector<int32_t>{-1, -1, 0, 1, 2}));
}

TEST(ElemwiseUnary, MathOnIntegersOrBoolIsDTypeError) {
  NDArray x = ArrayOf({2}, {1, 2}, DType::kInt32);
  try {
    nd::exp(x);
    FAIL();
  } catch (const DTypeError& e) {
    EXPECT_NE(std::string(e.what()).find("op \"exp\""), std::string::npos);
  }
  EXPECT_THROW(nd::relu(ArrayOf({2}, {1, 0}, DType::kBool)), DTypeError);
}

TEST(ElemwiseUnary, Clip) {
  NDArray x = ArrayOf({4}, {-5, -0.5, 0.5, 5});
  EXPECT_TRUE(AllClose(ToDouble(nd::clip(x, -1, 1)), {-1, -0.5, 0.5, 1}));
  // a_min > a_max is reported when the kernel runs.
  NDArray bad = nd::clip(x, 1, -1);
  EXPECT_THROW(bad.WaitToRead(), InvalidArgument);
  EXPECT_THROW(nd::Call("clip", {x}, {{"a_min", "0"}}), InvalidArgument);
}

// Bounds outside an integer dtype's range saturate instead of converting
// out of range (UB; a fuzz finding: uint8 with a_min=-1).
TEST(ElemwiseUnary, ClipBoundsSaturateForIntegers) {
  NDArray u = ArrayOf({3}, {0, 7, 255}, DType::kUInt8);
  EXPECT_EQ(nd::clip(u, -1, 300).ToVector<uint8_t>(),
            (std::vector<uint8_t>{0, 7, 255}));
  EXPECT_EQ(nd::clip(u, -1, 5).ToVector<uint8_t>(),
            (std::vector<uint8_t>{0, 5, 5}));
  NDArray i = ArrayOf({2}, {-3, 3}, DType::kInt8);
  EXPECT_EQ(nd::clip(i, -1e10, 1e10).ToVector<int8_t>(),
            (std::vector<int8_t>{-3, 3}));
}

using BinaryRef = std::function<double(double, double)>;

std::vector<double> BroadcastRef(const NDArray& a, const NDArray& b,
                                 const TShape& out, const BinaryRef& f) {
  std::vector<double> va = ToDouble(a), vb = ToDouble(b), result;
  for (int64_t i = 0; i < out.Size(); ++i) {
    std::vector<int64_t> idx = Unravel(i, out);
    auto pick = [&](const TShape& s, const std::vector<double>& v) {
      std::vector<int64_t> sub;
      for (int d = 0; d < s.ndim(); ++d) {
        const int64_t o = idx[out.ndim() - s.ndim() + d];
        sub.push_back(s[d] == 1 ? 0 : o);
      }
      return v[Ravel(sub, s)];
    };
    result.push_back(f(pick(a.shape(), va), pick(b.shape(), vb)));
  }
  return result;
}

TEST(ElemwiseBinary, BroadcastingMatchesReference) {
  struct Case {
    const char* name;
    std::function<NDArray(const NDArray&, const NDArray&)> op;
    BinaryRef ref;
  };
  const std::vector<Case> cases = {
      {"add", [](auto& a, auto& b) { return nd::add(a, b); },
       [](double x, double y) { return x + y; }},
      {"sub", [](auto& a, auto& b) { return nd::subtract(a, b); },
       [](double x, double y) { return x - y; }},
      {"mul", [](auto& a, auto& b) { return nd::multiply(a, b); },
       [](double x, double y) { return x * y; }},
      {"div", [](auto& a, auto& b) { return nd::divide(a, b); },
       [](double x, double y) { return x / y; }},
      {"power", [](auto& a, auto& b) { return nd::power(a, b); },
       [](double x, double y) { return std::pow(x, y); }},
      {"maximum", [](auto& a, auto& b) { return nd::maximum(a, b); },
       [](double x, double y) { return std::max(x, y); }},
      {"minimum", [](auto& a, auto& b) { return nd::minimum(a, b); },
       [](double x, double y) { return std::min(x, y); }},
  };
  const std::vector<std::pair<TShape, TShape>> shapes = {
      {{2, 3}, {2, 3}},
      {{2, 3}, {3}},
      {{3}, {2, 3}},
      {{2, 1, 4}, {3, 1}},
      {TShape::Scalar(), {2, 2}},
      {{2, 2}, TShape::Scalar()},
      {{0, 3}, {1, 3}},
      {{4, 1}, {1, 5}},
  };
  for (const Case& c : cases) {
    for (const auto& [sa, sb] : shapes) {
      const TShape& ta = sa;
      NDArray a = RandomArray(ta, DType::kFloat64, 0.5, 2, 1);
      NDArray b = RandomArray(sb, DType::kFloat64, 0.5, 2, 2);
      NDArray y = c.op(a, b);
      EXPECT_TRUE(AllClose(ToDouble(y), BroadcastRef(a, b, y.shape(), c.ref)))
          << c.name << " " << ta << " " << sb;
    }
  }
}

TEST(ElemwiseBinary, ElemwiseFormsRequireEqualShapes) {
  NDArray a = ArrayOf({2}, {1, 2}), b = ArrayOf({2}, {3, 4});
  EXPECT_TRUE(AllClose(ToDouble(nd::Call("elemwise_add", {a, b})), {4, 6}));
  EXPECT_TRUE(AllClose(ToDouble(nd::Call("_mul", {a, b})), {3, 8}));
  EXPECT_THROW(nd::Call("elemwise_add", {a, ArrayOf({1}, {1})}), ShapeError);
}

TEST(ElemwiseBinary, IncompatibleShapesNameBoth) {
  NDArray a = RandomArray({2, 3}), b = RandomArray({4});
  try {
    nd::add(a, b);
    FAIL();
  } catch (const ShapeError& e) {
    EXPECT_STREQ(e.what(),
                 "op \"broadcast_add\": shapes (2,3) and (4,) cannot be "
                 "broadcast together");
  }
}

TEST(ElemwiseBinary, MixedDTypesAreDTypeError) {
  NDArray a = RandomArray({2}), b = RandomArray({2}, DType::kFloat64);
  EXPECT_THROW(nd::add(a, b), DTypeError);
}

TEST(ElemwiseBinary, ComparisonsReturnBool) {
  NDArray a = ArrayOf({4}, {1, 2, 3, 4}), b = ArrayOf({4}, {4, 2, 1, 5});
  EXPECT_EQ((a > b).dtype(), DType::kBool);
  EXPECT_EQ((a > b).ToVector<bool>(),
            (std::vector<bool>{false, false, true, false}));
  EXPECT_EQ((a >= b).ToVector<bool>(),
            (std::vector<bool>{false, true, true, false}));
  EXPECT_EQ((a < b).ToVector<bool>(),
            (std::vector<bool>{true, false, false, true}));
  EXPECT_EQ((a <= b).ToVector<bool>(),
            (std::vector<bool>{true, true, false, true}));
  EXPECT_EQ((a == b).ToVector<bool>(),
            (std::vector<bool>{false, true, false, false}));
  EXPECT_EQ((a != b).ToVector<bool>(),
            (std::vector<bool>{true, false, true, true}));
  EXPECT_EQ((a > 2.5).ToVector<bool>(),
            (std::vector<bool>{false, false, true, true}));
  EXPECT_EQ((a == 2.0).ToVector<bool>(),
            (std::vector<bool>{false, true, false, false}));
  NDArray m = ArrayOf({2}, {1, 0}, DType::kBool);
  EXPECT_EQ(nd::equal(m, m).ToVector<bool>(), (std::vector<bool>{true, true}));
}

// MXNet's legacy comparison ops give 1/0 in the inputs' dtype (graphs
// exported by MXNet 1.x add and multiply the result); the NumPy-style
// _npi_* ops, which nd:: and the operators use, give bool.
TEST(ElemwiseBinary, LegacyComparisonsReturnTheInputDType) {
  NDArray a = ArrayOf({4}, {1, 2, 3, 4}), b = ArrayOf({4}, {4, 2, 1, 5});
  const std::vector<std::pair<const char*, std::vector<double>>> binary = {
      {"broadcast_greater", {0, 0, 1, 0}},
      {"broadcast_greater_equal", {0, 1, 1, 0}},
      {"broadcast_lesser", {1, 0, 0, 1}},
      {"broadcast_lesser_equal", {1, 1, 0, 1}},
      {"broadcast_equal", {0, 1, 0, 0}},
      {"_not_equal", {1, 0, 1, 1}}};
  for (DType dt : {DType::kFloat32, DType::kFloat16, DType::kInt32}) {
    for (const auto& [op, want] : binary) {
      NDArray y = imperative::Invoke(op, {nd::cast(a, dt), nd::cast(b, dt)})[0];
      EXPECT_EQ(y.dtype(), dt) << op;
      EXPECT_EQ(nd::cast(y, DType::kFloat64).ToVector<double>(), want) << op;
    }
  }
  NDArray y =
      imperative::Invoke("_greater_scalar", {a}, {{"scalar", "2.5"}})[0];
  EXPECT_EQ(y.dtype(), DType::kFloat32);
  EXPECT_EQ(y.ToVector<float>(), (std::vector<float>{0, 0, 1, 1}));
  // Broadcast, and the result used as a number, as BERT's mask is.
  NDArray mask =
      imperative::Invoke("broadcast_lesser",
                         {ArrayOf({2, 1}, {1, 3}), ArrayOf({3}, {0, 2, 4})})[0];
  EXPECT_EQ(nd::multiply(mask, ArrayOf({3}, {10, 20, 30})).ToVector<float>(),
            (std::vector<float>{0, 20, 30, 0, 0, 30}));
  EXPECT_EQ(imperative::Invoke("_npi_less", {a, b})[0].dtype(), DType::kBool);
  EXPECT_EQ(
      imperative::Invoke("_npi_less_equal_scalar", {a}, {{"scalar", "2"}})[0]
          .ToVector<bool>(),
      (std::vector<bool>{true, true, false, false}));
  // Legacy ops refuse bool inputs (MXNet 1.x had none); _npi_* take them.
  NDArray m = ArrayOf({2}, {1, 0}, DType::kBool);
  EXPECT_THROW(imperative::Invoke("broadcast_equal", {m, m}), DTypeError);
}

TEST(ElemwiseBinary, IntegerDivisionByZeroGivesZero) {
  NDArray a = ArrayOf({3}, {7, -7, 5}, DType::kInt32);
  NDArray b = ArrayOf({3}, {0, 2, -1}, DType::kInt32);
  EXPECT_EQ(nd::divide(a, b).ToVector<int32_t>(),
            (std::vector<int32_t>{0, -3, -5}));
  EXPECT_EQ(nd::divide(a, 0.0).ToVector<int32_t>(),
            (std::vector<int32_t>{0, 0, 0}));
}

TEST(ElemwiseScalar, ForwardAndReverseForms) {
  NDArray x = ArrayOf({3}, {1, 2, 4});
  EXPECT_TRUE(AllClose(ToDouble(x + 1.0), {2, 3, 5}));
  EXPECT_TRUE(AllClose(ToDouble(1.0 + x), {2, 3, 5}));
  EXPECT_TRUE(AllClose(ToDouble(x - 1.0), {0, 1, 3}));
  EXPECT_TRUE(AllClose(ToDouble(10.0 - x), {9, 8, 6}));
  EXPECT_TRUE(AllClose(ToDouble(x * 3.0), {3, 6, 12}));
  EXPECT_TRUE(AllClose(ToDouble(x / 2.0), {0.5, 1, 2}));
  EXPECT_TRUE(AllClose(ToDouble(8.0 / x), {8, 4, 2}));
  EXPECT_TRUE(AllClose(ToDouble(nd::power(x, 2.0)), {1, 4, 16}));
  EXPECT_TRUE(AllClose(ToDouble(nd::power(2.0, x)), {2, 4, 16}));
  EXPECT_TRUE(AllClose(ToDouble(nd::maximum(x, 2.0)), {2, 2, 4}));
  EXPECT_TRUE(AllClose(ToDouble(nd::minimum(x, 2.0)), {1, 2, 2}));
  EXPECT_TRUE(AllClose(ToDouble(-x), {-1, -2, -4}));
  NDArray i = ArrayOf({2}, {3, 4}, DType::kInt64);
  EXPECT_EQ((i * 2.0).ToVector<int64_t>(), (std::vector<int64_t>{6, 8}));
}

TEST(ElemwiseBinary, ArithmeticOperators) {
  NDArray a = ArrayOf({2}, {6, 8}), b = ArrayOf({2}, {2, 4});
  EXPECT_TRUE(AllClose(ToDouble(a + b), {8, 12}));
  EXPECT_TRUE(AllClose(ToDouble(a - b), {4, 4}));
  EXPECT_TRUE(AllClose(ToDouble(a * b), {12, 32}));
  EXPECT_TRUE(AllClose(ToDouble(a / b), {3, 2}));
}

TEST(Elemwise, OutputAliasingAnInputIsWrittenInPlace) {
  NDArray a = ArrayOf({3}, {1, 2, 3}), b = ArrayOf({3}, {10, 20, 30});
  const uint64_t v = a.version();
  nd::CallInto("broadcast_add", {a, b}, {}, a);
  EXPECT_TRUE(AllClose(ToDouble(a), {11, 22, 33}));
  EXPECT_EQ(a.version(), v + 1);
  // A view that only partly overlaps goes through a temporary.
  NDArray c = ArrayOf({4}, {1, 2, 3, 4});
  nd::CallInto("broadcast_mul", {c.Slice(0, 2), c.Slice(2, 4)}, {},
               c.Slice(1, 3));
  EXPECT_TRUE(AllClose(ToDouble(c), {1, 3, 8, 4}));
}

TEST(Elemwise, ManyOpsPushedBeforeTheFirstRead) {
  NDArray x = ArrayOf({1000}, std::vector<double>(1000, 0));
  for (int i = 0; i < 500; ++i) x = x + 1.0;
  NDArray y = x * 2.0;
  std::vector<double> expected(1000, 1000);
  EXPECT_TRUE(AllClose(ToDouble(y), expected));
}

}  // namespace
}  // namespace testing
}  // namespace mx
