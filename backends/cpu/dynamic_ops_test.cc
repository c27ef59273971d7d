#include <random>
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

// Values in {0, 1, 2} (about a third zero) as `dtype`.
NDArray SparseInts(const TShape& shape, DType dtype, uint32_t seed) {
  std::mt19937 rng(seed);
  std::vector<double> v(static_cast<size_t>(shape.Size()));
  for (double& x : v) x = static_cast<double>(rng() % 3);
  return ArrayOf(shape, v, dtype);
}

// Reference: flat positions of non-zero values.
std::vector<int64_t> NonZeroRef(const std::vector<double>& v) {
  std::vector<int64_t> idx;
  for (size_t i = 0; i < v.size(); ++i) {
    if (v[i] != 0) idx.push_back(static_cast<int64_t>(i));
  }
  return idx;
}

// Reference: rows of `data` (shape `shape`) where mask[row] != 0.
std::vector<double> MaskRef(const std::vector<double>& data,
                            const TShape& shape,
                            const std::vector<double>& mask) {
  const int64_t row = shape.ProdDims(1, shape.ndim());
  std::vector<double> out;
  for (size_t r = 0; r < mask.size(); ++r) {
    if (mask[r] == 0) continue;
    for (int64_t j = 0; j < row; ++j) out.push_back(data[r * row + j]);
  }
  return out;
}

TEST(FlatNonzero, MatchesReference) {
  const std::vector<TShape> shapes = {TShape::Scalar(),  TShape({0}),
                                      TShape({9}),       TShape({3, 4}),
                                      TShape({2, 0, 5}), TShape({2, 3, 4})};
  for (DType dtype :
       {DType::kFloat32, DType::kFloat64, DType::kFloat16, DType::kUInt8,
        DType::kInt32, DType::kInt8, DType::kInt64}) {
    for (const TShape& shape : shapes) {
      SCOPED_TRACE(::testing::Message() << DTypeName(dtype) << " " << shape);
      NDArray x = SparseInts(shape, dtype, 3);
      NDArray y = nd::flatnonzero(x);
      EXPECT_EQ(y.dtype(), DType::kInt64);
      const std::vector<int64_t> expected = NonZeroRef(ToDouble(x));
      EXPECT_EQ(y.shape(), TShape({static_cast<int64_t>(expected.size())}));
      EXPECT_EQ(y.ToVector<int64_t>(), expected);
    }
  }
}

TEST(FlatNonzero, FixedCases) {
  NDArray f = ArrayOf({2, 3}, {0, 1.5, 0, -2, 0, 1e-30}, DType::kFloat64);
  EXPECT_EQ(nd::flatnonzero(f).ToVector<int64_t>(),
            (std::vector<int64_t>{1, 3, 5}));
  NDArray b = NDArray::FromVector<bool>({4}, {true, false, false, true});
  EXPECT_EQ(nd::flatnonzero(b).ToVector<int64_t>(),
            (std::vector<int64_t>{0, 3}));
  // All zero, all non-zero, scalars.
  NDArray zeros = nd::zeros({2, 5});
  EXPECT_EQ(nd::flatnonzero(zeros).shape(), TShape({0}));
  EXPECT_EQ(nd::flatnonzero(zeros).ToVector<int64_t>(), std::vector<int64_t>{});
  EXPECT_EQ(nd::flatnonzero(nd::ones({2, 3})).ToVector<int64_t>(),
            (std::vector<int64_t>{0, 1, 2, 3, 4, 5}));
  EXPECT_EQ(nd::flatnonzero(nd::full(TShape::Scalar(), 3)).ToVector<int64_t>(),
            (std::vector<int64_t>{0}));
  EXPECT_EQ(nd::flatnonzero(nd::zeros(TShape::Scalar())).shape(), TShape({0}));
}

