#include "imperative/cached_op.h"

#include "base/error.h"
#include "gtest/gtest.h"
#include "imperative/nd.h"
#include "testing/op_test_util.h"

namespace mx {
namespace {

using testing::AllClose;
using testing::RandomArray;
using testing::ToDouble;

Symbol Net() {
  Symbol x = Symbol::Variable("x"), w = Symbol::Variable("w");
  Symbol m = Symbol::Create("broadcast_mul", {Symbol::Create("exp", {x}), w});
  return Symbol::Create(
      "relu", {Symbol::Create("_minus_scalar", {m}, {{"scalar", "1"}})});
}

NDArray Reference(const NDArray& x, const NDArray& w) {
  return nd::relu(nd::exp(x) * w - 1.0);
}

class CachedOpModes : public ::testing::TestWithParam<CachedOp::Options> {};

TEST_P(CachedOpModes, MatchesImperativeAndReplansOnNewShapes) {
  CachedOp op(Net(), GetParam());
  EXPECT_EQ(op.input_names(), (std::vector<std::string>{"x", "w"}));
  NDArray x = RandomArray({3, 4}, DType::kFloat32, -1, 1, 1);
  NDArray w = RandomArray({4}, DType::kFloat32, 0, 2, 2);
  std::vector<double> first = ToDouble(op.Forward({x, w})[0]);
  EXPECT_TRUE(AllClose(first, ToDouble(Reference(x, w))));
  NDArray x2 = RandomArray({3, 4}, DType::kFloat32, -1, 1, 3);
  EXPECT_TRUE(
      AllClose(ToDouble(op.Forward({x2, w})[0]), ToDouble(Reference(x2, w))));
  EXPECT_EQ(op.num_plans(), 1u);
  NDArray x3 = RandomArray({5, 4}, DType::kFloat32, -1, 1, 4);
  EXPECT_TRUE(
      AllClose(ToDouble(op.Forward({x3, w})[0]), ToDouble(Reference(x3, w))));
  EXPECT_EQ(op.num_plans(), 2u);
  NDArray xd = RandomArray({3, 4}, DType::kFloat64, -1, 1, 5);
  NDArray wd = RandomArray({4}, DType::kFloat64, 0, 2, 6);
  EXPECT_TRUE(
      AllClose(ToDouble(op.Forward({xd, wd})[0]), ToDouble(Reference(xd, wd))));
  EXPECT_EQ(op.num_plans(), 3u);
}

INSTANTIATE_TEST_SUITE_P(AllOptions, CachedOpModes,
                         ::testing::Values(CachedOp::Options{false, false},
                                           CachedOp::Options{true, false},
                                           CachedOp::Options{true, true}));

TEST(CachedOp, OutputsSurviveTheNextCallUnlessStaticShape) {
  NDArray w = RandomArray({2}, DType::kFloat32, 1, 2, 1);
  NDArray a = RandomArray({2}, DType::kFloat32, -1, 1, 2);
  NDArray b = RandomArray({2}, DType::kFloat32, -1, 1, 3);
  CachedOp fresh(Net(), {true, false});
  NDArray ya = fresh.Forward({a, w})[0];
  fresh.Forward({b, w});
  EXPECT_TRUE(AllClose(ToDouble(ya), ToDouble(Reference(a, w))));
  CachedOp reused(Net(), {true, true});
  NDArray za = reused.Forward({a, w})[0];
  NDArray zb = reused.Forward({b, w})[0];
  EXPECT_TRUE(za.SharesChunkWith(zb));
}

TEST(CachedOp, WrongInputCountNamesInputs) {
  CachedOp op(Net());
  try {
    op.Forward({RandomArray({2})});
    FAIL();
  } catch (const InvalidArgument& e) {
    EXPECT_STREQ(e.what(), "CachedOp::Forward: 1 inputs given for 2 (x, w)");
  }
  EXPECT_THROW(op.Forward({RandomArray({2}), RandomArray({3})}), ShapeError);
  EXPECT_EQ(op.num_plans(), 0u);
}

}  // namespace
}  // namespace mx
