// SoftmaxOutput and SoftmaxActivation: forward against a softmax computed
// here, SoftmaxOutput's MXNet gradient (softmax - onehot(label), scaled,
// independent of the head gradient), SoftmaxActivation's numerical
// gradient, and attribute errors.
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

// Softmax of `classes` values `inner` apart in each block of x.
std::vector<double> SoftmaxRef(const std::vector<double>& x, int64_t classes,
                               int64_t inner) {
  std::vector<double> y(x.size());
  const int64_t blocks = static_cast<int64_t>(x.size()) / (classes * inner);
  for (int64_t b = 0; b < blocks; ++b) {
    for (int64_t i = 0; i < inner; ++i) {
      const int64_t base = b * classes * inner + i;
      double sum = 0;
      for (int64_t c = 0; c < classes; ++c)
        sum += std::exp(x[base + c * inner]);
      for (int64_t c = 0; c < classes; ++c) {
        y[base + c * inner] = std::exp(x[base + c * inner]) / sum;
      }
    }
  }
  return y;
}

TEST(SoftmaxOutput, ForwardIsSoftmaxOfEachRow) {
  const NDArray x = RandomArray({3, 5}, DType::kFloat32, -3, 3, 1);
  const NDArray label = ArrayOf({3}, {0, 4, 2});
  const NDArray y = nd::Call("SoftmaxOutput", {x, label});
  EXPECT_EQ(y.shape(), TShape({3, 5}));
  EXPECT_TRUE(AllClose(ToDouble(y), SoftmaxRef(ToDouble(x), 5, 1), 1e-5));
}

TEST(SoftmaxOutput, MultiOutputAndPreserveShapePickTheAxis) {
  const NDArray x = RandomArray({2, 3, 4}, DType::kFloat64, -3, 3, 2);
  const NDArray multi =
      nd::Call("SoftmaxOutput", {x, ArrayOf({2, 4}, std::vector<double>(8, 1))},
               {{"multi_output", "True"}});
  EXPECT_TRUE(AllClose(ToDouble(multi), SoftmaxRef(ToDouble(x), 3, 4)));
  const NDArray keep =
      nd::Call("SoftmaxOutput", {x, ArrayOf({2, 3}, std::vector<double>(6, 1))},
               {{"preserve_shape", "True"}});
  EXPECT_TRUE(AllClose(ToDouble(keep), SoftmaxRef(ToDouble(x), 4, 1)));
}

// (softmax - onehot) * scale / norm, rows with the ignored label zero.
std::vector<double> ExpectedGrad(const std::vector<double>& p,
                                 const std::vector<double>& label,
                                 int64_t classes, double scale,
                                 double ignore = -1e300) {
  std::vector<double> g(p.size());
  for (size_t r = 0; r < label.size(); ++r) {
    for (int64_t c = 0; c < classes; ++c) {
      const size_t i = r * classes + c;
      g[i] =
          label[r] == ignore
              ? 0
              : (p[i] - (c == static_cast<int64_t>(label[r]) ? 1 : 0)) * scale;
    }
  }
  return g;
}

TEST(SoftmaxOutput, GradientIsSoftmaxMinusOneHotWhateverTheHead) {
  const NDArray x = RandomArray({4, 3}, DType::kFloat64, -2, 2, 3);
  const std::vector<double> label{0, 2, 1, 2};
  const NDArray head = RandomArray({4, 3}, DType::kFloat64, -5, 5, 4);
  const std::vector<double> p = SoftmaxRef(ToDouble(x), 3, 1);
  const auto grads =
      Gradients("SoftmaxOutput", {{"grad_scale", "0.5"}},
                {x, ArrayOf({4}, label, DType::kFloat64)}, {head});
  EXPECT_TRUE(AllClose(grads[0], ExpectedGrad(p, label, 3, 0.5)));
}

TEST(SoftmaxOutput, NormalizationAndIgnoreLabel) {
  const NDArray x = RandomArray({4, 3}, DType::kFloat64, -2, 2, 5);
  const std::vector<double> label{0, 2, 1, 1};
  const NDArray lab = ArrayOf({4}, label, DType::kFloat64);
  const NDArray head = RandomArray({4, 3}, DType::kFloat64, -1, 1, 6);
  const std::vector<double> p = SoftmaxRef(ToDouble(x), 3, 1);
  // batch: divided by 4 rows.
  EXPECT_TRUE(AllClose(Gradients("SoftmaxOutput", {{"normalization", "batch"}},
                                 {x, lab}, {head})[0],
                       ExpectedGrad(p, label, 3, 0.25)));
  // valid: the two rows labelled 1 are ignored, so divided by 2.
  EXPECT_TRUE(AllClose(Gradients("SoftmaxOutput",
                                 {{"normalization", "valid"},
                                  {"use_ignore", "True"},
                                  {"ignore_label", "1"}},
                                 {x, lab}, {head})[0],
                       ExpectedGrad(p, label, 3, 0.5, 1)));
}

