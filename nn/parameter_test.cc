#include "nn/parameter.h"

#include <cmath>
#include <numeric>

#include "gtest/gtest.h"
#include "nn/nn_test_util.h"

namespace mx {
namespace nn {
namespace testing {
namespace {

struct Stats {
  double mean = 0, stddev = 0, min = 0, max = 0;
};

Stats StatsOf(const std::vector<double>& v) {
  Stats s;
  s.mean = std::accumulate(v.begin(), v.end(), 0.0) / v.size();
  double sq = 0;
  for (double x : v) sq += (x - s.mean) * (x - s.mean);
  s.stddev = std::sqrt(sq / v.size());
  s.min = *std::min_element(v.begin(), v.end());
  s.max = *std::max_element(v.begin(), v.end());
  return s;
}

std::vector<double> Initialized(const InitializerPtr& init,
                                const TShape& shape) {
  Parameter p("w", shape);
  p.Initialize(init);
  EXPECT_EQ(p.data().shape(), shape);
  return ToDouble(p.data());
}

TEST(Initializer, ZerosOnesConstant) {
  for (double v : Initialized(init::Zeros(), {3, 4})) EXPECT_EQ(v, 0);
  for (double v : Initialized(init::Ones(), {5})) EXPECT_EQ(v, 1);
  for (double v : Initialized(init::Constant(2.5), {2, 2})) EXPECT_EQ(v, 2.5);
}

TEST(Initializer, UniformStaysInRangeWithUniformVariance) {
  const Stats s = StatsOf(Initialized(init::Uniform(0.5), {100, 100}));
  EXPECT_GE(s.min, -0.5);
  EXPECT_LE(s.max, 0.5);
  EXPECT_NEAR(s.mean, 0, 0.01);
  EXPECT_NEAR(s.stddev, 0.5 / std::sqrt(3.0), 0.01);
}

TEST(Initializer, NormalHasTheRequestedSigma) {
  const Stats s = StatsOf(Initialized(init::Normal(0.2), {100, 100}));
  EXPECT_NEAR(s.mean, 0, 0.01);
  EXPECT_NEAR(s.stddev, 0.2, 0.005);
}

TEST(Initializer, XavierScalesByFans) {
  // (out=50, in=20, 3x3): fan_in = 180, fan_out = 450, avg = 315.
  const double scale = std::sqrt(3.0 / 315);
  const Stats u = StatsOf(Initialized(init::Xavier(), {50, 20, 3, 3}));
  EXPECT_GE(u.min, -scale);
  EXPECT_LE(u.max, scale);
  EXPECT_NEAR(u.stddev, scale / std::sqrt(3.0), 0.05 * scale);
  const Stats g = StatsOf(Initialized(
      init::Xavier(init::XavierRandom::kGaussian, init::XavierFactor::kIn, 2),
      {50, 20, 3, 3}));
  EXPECT_NEAR(g.stddev, std::sqrt(2.0 / 180), 0.05 * std::sqrt(2.0 / 180));
}

TEST(Initializer, XavierRejectsVectors) {
  Parameter p("bias", {4});
  const std::string msg =
      ErrorOf<ShapeError>([&] { p.Initialize(init::Xavier()); });
  EXPECT_TRUE(Contains(msg, "\"bias\"")) << msg;
}

TEST(Parameter, OwnInitializerWinsOverTheDefault) {
  Parameter::Options o;
  o.init = init::Ones();
  Parameter p("gamma", {3}, o);
  p.Initialize(init::Zeros());
  for (double v : ToDouble(p.data())) EXPECT_EQ(v, 1);
}

TEST(Parameter, InitializationWaitsForTheShape) {
  Parameter p("weight", TShape{4, 0});
  EXPECT_FALSE(p.shape_known());
  p.Initialize(init::Ones());
  EXPECT_TRUE(p.is_deferred());
  EXPECT_FALSE(p.is_initialized());
  const std::string msg = ErrorOf<StateError>([&] { p.data(); });
  EXPECT_TRUE(Contains(msg, "\"weight\"") && Contains(msg, "(4,0)")) << msg;
  p.SetShape({4, 7});
  EXPECT_TRUE(p.is_initialized());
  EXPECT_EQ(p.data().shape(), (TShape{4, 7}));
  for (double v : ToDouble(p.data())) EXPECT_EQ(v, 1);
}

TEST(Parameter, SetShapeRejectsContradictions) {
  Parameter p("weight", TShape{4, 0});
  const std::string msg = ErrorOf<ShapeError>([&] { p.SetShape({5, 3}); });
  EXPECT_TRUE(Contains(msg, "\"weight\"") && Contains(msg, "(5,3)") &&
              Contains(msg, "(4,0)"))
      << msg;
  EXPECT_THROW(p.SetShape({4, 3, 1}), ShapeError);
}

TEST(Parameter, UninitializedDataNamesTheParameter) {
  Parameter p("bias", {3});
  const std::string msg = ErrorOf<StateError>([&] { p.data(); });
  EXPECT_TRUE(Contains(msg, "\"bias\"") && Contains(msg, "Initialize")) << msg;
}

TEST(Parameter, GradientBufferFollowsTheRequest) {
  Parameter w("w", {2, 2});
  w.Initialize();
  EXPECT_EQ(w.grad().shape(), (TShape{2, 2}));
  Parameter::Options o;
  o.grad_req = GradReq::kNull;
  Parameter aux("running_mean", {2}, o);
  aux.Initialize();
  EXPECT_THROW(aux.grad(), StateError);
}

TEST(Parameter, GradientsAccumulateWithAddAndZeroGradClears) {
  Parameter::Options o;
  o.grad_req = GradReq::kAdd;
  Parameter w("w", {3}, o);
  w.Initialize(init::Ones());
  for (int step = 0; step < 2; ++step) {
    NDArray y;
    {
      autograd::RecordScope record;
      y = nd::sum(w.data() * 3.0);
    }
    autograd::Backward({y});
  }
  for (double g : ToDouble(w.grad())) EXPECT_EQ(g, 6);
  w.ZeroGrad();
  for (double g : ToDouble(w.grad())) EXPECT_EQ(g, 0);
}

TEST(Parameter, SetDataKeepsTheGradientBuffer) {
  Parameter w("w", TShape{0});
  w.SetData(NDArray::FromVector<float>({3}, {1, 2, 3}));
  EXPECT_EQ(w.data().ToVector<float>(), (std::vector<float>{1, 2, 3}));
  const NDArray grad = w.grad();
  w.SetData(NDArray::FromVector<float>({3}, {4, 5, 6}));
  EXPECT_EQ(w.data().ToVector<float>(), (std::vector<float>{4, 5, 6}));
  EXPECT_TRUE(w.grad().SharesChunkWith(grad));
  EXPECT_THROW(w.SetData(NDArray::FromVector<float>({2}, {1, 2})), ShapeError);
}

}  // namespace
}  // namespace testing
}  // namespace nn
}  // namespace mx
