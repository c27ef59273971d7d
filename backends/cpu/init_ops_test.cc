#include <cmath>
#include <string>
#include <vector>

#include "base/error.h"
#include "gtest/gtest.h"
#include "imperative/nd.h"
#include "testing/op_test_util.h"

namespace mx {
namespace testing {
namespace {

const DType kAllDTypes[] = {DType::kFloat32, DType::kFloat64, DType::kFloat16,
                            DType::kUInt8,   DType::kInt32,   DType::kInt8,
                            DType::kInt64,   DType::kBool};
const DType kFloatDTypes[] = {DType::kFloat32, DType::kFloat64,
                              DType::kFloat16};

std::vector<TShape> TestShapes() {
  return {TShape::Scalar(), TShape({0}), TShape({5}), TShape({2, 0, 3}),
          TShape({2, 3, 4})};
}

// What storing `v` in `dtype` reads back as (values here are exact in all
// dtypes except for the truncation of integers and bool's v != 0).
double Stored(double v, DType dtype) {
  if (dtype == DType::kBool) return v != 0 ? 1 : 0;
  if (!IsFloat(dtype)) return std::trunc(v);
  return v;
}

std::vector<double> Filled(const TShape& shape, double v) {
  return std::vector<double>(static_cast<size_t>(shape.Size()), v);
}

// Expects a throw of E whose message contains every piece of `parts`.
template <typename E, typename F>
void ExpectThrowWith(F f, const std::vector<std::string>& parts) {
  try {
    f();
    ADD_FAILURE() << "no exception";
  } catch (const E& e) {
    for (const std::string& part : parts) {
      EXPECT_NE(std::string(e.what()).find(part), std::string::npos)
          << "\"" << part << "\" not in: " << e.what();
    }
  }
}

TEST(Creation, ZerosOnesFullEveryDTypeAndShape) {
  for (DType dtype : kAllDTypes) {
    for (const TShape& shape : TestShapes()) {
      SCOPED_TRACE(::testing::Message() << DTypeName(dtype) << " " << shape);
      NDArray z = nd::zeros(shape, Context::CPU(), dtype);
      NDArray o = nd::ones(shape, Context::CPU(), dtype);
      NDArray f = nd::full(shape, 5, Context::CPU(), dtype);
      NDArray t = nd::full(shape, 2.75, Context::CPU(), dtype);
      for (const NDArray& a : {z, o, f, t}) {
        EXPECT_EQ(a.shape(), shape);
        EXPECT_EQ(a.dtype(), dtype);
        EXPECT_EQ(a.ctx(), Context::CPU());
      }
      EXPECT_EQ(ToDouble(z), Filled(shape, 0));
      EXPECT_EQ(ToDouble(o), Filled(shape, 1));
      EXPECT_EQ(ToDouble(f), Filled(shape, Stored(5, dtype)));
      EXPECT_EQ(ToDouble(t), Filled(shape, Stored(2.75, dtype)));
    }
  }
}

TEST(Creation, FullConvertsLikeACast) {
  EXPECT_EQ(
      nd::full({3}, -2.5, Context::CPU(), DType::kInt8).ToVector<int8_t>(),
      (std::vector<int8_t>(3, -2)));
  EXPECT_EQ(
      nd::full({2}, -1, Context::CPU(), DType::kUInt8).ToVector<uint8_t>(),
      (std::vector<uint8_t>(2, 255)));
  EXPECT_EQ(nd::full({2}, 0.5, Context::CPU(), DType::kBool).ToVector<bool>(),
            (std::vector<bool>(2, true)));
  EXPECT_EQ(nd::full({2}, 0, Context::CPU(), DType::kBool).ToVector<bool>(),
            (std::vector<bool>(2, false)));
  EXPECT_EQ(
      nd::full({1}, 3e9, Context::CPU(), DType::kInt64).ToVector<int64_t>(),
      (std::vector<int64_t>{3000000000LL}));
}

TEST(Creation, OutputsLandOnTheRequestedContext) {
  const Context cpu1 = Context::CPU(1);
  NDArray z = nd::zeros({2}, cpu1);
  EXPECT_EQ(z.ctx(), cpu1);
  EXPECT_EQ(ToDouble(z), (std::vector<double>{0, 0}));
  NDArray f = nd::full({2, 2}, 7, cpu1, DType::kInt32);
  EXPECT_EQ(f.ctx(), cpu1);
  EXPECT_EQ(ToDouble(f), Filled({2, 2}, 7));
  NDArray r = nd::arange(3, std::nullopt, 1, cpu1);
  EXPECT_EQ(r.ctx(), cpu1);
  EXPECT_EQ(ToDouble(r), (std::vector<double>{0, 1, 2}));
  NDArray u = nd::random_uniform(0, 1, {4}, cpu1);
  EXPECT_EQ(u.ctx(), cpu1);
  // *_like ops follow their input.
  EXPECT_EQ(nd::ones_like(z).ctx(), cpu1);
}

TEST(Creation, DefaultsAndSymbolFileAttributes) {
  // No attributes: a float32 scalar.
  NDArray s = nd::Call("_zeros", {});
  EXPECT_EQ(s.shape(), TShape::Scalar());
  EXPECT_EQ(s.dtype(), DType::kFloat32);
  EXPECT_EQ(ToDouble(s), (std::vector<double>{0}));
  // A `ctx` attribute is accepted and ignored; dtypes may be integer flags.
  NDArray o = nd::Call(
      "_ones", {}, {{"shape", "[2, 3]"}, {"ctx", "cpu(0)"}, {"dtype", "6"}});
  EXPECT_EQ(o.shape(), TShape({2, 3}));
  EXPECT_EQ(o.dtype(), DType::kInt64);
  EXPECT_EQ(ToDouble(o), Filled({2, 3}, 1));
  NDArray f = nd::Call("_full", {},
                       {{"shape", "(2,)"}, {"value", "4"}, {"ctx", "cpu(0)"}});
  EXPECT_EQ(ToDouble(f), Filled({2}, 4));
  // _full needs a value; unknown attributes and bad dtypes are rejected.
  EXPECT_THROW(nd::Call("_full", {}, {{"shape", "(2,)"}}), InvalidArgument);
  ExpectThrowWith<InvalidArgument>(
      [] {
        nd::Call("_zeros", {}, {{"shape", "(2,)"}, {"fill", "1"}});
      },
      {"_zeros", "fill"});
  EXPECT_THROW(nd::Call("_zeros", {}, {{"dtype", "complex64"}}),
               InvalidArgument);
  ExpectThrowWith<ShapeError>(
      [] {
        nd::Call("_zeros", {}, {{"shape", "(2,-3)"}});
      },
      {"_zeros", "shape", "(2,-3)"});
  // Creation ops take no inputs.
  EXPECT_THROW(nd::Call("_zeros", {nd::zeros({1})}), InvalidArgument);
}

TEST(Creation, ZerosLikeAndOnesLike) {
  for (DType dtype : kAllDTypes) {
    for (const TShape& shape : TestShapes()) {
      SCOPED_TRACE(::testing::Message() << DTypeName(dtype) << " " << shape);
      NDArray x = RandomArray(shape, dtype, 0, 3);
      NDArray z = nd::zeros_like(x), o = nd::ones_like(x);
      EXPECT_EQ(z.shape(), shape);
      EXPECT_EQ(o.shape(), shape);
      EXPECT_EQ(z.dtype(), dtype);
      EXPECT_EQ(o.dtype(), dtype);
      EXPECT_EQ(ToDouble(z), Filled(shape, 0));
      EXPECT_EQ(ToDouble(o), Filled(shape, 1));
      EXPECT_FALSE(z.SharesChunkWith(x));
    }
  }
  // Into the input itself (allowed in place).
  NDArray x = ArrayOf({3}, {4, 5, 6});
  nd::CallInto("zeros_like", {x}, {}, x);
  EXPECT_EQ(ToDouble(x), Filled({3}, 0));
}

// Reference arange: value i is start + i*step while it stays before stop.
std::vector<double> ArangeRef(double start, double stop, double step,
                              int repeat = 1) {
  std::vector<double> out;
  for (int64_t i = 0;; ++i) {
    const double v = start + static_cast<double>(i) * step;
    if (step > 0 ? v >= stop : v <= stop) break;
    for (int r = 0; r < repeat; ++r) out.push_back(v);
  }
  return out;
}

TEST(Arange, ValuesMatchReference) {
  struct Case {
    double start, stop, step;
  };
  const std::vector<Case> cases = {
      {0, 5, 1},     {2, 8, 2},  {2, 9, 2},      {1, 2, 0.25},
      {5, 1, -1.5},  {-3, 3, 1}, {0, 1, 0.125},  {10, 0, -3},
      {0.5, 4, 0.5}, {3, 3, 1},  {-1, -1.5, -1}, {7, 8, 5},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(::testing::Message()
                 << c.start << " " << c.stop << " " << c.step);
    NDArray a =
        nd::arange(c.start, c.stop, c.step, Context::CPU(), DType::kFloat64);
    const std::vector<double> expected = ArangeRef(c.start, c.stop, c.step);
    EXPECT_EQ(a.shape(), TShape({static_cast<int64_t>(expected.size())}));
    EXPECT_TRUE(AllClose(ToDouble(a), expected, 0, 1e-12));
  }
  // One argument: [0, start).
  EXPECT_EQ(ToDouble(nd::arange(4)), ArangeRef(0, 4, 1));
  EXPECT_EQ(nd::arange(0).shape(), TShape({0}));
  // Length is ceil((stop - start) / step).
  EXPECT_EQ(nd::arange(0, 1, 0.3).shape(), TShape({4}));
}

TEST(Arange, EveryDType) {
  for (DType dtype : kAllDTypes) {
    SCOPED_TRACE(DTypeName(dtype));
    const double stop = dtype == DType::kBool ? 2 : 6;
    NDArray a = nd::arange(0, stop, 1, Context::CPU(), dtype);
    EXPECT_EQ(a.dtype(), dtype);
    EXPECT_EQ(ToDouble(a), ArangeRef(0, stop, 1));
  }
  // Fractional values truncate in integer dtypes.
  EXPECT_EQ(
      nd::arange(0, 2, 0.5, Context::CPU(), DType::kInt32).ToVector<int32_t>(),
      (std::vector<int32_t>{0, 0, 1, 1}));
}

TEST(Arange, Repeat) {
  NDArray a =
      nd::Call("_arange", {}, {{"start", "1"}, {"stop", "4"}, {"repeat", "3"}});
  EXPECT_EQ(a.shape(), TShape({9}));
  EXPECT_EQ(ToDouble(a), ArangeRef(1, 4, 1, 3));
  NDArray b = nd::Call("_arange", {},
                       {{"start", "0"},
                        {"stop", "-2"},
                        {"step", "-0.5"},
                        {"repeat", "2"},
                        {"dtype", "float64"},
                        {"ctx", "cpu(0)"}});
  EXPECT_EQ(ToDouble(b), ArangeRef(0, -2, -0.5, 2));
  EXPECT_THROW(nd::Call("_arange", {}, {{"start", "3"}, {"repeat", "0"}}),
               InvalidArgument);
}

// MXNet's arange_like: the input's shape (or its axis's length) and
// dtype; the values of the input are unused.
TEST(Arange, LikeTakesTheInputsShapeOrAxis) {
  const NDArray x = ArrayOf({2, 3}, {9, 9, 9, 9, 9, 9}, DType::kInt32);
  const NDArray a = nd::Call("_contrib_arange_like", {x});
  EXPECT_EQ(a.shape(), TShape({2, 3}));
  EXPECT_EQ(a.dtype(), DType::kInt32);
  EXPECT_EQ(ToDouble(a), (std::vector<double>{0, 1, 2, 3, 4, 5}));
  const NDArray b = nd::Call("_contrib_arange_like", {x},
                             {{"axis", "-1"}, {"start", "2"}, {"step", "0.5"}});
  EXPECT_EQ(b.shape(), TShape({3}));
  EXPECT_EQ(ToDouble(b), (std::vector<double>{2, 2, 3}));  // int32 truncates
  const NDArray c = nd::Call("_npx_arange_like", {ArrayOf({4}, {0, 0, 0, 0})},
                             {{"start", "1"}, {"step", "-1"}, {"repeat", "2"}});
  EXPECT_EQ(ToDouble(c), (std::vector<double>{1, 1, 0, 0}));
  EXPECT_THROW(nd::Call("_contrib_arange_like", {x}, {{"repeat", "0"}}),
               InvalidArgument);
  EXPECT_THROW(nd::Call("_contrib_arange_like", {x}, {{"axis", "2"}}),
               InvalidArgument);
}

TEST(Arange, BadArgumentsAreInvalidArgument) {
  ExpectThrowWith<InvalidArgument>([] { nd::arange(0, 5, 0); },
                                   {"_arange", "step"});
  ExpectThrowWith<InvalidArgument>([] { nd::arange(5, 1); },
                                   {"_arange", "negative length"});
  ExpectThrowWith<InvalidArgument>([] { nd::arange(1, 5, -1); },
                                   {"_arange", "negative length"});
  EXPECT_THROW(nd::arange(-2), InvalidArgument);
  EXPECT_THROW(nd::arange(0, INFINITY), InvalidArgument);
  EXPECT_THROW(nd::arange(0, NAN), InvalidArgument);
  EXPECT_THROW(nd::Call("_arange", {}, {{"stop", "3"}}), InvalidArgument);
  EXPECT_THROW(
      nd::Call("_arange", {}, {{"start", "3"}, {"infer_range", "True"}}),
      NotImplemented);
}

// ---- Random. ----

struct Moments {
  double mean, std, min, max;
};

Moments MomentsOf(const std::vector<double>& v) {
  Moments m{0, 0, INFINITY, -INFINITY};
  for (double x : v) {
    m.mean += x;
    m.min = std::min(m.min, x);
    m.max = std::max(m.max, x);
  }
  m.mean /= v.size();
  for (double x : v) m.std += (x - m.mean) * (x - m.mean);
  m.std = std::sqrt(m.std / v.size());
  return m;
}

TEST(Random, ShapeDTypeAndRange) {
  for (DType dtype : kFloatDTypes) {
    for (const TShape& shape : TestShapes()) {
      SCOPED_TRACE(::testing::Message() << DTypeName(dtype) << " " << shape);
      NDArray u = nd::random_uniform(-2, 3, shape, Context::CPU(), dtype);
      NDArray n = nd::random_normal(1, 2, shape, Context::CPU(), dtype);
      EXPECT_EQ(u.shape(), shape);
      EXPECT_EQ(n.shape(), shape);
      EXPECT_EQ(u.dtype(), dtype);
      EXPECT_EQ(n.dtype(), dtype);
      for (double x : ToDouble(u)) {
        EXPECT_GE(x, -2);
        EXPECT_LT(x, 3);
      }
      for (double x : ToDouble(n)) EXPECT_TRUE(std::isfinite(x));
    }
  }
}

TEST(Random, UniformMoments) {
  for (DType dtype : kFloatDTypes) {
    SCOPED_TRACE(DTypeName(dtype));
    const std::vector<double> v =
        ToDouble(nd::random_uniform(-2, 3, {100000}, Context::CPU(), dtype));
    const Moments m = MomentsOf(v);
    EXPECT_NEAR(m.mean, 0.5, 0.05);
    EXPECT_NEAR(m.std, 5 / std::sqrt(12.0), 0.03);
    EXPECT_GE(m.min, -2);
    EXPECT_LT(m.min, -1.99);
    EXPECT_LT(m.max, 3);
    EXPECT_GT(m.max, 2.99);
  }
}

TEST(Random, NormalMoments) {
  for (DType dtype : kFloatDTypes) {
    SCOPED_TRACE(DTypeName(dtype));
    const std::vector<double> v =
        ToDouble(nd::random_normal(1.5, 2, {100001}, Context::CPU(), dtype));
    const Moments m = MomentsOf(v);
    EXPECT_NEAR(m.mean, 1.5, 0.05);
    EXPECT_NEAR(m.std, 2, 0.04);
    // About 68% within one standard deviation.
    double inside = 0;
    for (double x : v) inside += std::fabs(x - 1.5) < 2;
    EXPECT_NEAR(inside / v.size(), 0.6827, 0.01);
  }
}

TEST(Random, DegenerateParameters) {
  EXPECT_EQ(ToDouble(nd::random_uniform(2, 2, {3})), Filled({3}, 2));
  EXPECT_EQ(ToDouble(nd::random_normal(-1, 0, {3})), Filled({3}, -1));
}

TEST(Random, SeedMakesResultsReproducible) {
  random::Seed(42);
  const std::vector<double> u1 = ToDouble(nd::random_uniform(0, 1, {64}));
  const std::vector<double> n1 = ToDouble(nd::random_normal(0, 1, {65}));
  random::Seed(42);
  const std::vector<double> u2 = ToDouble(nd::random_uniform(0, 1, {64}));
  const std::vector<double> n2 = ToDouble(nd::random_normal(0, 1, {65}));
  EXPECT_EQ(u1, u2);
  EXPECT_EQ(n1, n2);
  // Consecutive draws differ, as do draws after another seed.
  const std::vector<double> u3 = ToDouble(nd::random_uniform(0, 1, {64}));
  EXPECT_NE(u1, u3);
  random::Seed(43);
  EXPECT_NE(ToDouble(nd::random_uniform(0, 1, {64})), u1);
  // Pushed without waiting in between: still in push order.
  random::Seed(7);
  NDArray a = nd::random_uniform(0, 1, {32});
  NDArray b = nd::random_normal(0, 1, {32});
  random::Seed(7);
  NDArray c = nd::random_uniform(0, 1, {32});
  NDArray d = nd::random_normal(0, 1, {32});
  EXPECT_EQ(ToDouble(a), ToDouble(c));
  EXPECT_EQ(ToDouble(b), ToDouble(d));
}

TEST(Random, ContextsHaveTheirOwnStreams) {
  random::Seed(11);
  const std::vector<double> on0 = ToDouble(nd::random_uniform(0, 1, {16}));
  random::Seed(11);
  const std::vector<double> on1 =
      ToDouble(nd::random_uniform(0, 1, {16}, Context::CPU(1)));
  EXPECT_NE(on0, on1);
  random::Seed(5, Context::CPU(1));
  const std::vector<double> x =
      ToDouble(nd::random_uniform(0, 1, {16}, Context::CPU(1)));
  random::Seed(5, Context::CPU(1));
  EXPECT_EQ(ToDouble(nd::random_uniform(0, 1, {16}, Context::CPU(1))), x);
}

// MXNet's per-device seeding: one device seeded with n draws what any other
// device of its type seeded with n draws; a different n differs.
TEST(Random, DevicesOfOneTypeSeededAlikeDrawTheSame) {
  random::Seed(5, Context::CPU(0));
  random::Seed(5, Context::CPU(3));
  const std::vector<double> on0 = ToDouble(nd::random_normal(0, 1, {16}));
  const std::vector<double> on3 =
      ToDouble(nd::random_normal(0, 1, {16}, Context::CPU(3)));
  EXPECT_EQ(on0, on3);
  random::Seed(6, Context::CPU(3));
  EXPECT_NE(ToDouble(nd::random_normal(0, 1, {16}, Context::CPU(3))), on0);
}

TEST(Random, NonFloatDTypeIsDTypeError) {
  for (DType dtype : {DType::kInt32, DType::kUInt8, DType::kInt64, DType::kInt8,
                      DType::kBool}) {
    ExpectThrowWith<DTypeError>(
        [dtype] { nd::random_uniform(0, 1, {2}, Context::CPU(), dtype); },
        {"_random_uniform", DTypeName(dtype)});
    ExpectThrowWith<DTypeError>(
        [dtype] { nd::random_normal(0, 1, {2}, Context::CPU(), dtype); },
        {"_random_normal", DTypeName(dtype)});
  }
}

TEST(Random, BadParametersAreInvalidArgument) {
  ExpectThrowWith<InvalidArgument>([] { nd::random_uniform(2, 1, {2}); },
                                   {"_random_uniform", "low=2", "high=1"});
  ExpectThrowWith<InvalidArgument>([] { nd::random_normal(0, -1, {2}); },
                                   {"_random_normal", "scale=-1"});
  EXPECT_THROW(nd::random_uniform(0, INFINITY, {2}), InvalidArgument);
  EXPECT_THROW(nd::random_normal(NAN, 1, {2}), InvalidArgument);
}

TEST(Random, RequestsTheRandomResource) {
  for (const char* name : {"_random_uniform", "_random_normal"}) {
    const Op& op = OpRegistry::Get()->Lookup(name);
    const std::vector<ResourceRequest> res = op.Resources(MakeAttrs(op, {}));
    ASSERT_EQ(res.size(), 1u) << name;
    EXPECT_EQ(res[0].type, ResourceRequest::kRandom) << name;
  }
  // Defaults: a float32 scalar in [0, 1) / from N(0, 1).
  NDArray u = nd::Call("_random_uniform", {}, {{"ctx", "cpu(0)"}});
  EXPECT_EQ(u.shape(), TShape::Scalar());
  EXPECT_EQ(u.dtype(), DType::kFloat32);
  const double x = ToDouble(u)[0];
  EXPECT_TRUE(x >= 0 && x < 1);
}

}  // namespace
}  // namespace testing
}  // namespace mx
