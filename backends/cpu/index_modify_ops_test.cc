// npx.index_add / npx.index_update: one and several index axes, 0-d and
// 1-D ind, val broadcast along positions and tail axes, repeated
// positions (index_add sums them, index_update keeps the last), integer
// and float16 data, a random case against a loop over NumPy's semantics,
// and typed errors; npx.constraint_check.
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

NDArray Modify(const std::string& op, const NDArray& a, const NDArray& ind,
               const NDArray& val) {
  return imperative::Invoke(op, {a, ind, val}, {})[0];
}
NDArray Add(const NDArray& a, const NDArray& ind, const NDArray& val) {
  return Modify("_npx_index_add", a, ind, val);
}
NDArray Update(const NDArray& a, const NDArray& ind, const NDArray& val) {
  return Modify("_npx_index_update", a, ind, val);
}
NDArray Ind(const TShape& shape, const std::vector<double>& v,
            DType t = DType::kInt32) {
  return ArrayOf(shape, v, t);
}

TEST(IndexAdd, RowsOfOneAxisAddUpWhenRepeated) {
  const NDArray a = ArrayOf({3, 2}, {0, 1, 2, 3, 4, 5});
  const NDArray val = ArrayOf({3, 2}, {10, 20, 30, 40, 50, 60});
  // ind (3,) = K 1: rows 0, 2, 0.
  const NDArray y = Add(a, Ind({3}, {0, 2, 0}), val);
  EXPECT_EQ(y.shape(), TShape({3, 2}));
  EXPECT_EQ(ToDouble(y), (std::vector<double>{60, 81, 2, 3, 34, 45}));
  // val broadcast: one row for every position, a scalar.
  EXPECT_EQ(ToDouble(Add(a, Ind({2}, {1, 1}), ArrayOf({2}, {1, 2}))),
            (std::vector<double>{0, 1, 4, 7, 4, 5}));
  EXPECT_EQ(ToDouble(Add(a, Ind(TShape::Scalar(), {2}),
                         ArrayOf(TShape::Scalar(), {7}))),
            (std::vector<double>{0, 1, 2, 3, 11, 12}));
  // A per-position column (N, 1) broadcast along the tail.
  EXPECT_EQ(ToDouble(Add(a, Ind({1, 2}, {0, 2}, DType::kInt64),
                         ArrayOf({2, 1}, {1, 2}))),
            (std::vector<double>{1, 2, 2, 3, 6, 7}));
}

TEST(IndexAdd, SeveralIndexAxes) {
  // a (2, 3, 2); ind (2, N) picks (i, j) positions; tail of 2.
  const NDArray a = ArrayOf({2, 3, 2}, std::vector<double>(12, 0));
  const NDArray ind = Ind({2, 3}, {1, 0, 1, 2, 0, 2});  // (1,2) (0,0) (1,2)
  const NDArray y = Add(a, ind, ArrayOf({3, 2}, {1, 2, 3, 4, 5, 6}));
  EXPECT_EQ(ToDouble(y),
            (std::vector<double>{3, 4, 0, 0, 0, 0, 0, 0, 0, 0, 6, 8}));
  // Every axis indexed: single elements.
  const NDArray b = ArrayOf({2, 2}, {0, 0, 0, 0});
  EXPECT_EQ(ToDouble(Add(b, Ind({2, 2}, {0, 1, 1, 0}), ArrayOf({2}, {5, 6}))),
            (std::vector<double>{0, 5, 6, 0}));
}

TEST(IndexUpdate, LastOfRepeatedPositionsWins) {
  const NDArray a = ArrayOf({3, 2}, {0, 1, 2, 3, 4, 5});
  const NDArray val = ArrayOf({3, 2}, {10, 20, 30, 40, 50, 60});
  EXPECT_EQ(ToDouble(Update(a, Ind({3}, {0, 2, 0}), val)),
            (std::vector<double>{50, 60, 2, 3, 30, 40}));
  EXPECT_EQ(ToDouble(Update(a, Ind({1, 2}, {1, 0}), ArrayOf({1}, {9}))),
            (std::vector<double>{9, 9, 9, 9, 4, 5}));
  const NDArray b = ArrayOf({2, 2}, {1, 2, 3, 4});
  EXPECT_EQ(ToDouble(Update(b, Ind({2, 2}, {1, 1, 1, 1}, DType::kInt64),
                            ArrayOf({2}, {7, 8}))),
            (std::vector<double>{1, 2, 3, 8}));
}

TEST(IndexModify, IntegerAndFloat16Data) {
  for (DType t : {DType::kInt32, DType::kInt64, DType::kInt8, DType::kUInt8,
                  DType::kFloat16, DType::kFloat64}) {
    const NDArray a = ArrayOf({2, 3}, {1, 2, 3, 4, 5, 6}, t);
    const NDArray val = ArrayOf({3}, {1, 1, 2}, t);
    const NDArray y = Add(a, Ind({2}, {1, 1}), val);
    EXPECT_EQ(y.dtype(), t);
    EXPECT_EQ(ToDouble(y), (std::vector<double>{1, 2, 3, 6, 7, 10}))
        << DTypeName(t);
    EXPECT_EQ(ToDouble(Update(a, Ind({1}, {0}), val)),
              (std::vector<double>{1, 1, 2, 4, 5, 6}))
        << DTypeName(t);
  }
}

