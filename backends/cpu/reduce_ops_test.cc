#include <cmath>
#include <limits>
#include <set>
#include <sstream>

#include "base/error.h"
#include "gtest/gtest.h"
#include "imperative/imperative.h"
#include "imperative/nd.h"
#include "testing/op_test_util.h"

namespace mx {
namespace testing {
namespace {

enum class Kind { kSum, kMean, kMax, kMin, kProd, kNanSum, kNanProd };

const char* KindName(Kind k) {
  switch (k) {
    case Kind::kSum:
      return "sum";
    case Kind::kMean:
      return "mean";
    case Kind::kMax:
      return "max";
    case Kind::kMin:
      return "min";
    case Kind::kProd:
      return "prod";
    case Kind::kNanSum:
      return "nansum";
    default:
      return "nanprod";
  }
}

bool IsProduct(Kind k) { return k == Kind::kProd || k == Kind::kNanProd; }
bool IsSumLike(Kind k) {
  return k == Kind::kSum || k == Kind::kMean || k == Kind::kNanSum;
}

NDArray RunReduce(Kind k, const NDArray& x, const TShape& axis, bool keepdims,
                  bool exclude) {
  AttrDict attrs{{"keepdims", nd::Attr(keepdims)},
                 {"exclude", nd::Attr(exclude)}};
  if (axis.ndim() > 0) attrs["axis"] = nd::Attr(axis);
  return nd::Call(KindName(k), {x}, attrs);
}

struct Ref {
  TShape shape;
  std::vector<double> values;
};

// Plain-loop reference: every input element is folded into the output
// element found by dropping (or zeroing) its reduced coordinates.
Ref RefReduce(Kind k, const std::vector<double>& x, const TShape& in,
              std::set<int> axes, bool keepdims, bool exclude, bool integer) {
  if (axes.empty()) {
    for (int d = 0; d < in.ndim(); ++d) axes.insert(d);
  } else if (exclude) {
    std::set<int> flipped;
    for (int d = 0; d < in.ndim(); ++d) {
      if (!axes.count(d)) flipped.insert(d);
    }
    axes = flipped;
  }
  std::vector<int64_t> kept_dims, keep_dims_full;
  for (int d = 0; d < in.ndim(); ++d) {
    const bool r = axes.count(d) > 0;
    keep_dims_full.push_back(r ? 1 : in[d]);
    if (!r) kept_dims.push_back(in[d]);
  }
  const TShape full(keep_dims_full);
  Ref ref;
  ref.shape = keepdims ? full : TShape(kept_dims);
  const int64_t n_out = full.Size();
  std::vector<double> acc(n_out, IsProduct(k) ? 1 : 0);
  std::vector<int64_t> count(n_out, 0);
  for (int64_t i = 0; i < in.Size(); ++i) {
    std::vector<int64_t> idx = Unravel(i, in);
    for (int d : axes) idx[d] = 0;
    const int64_t o = Ravel(idx, full);
    const double v = x[i];
    const bool skip_nan = k == Kind::kNanSum || k == Kind::kNanProd;
    if (skip_nan && std::isnan(v)) {
      // Left out.
    } else if (IsSumLike(k)) {
      acc[o] += v;
    } else if (IsProduct(k)) {
      acc[o] *= v;
    } else if (count[o] == 0) {
      acc[o] = v;
    } else if (std::isnan(acc[o])) {
      // NaN sticks.
    } else if (std::isnan(v) || (k == Kind::kMax ? v > acc[o] : v < acc[o])) {
      acc[o] = v;
    }
    ++count[o];
  }
  for (int64_t o = 0; o < n_out; ++o) {
    if (k == Kind::kMean) {
      acc[o] = integer ? std::trunc(acc[o] / count[o]) : acc[o] / count[o];
    }
  }
  ref.values = acc;
  return ref;
}

// An integer sum as the output dtype stores it (two's-complement wrap).
double WrapTo(DType dt, double v) {
  const int64_t i = static_cast<int64_t>(v);
  switch (dt) {
    case DType::kInt8:
      return static_cast<int8_t>(i);
    case DType::kUInt8:
      return static_cast<uint8_t>(i);
    case DType::kInt32:
      return static_cast<int32_t>(i);
    default:
      return static_cast<double>(i);
  }
}

struct AxisCase {
  TShape shape;
  std::vector<std::vector<int>> axes;  // {} means all axes.
};

TEST(Reduce, AllKindsMatchReferenceOverShapesAxesAndDTypes) {
  const std::vector<AxisCase> cases = {
      {TShape::Scalar(), {{}}},
      {{5}, {{}, {0}, {-1}}},
      {{0}, {{}, {0}}},
      {{3, 0, 2}, {{0}, {2}, {0, 2}}},
      {{2, 3, 4, 5}, {{}, {0}, {1}, {-1}, {1, 3}, {0, -1}, {-3, 2}, {0, 1, 2}}},
      {{4, 1, 3}, {{1}, {0, 1}, {2}}},
      // Column tiles of the leading-rows sum (256 wide) and their edges.
      {{3, 700}, {{0}, {1}}},
  };
  const std::vector<DType> dtypes = {
      DType::kFloat32, DType::kFloat64, DType::kFloat16, DType::kInt32,
      DType::kInt8,    DType::kUInt8,   DType::kInt64};
  for (Kind k : {Kind::kSum, Kind::kMean, Kind::kMax, Kind::kMin, Kind::kProd,
                 Kind::kNanSum, Kind::kNanProd}) {
    for (DType dt : dtypes) {
      const bool integer = IsInteger(dt);
      // Products of up to 120 elements: near 1 for floats, in {-1, 0, 1}
      // (or {0, 1}) for integers, so the reference is exact.
      double lo = dt == DType::kUInt8 ? 0 : -4;
      double hi = dt == DType::kUInt8 ? 2 : 4;
      if (IsProduct(k)) {
        lo = integer ? (dt == DType::kUInt8 ? 0 : -1) : 0.7;
        hi = integer ? 1 : 1.3;
      }
      for (const AxisCase& c : cases) {
        NDArray x = RandomArray(c.shape, dt, lo, hi, 11);
        const std::vector<double> xv = ToDouble(x);
        for (const auto& ax : c.axes) {
          std::set<int> axes;
          for (int a : ax) axes.insert(a < 0 ? a + c.shape.ndim() : a);
          for (bool keepdims : {false, true}) {
            for (bool exclude : {false, true}) {
              if (exclude && ax.empty()) continue;
              std::set<int> red = axes;
              if (exclude) {
                red.clear();
                for (int d = 0; d < c.shape.ndim(); ++d) {
                  if (!axes.count(d)) red.insert(d);
                }
              }
              bool empty = false;
              for (int d = 0; d < c.shape.ndim(); ++d) {
                if ((ax.empty() || red.count(d)) && c.shape[d] == 0) {
                  empty = true;
                }
              }
              if (empty && (k == Kind::kMax || k == Kind::kMin)) continue;
              if (empty && k == Kind::kMean) continue;  // Tested apart.
              std::vector<int64_t> axv(ax.begin(), ax.end());
              NDArray y = RunReduce(k, x, TShape(axv), keepdims, exclude);
              Ref ref =
                  RefReduce(k, xv, c.shape, axes, keepdims, exclude, integer);
              if ((k == Kind::kSum || k == Kind::kNanSum) && integer) {
                for (double& v : ref.values) v = WrapTo(dt, v);
              }
              std::ostringstream what;
              what << KindName(k) << " " << DTypeName(dt) << " " << c.shape
                   << " axis=" << TShape(axv) << " keepdims=" << keepdims
                   << " exclude=" << exclude;
              EXPECT_EQ(y.shape(), ref.shape) << what.str();
              EXPECT_EQ(y.dtype(), dt) << what.str();
              const double tol = dt == DType::kFloat16 ? 2e-3 : 1e-6;
              EXPECT_TRUE(AllClose(ToDouble(y), ref.values, tol, tol))
                  << what.str();
            }
          }
        }
      }
    }
  }
}

TEST(Reduce, AllAxesWithoutKeepdimsGiveScalarShape) {
  NDArray x = RandomArray({2, 3});
  EXPECT_EQ(nd::sum(x).shape(), TShape::Scalar());
  EXPECT_EQ(nd::max(x, {}, true).shape(), TShape({1, 1}));
  // axis=() as text also means every axis.
  EXPECT_EQ(nd::Call("mean", {x}, {{"axis", "()"}}).shape(), TShape::Scalar());
  EXPECT_EQ(nd::sum(RandomArray(TShape::Scalar())).shape(), TShape::Scalar());
}

TEST(Reduce, SumAndMeanOverEmptyAxes) {
  NDArray x = ArrayOf({2, 0}, {});
  EXPECT_TRUE(AllClose(ToDouble(nd::sum(x, {1})), {0, 0}));
  std::vector<double> m = ToDouble(nd::mean(x, {1}));
  ASSERT_EQ(m.size(), 2u);
  EXPECT_TRUE(std::isnan(m[0]) && std::isnan(m[1]));
  // No rows to sum over 20 columns (the leading-rows path): zeros, and the
  // same NaN (sign included) as the general path for the mean.
  NDArray rows0 = ArrayOf({0, 20}, {});
  EXPECT_TRUE(
      AllClose(ToDouble(nd::sum(rows0, {0})), std::vector<double>(20, 0.0)));
  for (double v : ToDouble(nd::mean(rows0, {0}))) {
    EXPECT_TRUE(std::isnan(v) && !std::signbit(v));
  }
  NDArray xi = ArrayOf({2, 0}, {}, DType::kInt32);
  EXPECT_EQ(nd::mean(xi, {1}).ToVector<int32_t>(),
            (std::vector<int32_t>{0, 0}));
}

TEST(Reduce, MaxMinOverEmptyAxisIsInvalidArgument) {
  NDArray x = ArrayOf({2, 0}, {});
  for (const char* op : {"max", "min"}) {
    try {
      nd::Call(op, {x}, {{"axis", "(1,)"}});
      FAIL() << op;
    } catch (const InvalidArgument& e) {
      const std::string msg = e.what();
      EXPECT_NE(msg.find(std::string("op \"") + op + "\""), std::string::npos)
          << msg;
      EXPECT_NE(msg.find("(2,0)"), std::string::npos) << msg;
    }
  }
  // Along the non-empty axis the result is just empty.
  EXPECT_EQ(nd::max(x, {0}).shape(), TShape({0}));
}

TEST(Reduce, DuplicateAxisIsInvalidArgument) {
  NDArray x = RandomArray({2, 3, 4});
  try {
    nd::sum(x, {1, -2});
    FAIL();
  } catch (const InvalidArgument& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("op \"sum\""), std::string::npos) << msg;
    EXPECT_NE(msg.find("(2,3,4)"), std::string::npos) << msg;
  }
}

TEST(Reduce, AxisOutOfRangeIsShapeError) {
  NDArray x = RandomArray({2, 3});
  try {
    nd::mean(x, {2});
    FAIL();
  } catch (const ShapeError& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("op \"mean\""), std::string::npos) << msg;
    EXPECT_NE(msg.find("(2,3)"), std::string::npos) << msg;
  }
  EXPECT_THROW(nd::max(x, {-3}), ShapeError);
  EXPECT_THROW(nd::sum(RandomArray(TShape::Scalar()), {0}), ShapeError);
}

TEST(Reduce, IntegerMeanStaysIntegerAndTruncates) {
  NDArray x = ArrayOf({2, 2}, {1, 2, -1, -2}, DType::kInt32);
  NDArray m = nd::mean(x, {1});
  EXPECT_EQ(m.dtype(), DType::kInt32);
  EXPECT_EQ(m.ToVector<int32_t>(), (std::vector<int32_t>{1, -1}));
}

TEST(Reduce, IntegerSumWrapsLikeTheOutputType) {
  NDArray x = ArrayOf({3}, {100, 100, 100}, DType::kInt8);
  EXPECT_EQ(nd::sum(x).ToVector<int8_t>(),
            (std::vector<int8_t>{static_cast<int8_t>(300 - 256)}));
}

TEST(Reduce, FloatSumsAccumulateInWideType) {
  const int n = 1 << 20;
  NDArray x = ArrayOf({n}, std::vector<double>(n, 0.1), DType::kFloat32);
  // Sequential float accumulation drifts by about 1% here.
  EXPECT_TRUE(
      AllClose(ToDouble(nd::sum(x)), {0.1f * static_cast<double>(n)}, 1e-6, 0));
  NDArray h = ArrayOf({4096}, std::vector<double>(4096, 1), DType::kFloat16);
  // A float16 accumulator would stop at 2048.
  EXPECT_TRUE(AllClose(ToDouble(nd::sum(h)), {4096}, 0, 0));
  EXPECT_TRUE(AllClose(ToDouble(nd::mean(h)), {1}, 0, 0));
}

TEST(Reduce, BoolInputs) {
  NDArray b = ArrayOf({2, 3}, {1, 0, 1, 0, 0, 0}, DType::kBool);
  NDArray s = nd::sum(b, {1});
  EXPECT_EQ(s.dtype(), DType::kInt64);
  EXPECT_EQ(s.ToVector<int64_t>(), (std::vector<int64_t>{2, 0}));
  NDArray m = nd::mean(b);
  EXPECT_EQ(m.dtype(), DType::kFloat32);
  EXPECT_TRUE(AllClose(ToDouble(m), {2.0 / 6}));
  EXPECT_EQ(nd::max(b, {1}).ToVector<bool>(), (std::vector<bool>{true, false}));
  EXPECT_EQ(nd::min(b, {0}).ToVector<bool>(),
            (std::vector<bool>{false, false, false}));
}

TEST(Reduce, NaNPropagatesThroughMaxAndMin) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  NDArray x = ArrayOf({2, 3}, {1, nan, 3, 4, 5, 6});
  std::vector<double> mx = ToDouble(nd::max(x, {1}));
  std::vector<double> mn = ToDouble(nd::min(x, {1}));
  EXPECT_TRUE(std::isnan(mx[0]) && std::isnan(mn[0]));
  EXPECT_EQ(mx[1], 6);
  EXPECT_EQ(mn[1], 4);
}