// np.nonzero / np.argwhere: one row of C-order coordinates per non-zero
// element, (N, ndim) int64.
TEST(NpxNonzero, CoordinatesPerRow) {
  const NDArray x = ArrayOf({2, 3}, {0, 1.5, 0, -2, 0, 1e-30}, DType::kFloat64);
  NDArray y = nd::Call("_npx_nonzero", {x});
  EXPECT_EQ(y.shape(), TShape({3, 2}));
  EXPECT_EQ(y.dtype(), DType::kInt64);
  EXPECT_EQ(y.ToVector<int64_t>(), (std::vector<int64_t>{0, 1, 1, 0, 1, 2}));
  y = nd::Call("_npi_nonzero", {NDArray::FromVector<bool>(
                                   {2, 1, 2}, {false, true, true, false})});
  EXPECT_EQ(y.ToVector<int64_t>(), (std::vector<int64_t>{0, 0, 1, 1, 0, 0}));
  EXPECT_EQ(nd::Call("_npx_nonzero", {nd::zeros({4})}).shape(), TShape({0, 1}));
  // A 0-d input has no coordinates to give: (1, 0) or (0, 0).
  EXPECT_EQ(nd::Call("_npx_nonzero", {nd::full(TShape::Scalar(), 2)}).shape(),
            TShape({1, 0}));
  // The reference: flatnonzero's indices unravelled.
  const NDArray r = RandomArray({3, 4, 5}, DType::kFloat32, -1, 1, 9);
  const NDArray kept = nd::Call("_npx_nonzero", {nd::Call("relu", {r})});
  const std::vector<int64_t> flat =
      nd::flatnonzero(nd::Call("relu", {r})).ToVector<int64_t>();
  const std::vector<int64_t> got = kept.ToVector<int64_t>();
  ASSERT_EQ(got.size(), flat.size() * 3);
  for (size_t k = 0; k < flat.size(); ++k) {
    EXPECT_EQ(got[3 * k] * 20 + got[3 * k + 1] * 5 + got[3 * k + 2], flat[k]);
  }
}

TEST(FlatNonzero, InferenceGivesRankOneUnknownLengthInt64) {
  const Op& op = OpRegistry::Get()->Lookup("flatnonzero");
  EXPECT_TRUE(op.is_dynamic_shape());
  NodeAttrs attrs = MakeAttrs(op, {});
  std::vector<TShape> in{TShape({3, 4})}, out(1);
  op.infer_shape()(attrs, &in, &out);
  EXPECT_EQ(out[0], TShape::Filled(1, -1));
  EXPECT_FALSE(out[0].is_known());
  std::vector<DType> tin{DType::kFloat16}, tout{DType::kUnknown};
  op.infer_type()(attrs, &tin, &tout);
  EXPECT_EQ(tout[0], DType::kInt64);
}

TEST(FlatNonzero, OutputFeedsLaterOpsBeforeAnyWait) {
  NDArray x = ArrayOf({6}, {0, 4, 0, 0, 7, 1});
  NDArray idx = nd::flatnonzero(x * 2.0);
  // The next op reads the dynamic output's shape, which waits for it.
  NDArray shifted = idx + 10.0;
  EXPECT_EQ(shifted.shape(), TShape({3}));
  EXPECT_EQ(shifted.ToVector<int64_t>(), (std::vector<int64_t>{11, 14, 15}));
  NDArray picked = nd::boolean_mask(x, x > 0.5);
  EXPECT_EQ(ToDouble(nd::flatnonzero(picked - 4.0)),
            (std::vector<double>{1, 2}));
}

