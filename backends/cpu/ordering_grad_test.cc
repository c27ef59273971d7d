// topk and sort (argsort's tests are in array_ops_grad_test.cc): values
// written out here (MXNet's documented examples among them), the order of
// ties and NaN, numerical gradients through the kept values, typed errors.
#include <cmath>
#include <string>
#include <vector>

#include "base/error.h"
#include "gtest/gtest.h"
#include "imperative/nd.h"
#include "testing/grad_check.h"
#include "testing/op_test_util.h"

namespace mx {
namespace testing {
namespace {

NDArray Example() { return ArrayOf({2, 3}, {0.3, 0.2, 0.4, 0.1, 0.3, 0.2}); }

// Equal values, NaN where NaN is expected.
::testing::AssertionResult SameOrBothNaN(const std::vector<double>& actual,
                                         const std::vector<double>& expected) {
  if (actual.size() != expected.size()) {
    return ::testing::AssertionFailure() << "sizes differ";
  }
  for (size_t i = 0; i < actual.size(); ++i) {
    const bool same = std::isnan(expected[i]) ? std::isnan(actual[i])
                                              : actual[i] == expected[i];
    if (!same) {
      return ::testing::AssertionFailure()
             << "at " << i << ": " << actual[i] << " vs " << expected[i];
    }
  }
  return ::testing::AssertionSuccess();
}

std::vector<double> TopK(const NDArray& x, AttrDict attrs) {
  return ToDouble(nd::Call("topk", {x}, std::move(attrs)));
}

// MXNet's documentation of topk, case by case.
TEST(TopK, MXNetExamples) {
  const NDArray x = Example();
  const NDArray first = nd::Call("topk", {x});
  EXPECT_EQ(first.shape(), TShape({2, 1}));
  EXPECT_EQ(first.dtype(), DType::kFloat32);
  EXPECT_TRUE(AllClose(ToDouble(first), {2, 1}));
  EXPECT_TRUE(AllClose(TopK(x, {{"ret_typ", "value"}, {"k", "2"}}),
                       {0.4, 0.3, 0.3, 0.2}));
  EXPECT_TRUE(
      AllClose(TopK(x, {{"ret_typ", "value"}, {"k", "2"}, {"is_ascend", "1"}}),
               {0.2, 0.3, 0.1, 0.2}));
  EXPECT_TRUE(
      AllClose(TopK(x, {{"axis", "0"}, {"ret_typ", "value"}, {"k", "2"}}),
               {0.3, 0.3, 0.4, 0.1, 0.2, 0.2}));
  const std::vector<NDArray> both =
      nd::CallMulti("topk", {x}, {{"ret_typ", "both"}, {"k", "2"}});
  ASSERT_EQ(both.size(), 2u);
  EXPECT_TRUE(AllClose(ToDouble(both[0]), {0.4, 0.3, 0.3, 0.2}));
  EXPECT_TRUE(AllClose(ToDouble(both[1]), {2, 0, 1, 2}));
  const NDArray mask = nd::Call("topk", {x}, {{"ret_typ", "mask"}, {"k", "2"}});
  EXPECT_EQ(mask.shape(), TShape({2, 3}));
  EXPECT_TRUE(AllClose(ToDouble(mask), {1, 0, 1, 0, 1, 1}));
}

// Ties keep their input order, NaN comes last in both directions, the
// flattened array when axis is None, k < 1 keeps the whole line.
TEST(TopK, TiesNaNFlattenedAndWholeLine) {
  const NDArray x = Example();
  const std::vector<NDArray> flat = nd::CallMulti(
      "topk", {x},
      {{"axis", "None"}, {"k", "3"}, {"ret_typ", "both"}, {"dtype", "int32"}});
  EXPECT_EQ(flat[0].shape(), TShape({3}));
  EXPECT_EQ(flat[1].dtype(), DType::kInt32);
  EXPECT_TRUE(AllClose(ToDouble(flat[0]), {0.4, 0.3, 0.3}));
  EXPECT_TRUE(AllClose(ToDouble(flat[1]), {2, 0, 4}));
  EXPECT_TRUE(
      AllClose(TopK(x, {{"axis", "None"}, {"k", "2"}, {"ret_typ", "mask"}}),
               {1, 0, 1, 0, 0, 0}));
  const NDArray nan = ArrayOf({4}, {1, NAN, 3, 1});
  EXPECT_TRUE(AllClose(TopK(nan, {{"k", "0"}}), {2, 0, 3, 1}));
  EXPECT_TRUE(
      AllClose(TopK(nan, {{"k", "-1"}, {"is_ascend", "True"}}), {0, 3, 2, 1}));
  const NDArray ints = ArrayOf({5}, {4, 9, 4, 0, 9}, DType::kInt32);
  const NDArray top =
      nd::Call("topk", {ints}, {{"k", "3"}, {"ret_typ", "value"}});
  EXPECT_EQ(top.dtype(), DType::kInt32);
  EXPECT_TRUE(AllClose(ToDouble(top), {9, 9, 4}));
  EXPECT_TRUE(
      AllClose(TopK(ints, {{"k", "3"}, {"dtype", "int64"}}), {1, 4, 0}));
}

// A long line takes the partial sort (k * 8 < len), a short k of it the
// same elements as the full sort's first k.
TEST(TopK, PartialSortAgreesWithFullSort) {
  const NDArray x = RandomArray({3, 200}, DType::kFloat32);
  const std::vector<double> all = TopK(x, {{"k", "0"}});
  const std::vector<double> few = TopK(x, {{"k", "5"}});
  for (int row = 0; row < 3; ++row) {
    for (int j = 0; j < 5; ++j) EXPECT_EQ(few[row * 5 + j], all[row * 200 + j]);
  }
}

TEST(Sort, AscendingDescendingAxesAndNaN) {
  const NDArray x = ArrayOf({2, 3}, {3, 1, 2, 0, 5, NAN});
  EXPECT_TRUE(
      SameOrBothNaN(ToDouble(nd::Call("sort", {x})), {1, 2, 3, 0, 5, NAN}));
  EXPECT_TRUE(
      SameOrBothNaN(ToDouble(nd::Call("sort", {x}, {{"is_ascend", "0"}})),
                    {3, 2, 1, 5, 0, NAN}));
  EXPECT_TRUE(SameOrBothNaN(ToDouble(nd::Call("sort", {x}, {{"axis", "0"}})),
                            {0, 1, 2, 3, 5, NAN}));
  const NDArray flat = nd::Call("sort", {x}, {{"axis", "None"}});
  EXPECT_EQ(flat.shape(), TShape({6}));
  EXPECT_TRUE(SameOrBothNaN(ToDouble(flat), {0, 1, 2, 3, 5, NAN}));
  // The hidden indices, int64.
  const std::vector<NDArray> all = nd::CallMulti("sort", {x});
  ASSERT_EQ(all.size(), 2u);
  EXPECT_EQ(all[1].dtype(), DType::kInt64);
  EXPECT_TRUE(AllClose(ToDouble(all[1]), {1, 2, 0, 0, 1, 2}));
}

TEST(TopK, GradientsGoWhereTheValuesCameFrom) {
  for (const AttrDict& attrs : std::vector<AttrDict>{
           {{"ret_typ", "value"}, {"k", "2"}},
           {{"ret_typ", "value"}, {"k", "3"}, {"axis", "0"}},
           {{"ret_typ", "both"}, {"k", "4"}, {"axis", "None"}},
           {{"ret_typ", "value"}, {"k", "0"}, {"axis", "1"}},
           {{"ret_typ", "indices"}, {"k", "2"}},
           {{"ret_typ", "mask"}, {"k", "2"}}}) {
    EXPECT_TRUE(CheckGradient("topk", attrs,
                              {RandomArray({3, 4, 2}, DType::kFloat64)}));
  }
  for (const AttrDict& attrs : std::vector<AttrDict>{
           {}, {{"axis", "0"}, {"is_ascend", "0"}}, {{"axis", "None"}}}) {
    EXPECT_TRUE(
        CheckGradient("sort", attrs, {RandomArray({3, 5}, DType::kFloat64)}));
  }
}

// An empty axis with lines around it (op_attrs_fuzzer's find: (0, 2)
// along axis 0 offset a null pointer).
TEST(Sort, EmptyAxisGivesEmptyOutputs) {
  const NDArray x = ArrayOf({0, 2}, {});
  EXPECT_EQ(nd::Call("sort", {x}, {{"axis", "0"}}).shape(), TShape({0, 2}));
  EXPECT_EQ(nd::Call("topk", {x}, {{"axis", "0"}, {"k", "0"}}).shape(),
            TShape({0, 2}));
  EXPECT_EQ(
      nd::Call("topk", {x}, {{"axis", "0"}, {"ret_typ", "mask"}, {"k", "0"}})
          .shape(),
      TShape({0, 2}));
}

TEST(TopK, TypedErrors) {
  const NDArray x = Example();
  ExpectError<InvalidArgument>(
      [&] {
        TopK(x, {{"k", "4"}});
      },
      {"topk", "k=4", "3"});
  ExpectError<InvalidArgument>(
      [&] {
        TopK(x, {{"ret_typ", "values"}});
      },
      {"topk", "ret_typ"});
  ExpectError<InvalidArgument>(
      [&] {
        TopK(x, {{"axis", "2"}});
      },
      {"topk", "axis"});
  ExpectError<DTypeError>(
      [&] {
        TopK(ArrayOf({2}, {1, 0}, DType::kBool), {});
      },
      {"topk"});
  // Indices a dtype cannot hold exactly are refused, not rounded.
  std::vector<double> line(2051, 1.0);
  ExpectError<InvalidArgument>(
      [&] {
        TopK(ArrayOf({2051}, line), {{"dtype", "float16"}});
      },
      {"topk", "float16", "2050"});
  // _backward_topk checks the indices it is given (a hand-written graph).
  const NDArray g = ArrayOf({2, 1}, {1, 1});
  ExpectError<InvalidArgument>(
      [&] {
        ToDouble(nd::Call("_backward_topk",
                          {g, ArrayOf({2, 1}, {0, 3}), Example()}));
      },
      {"_backward_topk", "index 3"});
  ExpectError<ShapeError>(
      [&] {
        nd::Call("_backward_topk",
                 {ArrayOf({2, 4}, std::vector<double>(8, 0)),
                  ArrayOf({2, 4}, std::vector<double>(8, 0)), Example()});
      },
      {"_backward_topk", "(2,4)"});
}

}  // namespace
}  // namespace testing
}  // namespace mx