TEST(SoftmaxOutput, OutGradMultipliesByTheHead) {
  const NDArray x = RandomArray({2, 3}, DType::kFloat64, -2, 2, 7);
  const std::vector<double> label{1, 0};
  const NDArray head = RandomArray({2, 3}, DType::kFloat64, -1, 1, 8);
  std::vector<double> want =
      ExpectedGrad(SoftmaxRef(ToDouble(x), 3, 1), label, 3, 1);
  const std::vector<double> h = ToDouble(head);
  for (size_t i = 0; i < want.size(); ++i) want[i] *= h[i];
  EXPECT_TRUE(
      AllClose(Gradients("SoftmaxOutput", {{"out_grad", "True"}},
                         {x, ArrayOf({2}, label, DType::kFloat64)}, {head})[0],
               want));
}

TEST(SoftmaxOutput, SmoothAlphaSpreadsTheTarget) {
  const NDArray x = RandomArray({1, 3}, DType::kFloat64, -2, 2, 9);
  const std::vector<double> p = SoftmaxRef(ToDouble(x), 3, 1);
  const auto g = Gradients("SoftmaxOutput", {{"smooth_alpha", "0.2"}},
                           {x, ArrayOf({1}, {2}, DType::kFloat64)},
                           {RandomArray({1, 3}, DType::kFloat64)});
  EXPECT_TRUE(AllClose(g[0], {p[0] - 0.1, p[1] - 0.1, p[2] - 0.8}));
}

// (softmax - onehot) at each position of (n, classes, positions) data,
// times scale.
std::vector<double> MultiOutputGrad(const std::vector<double>& p,
                                    const std::vector<double>& label,
                                    int64_t classes, int64_t positions,
                                    double scale) {
  std::vector<double> g(p.size());
  for (size_t i = 0; i < p.size(); ++i) {
    const int64_t pos = static_cast<int64_t>(i) % positions;
    const int64_t c = (static_cast<int64_t>(i) / positions) % classes;
    const int64_t n = static_cast<int64_t>(i) / (positions * classes);
    const double t = label[n * positions + pos] == c ? 1 : 0;
    g[i] = (p[i] - t) * scale;
  }
  return g;
}

// MXNet's multi_output gradient: null divides by the positions per image,
// batch by all labels (images x positions), valid by the labels that are
// not ignore_label; smooth_alpha does not apply there.
TEST(SoftmaxOutput, MultiOutputGradientPerPositionAsMxnetScalesIt) {
  const NDArray x = RandomArray({2, 2, 3}, DType::kFloat64, -2, 2, 10);
  const std::vector<double> p = SoftmaxRef(ToDouble(x), 2, 3);
  const std::vector<double> label{0, 1, 1, 1, 0, 1};
  const NDArray lab = ArrayOf({2, 3}, label, DType::kFloat64);
  const NDArray head = RandomArray({2, 2, 3}, DType::kFloat64);
  auto grad = [&](AttrDict attrs) {
    attrs["multi_output"] = "True";
    return Gradients("SoftmaxOutput", attrs, {x, lab}, {head})[0];
  };
  EXPECT_TRUE(AllClose(grad({}), MultiOutputGrad(p, label, 2, 3, 1.0 / 3)));
  EXPECT_TRUE(AllClose(grad({{"normalization", "batch"}}),
                       MultiOutputGrad(p, label, 2, 3, 1.0 / 6)));
  // Two labels equal ignore_label 0: valid divides by 4 (and without
  // use_ignore their positions keep their gradient).
  EXPECT_TRUE(
      AllClose(grad({{"normalization", "valid"}, {"ignore_label", "0"}}),
               MultiOutputGrad(p, label, 2, 3, 1.0 / 4)));
  EXPECT_TRUE(AllClose(grad({{"smooth_alpha", "0.3"}, {"grad_scale", "2"}}),
                       MultiOutputGrad(p, label, 2, 3, 2.0 / 3)));
}