// NumPy's semantics as a loop: a[tuple(ind)] += val (np.add.at) and
// a[tuple(ind)] = val with the last write winning, for K = 2 index axes of
// a (4, 3, 5) and val (N, 1, 5) broadcast along a's axis 2... here a's
// tail is (5,) and val (N, 5) or (1, 5).
TEST(IndexModify, RandomCaseAgainstLoop) {
  const TShape as{4, 3, 5};
  const NDArray a = RandomArray(as, DType::kFloat64, -1, 1, 11);
  const int64_t n = 9;
  std::vector<double> ind(2 * n);
  for (int64_t i = 0; i < n; ++i) {
    ind[i] = (i * 7) % 4;          // axis 0, repeats
    ind[n + i] = (i * 5 + 1) % 3;  // axis 1
  }
  for (const TShape& vs : {TShape({n, 5}), TShape({1, 5}), TShape({5})}) {
    const NDArray val = RandomArray(vs, DType::kFloat64, -1, 1, 12);
    const std::vector<double> av = ToDouble(a), v = ToDouble(val);
    std::vector<double> add = av, upd = av;
    for (int64_t i = 0; i < n; ++i) {
      const int64_t row = static_cast<int64_t>(ind[i] * 3 + ind[n + i]);
      for (int64_t t = 0; t < 5; ++t) {
        const double x = v[(vs.ndim() == 2 && vs[0] == n ? i * 5 : 0) + t];
        add[row * 5 + t] += x;
        upd[row * 5 + t] = x;
      }
    }
    const NDArray ix = Ind({2, n}, ind, DType::kInt64);
    ExpectNear(Add(a, ix, val), ArrayOf(as, add, DType::kFloat64), 1e-12);
    ExpectNear(Update(a, ix, val), ArrayOf(as, upd, DType::kFloat64), 1e-12);
  }
}

TEST(IndexModify, BadInputsAreTypedErrors) {
  const NDArray a = RandomArray({3, 2});
  const NDArray val = RandomArray({2});
  for (const char* op : {"_npx_index_add", "_npx_index_update"}) {
    // Out of range, negative (MXNet 2 refuses both).
    ExpectError<InvalidArgument>(
        [&] { Modify(op, a, Ind({1}, {3}), val).WaitToRead(); },
        {op, "input 1 (ind)", "3", "axis 0"});
    ExpectError<InvalidArgument>(
        [&] { Modify(op, a, Ind({1}, {-1}), val).WaitToRead(); },
        {op, "-1", "[0, length)"});
    // Dtypes.
    EXPECT_THROW(Modify(op, a, ArrayOf({1}, {0}), val), DTypeError);
    EXPECT_THROW(Modify(op, a, Ind({1}, {0}), nd::cast(val, DType::kFloat64)),
                 DTypeError);
    EXPECT_THROW(Modify(op, nd::cast(a, DType::kBool), Ind({1}, {0}),
                        nd::cast(val, DType::kBool)),
                 DTypeError);
    // Shapes: val that does not broadcast, too many axes, too many index
    // axes, ind of rank 3, a 0-d a.
    ExpectError<InvalidArgument>(
        [&] {
          Modify(op, a, Ind({2}, {0, 1}), RandomArray({3, 2}));
        },
        {op, "val", "does not broadcast"});
    EXPECT_THROW(Modify(op, a, Ind({1}, {0}), RandomArray({1, 1, 2})),
                 ShapeError);
    EXPECT_THROW(Modify(op, a, Ind({3, 1}, {0, 0, 0}), val), ShapeError);
    EXPECT_THROW(Modify(op, a, Ind({1, 1, 1}, {0}), val), ShapeError);
    EXPECT_THROW(Modify(op, ArrayOf(TShape::Scalar(), {1}), Ind({1}, {0}),
                        ArrayOf(TShape::Scalar(), {1})),
                 ShapeError);
  }
}

TEST(ConstraintCheck, TrueOrTheMessage) {
  const NDArray ok = ArrayOf({2, 2}, {1, 1, 1, 1}, DType::kBool);
  const NDArray y =
      imperative::Invoke("_npx_constraint_check", {ok}, {{"msg", "m"}})[0];
  EXPECT_EQ(y.shape(), TShape::Scalar());
  EXPECT_EQ(y.dtype(), DType::kBool);
  EXPECT_EQ(ToDouble(y), (std::vector<double>{1}));
  const NDArray bad = ArrayOf({3}, {1, 0, 1}, DType::kBool);
  ExpectError<InvalidArgument>(
      [&] {
        imperative::Invoke("_npx_constraint_check", {bad},
                           {{"msg", "scale must be positive"}})[0]
            .WaitToRead();
      },
      {"_npx_constraint_check", "scale must be positive"});
  EXPECT_THROW(
      imperative::Invoke("_npx_constraint_check", {ArrayOf({1}, {1})}, {}),
      DTypeError);
  // An empty input holds nothing false.
  EXPECT_EQ(
      ToDouble(imperative::Invoke("_npx_constraint_check",
                                  {ArrayOf({0}, {}, DType::kBool)}, {})[0]),
      (std::vector<double>{1}));
}

}  // namespace
}  // namespace testing
}  // namespace mx
