// LeakyReLU act_type=prelu (learned per-channel slope gamma) and rrelu
// (random slope in training, the mean slope otherwise): forward against
// values computed here, gradients (numerical for prelu, the drawn slopes
// for rrelu), and attribute errors.
#include <algorithm>
#include <string>
#include <vector>

#include "base/error.h"
#include "graph/symbol.h"
#include "gtest/gtest.h"
#include "imperative/imperative.h"
#include "imperative/nd.h"
#include "testing/grad_check.h"
#include "testing/op_test_util.h"

namespace mx {
namespace testing {
namespace {

// Values away from 0, where the slope jumps.
NDArray AwayFromZero(const TShape& shape, uint32_t seed) {
  std::vector<double> v =
      ToDouble(RandomArray(shape, DType::kFloat64, 0.1, 2, seed));
  for (size_t i = 0; i < v.size(); i += 3) v[i] = -v[i];
  for (size_t i = 1; i < v.size(); i += 3) v[i] = -v[i];
  return ArrayOf(shape, v, DType::kFloat64);
}

TEST(PReLU, SlopePerChannel) {
  const NDArray x = RandomArray({2, 3, 2}, DType::kFloat32, -2, 2, 1);
  const NDArray gamma = ArrayOf({3}, {0.1, 0.5, 2});
  const NDArray y = nd::Call("LeakyReLU", {x, gamma}, {{"act_type", "prelu"}});
  const std::vector<double> xv = ToDouble(x);
  std::vector<double> want;
  for (size_t i = 0; i < xv.size(); ++i) {
    const double g = ToDouble(gamma)[(i / 2) % 3];
    want.push_back(xv[i] > 0 ? xv[i] : g * xv[i]);
  }
  EXPECT_TRUE(AllClose(ToDouble(y), want, 1e-6));
}

TEST(PReLU, OneSlopeForAllChannels) {
  const NDArray x = ArrayOf({1, 2}, {-2, 3});
  const NDArray y =
      nd::Call("LeakyReLU", {x, ArrayOf({1}, {0.3})}, {{"act_type", "prelu"}});
  EXPECT_TRUE(AllClose(ToDouble(y), {-0.6, 3}, 1e-6));
}

TEST(PReLU, GammaShapeIsInferredFromChannels) {
  const Symbol s = Symbol::Create("LeakyReLU", {Symbol::Variable("data")},
                                  {{"act_type", "prelu"}}, "p");
  EXPECT_EQ(s.ListArguments(), (std::vector<std::string>{"data", "p_gamma"}));
  ExpectError<ShapeError>(
      [&] {
        nd::Call("LeakyReLU", {RandomArray({2, 3}), RandomArray({2})},
                 {{"act_type", "prelu"}});
      },
      {"LeakyReLU", "gamma"});
}

TEST(PReLU, GradientsOfDataAndGamma) {
  EXPECT_TRUE(CheckGradient("LeakyReLU", {{"act_type", "prelu"}},
                            {AwayFromZero({2, 3, 4}, 2),
                             RandomArray({3}, DType::kFloat64, 0, 1, 3)}));
  EXPECT_TRUE(CheckGradient(
      "LeakyReLU", {{"act_type", "prelu"}},
      {AwayFromZero({4, 2}, 4), RandomArray({1}, DType::kFloat64, 0, 1, 5)}));
}

TEST(RReLU, InferenceUsesTheMeanSlope) {
  const NDArray x = ArrayOf({3}, {-2, 1, -4});
  const NDArray y = nd::Call(
      "LeakyReLU", {x},
      {{"act_type", "rrelu"}, {"lower_bound", "0.1"}, {"upper_bound", "0.3"}});
  EXPECT_TRUE(AllClose(ToDouble(y), {-0.4, 1, -0.8}, 1e-6));
}

TEST(RReLU, TrainingDrawsSlopesInTheBounds) {
  imperative::TrainingScope train(true);
  const NDArray x = RandomArray({1000}, DType::kFloat64, -2, -1, 6);
  const std::vector<NDArray> out = nd::CallMulti(
      "LeakyReLU", {x},
      {{"act_type", "rrelu"}, {"lower_bound", "0.2"}, {"upper_bound", "0.4"}});
  const std::vector<double> xv = ToDouble(x), yv = ToDouble(out[0]);
  double lo = 1, hi = 0;
  for (size_t i = 0; i < xv.size(); ++i) {
    const double slope = yv[i] / xv[i];
    lo = std::min(lo, slope);
    hi = std::max(hi, slope);
  }
  EXPECT_GE(lo, 0.2 - 1e-12);
  EXPECT_LE(hi, 0.4 + 1e-12);
  EXPECT_LT(lo, 0.22);  // The draws cover the range.
  EXPECT_GT(hi, 0.38);
}

TEST(RReLU, GradientIsTheSlopeUsed) {
  // Outside training the slope is the mean; checked numerically.
  EXPECT_TRUE(CheckGradient(
      "LeakyReLU",
      {{"act_type", "rrelu"}, {"lower_bound", "0.1"}, {"upper_bound", "0.5"}},
      {AwayFromZero({3, 4}, 7)}));
  // In training: the forward reseeds identically in every pass, so the
  // numerical gradient sees the same slopes.
  GradCheckOptions train;
  train.is_train = true;
  EXPECT_TRUE(CheckGradient(
      "LeakyReLU",
      {{"act_type", "rrelu"}, {"lower_bound", "0.1"}, {"upper_bound", "0.5"}},
      {AwayFromZero({3, 4}, 8)}, train));
}

TEST(RReLU, BadBoundsAreTypedErrors) {
  ExpectError<InvalidArgument>(
      [&] {
        nd::Call("LeakyReLU", {RandomArray({3})},
                 {{"act_type", "rrelu"},
                  {"lower_bound", "0.5"},
                  {"upper_bound", "0.1"}});
      },
      {"LeakyReLU", "lower_bound", "upper_bound"});
  ExpectError<InvalidArgument>(
      [&] {
        nd::Call("LeakyReLU", {RandomArray({3})}, {{"upper_bund", "0.1"}});
      },
      {"LeakyReLU", "upper_bund"});
}

}  // namespace
}  // namespace testing
}  // namespace mx