// valid counts the labels equal to ignore_label even without use_ignore,
// and labels match ignore_label as integers (2.5 is label 2), as in MXNet.
TEST(SoftmaxOutput, ValidCountsIgnoreLabelsAsIntegers) {
  const NDArray x = RandomArray({4, 3}, DType::kFloat64, -2, 2, 11);
  const std::vector<double> p = SoftmaxRef(ToDouble(x), 3, 1);
  const std::vector<double> label{0, 2.5, 1, 2};
  const NDArray lab = ArrayOf({4}, label, DType::kFloat64);
  const NDArray head = RandomArray({4, 3}, DType::kFloat64);
  EXPECT_TRUE(
      AllClose(Gradients("SoftmaxOutput",
                         {{"normalization", "valid"}, {"ignore_label", "2"}},
                         {x, lab}, {head})[0],
               ExpectedGrad(p, {0, 2, 1, 2}, 3, 0.5)));
  EXPECT_TRUE(AllClose(Gradients("SoftmaxOutput",
                                 {{"normalization", "valid"},
                                  {"use_ignore", "True"},
                                  {"ignore_label", "2"}},
                                 {x, lab}, {head})[0],
                       ExpectedGrad(p, {0, 2, 1, 2}, 3, 0.5, 2)));
}

TEST(SoftmaxOutput, LabelShapeIsInferred) {
  const NDArray x = RandomArray({2, 3});
  ExpectError<ShapeError>(
      [&] {
        nd::Call("SoftmaxOutput", {x, ArrayOf({3}, {0, 1, 2})});
      },
      {"SoftmaxOutput", "label"});
}

TEST(SoftmaxOutput, BadAttributesAreTypedErrors) {
  const NDArray x = RandomArray({2, 3});
  const NDArray label = ArrayOf({2}, {0, 1});
  ExpectError<InvalidArgument>(
      [&] {
        nd::Call("SoftmaxOutput", {x, label}, {{"normalization", "mean"}});
      },
      {"SoftmaxOutput", "normalization", "mean"});
  ExpectError<InvalidArgument>(
      [&] {
        nd::Call("SoftmaxOutput", {x, label}, {{"grad_scal", "1"}});
      },
      {"SoftmaxOutput", "grad_scal"});
}

TEST(SoftmaxOutput, LabelOutsideTheClassesIsAnErrorInBackward) {
  const NDArray x = RandomArray({2, 3}, DType::kFloat64);
  ExpectError<InvalidArgument>(
      [&] {
        Gradients("SoftmaxOutput", {},
                  {x, ArrayOf({2}, {0, 3}, DType::kFloat64)},
                  {RandomArray({2, 3}, DType::kFloat64)});
      },
      {"label", "3"});
}

TEST(SoftmaxActivation, InstanceAndChannelModes) {
  const NDArray x = RandomArray({2, 3, 2}, DType::kFloat64, -3, 3, 11);
  EXPECT_TRUE(AllClose(ToDouble(nd::Call("SoftmaxActivation", {x})),
                       SoftmaxRef(ToDouble(x), 6, 1)));
  EXPECT_TRUE(AllClose(
      ToDouble(nd::Call("SoftmaxActivation", {x}, {{"mode", "channel"}})),
      SoftmaxRef(ToDouble(x), 3, 2)));
}

TEST(SoftmaxActivation, Gradients) {
  for (const char* mode : {"instance", "channel"}) {
    EXPECT_TRUE(CheckGradient("SoftmaxActivation", {{"mode", mode}},
                              {RandomArray({2, 3, 2}, DType::kFloat64)}))
        << mode;
  }
  EXPECT_TRUE(CheckGradient("SoftmaxActivation", {},
                            {RandomArray({2, 4}, DType::kFloat64)}));
}

TEST(SoftmaxActivation, BadModeAndRank) {
  ExpectError<InvalidArgument>(
      [&] {
        nd::Call("SoftmaxActivation", {RandomArray({2, 3})},
                 {{"mode", "spatial"}});
      },
      {"SoftmaxActivation", "mode", "spatial"});
  ExpectError<ShapeError>(
      [&] {
        nd::Call("SoftmaxActivation", {RandomArray({2, 3})},
                 {{"mode", "channel"}});
      },
      {"SoftmaxActivation", "(2,3)"});
}

}  // namespace
}  // namespace testing
}  // namespace mx
