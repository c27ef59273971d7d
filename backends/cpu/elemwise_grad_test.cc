// Numerical checks of the elementwise gradients.
#include "gtest/gtest.h"
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

TEST(ElemwiseGradient, Scalar) {
  for (const char* op :
       {"_plus_scalar", "_minus_scalar", "_rminus_scalar", "_mul_scalar",
        "_div_scalar", "_rdiv_scalar", "_power_scalar", "_rpower_scalar"}) {
    EXPECT_TRUE(CheckGradient(op, {{"scalar", "1.7"}},
                              {RandomArray({4}, DType::kFloat32, 0.5, 2)}))
        << op;
  }
}

}  // namespace
}  // namespace testing
}  // namespace mx