TEST(Reduce, AliasesAndAddToRequest) {
  NDArray x = ArrayOf({2, 2}, {1, 2, 3, 4});
  EXPECT_TRUE(
      AllClose(ToDouble(nd::Call("sum_axis", {x}, {{"axis", "0"}})), {4, 6}));
  const Op& op = OpRegistry::Get()->Lookup("sum");
  std::vector<NDArray> out{ArrayOf({2}, {10, 20})};
  imperative::InvokeOptions opts;
  opts.req = {OpReqType::kAddTo};
  imperative::Invoke(MakeAttrs(op, {{"axis", "(1,)"}}), {x}, &out, opts);
  EXPECT_TRUE(AllClose(ToDouble(out[0]), {13, 27}));
}

TEST(Reduce, InferenceWithPartialKnowledge) {
  const Op& op = OpRegistry::Get()->Lookup("sum");
  NodeAttrs attrs = MakeAttrs(op, {{"axis", "(1,)"}, {"keepdims", "True"}});
  std::vector<TShape> in{TShape{-1, 5, 3}}, out{TShape()};
  op.infer_shape()(attrs, &in, &out);
  EXPECT_EQ(out[0], TShape({-1, 1, 3}));
  std::vector<TShape> in2{TShape()}, out2{TShape()};
  op.infer_shape()(attrs, &in2, &out2);
  EXPECT_FALSE(out2[0].ndim_known());
  // The output dtype fixes the input's, except where bool could explain it.
  std::vector<DType> ti{DType::kUnknown}, to{DType::kFloat64};
  op.infer_type()(attrs, &ti, &to);
  EXPECT_EQ(ti[0], DType::kFloat64);
  std::vector<DType> ti2{DType::kUnknown}, to2{DType::kInt64};
  op.infer_type()(attrs, &ti2, &to2);
  EXPECT_EQ(ti2[0], DType::kUnknown);
}

