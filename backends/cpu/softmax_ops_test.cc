#include <cmath>
#include <string>
#include <vector>

#include "base/error.h"
#include "gtest/gtest.h"
#include "imperative/imperative.h"
#include "imperative/nd.h"
#include "testing/op_test_util.h"

namespace mx {
namespace testing {
namespace {

// softmax(x / t) (or its log) along `axis`, straight from the definition.
std::vector<double> RefSoftmax(const std::vector<double>& x, const TShape& s,
                               int axis, double t, bool log) {
  std::vector<double> y(x.size());
  for (int64_t i = 0; i < static_cast<int64_t>(x.size()); ++i) {
    std::vector<int64_t> idx = Unravel(i, s);
    double sum = 0;
    for (int64_t k = 0; k < s[axis]; ++k) {
      std::vector<int64_t> j = idx;
      j[axis] = k;
      sum += std::exp(x[Ravel(j, s)] / t);
    }
    const double p = std::exp(x[i] / t) / sum;
    y[i] = log ? std::log(p) : p;
  }
  return y;
}

TEST(Softmax, EveryAxisAndTemperatureMatchesReference) {
  const TShape shape{2, 3, 4};
  for (DType dt : {DType::kFloat64, DType::kFloat32, DType::kFloat16}) {
    for (int axis : {0, 1, 2, -1}) {
      for (double t : {1.0, 2.5, -0.5}) {
        NDArray x = RandomArray(shape, dt, -3, 3, 1);
        const int ax = axis < 0 ? axis + 3 : axis;
        const double tol = dt == DType::kFloat16 ? 3e-3 : 1e-6;
        NDArray y = nd::softmax(x, axis, t);
        EXPECT_EQ(y.dtype(), dt);
        EXPECT_TRUE(AllClose(ToDouble(y),
                             RefSoftmax(ToDouble(x), shape, ax, t, false), tol,
                             tol))
            << "softmax axis=" << axis << " t=" << t << " " << DTypeName(dt);
        NDArray ly = nd::Call(
            "log_softmax", {x},
            {{"axis", std::to_string(axis)}, {"temperature", nd::Attr(t)}});
        EXPECT_TRUE(AllClose(ToDouble(ly),
                             RefSoftmax(ToDouble(x), shape, ax, t, true), tol,
                             tol))
            << "log_softmax axis=" << axis << " t=" << t << " "
            << DTypeName(dt);
      }
    }
  }
}

// softmin is softmax of -x / t; its gradient goes through the same
// kernel with the scale negated (checked against finite differences).
TEST(Softmin, IsSoftmaxOfTheNegation) {
  const TShape shape{2, 3, 4};
  for (DType dt : {DType::kFloat64, DType::kFloat32}) {
    for (int axis : {0, -1}) {
      for (double t : {1.0, 2.5}) {
        NDArray x = RandomArray(shape, dt, -3, 3, 4);
        NDArray y = nd::Call(
            "softmin", {x},
            {{"axis", std::to_string(axis)}, {"temperature", nd::Attr(t)}});
        EXPECT_TRUE(AllClose(ToDouble(y),
                             RefSoftmax(ToDouble(x), shape,
                                        axis < 0 ? axis + 3 : axis, -t, false),
                             1e-6, 1e-6))
            << "axis=" << axis << " t=" << t << " " << DTypeName(dt);
      }
    }
  }
  // dsoftmin/dx = -dsoftmax/d(-x): a one-hot head gradient, by hand.
  NDArray x = ArrayOf({3}, {0.5, -1, 2}, DType::kFloat64);
  NDArray g = ArrayOf({3}, {1, 0, 0}, DType::kFloat64);
  NDArray y = nd::Call("softmin", {x});
  const std::vector<double> p = ToDouble(y);
  NDArray dx = nd::Call("_backward_softmin", {g, y});
  EXPECT_TRUE(AllClose(ToDouble(dx),
                       {-p[0] * (1 - p[0]), p[0] * p[1], p[0] * p[2]}, 1e-12,
                       1e-12));
}

// MXNet's use_length: each line's first length elements, the rest 0
// (log_softmax's too); a length of 0 gives a line of zeros. Lengths
// truncate; one past the axis (or negative, or NaN) is refused.
TEST(Softmax, UseLengthLimitsEachLine) {
  const NDArray x = ArrayOf({2, 3}, {1, 2, 3, 4, 5, 6});
  const AttrDict with_length = {{"use_length", "True"}};
  const std::vector<double> y = ToDouble(nd::Call(
      "softmax", {x, ArrayOf({2}, {2, 3}, DType::kInt32)}, with_length));
  const std::vector<double> first = RefSoftmax({1, 2}, {2}, 0, 1, false);
  const std::vector<double> second = RefSoftmax({4, 5, 6}, {3}, 0, 1, false);
  EXPECT_TRUE(
      AllClose(y, {first[0], first[1], 0, second[0], second[1], second[2]}));
  const std::vector<double> ly = ToDouble(
      nd::Call("log_softmax", {x, ArrayOf({2}, {1.9, 0})}, with_length));
  EXPECT_TRUE(AllClose(ly, {0, 0, 0, 0, 0, 0}));
  // Along axis 0: length has the data's shape without it, (3,).
  const std::vector<double> y0 =
      ToDouble(nd::Call("softmax", {x, ArrayOf({3}, {1, 2, 0})},
                        {{"use_length", "True"}, {"axis", "0"}}));
  const std::vector<double> col = RefSoftmax({2, 5}, {2}, 0, 1, false);
  EXPECT_TRUE(AllClose(y0, {1, col[0], 0, 0, col[1], 0}));
  for (double bad : std::vector<double>{-1.0, 4.0, NAN}) {
    ExpectError<InvalidArgument>(
        [&] {
          ToDouble(
              nd::Call("softmax", {x, ArrayOf({2}, {1, bad})}, with_length));
        },
        {"softmax", "length[1]"});
  }
  ExpectError<ShapeError>(
      [&] {
        nd::Call("softmax", {x, ArrayOf({3}, {1, 1, 1})}, with_length);
      },
      {"softmax", "length"});
}

// MXNet's dtype: float16 data, float32 probabilities computed from the
// float16 values in float; the gradient comes back as float16.
TEST(Softmax, DtypeGivesTheOutputsFloatType) {
  const NDArray x = RandomArray({3, 5}, DType::kFloat16, -3, 3, 2);
  const NDArray y = nd::Call("softmax", {x}, {{"dtype", "float32"}});
  EXPECT_EQ(y.dtype(), DType::kFloat32);
  EXPECT_TRUE(AllClose(
      ToDouble(y), RefSoftmax(ToDouble(x), {3, 5}, 1, 1, false), 1e-6, 1e-7));
  EXPECT_EQ(nd::Call("log_softmax", {x}, {{"dtype", "float64"}}).dtype(),
            DType::kFloat64);
  ExpectError<DTypeError>(
      [&] {
        nd::Call("softmax", {x}, {{"dtype", "int32"}});
      },
      {"softmax"});
}

TEST(Softmax, LargeInputsStayFinite) {
  NDArray x = ArrayOf({2, 3}, {1000, 1001, 1002, -1000, -1001, -1002});
  const std::vector<double> e =
      RefSoftmax({0, 1, 2, 0, -1, -2}, {2, 3}, 1, 1, false);
  EXPECT_TRUE(AllClose(ToDouble(nd::softmax(x)), e));
  const std::vector<double> le =
      RefSoftmax({0, 1, 2, 0, -1, -2}, {2, 3}, 1, 1, true);
  EXPECT_TRUE(AllClose(ToDouble(nd::log_softmax(x)), le, 1e-5, 1e-5));
}

TEST(Softmax, ZeroSizeAndDefaults) {
  EXPECT_EQ(nd::softmax(RandomArray({0, 5})).shape(), (TShape{0, 5}));
  // An empty softmax axis between non-empty ones: no lines to compute (the
  // arrays have no memory; found by op_attrs_fuzzer as pointer arithmetic
  // on null under UBSan), forward and backward.
  for (const std::string op : {"softmax", "log_softmax"}) {
    const NDArray x = RandomArray({2, 0, 3});
    const NDArray y = nd::Call(op, {x}, {{"axis", "1"}});
    EXPECT_EQ(y.shape(), (TShape{2, 0, 3}));
    const NDArray dx = nd::Call("_backward_" + op, {x, y}, {{"axis", "1"}});
    EXPECT_EQ(dx.shape(), (TShape{2, 0, 3}));
    dx.WaitToRead();
  }
  NDArray x = ArrayOf({3}, {0, 0, 0}, DType::kFloat64);
  EXPECT_TRUE(AllClose(ToDouble(nd::softmax(x)), {1.0 / 3, 1.0 / 3, 1.0 / 3}));
}

TEST(Softmax, BadInputsAreTypedErrors) {
  NDArray x = RandomArray({2, 3});
  try {
    nd::softmax(x, 2);
    FAIL();
  } catch (const ShapeError& e) {
    EXPECT_TRUE(Contains(e.what(), "op \"softmax\"")) << e.what();
    EXPECT_TRUE(Contains(e.what(), "(2,3)")) << e.what();
  }
  EXPECT_THROW(nd::log_softmax(x, -3), ShapeError);
  EXPECT_THROW(nd::softmax(x, -1, 0.0), InvalidArgument);
  EXPECT_THROW(nd::softmax(RandomArray({3}, DType::kInt32)), DTypeError);
}

double RefCrossEntropy(const std::vector<double>& x,
                       const std::vector<double>& label, int64_t c) {
  double total = 0;
  for (size_t i = 0; i < label.size(); ++i) {
    double sum = 0;
    for (int64_t j = 0; j < c; ++j) sum += std::exp(x[i * c + j]);
    total -=
        std::log(std::exp(x[i * c + static_cast<int64_t>(label[i])]) / sum);
  }
  return total;
}

TEST(SoftmaxCrossEntropy, MatchesReferenceForFloatAndIntegerLabels) {
  for (int64_t n : {1, 5}) {
    for (DType dt : {DType::kFloat64, DType::kFloat32, DType::kFloat16}) {
      for (DType lt : {DType::kFloat32, DType::kInt32, DType::kInt64}) {
        const int64_t c = 4;
        NDArray x = RandomArray({n, c}, dt, -3, 3, 2);
        NDArray label = ArrayOf(
            {n}, ToDouble(RandomArray({n}, DType::kInt32, 0, c - 1, 3)), lt);
        NDArray y = nd::softmax_cross_entropy(x, label);
        ASSERT_EQ(y.shape(), TShape{1});
        EXPECT_EQ(y.dtype(), dt);
        const double tol = dt == DType::kFloat16 ? 5e-3 : 1e-6;
        EXPECT_TRUE(AllClose(ToDouble(y),
                             {RefCrossEntropy(ToDouble(x), ToDouble(label), c)},
                             tol, tol))
            << "n=" << n << " " << DTypeName(dt) << " labels " << DTypeName(lt);
      }
    }
  }
}

// As MXNet's -log(max(p, 1e-8f)): a row's loss stops at 18.42 (the
// gradient stays softmax - onehot); NaN stays NaN.
TEST(SoftmaxCrossEntropy, RowLossStopsAtMinusLogOf1e8) {
  const double cap = -std::log(static_cast<double>(1e-8f));
  NDArray x = ArrayOf({3, 2}, {0, 20, 0, 5, std::nan(""), 0}, DType::kFloat64);
  NDArray first = nd::softmax_cross_entropy(
      nd::slice_axis(x, 0, 0, 2), ArrayOf({2}, {0, 0}, DType::kFloat64));
  // Row 0: log(1 + e^20) > 18.42 is capped; row 1: log(1 + e^5).
  EXPECT_TRUE(
      AllClose(ToDouble(first), {cap + 5 + std::log1p(std::exp(-5.0))}));
  NDArray last = nd::softmax_cross_entropy(nd::slice_axis(x, 0, 2, 3),
                                           ArrayOf({1}, {1}, DType::kFloat64));
  EXPECT_TRUE(std::isnan(ToDouble(last)[0]));
}

TEST(SoftmaxCrossEntropy, EmptyBatchGivesZero) {
  NDArray y = nd::softmax_cross_entropy(RandomArray({0, 3}),
                                        RandomArray({0}, DType::kInt32));
  EXPECT_TRUE(AllClose(ToDouble(y), {0}));
}

TEST(SoftmaxCrossEntropy, LabelOutOfRangeFailsInTheKernel) {
  NDArray x = RandomArray({2, 3});
  for (double bad : {3.0, -1.0}) {
    NDArray y = nd::softmax_cross_entropy(x, ArrayOf({2}, {0, bad}));
    try {
      y.WaitToRead();
      FAIL() << bad;
    } catch (const InvalidArgument& e) {
      EXPECT_TRUE(Contains(e.what(), "op \"softmax_cross_entropy\""))
          << e.what();
      EXPECT_TRUE(Contains(e.what(), "label")) << e.what();
      EXPECT_TRUE(Contains(e.what(), bad < 0 ? "-1" : "3")) << e.what();
    }
  }
}

TEST(SoftmaxCrossEntropy, BadShapesAndTypes) {
  NDArray x = RandomArray({2, 3});
  EXPECT_THROW(nd::softmax_cross_entropy(RandomArray({6}), RandomArray({6})),
               ShapeError);
  try {
    nd::softmax_cross_entropy(x, RandomArray({3}));
    FAIL();
  } catch (const ShapeError& e) {
    EXPECT_TRUE(Contains(e.what(), "label")) << e.what();
    EXPECT_TRUE(Contains(e.what(), "(3,)")) << e.what();
  }
  EXPECT_THROW(nd::softmax_cross_entropy(RandomArray({2, 3}, DType::kInt32),
                                         ArrayOf({2}, {0, 1})),
               DTypeError);
  EXPECT_THROW(nd::softmax_cross_entropy(x, ArrayOf({2}, {0, 1}, DType::kBool)),
               DTypeError);
}

// Found by //fuzz:op_attrs_fuzzer: rank-0 inputs reached TShape::operator[]
// out of range in the kernel; labels are checked as in the forward.
TEST(SoftmaxCrossEntropyBackward, ShapesAndLabelsAreChecked) {
  const NDArray scalar = ArrayOf(TShape::Scalar(), {1});
  const NDArray g = ArrayOf({1}, {1});
  testing::ExpectError<ShapeError>(
      [&] {
        imperative::Invoke("_backward_softmax_cross_entropy",
                           {g, scalar, scalar});
      },
      {"_backward_softmax_cross_entropy", "2-D"});
  const NDArray data = ArrayOf({2, 3}, {0, 1, 2, 3, 4, 5});
  const NDArray bad_label = ArrayOf({2}, {1, 7});
  const NDArray out = imperative::Invoke("_backward_softmax_cross_entropy",
                                         {g, data, bad_label})[0];
  testing::ExpectError<InvalidArgument>([&] { out.WaitToRead(); },
                                        {"label", "7", "outside"});
}

}  // namespace
}  // namespace testing
}  // namespace mx
