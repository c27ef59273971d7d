// First and second derivatives of the unary math family (tan ... degrees)
// against central differences.
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "testing/grad_check.h"
#include "testing/op_test_util.h"

namespace mx {
namespace testing {
namespace {

struct Domain {
  const char* op;
  double lo, hi;
};

// Intervals where each op is smooth (away from poles and branch points).
constexpr Domain kDomains[] = {
    {"tan", -1.2, 1.2},    {"sinh", -2, 2},       {"cosh", -2, 2},
    {"arcsin", -0.9, 0.9}, {"arccos", -0.9, 0.9}, {"arctan", -3, 3},
    {"arcsinh", -3, 3},    {"arccosh", 1.2, 4},   {"arctanh", -0.9, 0.9},
    {"log2", 0.3, 4},      {"log10", 0.3, 4},     {"expm1", -2, 2},
    {"log1p", -0.7, 3},    {"cbrt", 0.3, 4},      {"rsqrt", 0.3, 4},
    {"rcbrt", 0.3, 4},     {"radians", -5, 5},    {"degrees", -5, 5},
};

TEST(UnaryMathGradient, FirstOrder) {
  for (const Domain& d : kDomains) {
    EXPECT_TRUE(CheckGradient(
        d.op, {}, {RandomArray({3, 4}, DType::kFloat32, d.lo, d.hi, 11)}))
        << d.op;
  }
}

TEST(UnaryMathGradient, NegativeCbrt) {
  EXPECT_TRUE(CheckGradient("cbrt", {},
                            {RandomArray({5}, DType::kFloat32, -4, -0.3, 12)}));
}

// MXNet's test_higher_order_grad: the gradient graph is differentiable
// again, in x and in the head gradient.
TEST(UnaryMathGradient, SecondOrder) {
  for (const Domain& d : kDomains) {
    SCOPED_TRACE(d.op);
    CheckSecondOrder(d.op, {},
                     {RandomArray({2, 3}, DType::kFloat32, d.lo, d.hi, 13)},
                     RandomArray({2, 3}, DType::kFloat32, -1, 1, 14));
  }
}

// gamma, gammaln and digamma differentiate through digamma and polygamma,
// whose derivatives are polygamma again: every order works (MXNet's gamma
// and gammaln stop at the first).
TEST(UnaryMathGradient, SpecialFunctions) {
  EXPECT_TRUE(CheckGradient(
      "gamma", {}, {RandomArray({3, 4}, DType::kFloat32, 0.5, 4, 21)}));
  EXPECT_TRUE(CheckGradient(
      "gamma", {}, {RandomArray({4}, DType::kFloat32, -0.9, -0.1, 22)}));
  EXPECT_TRUE(CheckGradient(
      "gammaln", {}, {RandomArray({3, 4}, DType::kFloat32, 0.3, 6, 23)}));
  EXPECT_TRUE(CheckGradient(
      "erfinv", {}, {RandomArray({3, 4}, DType::kFloat32, -0.9, 0.9, 24)}));
  CheckSecondOrder("erfinv", {},
                   {RandomArray({2, 3}, DType::kFloat32, -0.8, 0.8, 25)},
                   RandomArray({2, 3}, DType::kFloat32, -1, 1, 26));
  EXPECT_TRUE(CheckGradient(
      "digamma", {}, {RandomArray({3, 4}, DType::kFloat32, 0.3, 6, 27)}));
  EXPECT_TRUE(
      CheckGradient("polygamma", {{"n", "2"}},
                    {RandomArray({3, 4}, DType::kFloat32, 0.5, 6, 28)}));
  for (const char* op : {"gamma", "gammaln"}) {
    CheckSecondOrder(op, {}, {RandomArray({2, 3}, DType::kFloat32, 0.5, 4, 29)},
                     RandomArray({2, 3}, DType::kFloat32, -1, 1, 30));
  }
}

}  // namespace
}  // namespace testing
}  // namespace mx
