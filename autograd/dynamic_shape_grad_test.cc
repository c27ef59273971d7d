// Gradients through the dynamic-shape ops: boolean_mask scatters the head
// gradient back to the kept rows; flatnonzero's gradient is zero.
#include <cmath>
#include <functional>

#include "autograd/autograd.h"
#include "gtest/gtest.h"
#include "imperative/nd.h"
#include "testing/autograd_test_util.h"
#include "testing/op_test_util.h"

namespace mx {
namespace autograd {
namespace {

using testing::AllClose;
using testing::ArrayOf;
using testing::GradVariable;
using testing::RandomArray;
using testing::ToDouble;

// Central differences of the scalar f at x (float64), element by element.
std::vector<double> NumericalGradient(
    const std::function<double(const NDArray&)>& f, const NDArray& x) {
  const double eps = 1e-6;
  std::vector<double> v = ToDouble(x), grad;
  for (size_t i = 0; i < v.size(); ++i) {
    std::vector<double> plus = v, minus = v;
    plus[i] += eps;
    minus[i] -= eps;
    grad.push_back((f(ArrayOf(x.shape(), plus, DType::kFloat64)) -
                    f(ArrayOf(x.shape(), minus, DType::kFloat64))) /
                   (2 * eps));
  }
  return grad;
}

const std::vector<double> kMask = {1, 0, 1, 1};

// L = sum(h * boolean_mask(x * x, mask)) with h of the kept rows' shape.
NDArray Loss(const NDArray& x, const NDArray& h) {
  return nd::sum(h * nd::boolean_mask(x * x, ArrayOf({4}, kMask)));
}

TEST(DynamicShapeGrad, BooleanMaskScattersTheHeadGradientToKeptRows) {
  NDArray x = RandomArray({4, 3}, DType::kFloat64, -1, 1, 3);
  const NDArray h = RandomArray({3, 3}, DType::kFloat64, -1, 1, 4);
  AttachGrad(&x);
  NDArray loss;
  {
    RecordScope record;
    loss = Loss(x, h);
  }
  Backward({loss});
  // Analytic: row r gets 2 x[r] * h[k] where r is the k-th kept row, and
  // dropped rows get 0.
  const std::vector<double> xv = ToDouble(x), hv = ToDouble(h);
  std::vector<double> expected(12, 0.0);
  for (int r = 0, k = 0; r < 4; ++r) {
    if (kMask[r] == 0) continue;
    for (int j = 0; j < 3; ++j) {
      expected[r * 3 + j] = 2 * xv[r * 3 + j] * hv[k * 3 + j];
    }
    ++k;
  }
  EXPECT_TRUE(AllClose(ToDouble(x.grad()), expected, 1e-12, 1e-12));
  EXPECT_TRUE(AllClose(
      ToDouble(x.grad()),
      NumericalGradient(
          [&](const NDArray& p) { return ToDouble(Loss(p, h))[0]; }, x),
      1e-6, 1e-8));
}

TEST(DynamicShapeGrad, BooleanMaskSecondOrder) {
  // b = boolean_mask(x, m); g = d/dx sum(b^3) = 3x^2 on kept rows, and
  // d/dx sum(g) = 6x there, 0 elsewhere. g's head gradient 3b^2 depends on
  // x, so the second pass differentiates _backward_boolean_mask too.
  NDArray x = GradVariable({4, 1}, {0.5, -1, 2, 1.5});
  NDArray g, sum_g;
  {
    RecordScope record;
    NDArray b = nd::boolean_mask(x, ArrayOf({4}, kMask));
    NDArray y = nd::sum(b * b * b);
    GradOptions create;
    create.create_graph = true;
    g = Grad({y}, {x}, {}, create)[0];
    sum_g = nd::sum(g);
  }
  EXPECT_TRUE(AllClose(ToDouble(g), {0.75, 0, 12, 6.75}));
  Backward({sum_g});
  EXPECT_TRUE(AllClose(ToDouble(x.grad()), {3, 0, 12, 9}));
}

TEST(DynamicShapeGrad, FlatNonzeroHasAZeroGradient) {
  // z = sum(x) + sum(flatnonzero(x)): only the first term depends on x
  // continuously.
  NDArray x = GradVariable({2, 2}, {0, 3, -1, 0});
  NDArray idx, z;
  {
    RecordScope record;
    idx = nd::flatnonzero(x);
    z = nd::sum(x) + nd::sum(nd::cast(idx, DType::kFloat64));
  }
  EXPECT_EQ(idx.ToVector<int64_t>(), (std::vector<int64_t>{1, 2}));
  // Directly from the int64 output: zeros.
  BackwardOptions retain;
  retain.retain_graph = true;
  Backward({idx}, {}, retain);
  EXPECT_TRUE(AllClose(ToDouble(x.grad()), {0, 0, 0, 0}));
  Backward({z});
  EXPECT_TRUE(AllClose(ToDouble(x.grad()), {1, 1, 1, 1}));
}

}  // namespace
}  // namespace autograd
}  // namespace mx