TEST(BooleanMask, MatchesReference) {
  struct Case {
    TShape data;
    DType dtype, index_dtype;
  };
  const std::vector<Case> cases = {
      {{6}, DType::kFloat32, DType::kBool},
      {{5, 3}, DType::kFloat64, DType::kInt32},
      {{4, 2, 3}, DType::kInt64, DType::kFloat32},
      {{7, 2}, DType::kFloat16, DType::kUInt8},
      {{3, 0}, DType::kInt8, DType::kInt64},
      {{0, 4}, DType::kFloat32, DType::kBool},
      {{8, 1}, DType::kBool, DType::kInt8},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(::testing::Message() << c.data << " " << DTypeName(c.dtype)
                                      << " " << DTypeName(c.index_dtype));
    NDArray data = RandomArray(c.data, c.dtype, -5, 5, 11);
    NDArray mask = SparseInts({c.data[0]}, c.index_dtype, 5);
    NDArray out = nd::boolean_mask(data, mask);
    const std::vector<double> m = ToDouble(mask);
    int64_t kept = 0;
    for (double v : m) kept += v != 0;
    TShape expected_shape = c.data;
    expected_shape[0] = kept;
    EXPECT_EQ(out.dtype(), c.dtype);
    EXPECT_EQ(out.shape(), expected_shape);
    EXPECT_EQ(ToDouble(out), MaskRef(ToDouble(data), c.data, m));
  }
}

TEST(BooleanMask, AllFalseAllTrueAndFixedRows) {
  NDArray data = ArrayOf({3, 2}, {1, 2, 3, 4, 5, 6});
  NDArray none =
      nd::boolean_mask(data, nd::zeros({3}, Context::CPU(), DType::kBool));
  EXPECT_EQ(none.shape(), TShape({0, 2}));
  EXPECT_EQ(ToDouble(none), std::vector<double>{});
  NDArray all = nd::boolean_mask(data, nd::ones({3}));
  EXPECT_EQ(all.shape(), TShape({3, 2}));
  EXPECT_EQ(ToDouble(all), ToDouble(data));
  EXPECT_FALSE(all.SharesChunkWith(data));
  NDArray rows = nd::boolean_mask(
      data, NDArray::FromVector<bool>({3}, {false, true, true}));
  EXPECT_EQ(ToDouble(rows), (std::vector<double>{3, 4, 5, 6}));
  // The contrib alias is the same op.
  NDArray alias = nd::Call("_contrib_boolean_mask",
                           {data, ArrayOf({3}, {2, 0, -1}, DType::kInt32)});
  EXPECT_EQ(ToDouble(alias), (std::vector<double>{1, 2, 5, 6}));
}

template <typename F>
std::string ShapeErrorOf(F f) {
  try {
    f();
  } catch (const ShapeError& e) {
    return e.what();
  }
  ADD_FAILURE() << "no ShapeError";
  return "";
}

TEST(BooleanMask, BadIndexShapesAreShapeErrorsAtInvoke) {
  NDArray data = nd::zeros({4, 2});
  const std::string msg =
      ShapeErrorOf([&] { nd::boolean_mask(data, nd::ones({3})); });
  for (const char* part : {"boolean_mask", "index", "(3,)", "(4,2)"}) {
    EXPECT_NE(msg.find(part), std::string::npos) << part << " in " << msg;
  }
  const std::string two_d = ShapeErrorOf([&] {
    nd::boolean_mask(data, nd::ones({4, 1}));
  });
  EXPECT_NE(two_d.find("1-D"), std::string::npos) << two_d;
  const std::string scalar = ShapeErrorOf(
      [&] { nd::boolean_mask(nd::ones(TShape::Scalar()), nd::ones({1})); });
  EXPECT_NE(scalar.find("data"), std::string::npos) << scalar;
  EXPECT_THROW(nd::Call("boolean_mask", {data, nd::ones({4})}, {{"axis", "1"}}),
               NotImplemented);
}

TEST(BooleanMask, InferenceKeepsTrailingDims) {
  const Op& op = OpRegistry::Get()->Lookup("boolean_mask");
  EXPECT_TRUE(op.is_dynamic_shape());
  NodeAttrs attrs = MakeAttrs(op, {});
  std::vector<TShape> in{TShape({5, 2, 3}), TShape()}, out(1);
  op.infer_shape()(attrs, &in, &out);
  EXPECT_EQ(out[0], TShape({-1, 2, 3}));
  EXPECT_EQ(in[1], TShape({5}));
  std::vector<DType> tin{DType::kFloat64, DType::kBool}, tout{DType::kUnknown};
  op.infer_type()(attrs, &tin, &tout);
  EXPECT_EQ(tout[0], DType::kFloat64);
}