// ---- argmax. ----

// Reference: first maximum, NaN beating everything, over `axis` or all.
std::vector<double> RefArgmax(const std::vector<double>& x, const TShape& in,
                              int axis) {
  std::vector<int64_t> kept;
  for (int d = 0; d < in.ndim(); ++d) kept.push_back(d == axis ? 1 : in[d]);
  const TShape full(kept);
  std::vector<double> best(full.Size(), 0), idx(full.Size(), -1);
  for (int64_t i = 0; i < in.Size(); ++i) {
    std::vector<int64_t> c = Unravel(i, in);
    const int64_t pos = c[axis];
    c[axis] = 0;
    const int64_t o = Ravel(c, full);
    const bool cur_nan = idx[o] >= 0 && std::isnan(best[o]);
    if (idx[o] < 0 || (!cur_nan && (std::isnan(x[i]) || x[i] > best[o]))) {
      best[o] = x[i];
      idx[o] = pos;
    }
  }
  return idx;
}

TEST(Argmax, AlongAxisMatchesReference) {
  const std::vector<TShape> shapes = {{7}, {3, 4}, {2, 3, 4, 5}, {3, 0, 2}};
  for (DType dt : {DType::kFloat32, DType::kFloat16, DType::kInt32,
                   DType::kUInt8, DType::kInt64}) {
    for (const TShape& s : shapes) {
      // Few distinct values, so ties are common.
      NDArray x = RandomArray(s, dt, 0, 3, 5);
      for (int axis = -s.ndim(); axis < s.ndim(); ++axis) {
        const int a = axis < 0 ? axis + s.ndim() : axis;
        if (s[a] == 0) continue;
        for (bool keepdims : {false, true}) {
          NDArray y = nd::argmax(x, axis, keepdims);
          std::vector<int64_t> dims;
          for (int d = 0; d < s.ndim(); ++d) {
            if (d != a) dims.push_back(s[d]);
            if (d == a && keepdims) dims.push_back(1);
          }
          EXPECT_EQ(y.shape(), TShape(dims));
          EXPECT_EQ(y.dtype(), DType::kInt64);
          EXPECT_TRUE(AllClose(ToDouble(y), RefArgmax(ToDouble(x), s, a), 0, 0))
              << DTypeName(dt) << " " << s << " axis " << axis;
        }
      }
    }
  }
}

