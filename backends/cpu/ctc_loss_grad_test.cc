// CTCLoss against a brute-force sum over every frame alignment, closed
// forms, numerical gradients and MXNet's label and length conventions.
#include <cmath>
#include <vector>

#include "base/error.h"
#include "gtest/gtest.h"
#include "imperative/nd.h"
#include "testing/grad_check.h"
#include "testing/op_test_util.h"

namespace mx {
namespace testing {
namespace {

// -log of the summed probability of every path over the first `frames`
// frames of sequence b of x (T, N, C) that collapses to `labels` (blank
// `blank`), by enumerating all C^frames paths.
double BruteForceLoss(const std::vector<double>& x, int64_t n, int64_t classes,
                      int64_t b, int64_t frames,
                      const std::vector<int64_t>& labels, int64_t blank) {
  std::vector<std::vector<double>> prob(frames, std::vector<double>(classes));
  for (int64_t t = 0; t < frames; ++t) {
    double sum = 0;
    for (int64_t k = 0; k < classes; ++k) {
      sum += std::exp(x[(t * n + b) * classes + k]);
    }
    for (int64_t k = 0; k < classes; ++k) {
      prob[t][k] = std::exp(x[(t * n + b) * classes + k]) / sum;
    }
  }
  int64_t paths = 1;
  for (int64_t t = 0; t < frames; ++t) paths *= classes;
  double total = 0;
  for (int64_t code = 0; code < paths; ++code) {
    std::vector<int64_t> path(frames);
    int64_t c = code;
    double p = 1;
    for (int64_t t = 0; t < frames; ++t) {
      path[t] = c % classes;
      c /= classes;
      p *= prob[t][path[t]];
    }
    std::vector<int64_t> collapsed;
    for (int64_t t = 0; t < frames; ++t) {
      if (path[t] != blank && (t == 0 || path[t] != path[t - 1])) {
        collapsed.push_back(path[t]);
      }
    }
    if (collapsed == labels) total += p;
  }
  return -std::log(total);
}

TEST(CTCLoss, MatchesTheSumOverAllAlignments) {
  // T 5, N 3, C 3 (blank 0); labels (1, 2), (2, 2) (a repeat needs a blank
  // between) and (1) padded with 0.
  const NDArray x = RandomArray({5, 3, 3}, DType::kFloat64, -2, 2, 11);
  const NDArray label = ArrayOf({3, 2}, {1, 2, 2, 2, 1, 0});
  const std::vector<double> loss = ToDouble(nd::Call("ctc_loss", {x, label}));
  const std::vector<double> xs = ToDouble(x);
  ASSERT_EQ(loss.size(), 3u);
  EXPECT_NEAR(loss[0], BruteForceLoss(xs, 3, 3, 0, 5, {1, 2}, 0), 1e-12);
  EXPECT_NEAR(loss[1], BruteForceLoss(xs, 3, 3, 1, 5, {2, 2}, 0), 1e-12);
  EXPECT_NEAR(loss[2], BruteForceLoss(xs, 3, 3, 2, 5, {1}, 0), 1e-12);
}

TEST(CTCLoss, BlankLastPadsWithMinusOne) {
  // Blank = C - 1 = 2: labels 0 and 1; -1 pads.
  const NDArray x = RandomArray({4, 2, 3}, DType::kFloat64, -2, 2, 12);
  const NDArray label = ArrayOf({2, 3}, {0, 1, -1, 1, 1, 0});
  const std::vector<double> loss =
      ToDouble(nd::Call("CTCLoss", {x, label}, {{"blank_label", "last"}}));
  const std::vector<double> xs = ToDouble(x);
  EXPECT_NEAR(loss[0], BruteForceLoss(xs, 2, 3, 0, 4, {0, 1}, 2), 1e-12);
  EXPECT_NEAR(loss[1], BruteForceLoss(xs, 2, 3, 1, 4, {1, 1, 0}, 2), 1e-12);
}

TEST(CTCLoss, LengthInputsLimitFramesAndLabels) {
  const NDArray x = RandomArray({5, 2, 4}, DType::kFloat64, -2, 2, 13);
  // Label 0 is an ordinary class with explicit lengths (blank first stays
  // 0, so 0 cannot be a label: lengths cut before it).
  const NDArray label = ArrayOf({2, 3}, {3, 1, 2, 2, 3, 3});
  const NDArray data_lengths = ArrayOf({2}, {3, 5});
  const NDArray label_lengths = ArrayOf({2}, {2, 3});
  const std::vector<NDArray> out = nd::CallMulti(
      "CTCLoss", {x, label, data_lengths, label_lengths},
      {{"use_data_lengths", "True"}, {"use_label_lengths", "True"}});
  const std::vector<double> xs = ToDouble(x);
  const std::vector<double> loss = ToDouble(out[0]);
  EXPECT_NEAR(loss[0], BruteForceLoss(xs, 2, 4, 0, 3, {3, 1}, 0), 1e-12);
  EXPECT_NEAR(loss[1], BruteForceLoss(xs, 2, 4, 1, 5, {2, 3, 3}, 0), 1e-12);
}

TEST(CTCLoss, OneFrameIsASoftmaxCrossEntropy) {
  const NDArray x = ArrayOf({1, 1, 3}, {0.5, -1, 2});
  const NDArray loss = nd::Call("ctc_loss", {x, ArrayOf({1, 1}, {2})});
  const double lse = std::log(std::exp(0.5) + std::exp(-1) + std::exp(2));
  EXPECT_NEAR(ToDouble(loss)[0], lse - 2, 1e-6);
}

TEST(CTCLoss, ImpossibleAlignmentsAreInfiniteWithZeroGradient) {
  // Labels (1, 1) need 3 frames (1, blank, 1); 2 frames cannot emit them.
  const NDArray x = RandomArray({2, 1, 3}, DType::kFloat64, -1, 1, 14);
  const NDArray label = ArrayOf({1, 2}, {1, 1}, DType::kInt32);
  EXPECT_EQ(ToDouble(nd::Call("ctc_loss", {x, label}))[0], HUGE_VAL);
  const std::vector<std::vector<double>> g = Gradients(
      "CTCLoss", {}, {x, label}, {ArrayOf({1}, {1}, DType::kFloat64)});
  for (double v : g[0]) EXPECT_EQ(v, 0);
  // Three frames can, with probability y0(1) y1(0) y2(1).
  const NDArray x3 = RandomArray({3, 1, 3}, DType::kFloat64, -1, 1, 15);
  EXPECT_NEAR(ToDouble(nd::Call("ctc_loss", {x3, label}))[0],
              BruteForceLoss(ToDouble(x3), 1, 3, 0, 3, {1, 1}, 0), 1e-12);
}

TEST(CTCLoss, GradientMatchesCentralDifferences) {
  GradCheckOptions options;
  options.rtol = 1e-5;
  options.atol = 1e-7;
  EXPECT_TRUE(
      CheckGradient("CTCLoss", {},
                    {RandomArray({6, 2, 4}, DType::kFloat64, -2, 2, 16),
                     ArrayOf({2, 3}, {1, 3, 3, 2, 0, 0}, DType::kInt32)},
                    options));
  EXPECT_TRUE(CheckGradient(
      "CTCLoss", {{"use_data_lengths", "True"}, {"blank_label", "last"}},
      {RandomArray({5, 2, 3}, DType::kFloat64, -2, 2, 17),
       ArrayOf({2, 2}, {0, 1, 1, -1}, DType::kInt32),
       ArrayOf({2}, {4, 2}, DType::kInt32)},
      options));
}

TEST(CTCLoss, FloatDataMatchesDouble) {
  const NDArray x = RandomArray({6, 2, 5}, DType::kFloat64, -3, 3, 18);
  const NDArray label = ArrayOf({2, 2}, {4, 1, 2, 0});
  const std::vector<double> want = ToDouble(nd::Call("ctc_loss", {x, label}));
  const NDArray xf = ArrayOf({6, 2, 5}, ToDouble(x), DType::kFloat32);
  EXPECT_TRUE(
      AllClose(ToDouble(nd::Call("ctc_loss", {xf, label})), want, 1e-5, 1e-5));
}

TEST(CTCLoss, BadLabelsAndLengthsAreTypedErrors) {
  const NDArray x = RandomArray({4, 1, 3});
  ExpectError<InvalidArgument>(
      [&] {
        nd::Call("ctc_loss", {x, ArrayOf({1, 2}, {1, 3})}).WaitToRead();
      },
      {"CTCLoss", "label[0, 1] is 3"});
  // The blank (C - 1 = 2 with blank_label=last) is not a label.
  ExpectError<InvalidArgument>(
      [&] {
        nd::Call("ctc_loss", {x, ArrayOf({1, 2}, {2, 0})},
                 {{"blank_label", "last"}})
            .WaitToRead();
      },
      {"not the blank 2"});
  ExpectError<InvalidArgument>(
      [&] {
        nd::Call("ctc_loss", {x, ArrayOf({1, 1}, {1}), ArrayOf({1}, {5})},
                 {{"use_data_lengths", "True"}})
            .WaitToRead();
      },
      {"data_lengths[0] is 5"});
  ExpectError<ShapeError>(
      [&] {
        nd::Call("ctc_loss", {x, ArrayOf({1, 5}, {1, 1, 1, 1, 1})});
      },
      {"L <= T"});
  ExpectError<ShapeError>(
      [&] {
        nd::Call("ctc_loss", {x, ArrayOf({2, 1}, {1, 1})});
      },
      {"(N, L)"});
  ExpectError<InvalidArgument>(
      [&] {
        nd::Call("ctc_loss", {x, ArrayOf({1, 1}, {1})},
                 {{"blank_label", "middle"}});
      },
      {"blank_label"});
}

}  // namespace
}  // namespace testing
}  // namespace mx