// boolean_mask's gradient kernel: ograd's rows go to the kept rows of a
// data-shaped output, zeros elsewhere.
TEST(BackwardBooleanMask, ScattersRowsToKeptPositions) {
  const NDArray ograd = ArrayOf({2, 2}, {1, 2, 3, 4});
  const NDArray data = ArrayOf({4, 2}, std::vector<double>(8, 9.0));
  const NDArray index = ArrayOf({4}, {0, 1, 0, 1});
  const NDArray g =
      imperative::Invoke("_backward_boolean_mask", {ograd, data, index})[0];
  EXPECT_EQ(g.shape(), TShape({4, 2}));
  EXPECT_EQ(ToDouble(g), (std::vector<double>{0, 0, 1, 2, 0, 0, 3, 4}));
}

TEST(BackwardBooleanMask, RowCountMismatchIsAShapeError) {
  const NDArray ograd = ArrayOf({3, 2}, std::vector<double>(6, 1.0));
  const NDArray data = ArrayOf({4, 2}, std::vector<double>(8, 0.0));
  const NDArray index = ArrayOf({4}, {0, 1, 0, 1});
  const NDArray g =
      imperative::Invoke("_backward_boolean_mask", {ograd, data, index})[0];
  testing::ExpectError<ShapeError>(
      [&] { g.WaitToRead(); },
      {"_backward_boolean_mask", "(3,2)", "keeps 2 rows"});
}

// Found by //fuzz:op_attrs_fuzzer: rank-0 inputs reached TShape::operator[]
// out of range in the kernel. Now typed errors at Invoke.
TEST(BackwardBooleanMask, RanksAndIndexLengthAreChecked) {
  const NDArray scalar = ArrayOf(TShape::Scalar(), {1});
  testing::ExpectError<ShapeError>(
      [&] {
        imperative::Invoke("_backward_boolean_mask", {scalar, scalar, scalar});
      },
      {"_backward_boolean_mask", "data", "at least one dimension"});
  const NDArray data = ArrayOf({4, 2}, std::vector<double>(8, 0.0));
  testing::ExpectError<ShapeError>(
      [&] {
        imperative::Invoke(
            "_backward_boolean_mask",
            {ArrayOf({2}, {1, 2}), data, ArrayOf({4}, {0, 1, 0, 1})});
      },
      {"_backward_boolean_mask", "ograd", "rank"});
  testing::ExpectError<ShapeError>(
      [&] {
        imperative::Invoke(
            "_backward_boolean_mask",
            {ArrayOf({1, 2}, {1, 2}), data, ArrayOf({5}, {0, 1, 0, 0, 0})});
      },
      {"_backward_boolean_mask", "index", "data.shape[0] = 4"});
}

