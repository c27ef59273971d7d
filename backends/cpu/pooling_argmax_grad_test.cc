// Max pooling's recorded argmax (its hidden output 1) and the gradient
// that scatters through it, _backward_Pooling_max, against the gradient
// that searches every window again, _backward_Pooling.
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "base/error.h"
#include "graph/symbol.h"
#include "gtest/gtest.h"
#include "imperative/imperative.h"
#include "testing/cpu_reference.h"
#include "testing/op_test_util.h"

namespace mx {
namespace testing {
namespace {

// Pooling's outputs: (value, argmax) for max pooling.
std::vector<NDArray> Pool(const NDArray& x, const AttrDict& attrs) {
  return imperative::Invoke("Pooling", {x}, attrs);
}

struct PoolCase {
  TShape data;
  AttrDict attrs;
};

std::vector<PoolCase> Cases() {
  return {
      // Overlapping windows with padding, rounding down and up.
      {{2, 3, 7, 6},
       {{"kernel", "(3,3)"}, {"stride", "(2,2)"}, {"pad", "(1,1)"}}},
      {{1, 2, 6, 5},
       {{"kernel", "(3,2)"},
        {"stride", "(2,1)"},
        {"pad", "(1,0)"},
        {"pooling_convention", "full"}}},
      // The CNN's 2x2 / stride 2, odd sizes.
      {{3, 4, 9, 9}, {{"kernel", "(2,2)"}, {"stride", "(2,2)"}}},
      {{2, 2, 9}, {{"kernel", "(3)"}, {"stride", "(2)"}, {"pad", "(1)"}}},
      {{1, 2, 3, 4, 4},
       {{"kernel", "(2,2,2)"}, {"stride", "(1,2,2)"}, {"pad", "(0,1,0)"}}},
      {{2, 3, 4, 5}, {{"global_pool", "True"}}},
  };
}

TEST(MaxPoolArgmax, ScatterMatchesTheSearchingGradient) {
  for (const PoolCase& c : Cases()) {
    SCOPED_TRACE(c.data.ToString());
    AttrDict attrs = c.attrs;
    attrs["pool_type"] = "max";
    const NDArray x = RandomArray(c.data, DType::kFloat32, -1, 1, 4);
    const std::vector<NDArray> y = Pool(x, attrs);
    ASSERT_EQ(y.size(), 2u);
    EXPECT_EQ(y[1].dtype(), DType::kInt32);
    EXPECT_EQ(y[1].shape(), y[0].shape());
    const NDArray og = RandomArray(y[0].shape(), DType::kFloat32, -1, 1, 5);
    const NDArray scattered =
        imperative::Invoke("_backward_Pooling_max", {og, y[1], x}, attrs)[0];
    const NDArray searched =
        imperative::Invoke("_backward_Pooling", {og, x}, attrs)[0];
    // Both add the same values in the same (output) order.
    ExpectNear(scattered, searched, 0, 0);
    EXPECT_TRUE(
        AddToAccumulates("_backward_Pooling_max", attrs, {og, y[1], x}));
  }
}

TEST(MaxPoolArgmax, PositionsInThePlaneAndMinusOneInThePadding) {
  // One element padded by 1 on each side with a 1x1 window: only the
  // centre window sees data.
  const NDArray x = ArrayOf({1, 2, 1, 1}, {7, -3});
  const std::vector<NDArray> y =
      Pool(x, {{"kernel", "(1,1)"}, {"pad", "(1,1)"}});
  EXPECT_EQ(ToDouble(y[0]), std::vector<double>({0, 0, 0, 0, 7, 0, 0, 0, 0,  //
                                                 0, 0, 0, 0, -3, 0, 0, 0, 0}));
  EXPECT_EQ(ToDouble(y[1]),
            std::vector<double>({-1, -1, -1, -1, 0, -1, -1, -1, -1,  //
                                 -1, -1, -1, -1, 0, -1, -1, -1, -1}));
  const NDArray z = ArrayOf({1, 1, 2, 3}, {1, 5, 2, 5, 0, 9});
  const std::vector<NDArray> w =
      Pool(z, {{"kernel", "(2,2)"}, {"stride", "(1,1)"}});
  EXPECT_EQ(ToDouble(w[0]), std::vector<double>({5, 9}));
  EXPECT_EQ(ToDouble(w[1]), std::vector<double>({1, 5}));  // First maximum.
  // 2x2 / stride 2 (the vectorized column pairs): ties across rows and
  // columns, and NaNs, resolve to the first in row-major order.
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const NDArray t = ArrayOf({1, 1, 2, 8}, {1, 5, 4, 4, 0, 0, nan, 1,  //
                                           5, 0, 4, 4, nan, 0, 2, nan});
  const std::vector<NDArray> u =
      Pool(t, {{"kernel", "(2,2)"}, {"stride", "(2,2)"}});
  EXPECT_EQ(ToDouble(u[1]), std::vector<double>({1, 2, 12, 6}));
  EXPECT_EQ(ToDouble(u[0])[0], 5);
  EXPECT_TRUE(std::isnan(ToDouble(u[0])[2]));
}

TEST(MaxPoolArgmax, NaNPropagatesAndTakesTheGradient) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const NDArray x = ArrayOf({1, 1, 2, 2}, {1, nan, 3, nan});
  const AttrDict attrs = {{"kernel", "(2,2)"}};
  const std::vector<NDArray> y = Pool(x, attrs);
  EXPECT_TRUE(std::isnan(ToDouble(y[0])[0]));
  EXPECT_EQ(ToDouble(y[1]), std::vector<double>({1}));  // The first NaN.
  const NDArray og = ArrayOf({1, 1, 1, 1}, {2});
  for (const char* op : {"_backward_Pooling_max", "_backward_Pooling"}) {
    const std::vector<NDArray> in = std::string(op) == "_backward_Pooling"
                                        ? std::vector<NDArray>{og, x}
                                        : std::vector<NDArray>{og, y[1], x};
    EXPECT_EQ(ToDouble(imperative::Invoke(op, in, attrs)[0]),
              std::vector<double>({0, 2, 0, 0}))
        << op;
  }
}

TEST(MaxPoolArgmax, OnlyTheValueIsVisibleAndOtherTypesHaveNoArgmax) {
  const Symbol max_pool = Symbol::Create("Pooling", {Symbol::Variable("x")},
                                         {{"kernel", "(2,2)"}}, "pool");
  EXPECT_EQ(max_pool.outputs.size(), 1u);
  for (const char* type : {"avg", "sum"}) {
    EXPECT_EQ(Pool(RandomArray({1, 1, 4, 4}),
                   {{"kernel", "(2,2)"}, {"pool_type", type}})
                  .size(),
              1u)
        << type;
  }
}

TEST(MaxPoolArgmax, PositionsOutsideThePlaneAreTypedErrors) {
  const AttrDict attrs = {{"kernel", "(2,2)"}, {"stride", "(2,2)"}};
  const NDArray x = RandomArray({1, 2, 4, 4});
  const NDArray og = RandomArray({1, 2, 2, 2});
  for (double bad : {16.0, -2.0}) {
    std::vector<double> at(8, 0);
    at[5] = bad;
    const NDArray argmax = ArrayOf({1, 2, 2, 2}, at, DType::kInt32);
    ExpectError<InvalidArgument>(
        [&] {
          ToDouble(imperative::Invoke("_backward_Pooling_max", {og, argmax, x},
                                      attrs)[0]);
        },
        {"_backward_Pooling_max", "argmax", "16 elements"});
  }
  // A float argmax is a dtype error, not a reinterpretation.
  ExpectError<DTypeError>(
      [&] {
        imperative::Invoke("_backward_Pooling_max",
                           {og, RandomArray({1, 2, 2, 2}), x}, attrs);
      },
      {"_backward_Pooling_max", "argmax"});
}

}  // namespace
}  // namespace testing
}  // namespace mx