TEST(Argmax, WithoutAxisSearchesTheFlattenedArray) {
  NDArray x = ArrayOf({2, 3}, {1, 5, 2, 5, 0, 1});
  NDArray y = nd::argmax(x);
  EXPECT_EQ(y.shape(), TShape::Scalar());
  EXPECT_EQ(y.ToVector<int64_t>(), (std::vector<int64_t>{1}));
  EXPECT_EQ(nd::argmax(x, std::nullopt, true).shape(), TShape({1, 1}));
  NDArray s = nd::argmax(ArrayOf(TShape::Scalar(), {3}));
  EXPECT_EQ(s.shape(), TShape::Scalar());
  EXPECT_EQ(s.ToVector<int64_t>(), (std::vector<int64_t>{0}));
}

// MXNet's legacy argmax_channel: argmax along the last axis, indices in
// the data's dtype, no attributes (MXNet's example).
TEST(Argmax, ChannelIsTheLastAxis) {
  NDArray x = ArrayOf({2, 3}, {0, 1, 2, 3, 4, 5});
  NDArray y = nd::Call("argmax_channel", {x});
  EXPECT_EQ(y.shape(), TShape({2}));
  EXPECT_EQ(y.dtype(), DType::kFloat32);
  EXPECT_TRUE(AllClose(ToDouble(y), {2, 2}));
  NDArray z = RandomArray({2, 3, 4}, DType::kFloat64, 0, 3, 5);
  EXPECT_TRUE(AllClose(ToDouble(nd::Call("argmax_channel", {z})),
                       RefArgmax(ToDouble(z), z.shape(), 2), 0, 0));
}

