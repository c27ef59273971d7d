// NaN propagation (as NumPy and MXNet) through maximum, minimum, relu and
// sign, forward and gradient: a NaN input is never silently dropped.
#include <cmath>
#include <limits>
#include <vector>

#include "gtest/gtest.h"
#include "imperative/nd.h"
#include "testing/grad_check.h"
#include "testing/op_test_util.h"

namespace mx {
namespace testing {
namespace {

const double kNan = std::numeric_limits<double>::quiet_NaN();

// Elementwise equality where NaN equals NaN.
::testing::AssertionResult SameWithNan(const std::vector<double>& got,
                                       const std::vector<double>& want) {
  if (got.size() != want.size()) {
    return ::testing::AssertionFailure() << "sizes differ";
  }
  for (size_t i = 0; i < got.size(); ++i) {
    const bool ok =
        std::isnan(want[i]) ? std::isnan(got[i]) : got[i] == want[i];
    if (!ok) {
      return ::testing::AssertionFailure()
             << "element " << i << ": got " << got[i] << ", want " << want[i];
    }
  }
  return ::testing::AssertionSuccess();
}

TEST(NanPropagation, MaximumAndMinimumForward) {
  for (DType dt : {DType::kFloat32, DType::kFloat64, DType::kFloat16}) {
    const NDArray a = ArrayOf({4}, {kNan, 1, kNan, 3}, dt);
    const NDArray b = ArrayOf({4}, {2, kNan, kNan, 1}, dt);
    EXPECT_TRUE(SameWithNan(ToDouble(nd::maximum(a, b)), {kNan, kNan, kNan, 3}))
        << DTypeName(dt);
    EXPECT_TRUE(SameWithNan(ToDouble(nd::minimum(a, b)), {kNan, kNan, kNan, 1}))
        << DTypeName(dt);
    // Broadcast and scalar forms.
    EXPECT_TRUE(SameWithNan(
        ToDouble(nd::Call("broadcast_maximum", {a, ArrayOf({1}, {2}, dt)})),
        {kNan, 2, kNan, 3}));
    EXPECT_TRUE(SameWithNan(
        ToDouble(nd::Call("_maximum_scalar", {a}, {{"scalar", "2"}})),
        {kNan, 2, kNan, 3}));
    EXPECT_TRUE(SameWithNan(
        ToDouble(nd::Call("_minimum_scalar", {a}, {{"scalar", "2"}})),
        {kNan, 1, kNan, 2}));
  }
}

TEST(NanPropagation, ReluAndSignForward) {
  for (DType dt : {DType::kFloat32, DType::kFloat64, DType::kFloat16}) {
    const NDArray x = ArrayOf({4}, {kNan, -1, 0, 2}, dt);
    EXPECT_TRUE(SameWithNan(ToDouble(nd::relu(x)), {kNan, 0, 0, 2}));
    EXPECT_TRUE(SameWithNan(
        ToDouble(nd::Call("Activation", {x}, {{"act_type", "relu"}})),
        {kNan, 0, 0, 2}));
    EXPECT_TRUE(SameWithNan(ToDouble(nd::sign(x)), {kNan, -1, 0, 1}));
  }
}

TEST(NanPropagation, ReluAndAbsGradientsAreNanAtNan) {
  const NDArray x = ArrayOf({4}, {kNan, -1, 0.5, 2});
  const NDArray g = ArrayOf({4}, {1, 1, 1, 1});
  EXPECT_TRUE(SameWithNan(Gradients("relu", {}, {x}, {g})[0], {kNan, 0, 1, 1}));
  EXPECT_TRUE(
      SameWithNan(Gradients("Activation", {{"act_type", "relu"}}, {x}, {g})[0],
                  {kNan, 0, 1, 1}));
  EXPECT_TRUE(SameWithNan(Gradients("abs", {}, {x}, {g})[0], {kNan, -1, 1, 1}));
}

// The gradient goes to the input the NaN came from (a when both are).
TEST(NanPropagation, MaximumAndMinimumGradientFollowTheNan) {
  const NDArray a = ArrayOf({4}, {kNan, 1, kNan, 3});
  const NDArray b = ArrayOf({4}, {2, kNan, kNan, 1});
  const NDArray g = ArrayOf({4}, {10, 20, 30, 40});
  for (const char* op : {"broadcast_maximum", "broadcast_minimum"}) {
    const auto grads = Gradients(op, {}, {a, b}, {g});
    const bool max = std::string(op) == "broadcast_maximum";
    EXPECT_EQ(grads[0], (std::vector<double>{10, 0, 30, max ? 40.0 : 0.0}))
        << op;
    EXPECT_EQ(grads[1], (std::vector<double>{0, 20, 0, max ? 0.0 : 40.0}))
        << op;
  }
  for (const char* op : {"_maximum_scalar", "_minimum_scalar"}) {
    const auto grads = Gradients(op, {{"scalar", "2"}}, {a}, {g});
    const bool max = std::string(op) == "_maximum_scalar";
    EXPECT_EQ(grads[0],
              (std::vector<double>{10, max ? 0.0 : 20.0, 30, max ? 40.0 : 0.0}))
        << op;
  }
}

}  // namespace
}  // namespace testing
}  // namespace mx
