// Ops of MXNet's transformer (BERT) models: LayerNorm, SequenceMask,
// broadcast_axis and _contrib_div_sqrt_dim. Forward against values
// computed here, numerical gradients, attribute errors.
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

TEST(LayerNorm, NormalizesAlongTheAxis) {
  const NDArray x = ArrayOf({2, 2}, {1, 3, 2, 6});
  const NDArray gamma = ArrayOf({2}, {1, 2}), beta = ArrayOf({2}, {0, 1});
  const std::vector<NDArray> out =
      nd::CallMulti("LayerNorm", {x, gamma, beta},
                    {{"eps", "0"}, {"output_mean_var", "True"}});
  ASSERT_EQ(out.size(), 3u);
  // Each row normalizes to (-1, 1); then * (1, 2) + (0, 1).
  EXPECT_TRUE(AllClose(ToDouble(out[0]), {-1, 3, -1, 3}, 1e-6));
  EXPECT_EQ(out[1].shape(), TShape({2, 1}));
  EXPECT_TRUE(AllClose(ToDouble(out[1]), {2, 4}, 1e-6));
  EXPECT_TRUE(AllClose(ToDouble(out[2]), {1, 2}, 1e-6));
}

TEST(LayerNorm, AxisOneOfThree) {
  const NDArray x = RandomArray({2, 3, 2}, DType::kFloat64, -1, 1, 1);
  const std::vector<double> v = ToDouble(x);
  const NDArray y = nd::Call("LayerNorm",
                             {x, ArrayOf({3}, {1, 1, 1}, DType::kFloat64),
                              ArrayOf({3}, {0, 0, 0}, DType::kFloat64)},
                             {{"axis", "1"}, {"eps", "1e-3"}});
  std::vector<double> want(v.size());
  for (int n = 0; n < 2; ++n) {
    for (int p = 0; p < 2; ++p) {
      double m = 0, var = 0;
      for (int c = 0; c < 3; ++c) m += v[(n * 3 + c) * 2 + p] / 3;
      for (int c = 0; c < 3; ++c)
        var += std::pow(v[(n * 3 + c) * 2 + p] - m, 2) / 3;
      for (int c = 0; c < 3; ++c) {
        want[(n * 3 + c) * 2 + p] =
            (v[(n * 3 + c) * 2 + p] - m) / std::sqrt(var + 1e-3);
      }
    }
  }
  EXPECT_TRUE(AllClose(ToDouble(y), want));
}

TEST(LayerNorm, GradientsOfDataGammaBeta) {
  for (const char* axis : {"-1", "0", "1"}) {
    EXPECT_TRUE(CheckGradient(
        "LayerNorm", {{"axis", axis}, {"eps", "0.01"}},
        {RandomArray({3, 4}, DType::kFloat64, -1, 1, 2),
         RandomArray({axis[0] == '0' ? 3 : 4}, DType::kFloat64, 0.5, 1.5, 3),
         RandomArray({axis[0] == '0' ? 3 : 4}, DType::kFloat64, -1, 1, 4)}))
        << axis;
  }
}

TEST(LayerNorm, BadAttributesAreTypedErrors) {
  const std::vector<NDArray> in = {RandomArray({2, 3}), RandomArray({3}),
                                   RandomArray({3})};
  ExpectError<ShapeError>(
      [&] {
        nd::Call("LayerNorm", in, {{"axis", "2"}});
      },
      {"LayerNorm"});
  ExpectError<InvalidArgument>(
      [&] {
        nd::Call("LayerNorm", in, {{"eps", "-1"}});
      },
      {"LayerNorm", "eps"});
  ExpectError<ShapeError>(
      [&] {
        nd::Call("LayerNorm", {in[0], RandomArray({2}), in[2]});
      },
      {"LayerNorm", "gamma"});
}