TEST(Argmax, NaNCountsAsTheMaximum) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  NDArray x = ArrayOf({2, 4}, {1, nan, 9, nan, 3, 2, 3, 1});
  EXPECT_EQ(nd::argmax(x, 1).ToVector<int64_t>(), (std::vector<int64_t>{1, 0}));
  EXPECT_EQ(nd::argmax(x).ToVector<int64_t>(), (std::vector<int64_t>{1}));
}

TEST(Argmax, BoolInput) {
  NDArray b = ArrayOf({2, 3}, {0, 0, 1, 0, 0, 0}, DType::kBool);
  EXPECT_EQ(nd::argmax(b, 1).ToVector<int64_t>(), (std::vector<int64_t>{2, 0}));
}

TEST(Argmax, EmptyOrBadAxisIsAnError) {
  EXPECT_THROW(nd::argmax(ArrayOf({0}, {})), InvalidArgument);
  EXPECT_THROW(nd::argmax(ArrayOf({2, 0}, {}), 1), InvalidArgument);
  EXPECT_EQ(nd::argmax(ArrayOf({2, 0}, {}), 0).shape(), TShape({0}));
  try {
    nd::argmax(RandomArray({2, 3}), 2);
    FAIL();
  } catch (const ShapeError& e) {
    EXPECT_NE(std::string(e.what()).find("op \"_npi_argmax\""),
              std::string::npos);
  }
}

