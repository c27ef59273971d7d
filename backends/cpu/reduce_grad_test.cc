// Numerical checks of the reductions' gradients (sum, mean, max, min,
// nansum, prod, nanprod, norm over several axis / keepdims / exclude
// combinations), of _broadcast_reduced_like, and of argmax/argmin (zero).
#include <limits>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "imperative/nd.h"
#include "testing/grad_check.h"
#include "testing/op_test_util.h"

namespace mx {
namespace testing {
namespace {

// Reduction attributes to check, on a (2, 3, 4) input.
const std::vector<AttrDict>& AxisVariants() {
  static const auto* variants = new std::vector<AttrDict>{
      {},
      {{"keepdims", "1"}},
      {{"axis", "1"}},
      {{"axis", "-1"}, {"keepdims", "True"}},
      {{"axis", "(0,2)"}},
      {{"axis", "(0,-1)"}, {"keepdims", "1"}},
      {{"axis", "1"}, {"exclude", "1"}},
      {{"axis", "(0,1)"}, {"exclude", "1"}, {"keepdims", "1"}},
      {{"axis", "()"}},
  };
  return *variants;
}

std::string Describe(const AttrDict& attrs) {
  std::string s;
  for (const auto& [k, v] : attrs) s += k + "=" + v + " ";
  return s;
}

TEST(ReduceGradient, SumAndMean) {
  for (const char* op : {"sum", "mean", "sum_axis"}) {
    for (const AttrDict& attrs : AxisVariants()) {
      EXPECT_TRUE(CheckGradient(op, attrs, {RandomArray({2, 3, 4})}))
          << op << " " << Describe(attrs);
    }
  }
}

TEST(ReduceGradient, MaxAndMin) {
  // Distinct values: the extremum is unique and the gradient defined.
  for (const char* op : {"max", "min"}) {
    for (const AttrDict& attrs : AxisVariants()) {
      EXPECT_TRUE(CheckGradient(op, attrs, {RandomArray({2, 3, 4})}))
          << op << " " << Describe(attrs);
    }
  }
}

// MXNet: g * (x == max), so every tied element gets the whole gradient.
TEST(ReduceGradient, MaxTiesEachGetTheGradient) {
  const NDArray x = ArrayOf({2, 3}, {1, 3, 3, 2, 2, 2});
  auto g = Gradients("max", {{"axis", "1"}}, {x}, {ArrayOf({2}, {1, 6})});
  EXPECT_EQ(g[0], (std::vector<double>{0, 1, 1, 6, 6, 6}));
  g = Gradients("min", {}, {x}, {ArrayOf(TShape::Scalar(), {4})});
  EXPECT_EQ(g[0], (std::vector<double>{4, 0, 0, 0, 0, 0}));
  g = Gradients("min", {{"axis", "1"}, {"keepdims", "1"}}, {x},
                {ArrayOf({2, 1}, {1, 6})});
  EXPECT_EQ(g[0], (std::vector<double>{1, 0, 0, 6, 6, 6}));
}

TEST(ReduceGradient, BroadcastReducedLike) {
  GradCheckOptions o;
  o.skip = {1};  // `like` lends its shape only.
  const NDArray like = RandomArray({2, 3, 4});
  EXPECT_TRUE(CheckGradient("_broadcast_reduced_like", {{"axis", "1"}},
                            {RandomArray({2, 4}), like}, o));
  EXPECT_TRUE(
      CheckGradient("_broadcast_reduced_like",
                    {{"axis", "(0,2)"}, {"keepdims", "1"}, {"normalize", "1"}},
                    {RandomArray({1, 3, 1}), like}, o));
  EXPECT_TRUE(
      CheckGradient("_broadcast_reduced_like",
                    {{"axis", "0"}, {"exclude", "1"}, {"normalize", "1"}},
                    {RandomArray({2}), like}, o));
  EXPECT_TRUE(CheckGradient("_broadcast_reduced_like", {},
                            {RandomArray(TShape::Scalar()), like}, o));
}

TEST(ReduceGradient, ArgmaxIsZero) {
  EXPECT_TRUE(CheckGradient("argmax", {{"axis", "1"}}, {RandomArray({2, 3})}));
  EXPECT_TRUE(CheckGradient("argmax", {}, {RandomArray({2, 3})}));
}

TEST(ReduceGradient, ArgminIsZero) {
  EXPECT_TRUE(CheckGradient("argmin", {{"axis", "0"}}, {RandomArray({2, 3})}));
}

TEST(ReduceGradient, NanSumProdAndNanProd) {
  for (const char* op : {"nansum", "prod", "nanprod"}) {
    for (const AttrDict& attrs : AxisVariants()) {
      // Away from 0, so the products are well conditioned.
      EXPECT_TRUE(CheckGradient(
          op, attrs, {RandomArray({2, 3, 4}, DType::kFloat32, 0.5, 1.5)}))
          << op << " " << Describe(attrs);
    }
  }
}

// The product of the others, also where inputs are 0 (PyTorch's answer;
// MXNet's g*y/x is 0/0 = NaN there). NaN elements of nanprod and nansum
// get 0.
TEST(ReduceGradient, ProdWithZerosAndNaN) {
  const NDArray x = ArrayOf({3, 3}, {2, 0, 5, 0, 3, 0, 2, 3, 4});
  auto g = Gradients("prod", {{"axis", "1"}}, {x}, {ArrayOf({3}, {1, 2, 3})});
  EXPECT_EQ(g[0], (std::vector<double>{0, 10, 0, 0, 0, 0, 36, 24, 18}));
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const NDArray y = ArrayOf({4}, {2, nan, 0, 3});
  g = Gradients("nanprod", {}, {y}, {ArrayOf(TShape::Scalar(), {2})});
  EXPECT_EQ(g[0], (std::vector<double>{0, 0, 12, 0}));
  g = Gradients("nansum", {}, {y}, {ArrayOf(TShape::Scalar(), {2})});
  EXPECT_EQ(g[0], (std::vector<double>{2, 0, 2, 2}));
}

TEST(ReduceGradient, Norm) {
  for (const char* ord : {"1", "2"}) {
    for (const AttrDict& axes :
         {AttrDict{}, AttrDict{{"axis", "1"}}, AttrDict{{"axis", "(0,2)"}},
          AttrDict{{"axis", "-1"}, {"keepdims", "1"}}}) {
      AttrDict attrs = axes;
      attrs["ord"] = ord;
      // |x| >= 0.2: sign(x) is constant under the finite differences.
      NDArray x = RandomArray({2, 3, 4}, DType::kFloat32, 0.2, 1.2);
      x = nd::Call("elemwise_mul", {x, nd::sign(RandomArray({2, 3, 4}))});
      EXPECT_TRUE(CheckGradient("norm", attrs, {x}))
          << "ord " << ord << " " << Describe(axes);
    }
  }
  // out_dtype: the head gradient (float64) comes back in the input's dtype.
  auto g = Gradients("norm", {{"out_dtype", "float64"}, {"axis", "0"}},
                     {ArrayOf({2, 2}, {3, -1, -4, 0}, DType::kFloat16)},
                     {ArrayOf({2}, {10, 1}, DType::kFloat64)});
  EXPECT_EQ(g[0], (std::vector<double>{6, -1, -8, 0}));
  // A zero norm has gradient 0 (not 0/0).
  g = Gradients("norm", {{"axis", "1"}}, {ArrayOf({2, 2}, {0, 0, 3, 4})},
                {ArrayOf({2}, {1, 10})});
  EXPECT_EQ(g[0], (std::vector<double>{0, 0, 6, 8}));
  // The gradient is a graph of ops: it differentiates again.
  CheckSecondOrder("norm", {{"axis", "1"}},
                   {RandomArray({2, 3}, DType::kFloat32, 0.5, 1)},
                   RandomArray({2}));
}

TEST(ReduceGradient, Moments) {
  for (const AttrDict& attrs :
       {AttrDict{}, AttrDict{{"axes", "(1,)"}},
        AttrDict{{"axes", "(0,2)"}, {"keepdims", "1"}}}) {
    EXPECT_TRUE(CheckGradient("moments", attrs, {RandomArray({2, 3, 4})}))
        << Describe(attrs);
  }
}

TEST(ReduceGradient, Cumsum) {
  for (const AttrDict& attrs :
       {AttrDict{}, AttrDict{{"axis", "1"}}, AttrDict{{"axis", "-3"}},
        AttrDict{{"axis", "2"}, {"dtype", "float64"}}}) {
    EXPECT_TRUE(CheckGradient("cumsum", attrs, {RandomArray({2, 3, 4})}))
        << Describe(attrs);
  }
  CheckSecondOrder("cumsum", {{"axis", "0"}}, {RandomArray({3, 2})},
                   RandomArray({3, 2}));
}

}  // namespace
}  // namespace testing
}  // namespace mx
