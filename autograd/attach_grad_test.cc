// AttachGrad on recorded intermediates (MXNet 2: history kept, gradient
// retained) and DropGrad.
#include <cmath>

#include "autograd/autograd.h"
#include "base/error.h"
#include "gtest/gtest.h"
#include "imperative/nd.h"
#include "testing/autograd_test_util.h"
#include "testing/op_test_util.h"

namespace mx {
namespace autograd {
namespace {

using testing::AllClose;
using testing::ArrayOf;
using testing::ExpectError;
using testing::GradVariable;
using testing::ToDouble;

const std::vector<double> kX = {0.5, -1, 2};

std::vector<double> Each(double (*f)(double)) {
  std::vector<double> out;
  for (double x : kX) out.push_back(f(x));
  return out;
}

// x = kX with a gradient and, recorded, y = x^2 marked with a gradient and
// z = z_of(x, y).
struct SquareChain {
  NDArray x, y, z;
};
template <typename F>
SquareChain RecordSquare(F z_of) {
  SquareChain c;
  c.x = GradVariable({3}, kX);
  RecordScope record;
  c.y = nd::square(c.x);
  AttachGrad(&c.y);
  c.z = z_of(c.x, c.y);
  return c;
}

TEST(AttachGrad, IntermediateKeepsItsHistoryAndRetainsItsGradient) {
  // y = x^2 (marked), z = sum(y * y) = sum(x^4):
  // dz/dy = 2y = 2x^2, dz/dx = 4x^3.
  const SquareChain c = RecordSquare(
      [](const NDArray&, const NDArray& y) { return nd::sum(y * y); });
  Backward({c.z});
  EXPECT_TRUE(
      AllClose(ToDouble(c.y.grad()), Each([](double v) { return 2 * v * v; })));
  EXPECT_TRUE(AllClose(ToDouble(c.x.grad()),
                       Each([](double v) { return 4 * v * v * v; })));
}

TEST(AttachGrad, AttachedAfterUseCountsEveryConsumer) {
  // y = 3x is used before and after AttachGrad: z = sum(y) + sum(y * x).
  // dz/dy = 1 + x; dz/dx = 3 + 6x.
  NDArray x = GradVariable({3}, kX);
  NDArray y, z;
  {
    RecordScope record;
    y = x * 3.0;
    NDArray a = nd::sum(y);
    AttachGrad(&y);
    z = a + nd::sum(y * x);
  }
  Backward({z});
  EXPECT_TRUE(
      AllClose(ToDouble(y.grad()), Each([](double v) { return 1 + v; })));
  EXPECT_TRUE(
      AllClose(ToDouble(x.grad()), Each([](double v) { return 3 + 6 * v; })));
}

TEST(AttachGrad, MarkedHeadGetsItsHeadGradient) {
  NDArray x = GradVariable({3}, kX);
  NDArray y;
  {
    RecordScope record;
    y = nd::exp(x);
    AttachGrad(&y);
  }
  const NDArray head = ArrayOf({3}, {1, 2, 3}, DType::kFloat64);
  Backward({y}, {head});
  EXPECT_TRUE(AllClose(ToDouble(y.grad()), {1, 2, 3}));
  EXPECT_TRUE(AllClose(ToDouble(x.grad()),
                       {std::exp(0.5), 2 * std::exp(-1.0), 3 * std::exp(2.0)}));
}

TEST(AttachGrad, IntermediateWithoutAMarkedLeafStillGetsItsGradient) {
  // Only a constant feeds y (probe's gradient is dropped after use), so y
  // is the only array with a gradient: dz/dy = cos(y).
  const NDArray c = ArrayOf({3}, kX, DType::kFloat64);
  NDArray probe = c;
  AttachGrad(&probe);
  NDArray y, z;
  {
    RecordScope record;
    y = probe * 1.0;
    DropGrad(&probe);  // probe is a constant from here on
    AttachGrad(&y);
    z = nd::sum(nd::sin(y));
  }
  Backward({z});
  EXPECT_TRUE(
      AllClose(ToDouble(y.grad()), Each([](double v) { return std::cos(v); })));
}

TEST(AttachGrad, AddRequestAccumulatesOnIntermediates) {
  NDArray x = GradVariable({3}, kX);
  NDArray y, z;
  {
    RecordScope record;
    y = x * 2.0;
    AttachGrad(&y, OpReqType::kAddTo);
    z = nd::sum(y * y);
  }
  BackwardOptions retain;
  retain.retain_graph = true;
  Backward({z}, {}, retain);
  Backward({z});
  // dz/dy = 2y = 4x, twice.
  EXPECT_TRUE(
      AllClose(ToDouble(y.grad()), Each([](double v) { return 8 * v; })));
}

TEST(AttachGrad, GradWithRespectToAnIntermediate) {
  // dz/dy = x (y's own path only).
  const SquareChain c = RecordSquare(
      [](const NDArray& x, const NDArray& y) { return nd::sum(y * x); });
  const std::vector<NDArray> g = Grad({c.z}, {c.y, c.x});
  EXPECT_TRUE(AllClose(ToDouble(g[0]), kX));
  EXPECT_TRUE(
      AllClose(ToDouble(g[1]), Each([](double v) { return 3 * v * v; })));
  EXPECT_TRUE(AllClose(ToDouble(c.y.grad()), {0, 0, 0}));  // left alone
}

TEST(AttachGrad, SecondOutputOfAnOpCannotAlsoBeMarked) {
  NDArray x = GradVariable({2, 2}, {1, 2, 3, 4});
  RecordScope record;
  std::vector<NDArray> parts = nd::split(x, 2, 0);
  AttachGrad(&parts[1]);
  ExpectError<NotImplemented>([&] { AttachGrad(&parts[0]); },
                              {"AttachGrad", "output 1", "SliceChannel"});
}

TEST(DropGrad, LeafStopsGettingAGradient) {
  NDArray x = ArrayOf({3}, kX, DType::kFloat64);
  NDArray w = ArrayOf({3}, {1, 2, 3}, DType::kFloat64);
  AttachGrad(&x);
  AttachGrad(&w);
  DropGrad(&w);
  EXPECT_TRUE(w.grad().is_none());
  EXPECT_TRUE(w.autograd_entry().empty());
  NDArray z;
  {
    RecordScope record;
    z = nd::sum(x * w);
  }
  Backward({z});
  EXPECT_TRUE(AllClose(ToDouble(x.grad()), {1, 2, 3}));
}

TEST(DropGrad, IntermediateKeepsItsHistory) {
  NDArray x = GradVariable({3}, kX);
  NDArray y, z;
  {
    RecordScope record;
    y = nd::square(x);
    AttachGrad(&y);
    DropGrad(&y);
    z = nd::sum(y);
  }
  EXPECT_TRUE(y.grad().is_none());
  Backward({z});
  EXPECT_TRUE(
      AllClose(ToDouble(x.grad()), Each([](double v) { return 2 * v; })));
}

TEST(DropGrad, ArrayWithoutAGradientIsAClearError) {
  NDArray plain = ArrayOf({2}, {1, 2});
  ExpectError<StateError>([&] { DropGrad(&plain); },
                          {"DropGrad", "no gradient attached"});
  NDArray x = ArrayOf({2}, {1, 2});
  AttachGrad(&x);
  DropGrad(&x);
  ExpectError<StateError>([&] { DropGrad(&x); }, {"no gradient attached"});
  ExpectError<InvalidArgument>([] { DropGrad(nullptr); }, {"none"});
}

}  // namespace
}  // namespace autograd
}  // namespace mx
