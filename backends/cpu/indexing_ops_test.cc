#include <cmath>

#include "base/error.h"
#include "gtest/gtest.h"
#include "imperative/nd.h"
#include "testing/op_test_util.h"

namespace mx {
namespace testing {
namespace {

// ---- take. ----

// Reference: NumPy's take for one index under each mode.
int64_t RefIndex(double v, int64_t n, const std::string& mode) {
  int64_t i = static_cast<int64_t>(std::trunc(v));
  if (mode == "clip") return std::min(std::max<int64_t>(i, 0), n - 1);
  if (mode == "wrap") {
    while (i < 0) i += n;
    return i % n;
  }
  return i < 0 ? i + n : i;
}

std::vector<double> RefTake(const NDArray& a, const NDArray& indices, int axis,
                            const std::string& mode, TShape* out) {
  const TShape& as = a.shape();
  const TShape& is = indices.shape();
  std::vector<int64_t> dims(as.begin(), as.begin() + axis);
  dims.insert(dims.end(), is.begin(), is.end());
  dims.insert(dims.end(), as.begin() + axis + 1, as.end());
  *out = TShape(dims);
  const std::vector<double> av = ToDouble(a), iv = ToDouble(indices);
  std::vector<double> y;
  for (int64_t i = 0; i < out->Size(); ++i) {
    const std::vector<int64_t> o = Unravel(i, *out);
    std::vector<int64_t> src(o.begin(), o.begin() + axis);
    std::vector<int64_t> pos(o.begin() + axis, o.begin() + axis + is.ndim());
    src.push_back(RefIndex(iv[Ravel(pos, is)], as[axis], mode));
    src.insert(src.end(), o.begin() + axis + is.ndim(), o.end());
    y.push_back(av[Ravel(src, as)]);
  }
  return y;
}

TEST(Take, MatchesReferenceForEveryModeAxisAndIndexDType) {
  const std::vector<TShape> a_shapes = {{7}, {4, 5}, {2, 3, 4, 2}};
  const std::vector<TShape> i_shapes = {TShape::Scalar(), {0}, {6}, {2, 3}};
  for (const std::string mode : {"clip", "wrap"}) {
    for (DType idt : {DType::kInt32, DType::kInt64, DType::kFloat32,
                      DType::kUInt8, DType::kInt8}) {
      for (const TShape& as : a_shapes) {
        NDArray a = RandomArray(as, DType::kFloat64, -9, 9, 3);
        for (const TShape& is : i_shapes) {
          const double lo = idt == DType::kUInt8 ? 0 : -12;
          NDArray idx = RandomArray(is, idt, lo, 12, 5);
          for (int axis = -as.ndim(); axis < as.ndim(); ++axis) {
            const int ax = axis < 0 ? axis + as.ndim() : axis;
            NDArray y = nd::take(a, idx, axis, mode);
            TShape expected_shape;
            std::vector<double> expected =
                RefTake(a, idx, ax, mode, &expected_shape);
            EXPECT_EQ(y.shape(), expected_shape);
            EXPECT_EQ(ToDouble(y), expected)
                << mode << " " << DTypeName(idt) << " " << as << " " << is
                << " axis " << axis;
          }
        }
      }
    }
  }
}

TEST(Take, RaiseModeAcceptsInRangeAndNegativeIndices) {
  NDArray a = ArrayOf({4, 2}, {0, 1, 10, 11, 20, 21, 30, 31}, DType::kInt32);
  NDArray idx = ArrayOf({3}, {3, -1, 0}, DType::kInt64);
  NDArray y = nd::take(a, idx, 0, "raise");
  EXPECT_EQ(y.ToVector<int32_t>(),
            (std::vector<int32_t>{30, 31, 30, 31, 0, 1}));
  EXPECT_EQ(nd::take(a, ArrayOf({1}, {1.7}), 1, "clip").ToVector<int32_t>(),
            (std::vector<int32_t>{1, 11, 21, 31}));  // 1.7 truncates to 1.
}

TEST(Take, RaiseModeThrowsInvalidArgumentFromTheKernel) {
  NDArray a = RandomArray({4, 2});
  for (double bad : {4.0, -5.0}) {
    NDArray y = nd::take(a, ArrayOf({2}, {0, bad}, DType::kInt32), 0, "raise");
    ExpectError<InvalidArgument>([&] { y.WaitToRead(); },
                                 {"op \"take\"", "(4,2)", "mode=raise"});
  }
}

TEST(Take, BadArgumentsAreErrors) {
  NDArray a = RandomArray({3, 2});
  NDArray idx = ArrayOf({2}, {0, 1}, DType::kInt32);
  ExpectError<ShapeError>([&] { nd::take(a, idx, 2); },
                          {"op \"take\"", "(3,2)"});
  ExpectError<InvalidArgument>([&] { nd::take(a, idx, 0, "nearest"); },
                               {"op \"take\"", "mode"});
  ExpectError<DTypeError>([&] { nd::take(a, ArrayOf({1}, {1}, DType::kBool)); },
                          {"op \"take\"", "indices", "bool"});
  ExpectError<InvalidArgument>(
      [&] {
        nd::take(ArrayOf({0, 2}, {}), idx);
      },
      {"op \"take\"", "(0,2)"});
  EXPECT_EQ(nd::take(ArrayOf({0, 2}, {}), ArrayOf({0}, {})).shape(),
            TShape({0, 2}));
}

// ---- one_hot. ----

TEST(OneHot, MatchesReference) {
  for (DType out_dt : {DType::kFloat32, DType::kInt32, DType::kFloat16,
                       DType::kUInt8, DType::kBool}) {
    for (const TShape& is :
         {TShape::Scalar(), TShape{0}, TShape{5}, TShape{2, 3}}) {
      NDArray idx = RandomArray(is, DType::kInt64, -2, 6, 9);
      const int64_t depth = 5;
      NDArray y = nd::one_hot(idx, depth, 3, 1, out_dt);
      std::vector<int64_t> dims(is.begin(), is.end());
      dims.push_back(depth);
      EXPECT_EQ(y.shape(), TShape(dims));
      EXPECT_EQ(y.dtype(), out_dt);
      std::vector<double> expected;
      for (double v : ToDouble(idx)) {
        for (int64_t c = 0; c < depth; ++c) {
          expected.push_back(c == v ? 3 : 1);
        }
      }
      if (out_dt == DType::kBool) {
        for (double& e : expected) e = e != 0;
      }
      EXPECT_TRUE(AllClose(ToDouble(y), expected, 0, 0)) << DTypeName(out_dt);
    }
  }
}

TEST(OneHot, FloatIndicesAndDefaults) {
  NDArray y = nd::one_hot(ArrayOf({3}, {2.9, -0.5, 7}), 3);
  EXPECT_EQ(y.dtype(), DType::kFloat32);
  EXPECT_TRUE(AllClose(ToDouble(y), {0, 0, 1, 1, 0, 0, 0, 0, 0}));
  EXPECT_EQ(nd::one_hot(ArrayOf({2}, {0, 1}), 0).shape(), TShape({2, 0}));
  EXPECT_THROW(nd::one_hot(ArrayOf({2}, {0, 1}), -1), InvalidArgument);
  EXPECT_THROW(nd::Call("one_hot", {ArrayOf({1}, {0})}, {}), InvalidArgument);
}

// ---- where. ----

TShape Broadcast(const TShape& a, const TShape& b) {
  const int nd = std::max(a.ndim(), b.ndim());
  std::vector<int64_t> dims(nd);
  for (int i = 0; i < nd; ++i) {
    const int ia = i - (nd - a.ndim()), ib = i - (nd - b.ndim());
    const int64_t da = ia >= 0 ? a[ia] : 1, db = ib >= 0 ? b[ib] : 1;
    dims[i] = da == 1 ? db : da;
  }
  return TShape(dims);
}

double Pick(const std::vector<double>& v, const TShape& s,
            const std::vector<int64_t>& out_idx) {
  std::vector<int64_t> sub;
  const size_t off = out_idx.size() - s.ndim();
  for (int d = 0; d < s.ndim(); ++d) {
    sub.push_back(s[d] == 1 ? 0 : out_idx[off + d]);
  }
  return v[Ravel(sub, s)];
}

TEST(Where, BroadcastsAllThreeLikeNumPy) {
  struct Case {
    TShape c, x, y;
  };
  const std::vector<Case> cases = {
      {{2, 3}, {2, 3}, {2, 3}},
      {{2, 1}, {1, 3}, {3}},
      {TShape::Scalar(), {2, 2}, TShape::Scalar()},
      {{4, 1, 3}, {1, 2, 1}, {2, 3}},
      {{0, 3}, {1, 3}, {3}},
      {{3}, TShape::Scalar(), TShape::Scalar()},
  };
  for (DType cdt : {DType::kBool, DType::kFloat32, DType::kInt32}) {
    for (DType dt : {DType::kFloat64, DType::kInt8, DType::kFloat16}) {
      for (const Case& k : cases) {
        NDArray c = RandomArray(k.c, cdt, -1, 1, 1);
        NDArray x = RandomArray(k.x, dt, -9, 9, 2);
        NDArray y = RandomArray(k.y, dt, -9, 9, 3);
        NDArray o = nd::where(c, x, y);
        const TShape os = Broadcast(Broadcast(k.c, k.x), k.y);
        EXPECT_EQ(o.shape(), os);
        EXPECT_EQ(o.dtype(), dt);
        const auto cv = ToDouble(c), xv = ToDouble(x), yv = ToDouble(y);
        std::vector<double> expected;
        for (int64_t i = 0; i < os.Size(); ++i) {
          const std::vector<int64_t> idx = Unravel(i, os);
          expected.push_back(Pick(cv, k.c, idx) != 0 ? Pick(xv, k.x, idx)
                                                     : Pick(yv, k.y, idx));
        }
        EXPECT_EQ(ToDouble(o), expected)
            << DTypeName(cdt) << " " << DTypeName(dt) << " " << k.c << k.x
            << k.y;
      }
    }
  }
}

// MXNet's row form: a 1-D condition of length x.shape[0] picks rows, also
// when x is square (NumPy broadcasting would pick columns there).
TEST(Where, OneDimConditionSelectsRows) {
  for (const TShape& xs : {TShape{3, 3}, TShape{3, 2}, TShape{3, 2, 4}}) {
    NDArray c = ArrayOf({3}, {1, 0, 2}, DType::kInt32);
    NDArray x = RandomArray(xs, DType::kFloat32, -9, 9, 2);
    NDArray y = RandomArray(xs, DType::kFloat32, -9, 9, 3);
    NDArray o = nd::where(c, x, y);
    EXPECT_EQ(o.shape(), xs);
    const auto xv = ToDouble(x), yv = ToDouble(y);
    const int64_t row = xs.Size() / 3;
    std::vector<double> expected;
    for (int64_t i = 0; i < xs.Size(); ++i)
      expected.push_back(i / row == 1 ? yv[i] : xv[i]);
    EXPECT_EQ(ToDouble(o), expected) << xs;
  }
  // Any other 1-D condition broadcasts as in NumPy (here: columns).
  NDArray c = ArrayOf({2}, {1, 0}, DType::kInt32);
  NDArray o = nd::where(c, ArrayOf({3, 2}, {1, 2, 3, 4, 5, 6}),
                        ArrayOf({3, 2}, {-1, -2, -3, -4, -5, -6}));
  EXPECT_EQ(ToDouble(o), (std::vector<double>{1, -2, 3, -4, 5, -6}));
}

TEST(Where, MismatchedShapesOrDTypesAreErrors) {
  NDArray c = ArrayOf({2}, {1, 0}, DType::kBool);
  ExpectError<ShapeError>(
      [&] { nd::where(c, RandomArray({3}), RandomArray({3})); },
      {"op \"where\"", "(2,)", "(3,)"});
  ExpectError<DTypeError>(
      [&] {
        nd::where(c, RandomArray({2}), RandomArray({2}, DType::kFloat64));
      },
      {"op \"where\"", "float64", "float32"});
}

// Large enough to be split into chunks when MX_CPU_KERNEL_NTHREADS > 1.
TEST(IndexingOps, LargeInputsMatchReference) {
  NDArray a = RandomArray({100, 40, 3}, DType::kFloat32, -1, 1, 4);
  NDArray idx = RandomArray({300}, DType::kInt64, -60, 60, 5);
  TShape shape;
  std::vector<double> expected = RefTake(a, idx, 0, "wrap", &shape);
  EXPECT_EQ(ToDouble(nd::take(a, idx, 0, "wrap")), expected);
  NDArray c = RandomArray({100, 40, 1}, DType::kBool, 0, 1, 6);
  NDArray y = RandomArray({3}, DType::kFloat32, -1, 1, 7);
  const auto av = ToDouble(a), cv = ToDouble(c), yv = ToDouble(y);
  std::vector<double> wexp;
  for (size_t i = 0; i < av.size(); ++i) {
    wexp.push_back(cv[i / 3] != 0 ? av[i] : yv[i % 3]);
  }
  EXPECT_EQ(ToDouble(nd::where(c, a, y)), wexp);
}
}  // namespace
}  // namespace testing
}  // namespace mx