// MXNet 2's x[index] in Symbol graphs: integer indices take rows (negative
// ones from the end), a bool index keeps rows as boolean_mask.
TEST(AdvancedIndexing, IntegerRowsAndBoolMasks) {
  const NDArray data = ArrayOf({4, 2}, {0, 1, 2, 3, 4, 5, 6, 7});
  for (DType t : {DType::kInt32, DType::kInt64, DType::kInt8, DType::kUInt8}) {
    const NDArray idx = ArrayOf({2, 2}, {0, 3, 3, 1}, t);
    const NDArray y =
        imperative::Invoke("_npi_advanced_indexing", {data, idx})[0];
    EXPECT_EQ(y.shape(), TShape({2, 2, 2})) << DTypeName(t);
    EXPECT_EQ(ToDouble(y), (std::vector<double>{0, 1, 6, 7, 6, 7, 2, 3}));
  }
  const NDArray back =
      imperative::Invoke("_npi_advanced_indexing",
                         {data, ArrayOf({2}, {-1, -4}, DType::kInt64)})[0];
  EXPECT_EQ(ToDouble(back), (std::vector<double>{6, 7, 0, 1}));
  const NDArray scalar_index = imperative::Invoke(
      "_npi_advanced_indexing",
      {data, ArrayOf(TShape::Scalar(), {2}, DType::kInt32)})[0];
  EXPECT_EQ(scalar_index.shape(), TShape({2}));
  EXPECT_EQ(ToDouble(scalar_index), (std::vector<double>{4, 5}));
  const NDArray kept =
      imperative::Invoke("_npi_advanced_indexing",
                         {data, ArrayOf({4}, {1, 0, 0, 1}, DType::kBool)})[0];
  EXPECT_EQ(kept.shape(), TShape({2, 2}));
  EXPECT_EQ(ToDouble(kept), (std::vector<double>{0, 1, 6, 7}));
}

TEST(AdvancedIndexing, GradientAddsRowsBack) {
  // Row 1 picked twice: its gradient adds up.
  const NDArray data = ArrayOf({3, 2}, std::vector<double>(6, 9.0));
  const NDArray ograd = ArrayOf({3, 2}, {1, 2, 3, 4, 5, 6});
  const NDArray idx = ArrayOf({3}, {1, 2, 1}, DType::kInt32);
  EXPECT_EQ(ToDouble(imperative::Invoke("_backward_np_advanced_indexing",
                                        {ograd, data, idx})[0]),
            (std::vector<double>{0, 0, 6, 8, 3, 4}));
  const NDArray mask = ArrayOf({3}, {0, 1, 1}, DType::kBool);
  EXPECT_EQ(ToDouble(imperative::Invoke(
                "_backward_np_advanced_indexing",
                {ArrayOf({2, 2}, {1, 2, 3, 4}), data, mask})[0]),
            (std::vector<double>{0, 0, 1, 2, 3, 4}));
}

TEST(AdvancedIndexing, BadIndicesAreTypedErrors) {
  const NDArray data = ArrayOf({4, 2}, std::vector<double>(8, 0.0));
  const auto run = [&](const NDArray& idx) {
    imperative::Invoke("_npi_advanced_indexing", {data, idx})[0].WaitToRead();
  };
  ExpectError<InvalidArgument>(
      [&] {
        run(ArrayOf({2}, {1, 4}, DType::kInt32));
      },
      {"_npi_advanced_indexing", "holds 4", "axis 0"});
  ExpectError<InvalidArgument>([&] { run(ArrayOf({1}, {-5}, DType::kInt64)); },
                               {"_npi_advanced_indexing", "holds -5"});
  ExpectError<DTypeError>([&] { run(ArrayOf({1}, {1})); },
                          {"_npi_advanced_indexing", "integer or bool"});
  ExpectError<ShapeError>(
      [&] {
        run(ArrayOf({3}, {1, 0, 1}, DType::kBool));
      },
      {"_npi_advanced_indexing", "length of axis 0"});
  ExpectError<ShapeError>(
      [&] {
        imperative::Invoke(
            "_npi_advanced_indexing",
            {ArrayOf(TShape::Scalar(), {1}), ArrayOf({1}, {0}, DType::kInt32)});
      },
      {"_npi_advanced_indexing", "0-d"});
  ExpectError<ShapeError>(
      [&] {
        imperative::Invoke("_backward_np_advanced_indexing",
                           {ArrayOf({3, 2}, std::vector<double>(6, 1.0)), data,
                            ArrayOf({2}, {0, 1}, DType::kInt32)})[0]
            .WaitToRead();
      },
      {"_backward_np_advanced_indexing", "(3,2)", "pick (2,2)"});
}

}  // namespace
}  // namespace testing
}  // namespace mx