TEST(SequenceMask, MasksStepsPastEachLength) {
  const NDArray x = ArrayOf({3, 2}, {1, 2, 3, 4, 5, 6});  // (T, B)
  const NDArray len = ArrayOf({2}, {1, 3});
  EXPECT_TRUE(AllClose(
      ToDouble(nd::Call("SequenceMask", {x, len},
                        {{"use_sequence_length", "True"}, {"value", "-1"}})),
      {1, 2, -1, 4, -1, 6}));
  // axis=1: (B, T).
  EXPECT_TRUE(AllClose(
      ToDouble(nd::Call("SequenceMask",
                        {ArrayOf({2, 3}, {1, 2, 3, 4, 5, 6}), len},
                        {{"use_sequence_length", "True"}, {"axis", "1"}})),
      {1, 0, 0, 4, 5, 6}));
  EXPECT_TRUE(
      AllClose(ToDouble(nd::Call("SequenceMask", {x})), {1, 2, 3, 4, 5, 6}));
  // Lengths truncate to integers as in MXNet: 1.9 keeps one step, 2.5 two.
  EXPECT_TRUE(AllClose(
      ToDouble(nd::Call("SequenceMask", {x, ArrayOf({2}, {1.9, 2.5})},
                        {{"use_sequence_length", "True"}, {"value", "-1"}})),
      {1, 2, -1, 4, -1, -1}));
}

TEST(SequenceMask, GradientAndErrors) {
  const NDArray len = ArrayOf({2}, {1, 2}, DType::kFloat64);
  EXPECT_TRUE(CheckGradient("SequenceMask",
                            {{"use_sequence_length", "True"}, {"value", "7"}},
                            {RandomArray({3, 2, 2}, DType::kFloat64), len}, [] {
                              GradCheckOptions o;
                              o.skip = {1};
                              return o;
                            }()));
  ExpectError<InvalidArgument>(
      [&] {
        nd::Call("SequenceMask", {RandomArray({2, 2})}, {{"axis", "2"}});
      },
      {"SequenceMask", "axis"});
  ExpectError<ShapeError>(
      [&] {
        nd::Call("SequenceMask", {RandomArray({2, 3}), RandomArray({2})},
                 {{"use_sequence_length", "True"}});
      },
      {"SequenceMask", "sequence_length"});
}

TEST(BroadcastAxis, RepeatsUnitAxes) {
  const NDArray x = ArrayOf({1, 2, 1}, {1, 2});
  const NDArray y =
      nd::Call("broadcast_axis", {x}, {{"axis", "(0,2)"}, {"size", "(2,3)"}});
  EXPECT_EQ(y.shape(), TShape({2, 2, 3}));
  EXPECT_TRUE(AllClose(ToDouble(y), {1, 1, 1, 2, 2, 2, 1, 1, 1, 2, 2, 2}));
  EXPECT_TRUE(CheckGradient("broadcast_axes", {{"axis", "1"}, {"size", "4"}},
                            {RandomArray({2, 1, 3}, DType::kFloat64)}));
  ExpectError<ShapeError>(
      [&] {
        nd::Call("broadcast_axis", {x}, {{"axis", "1"}, {"size", "3"}});
      },
      {"broadcast_axis", "extent 1"});
  ExpectError<InvalidArgument>(
      [&] {
        nd::Call("broadcast_axis", {x}, {{"axis", "(0,2)"}, {"size", "3"}});
      },
      {"broadcast_axis", "size"});
}

TEST(DivSqrtDim, ScalesByTheLastAxis) {
  const NDArray x = ArrayOf({2, 4}, {4, 8, 2, 6, 1, 0, -2, 10});
  EXPECT_TRUE(AllClose(ToDouble(nd::Call("_contrib_div_sqrt_dim", {x})),
                       {2, 4, 1, 3, 0.5, 0, -1, 5}));
  EXPECT_TRUE(CheckGradient("_contrib_div_sqrt_dim", {},
                            {RandomArray({2, 3}, DType::kFloat64)}));
  ExpectError<InvalidArgument>(
      [&] {
        nd::Call("_contrib_div_sqrt_dim", {x}, {{"axis", "1"}});
      },
      {"_contrib_div_sqrt_dim", "axis"});
}

}  // namespace
}  // namespace testing
}  // namespace mx
