// Numerical checks of the elementwise gradients.
#include <cmath>
#include <vector>

#include "gtest/gtest.h"
#include "imperative/nd.h"
#include "testing/grad_check.h"
#include "testing/op_test_util.h"

namespace mx {
namespace testing {
namespace {

TEST(ElemwiseGradient, Unary) {
  for (const char* op : {"negative", "abs", "exp", "sin", "cos", "tanh",
                         "sigmoid", "relu", "erf", "square"}) {
    EXPECT_TRUE(CheckGradient(op, {}, {RandomArray({3, 4})})) << op;
  }
  // Positive domain.
  for (const char* op : {"log", "sqrt", "reciprocal"}) {
    EXPECT_TRUE(
        CheckGradient(op, {}, {RandomArray({5}, DType::kFloat32, 0.5, 2)}))
        << op;
  }
}

TEST(ElemwiseGradient, Binary) {
  for (const char* op :
       {"elemwise_add", "elemwise_sub", "elemwise_mul", "elemwise_div"}) {
    EXPECT_TRUE(
        CheckGradient(op, {},
                      {RandomArray({2, 3}, DType::kFloat32, 0.5, 2, 1),
                       RandomArray({2, 3}, DType::kFloat32, 0.5, 2, 2)}))
        << op;
  }
}

// relu's gradient is one op, ograd * sign(output), differentiable again:
// linear in ograd, zero in the output (y kept away from relu's kink).
TEST(ElemwiseGradient, BackwardReluIsOnePassMaskAndDifferentiable) {
  const double nan = std::nan("");
  const NDArray g = ArrayOf({5}, {1, 2, 3, 4, 5});
  const NDArray y = ArrayOf({5}, {0, 2, nan, 0.5, 0});
  const std::vector<double> got = ToDouble(nd::Call("_backward_relu", {g, y}));
  EXPECT_EQ(got[0], 0);
  EXPECT_EQ(got[1], 2);
  EXPECT_TRUE(std::isnan(got[2]));
  EXPECT_EQ(got[3], 4);
  EXPECT_EQ(got[4], 0);
  EXPECT_TRUE(CheckGradient("_backward_relu", {},
                            {RandomArray({3, 4}, DType::kFloat32, -1, 1, 1),
                             RandomArray({3, 4}, DType::kFloat32, 0.5, 2, 2)}));
}

TEST(ElemwiseGradient, Scalar) {
  for (const char* op :
       {"_plus_scalar", "_minus_scalar", "_rminus_scalar", "_mul_scalar",
        "_div_scalar", "_rdiv_scalar", "_power_scalar", "_rpower_scalar"}) {
    EXPECT_TRUE(CheckGradient(op, {{"scalar", "1.7"}},
                              {RandomArray({4}, DType::kFloat32, 0.5, 2)}))
        << op;
  }
}

// Constants the gradient graphs carry as attributes keep full precision
// (they were printed with 6 digits: _div_scalar by 3 scaled by 0.333333).
TEST(ElemwiseGradient, ScalarConstantsKeepFullPrecision) {
  const NDArray x = ArrayOf({2}, {1, 1000}, DType::kFloat64);
  const NDArray head = ArrayOf({2}, {1, 1}, DType::kFloat64);
  auto grad = [&](const char* op, const char* scalar) {
    return Gradients(op, {{"scalar", scalar}}, {x}, {head})[0];
  };
  EXPECT_TRUE(AllClose(grad("_div_scalar", "3"), {1.0 / 3, 1.0 / 3}, 1e-15, 0));
  const double third = 1.0 / 3;
  EXPECT_TRUE(AllClose(grad("_power_scalar", "0.3333333333333333"),
                       {third, third * std::pow(1000.0, third - 1)}, 1e-14, 0));
  EXPECT_TRUE(AllClose(Gradients("log10", {}, {x}, {head})[0],
                       {1 / std::log(10.0), 1 / (1000 * std::log(10.0))}, 1e-14,
                       0));
}

TEST(ElemwiseGradient, RoundingIsZero) {
  // Away from the jumps (integers, and halves for round and rint).
  for (const char* op : {"round", "rint", "fix", "trunc", "floor", "ceil"}) {
    EXPECT_TRUE(CheckGradient(
        op, {}, {ArrayOf({4}, {-1.7, -0.2, 0.3, 2.8}, DType::kFloat32)}))
        << op;
  }
}

TEST(ElemwiseGradient, LogicalIsZero) {
  const NDArray a = RandomArray({2, 3}),
                b = RandomArray({2, 3}, DType::kFloat32, -1, 1, 9);
  for (const char* op : {"broadcast_logical_and", "broadcast_logical_or",
                         "broadcast_logical_xor", "_logical_and", "_logical_or",
                         "_logical_xor"}) {
    EXPECT_TRUE(CheckGradient(op, {}, {a, b})) << op;
  }
  EXPECT_TRUE(CheckGradient("logical_not", {}, {a}));
  EXPECT_TRUE(CheckGradient("_logical_or_scalar", {{"scalar", "0"}}, {a}));
}

}  // namespace
}  // namespace testing
}  // namespace mx