// MXNet graphs' argmax/argmin (the legacy ops) give indices in the data's
// dtype, so they meet float labels (an accuracy head's broadcast_equal);
// an index the dtype cannot hold exactly is an error naming the op, not
// MXNet's silent rounding.
TEST(Argmax, TheLegacyOpsIndexInTheDataDtype) {
  for (DType dt : {DType::kFloat32, DType::kFloat64, DType::kFloat16,
                   DType::kInt32, DType::kUInt8}) {
    const NDArray x = RandomArray({3, 7, 2}, dt, 0, 9, 13);
    for (const char* op : {"argmax", "argmin"}) {
      const NDArray legacy = nd::Call(op, {x}, {{"axis", "1"}});
      EXPECT_EQ(legacy.dtype(), dt);
      const NDArray numpy =
          nd::Call(std::string("_npi_") + op, {x}, {{"axis", "1"}});
      EXPECT_EQ(numpy.dtype(), DType::kInt64);
      EXPECT_EQ(ToDouble(legacy), ToDouble(numpy)) << op << DTypeName(dt);
    }
  }
  const NDArray logits = ArrayOf({3, 4}, {0, 9, 1, 2, 5, 1, 1, 1, 0, 0, 0, 3});
  const NDArray label = ArrayOf({3}, {1, 2, 3});
  EXPECT_EQ(ToDouble(nd::Call(
                "broadcast_equal",
                {nd::Call("argmax", {logits}, {{"axis", "1"}}), label})),
            (std::vector<double>{1, 0, 1}));
  // float16 holds every index up to 2048: a line of 2049 is fine, of
  // 3000 not; uint8 up to 255.
  std::vector<double> line(2049, 0);
  line.back() = 1;
  EXPECT_EQ(ToDouble(nd::Call("argmax",
                              {ArrayOf({2049}, line, DType::kFloat16)}, {})),
            (std::vector<double>{2048}));
  for (auto [n, dt] : {std::pair<int64_t, DType>{3000, DType::kFloat16},
                       {300, DType::kUInt8}}) {
    try {
      ToDouble(nd::Call("argmax", {ArrayOf({n}, std::vector<double>(n, 0), dt)},
                        {}));
      ADD_FAILURE() << DTypeName(dt);
    } catch (const InvalidArgument& e) {
      EXPECT_NE(std::string(e.what()).find("_npi_argmax"), std::string::npos)
          << e.what();
    }
  }
}

// Large enough to be split into chunks when MX_CPU_KERNEL_NTHREADS > 1.
TEST(Reduce, LargeInputsMatchReference) {
  const TShape in{6000, 3, 4};
  NDArray x = RandomArray(in, DType::kFloat64, -1, 1, 21);
  const std::vector<double> xv = ToDouble(x);
  for (const std::set<int>& axes : {std::set<int>{1, 2}, std::set<int>{0}}) {
    std::vector<int64_t> ax(axes.begin(), axes.end());
    Ref ref = RefReduce(Kind::kSum, xv, in, axes, false, false, false);
    EXPECT_TRUE(AllClose(ToDouble(nd::sum(x, TShape(ax))), ref.values));
    ref = RefReduce(Kind::kMax, xv, in, axes, false, false, false);
    EXPECT_TRUE(AllClose(ToDouble(nd::max(x, TShape(ax))), ref.values));
  }
  EXPECT_TRUE(
      AllClose(ToDouble(nd::argmax(nd::reshape(x, {-1, 12}), 1)),
               RefArgmax(ToDouble(nd::reshape(x, {-1, 12})), {6000, 12}, 1)));
}

