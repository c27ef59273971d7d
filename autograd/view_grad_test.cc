// Gradients through views: NDArray::Reshape, Slice and At of recorded
// arrays and of marked variables, made while recording, are recorded as the
// ops they stand for. Expected gradients are analytic: for L = sum(w * f(x))
// with f linear, dL/dx is w placed (scaled) where f reads x.
#include <cstdint>
#include <functional>
#include <vector>

#include "autograd/autograd.h"
#include "base/error.h"
#include "gtest/gtest.h"
#include "imperative/nd.h"
#include "testing/op_test_util.h"

namespace mx {
namespace autograd {
namespace {

using testing::AllClose;
using testing::RandomArray;
using testing::ToDouble;

// Attaches a gradient to `x`, records L = sum(w * f(x)) for a fixed random
// `w` of f(x)'s shape and runs backward; returns dL/dx and sets `*w_out`.
std::vector<double> GradOfWeightedSum(
    NDArray x, const std::function<NDArray(const NDArray&)>& f,
    std::vector<double>* w_out) {
  AttachGrad(&x);
  NDArray loss;
  {
    RecordScope record;
    NDArray v = f(x);
    const NDArray w = RandomArray(v.shape(), DType::kFloat64, -1, 1, 11);
    *w_out = ToDouble(w);
    loss = nd::sum(v * w);
  }
  Backward({loss});
  return ToDouble(x.grad());
}

// Zeros of x's size with `scale * w` at flat positions [offset, offset + n).
std::vector<double> Placed(int64_t size, int64_t offset,
                           const std::vector<double>& w, double scale) {
  std::vector<double> g(static_cast<size_t>(size), 0.0);
  for (size_t k = 0; k < w.size(); ++k) g[offset + k] = scale * w[k];
  return g;
}

const std::vector<TShape>& Shapes() {
  static const auto* shapes =
      new std::vector<TShape>{{5}, {4, 3}, {3, 2, 4}, {3, 2, 2, 3}};
  return *shapes;
}

TEST(ViewGrad, ReshapeOfRecordedArrayReshapesTheGradientBack) {
  struct Case {
    TShape in, codes;
    bool reverse;
  };
  const std::vector<Case> cases = {
      {{3, 4}, {-1}, false},       {{3, 4}, {2, -1}, false},
      {{2, 3, 4}, {0, -1}, false}, {{2, 3, 4}, {0, -1}, true},
      {{2, 3, 4}, {-3, 0}, false}, {{2, 3, 4}, {-4, 1, 2, -2}, false},
      {{2, 3, 4}, {-2, 1}, false}, {{6}, {-4, 2, -1}, false},
  };
  for (const Case& c : cases) {
    NDArray x = RandomArray(c.in, DType::kFloat64);
    std::vector<double> w;
    const std::vector<double> g = GradOfWeightedSum(
        x,
        [&](const NDArray& x) { return (x * 3).Reshape(c.codes, c.reverse); },
        &w);
    EXPECT_TRUE(AllClose(g, Placed(x.size(), 0, w, 3.0)))
        << c.in << " to " << c.codes << " reverse " << c.reverse;
  }
}

TEST(ViewGrad, SliceOfRecordedArrayScattersTheGradientBack) {
  for (const TShape& s : Shapes()) {
    const int64_t rows = s[0], row = s.Size() / rows;
    for (const auto& range : std::vector<std::pair<int64_t, int64_t>>{
             {0, 1}, {1, 3}, {rows - 2, rows}, {0, rows}, {2, 2}}) {
      const int64_t b = range.first, e = range.second;  // Lambdas capture.
      std::vector<double> w;
      const std::vector<double> g = GradOfWeightedSum(
          RandomArray(s, DType::kFloat64),
          [&](const NDArray& x) { return (x + 10).Slice(b, e); }, &w);
      EXPECT_TRUE(AllClose(g, Placed(s.Size(), b * row, w, 1.0)))
          << s << " rows [" << b << ", " << e << ")";
    }
  }
}

TEST(ViewGrad, AtOfRecordedArrayScattersTheGradientBack) {
  for (const TShape& s : Shapes()) {
    const int64_t rows = s[0], row = s.Size() / rows;
    for (int64_t i : {int64_t{0}, int64_t{1}, rows - 1}) {
      std::vector<double> w;
      const std::vector<double> g = GradOfWeightedSum(
          RandomArray(s, DType::kFloat64),
          [&](const NDArray& x) { return (x * -2).At(i); }, &w);
      EXPECT_TRUE(AllClose(g, Placed(s.Size(), i * row, w, -2.0)))
          << s << " row " << i;
    }
  }
}

// Views taken directly of an AttachGrad'd array reach its buffer.
TEST(ViewGrad, ViewsOfMarkedVariablesReachTheirGradient) {
  struct Case {
    std::function<NDArray(const NDArray&)> view;
    int64_t offset;  // Flat position of the view's first element.
  };
  const std::vector<Case> cases = {
      {[](const NDArray& x) { return x.Slice(1, 3); }, 3},
      {[](const NDArray& x) { return x.At(3); }, 9},
      {[](const NDArray& x) { return x.Reshape({-1}); }, 0},
      {[](const NDArray& x) {
         return x.Reshape({0, -4, 3, 1}, true);
       },
       0},
  };
  for (size_t i = 0; i < cases.size(); ++i) {
    std::vector<double> w;
    const std::vector<double> g = GradOfWeightedSum(
        RandomArray({4, 3}, DType::kFloat64), cases[i].view, &w);
    EXPECT_TRUE(AllClose(g, Placed(12, cases[i].offset, w, 1.0))) << i;
  }
  // Two overlapping views of one variable: their gradients add up.
  NDArray x = RandomArray({4, 3}, DType::kFloat64);
  AttachGrad(&x);
  NDArray loss;
  {
    RecordScope record;
    loss = nd::sum(x.At(1)) + nd::sum(x.Slice(1, 3) * 2);
  }
  Backward({loss});
  EXPECT_TRUE(
      AllClose(ToDouble(x.grad()), {0, 0, 0, 3, 3, 3, 2, 2, 2, 0, 0, 0}));
}

TEST(ViewGrad, ChainedViewsComposeTheirGradients) {
  // x (4,3,2): Slice(1,4).At(2) is x[3]; its flat elements 2..4 are x's
  // flat positions 20..22.
  std::vector<double> w;
  const std::vector<double> g = GradOfWeightedSum(
      RandomArray({4, 3, 2}, DType::kFloat64),
      [](const NDArray& x) {
        return (x * 5).Slice(1, 4).At(2).Reshape({-1}).Slice(2, 5);
      },
      &w);
  EXPECT_TRUE(AllClose(g, Placed(24, 20, w, 5.0)));
  // Down to a scalar and back up.
  const std::vector<double> g2 = GradOfWeightedSum(
      RandomArray({3, 2}, DType::kFloat64),
      [](const NDArray& x) {
        return x.At(2).At(0).Reshape({1, 1});
      },
      &w);
  EXPECT_TRUE(AllClose(g2, Placed(6, 4, w, 1.0)));
}

// The reported case: a convolution's output sliced then shifted. For
// L = sum(conv(x, W)[1:3] + 10) with stride 1 and no padding,
// dL/dW[o,c,i,j] = sum over n in {1,2} and output positions (h,w) of
// x[n,c,h+i,w+j]; dL/db[o] = 2 * (output positions).
TEST(ViewGrad, SlicedConvolutionOutputGivesAnalyticWeightGradient) {
  const int64_t N = 4, C = 2, H = 5, W = 4, O = 3, K = 2;
  const int64_t OH = H - K + 1, OW = W - K + 1;
  NDArray x = RandomArray({N, C, H, W}, DType::kFloat64, -1, 1, 3);
  NDArray weight = RandomArray({O, C, K, K}, DType::kFloat64, -1, 1, 4);
  NDArray bias = RandomArray({O}, DType::kFloat64, -1, 1, 5);
  AttachGrad(&weight);
  AttachGrad(&bias);
  NDArray loss;
  {
    RecordScope record;
    NDArray y = nd::Convolution(x, weight, bias, {K, K}, O);
    loss = nd::sum(y.Slice(1, 3) + 10);
  }
  Backward({loss});
  const std::vector<double> xv = ToDouble(x);
  std::vector<double> dw(O * C * K * K, 0.0);
  for (int64_t o = 0; o < O; ++o)
    for (int64_t c = 0; c < C; ++c)
      for (int64_t i = 0; i < K; ++i)
        for (int64_t j = 0; j < K; ++j)
          for (int64_t n = 1; n < 3; ++n)
            for (int64_t h = 0; h < OH; ++h)
              for (int64_t v = 0; v < OW; ++v)
                dw[((o * C + c) * K + i) * K + j] +=
                    xv[((n * C + c) * H + h + i) * W + v + j];
  EXPECT_TRUE(AllClose(ToDouble(weight.grad()), dw));
  EXPECT_TRUE(
      AllClose(ToDouble(bias.grad()), std::vector<double>(O, 2.0 * OH * OW)));
}

// A reshaped array feeding dot: for L = sum(H * dot(V, B)) with
// V = (s * x).Reshape(6, 4): dL/dx = s H B^T (read back in x's shape),
// dL/dB = V^T H. s = 1 views the variable itself, s = 2 a recorded result.
TEST(ViewGrad, ReshapedViewFeedingDotGivesAnalyticGradients) {
  for (double scale : {1.0, 2.0}) {
    NDArray x = RandomArray({2, 3, 4}, DType::kFloat64, -1, 1, 6);
    NDArray b = RandomArray({4, 5}, DType::kFloat64, -1, 1, 7);
    NDArray h = RandomArray({6, 5}, DType::kFloat64, -1, 1, 8);
    AttachGrad(&x);
    AttachGrad(&b);
    NDArray loss;
    {
      RecordScope record;
      NDArray v = scale == 1.0 ? x : x * scale;
      loss = nd::sum(nd::dot(v.Reshape({-1, 4}), b) * h);
    }
    Backward({loss});
    const std::vector<double> xv = ToDouble(x), bv = ToDouble(b),
                              hv = ToDouble(h);
    std::vector<double> dx(24, 0.0), db(20, 0.0);
    for (int r = 0; r < 6; ++r)
      for (int k = 0; k < 4; ++k)
        for (int o = 0; o < 5; ++o) {
          dx[r * 4 + k] += scale * hv[r * 5 + o] * bv[k * 5 + o];
          db[k * 5 + o] += scale * xv[r * 4 + k] * hv[r * 5 + o];
        }
    EXPECT_TRUE(AllClose(ToDouble(x.grad()), dx)) << scale;
    EXPECT_TRUE(AllClose(ToDouble(b.grad()), db)) << scale;
  }
}

// A row of a recorded array feeding FullyConnected: V = (2x)[1] (3,4),
// Y = V Wt^T + bias; for L = sum(H * Y): dL/dx[1] = 2 H Wt, dL/dWt = H^T V,
// dL/dbias = column sums of H.
TEST(ViewGrad, RowViewFeedingFullyConnectedGivesAnalyticGradients) {
  NDArray x = RandomArray({2, 3, 4}, DType::kFloat64, -1, 1, 9);
  NDArray wt = RandomArray({5, 4}, DType::kFloat64, -1, 1, 10);
  NDArray bias = RandomArray({5}, DType::kFloat64, -1, 1, 12);
  NDArray h = RandomArray({3, 5}, DType::kFloat64, -1, 1, 13);
  AttachGrad(&x);
  AttachGrad(&wt);
  AttachGrad(&bias);
  NDArray loss;
  {
    RecordScope record;
    NDArray y = nd::FullyConnected((x * 2).At(1), wt, bias, 5);
    loss = nd::sum(y * h);
  }
  Backward({loss});
  const std::vector<double> xv = ToDouble(x), wv = ToDouble(wt),
                            hv = ToDouble(h);
  std::vector<double> dx(24, 0.0), dw(20, 0.0), dbias(5, 0.0);
  for (int r = 0; r < 3; ++r)
    for (int o = 0; o < 5; ++o) {
      dbias[o] += hv[r * 5 + o];
      for (int k = 0; k < 4; ++k) {
        dx[12 + r * 4 + k] += 2 * hv[r * 5 + o] * wv[o * 4 + k];
        dw[o * 4 + k] += hv[r * 5 + o] * 2 * xv[12 + r * 4 + k];
      }
    }
  EXPECT_TRUE(AllClose(ToDouble(x.grad()), dx));
  EXPECT_TRUE(AllClose(ToDouble(wt.grad()), dw));
  EXPECT_TRUE(AllClose(ToDouble(bias.grad()), dbias));
}

// The recorded view ops have gradients of their own: d²/dx² of
// sum(x.Reshape(-1).Slice(1, 3)³) is 6x on those elements, 0 elsewhere.
TEST(ViewGrad, SecondOrderThroughViews) {
  NDArray x = RandomArray({2, 2}, DType::kFloat64, -1, 1, 14);
  AttachGrad(&x);
  NDArray dx;
  {
    RecordScope record;
    NDArray v = x.Reshape({-1}).Slice(1, 3);
    GradOptions o;
    o.create_graph = true;
    dx = Grad({nd::sum(v * v * v)}, {x}, {}, o)[0];
    dx = nd::sum(dx);
  }
  Backward({dx});
  const std::vector<double> xv = ToDouble(x);
  EXPECT_TRUE(AllClose(ToDouble(x.grad()), {0, 6 * xv[1], 6 * xv[2], 0}));
}

// As in MXNet: a view made while not recording is a plain view with no
// history (a constant if a recorded op reads it), and costs nothing more.
TEST(ViewGrad, ViewsMadeWhileNotRecordingHaveNoHistory) {
  NDArray x = RandomArray({3, 2}, DType::kFloat64);
  AttachGrad(&x);
  EXPECT_TRUE(x.Reshape({-1}).autograd_entry().empty());
  EXPECT_TRUE(x.At(0).grad().is_none());
  NDArray y, paused_view;
  {
    RecordScope record;
    y = x * 2;
    EXPECT_FALSE(y.Slice(0, 1).autograd_entry().empty());
    PauseScope pause;
    paused_view = y.Slice(0, 1);
  }
  EXPECT_TRUE(paused_view.autograd_entry().empty());
  EXPECT_TRUE(y.At(1).autograd_entry().empty());
  EXPECT_THROW(Backward({paused_view}), StateError);
  // Views of arrays never recorded stay views of the same memory.
  NDArray plain = RandomArray({3, 2});
  EXPECT_TRUE(plain.At(1).SharesChunkWith(plain));
  {
    RecordScope record;
    EXPECT_TRUE(plain.Slice(1, 2).autograd_entry().empty());
  }
}

// A recorded view still shares memory with what it views.
TEST(ViewGrad, RecordedViewsShareMemory) {
  NDArray x = RandomArray({3, 2}, DType::kFloat64);
  AttachGrad(&x);
  RecordScope record;
  NDArray y = x * 1;
  EXPECT_TRUE(y.At(1).SharesChunkWith(y));
  EXPECT_TRUE(y.Slice(1, 3).Reshape({0, -1}, true).SharesChunkWith(y));
  const std::vector<double> xv = ToDouble(x);
  EXPECT_EQ(ToDouble(y.At(2)), std::vector<double>(xv.begin() + 4, xv.end()));
}

}  // namespace
}  // namespace autograd
}  // namespace mx
