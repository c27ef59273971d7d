// logical_not and MXNet's logical and/or/xor (broadcast_logical_*, _logical_*,
// _logical_*_scalar): 1/0 in the input dtype, NaN counts as true.
#include <cmath>
#include <vector>

#include "base/error.h"
#include "gtest/gtest.h"
#include "imperative/nd.h"
#include "testing/op_test_util.h"

namespace mx {
namespace testing {
namespace {

const std::vector<double> kA = {0, 1, -2, NAN, 0};
const std::vector<double> kB = {0, 0, 3, 0, NAN};

TEST(Logical, TruthTablesWithNanAsTrue) {
  const NDArray a = ArrayOf({5}, kA), b = ArrayOf({5}, kB);
  EXPECT_EQ(ToDouble(nd::logical_and(a, b)),
            (std::vector<double>{0, 0, 1, 0, 0}));
  EXPECT_EQ(ToDouble(nd::logical_or(a, b)),
            (std::vector<double>{0, 1, 1, 1, 1}));
  EXPECT_EQ(ToDouble(nd::logical_xor(a, b)),
            (std::vector<double>{0, 1, 0, 1, 1}));
  EXPECT_EQ(ToDouble(nd::logical_not(a)), (std::vector<double>{1, 0, 0, 0, 1}));
  // The elemwise forms under their MXNet names and aliases.
  EXPECT_EQ(ToDouble(nd::Call("_logical_and", {a, b})),
            ToDouble(nd::logical_and(a, b)));
  EXPECT_EQ(ToDouble(nd::Call("_Logical_Or", {a, b})),
            ToDouble(nd::logical_or(a, b)));
  EXPECT_EQ(ToDouble(nd::Call("_logical_xor", {a, b})),
            ToDouble(nd::logical_xor(a, b)));
}

TEST(Logical, KeepsTheDTypeAndBroadcasts) {
  for (DType dt :
       {DType::kInt32, DType::kFloat16, DType::kFloat64, DType::kUInt8}) {
    const NDArray a = ArrayOf({2, 1}, {0, 5}, dt);
    const NDArray b = ArrayOf({1, 3}, {0, 1, 2}, dt);
    const NDArray y = nd::logical_or(a, b);
    EXPECT_EQ(y.dtype(), dt);
    EXPECT_EQ(y.shape(), TShape({2, 3}));
    EXPECT_EQ(ToDouble(y), (std::vector<double>{0, 1, 1, 1, 1, 1}));
    EXPECT_EQ(nd::logical_not(a).dtype(), dt);
  }
}

TEST(Logical, ScalarForms) {
  const NDArray a = ArrayOf({5}, kA);
  EXPECT_EQ(ToDouble(nd::logical_and(a, 0.5)),
            (std::vector<double>{0, 1, 1, 1, 0}));
  EXPECT_EQ(ToDouble(nd::logical_or(a, 0)),
            (std::vector<double>{0, 1, 1, 1, 0}));
  EXPECT_EQ(ToDouble(nd::logical_xor(a, 1)),
            (std::vector<double>{1, 0, 0, 0, 1}));
  EXPECT_EQ(ToDouble(nd::Call("_LogicalAndScalar", {a}, {{"scalar", "0"}})),
            (std::vector<double>{0, 0, 0, 0, 0}));
}

TEST(Logical, ElemwiseFormNeedsEqualShapes) {
  ExpectError<ShapeError>(
      [] {
        nd::Call("_logical_and",
                 {ArrayOf({2}, {1, 0}), ArrayOf({3}, {1, 0, 1})});
      },
      {"_logical_and"});
}

}  // namespace
}  // namespace testing
}  // namespace mx