TEST(Reduce, NanSumAndNanProdLeaveNaNOut) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const NDArray x = ArrayOf({2, 3}, {1, nan, 3, nan, nan, nan});
  EXPECT_EQ(ToDouble(nd::nansum(x, {1})), (std::vector<double>{4, 0}));
  EXPECT_EQ(ToDouble(nd::nanprod(x, {1})), (std::vector<double>{3, 1}));
  const std::vector<double> plain = ToDouble(nd::sum(x, {1}));
  EXPECT_TRUE(std::isnan(plain[0]) && std::isnan(plain[1]));
  EXPECT_TRUE(std::isnan(ToDouble(nd::prod(x, {1}))[0]));
  // The leading-rows path (a [rows, >=16 cols] sum over rows) too.
  std::vector<double> rows(3 * 20, 1.0);
  rows[20 + 5] = nan;
  const NDArray r = ArrayOf({3, 20}, rows, DType::kFloat64);
  EXPECT_EQ(ToDouble(nd::nansum(r, {0}))[5], 2);
  EXPECT_TRUE(std::isnan(ToDouble(nd::sum(r, {0}))[5]));
  // Integers have no NaN: nansum is sum.
  const NDArray i = ArrayOf({3}, {2, -5, 7}, DType::kInt32);
  EXPECT_EQ(ToDouble(nd::nansum(i)), (std::vector<double>{4}));
  EXPECT_EQ(ToDouble(nd::nanprod(i)), (std::vector<double>{-70}));
}

TEST(Reduce, ProdOfBoolCountsAsInt64AndIntegersWrap) {
  const NDArray b = ArrayOf({2, 2}, {1, 1, 1, 0}, DType::kBool);
  const NDArray pb = nd::prod(b, {1});
  EXPECT_EQ(pb.dtype(), DType::kInt64);
  EXPECT_EQ(ToDouble(pb), (std::vector<double>{1, 0}));
  // 100^5 = 1e10 wraps in int32 as the output type does.
  const NDArray i = ArrayOf({5}, {100, 100, 100, 100, 100}, DType::kInt32);
  EXPECT_EQ(nd::prod(i).ToVector<int32_t>(),
            (std::vector<int32_t>{static_cast<int32_t>(10000000000LL)}));
  // float32 products accumulate in double: 1e30 * 1e30 * 1e-30 = 1e30.
  const NDArray f = ArrayOf({3}, {1e30, 1e30, 1e-30});
  EXPECT_NEAR(ToDouble(nd::prod(f))[0], 1e30, 1e24);
  EXPECT_EQ(ToDouble(nd::prod(ArrayOf({0}, {}))), (std::vector<double>{1}));
}

TEST(Argmin, MatchesArgmaxOfTheNegationAndNaNWins) {
  const NDArray x = RandomArray({4, 5, 3}, DType::kFloat32, 0, 3, 9);
  for (int axis : {0, 1, -1}) {
    // Small integers: ties are common and the first one wins in both.
    const NDArray r = nd::round(x);
    EXPECT_EQ(nd::argmin(r, axis).ToVector<int64_t>(),
              nd::argmax(nd::negative(r), axis).ToVector<int64_t>())
        << axis;
  }
  EXPECT_EQ(nd::argmin(ArrayOf({5}, {3, 1, 1, 0, 0})).ToVector<int64_t>(),
            (std::vector<int64_t>{3}));
  const double nan = std::numeric_limits<double>::quiet_NaN();
  EXPECT_EQ(nd::argmin(ArrayOf({2, 3}, {1, -5, nan, nan, 2, nan}), 1)
                .ToVector<int64_t>(),
            (std::vector<int64_t>{2, 0}));
  EXPECT_THROW(nd::argmin(ArrayOf({2, 0}, {}), 1), InvalidArgument);
}

}  // namespace
}  // namespace testing
}  // namespace mx
