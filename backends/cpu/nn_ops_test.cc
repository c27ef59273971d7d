#include <cmath>
#include <functional>
#include <string>
#include <vector>

#include "base/error.h"
#include "gtest/gtest.h"
#include "imperative/imperative.h"
#include "imperative/nd.h"
#include "testing/op_test_util.h"

namespace mx {
namespace testing {
namespace {

std::vector<double> Map(const std::vector<double>& x,
                        const std::function<double(double)>& f) {
  std::vector<double> y;
  for (double v : x) y.push_back(f(v));
  return y;
}

double Tol(DType t) { return t == DType::kFloat16 ? 5e-3 : 1e-6; }

const std::vector<DType> kFloats = {DType::kFloat64, DType::kFloat32,
                                    DType::kFloat16};

// ---- Activation. ----

double SoftReluRef(double x) { return std::log(1 + std::exp(x)); }

TEST(Activation, EveryTypeMatchesReference) {
  const std::vector<std::pair<std::string, std::function<double(double)>>>
      cases = {
          {"relu", [](double x) { return x > 0 ? x : 0; }},
          {"sigmoid", [](double x) { return 1 / (1 + std::exp(-x)); }},
          {"tanh", [](double x) { return std::tanh(x); }},
          {"softrelu", SoftReluRef},
          {"softsign", [](double x) { return x / (1 + std::fabs(x)); }},
          {"log_sigmoid", [](double x) { return -SoftReluRef(-x); }},
          {"mish", [](double x) { return x * std::tanh(SoftReluRef(x)); }},
      };
  for (const auto& [act, ref] : cases) {
    for (DType dt : kFloats) {
      for (const TShape& shape : {TShape{0}, TShape{7}, TShape{2, 3, 4}}) {
        NDArray x = RandomArray(shape, dt, -6, 6, 1);
        NDArray y = nd::Activation(x, act);
        EXPECT_EQ(y.shape(), shape);
        EXPECT_EQ(y.dtype(), dt);
        EXPECT_TRUE(
            AllClose(ToDouble(y), Map(ToDouble(x), ref), Tol(dt), Tol(dt)))
            << act << " " << DTypeName(dt) << " " << shape;
      }
    }
  }
}

TEST(Activation, SoftReluIsStableForLargeInputs) {
  NDArray x = ArrayOf({4}, {-100, -30, 30, 100});
  EXPECT_TRUE(AllClose(ToDouble(nd::Activation(x, "softrelu")),
                       {std::exp(-100.0), std::log1p(std::exp(-30.0)),
                        30 + std::log1p(std::exp(-30.0)), 100},
                       1e-5, 1e-30));
}

TEST(Activation, BadInputsAreTypedErrors) {
  NDArray x = RandomArray({3});
  try {
    nd::Activation(x, "swish");
    FAIL();
  } catch (const InvalidArgument& e) {
    EXPECT_TRUE(Contains(e.what(), "act_type")) << e.what();
    EXPECT_TRUE(Contains(e.what(), "swish")) << e.what();
  }
  EXPECT_THROW(nd::Call("Activation", {x}), InvalidArgument);
  EXPECT_THROW(nd::Activation(RandomArray({3}, DType::kInt32), "relu"),
               DTypeError);
}

// ---- LeakyReLU. ----

TEST(LeakyReLU, EveryTypeMatchesReference) {
  const double alpha = 1.6732632423543772848170429916717;
  const double lambda = 1.0507009873554804934193349852946;
  struct Case {
    std::string act;
    double slope;
    std::function<double(double)> ref;
  };
  const std::vector<Case> cases = {
      {"leaky", 0.1, [](double x) { return x > 0 ? x : 0.1 * x; }},
      {"leaky", 0.25, [](double x) { return x > 0 ? x : 0.25 * x; }},
      {"elu", 1.5,
       [](double x) { return x > 0 ? x : 1.5 * (std::exp(x) - 1); }},
      {"selu", 0.25,
       [&](double x) {
         return lambda * (x > 0 ? x : alpha * (std::exp(x) - 1));
       }},
      {"gelu", 0.25,
       [](double x) { return 0.5 * x * (1 + std::erf(x / std::sqrt(2.0))); }},
  };
  for (const Case& c : cases) {
    for (DType dt : kFloats) {
      NDArray x = RandomArray({3, 5}, dt, -4, 4, 2);
      NDArray y = nd::LeakyReLU(x, c.act, c.slope);
      EXPECT_EQ(y.dtype(), dt);
      EXPECT_TRUE(
          AllClose(ToDouble(y), Map(ToDouble(x), c.ref), Tol(dt), Tol(dt)))
          << c.act << " slope=" << c.slope << " " << DTypeName(dt);
    }
  }
}

TEST(LeakyReLU, DefaultIsLeakyWithQuarterSlope) {
  NDArray x = ArrayOf({3}, {-2, 0, 3});
  EXPECT_TRUE(AllClose(ToDouble(nd::Call("LeakyReLU", {x})), {-0.5, 0, 3}));
}

// prelu and rrelu are tested in leaky_relu_grad_test.cc.
TEST(LeakyReLU, UnknownActTypeIsInvalid) {
  NDArray x = RandomArray({2, 3});
  EXPECT_THROW(nd::LeakyReLU(x, "swish"), InvalidArgument);
}

// ---- BatchNorm. ----

struct BNRef {
  std::vector<double> out, mean, var;
};

// Normalizes x (shape s) over every axis but `ax`, with given or batch
// statistics.
BNRef RefBatchNorm(const std::vector<double>& x, const TShape& s, int ax,
                   const std::vector<double>& gamma,
                   const std::vector<double>& beta, const double* mean_in,
                   const double* var_in, double eps, bool fix_gamma) {
  const int64_t c = s[ax], inner = s.ProdDims(ax + 1, s.ndim());
  BNRef r;
  r.mean.assign(c, 0);
  r.var.assign(c, 0);
  std::vector<int64_t> count(c, 0);
  for (size_t i = 0; i < x.size(); ++i) {
    const int64_t ch = (i / inner) % c;
    r.mean[ch] += x[i];
    ++count[ch];
  }
  for (int64_t ch = 0; ch < c; ++ch) r.mean[ch] /= count[ch];
  for (size_t i = 0; i < x.size(); ++i) {
    const int64_t ch = (i / inner) % c;
    r.var[ch] += (x[i] - r.mean[ch]) * (x[i] - r.mean[ch]) / count[ch];
  }
  if (mean_in != nullptr) {
    r.mean.assign(mean_in, mean_in + c);
    r.var.assign(var_in, var_in + c);
  }
  for (size_t i = 0; i < x.size(); ++i) {
    const int64_t ch = (i / inner) % c;
    const double g = fix_gamma ? 1 : gamma[ch];
    r.out.push_back((x[i] - r.mean[ch]) / std::sqrt(r.var[ch] + eps) * g +
                    beta[ch]);
  }
  return r;
}

struct BNArrays {
  NDArray x, gamma, beta, mm, mv;
};

BNArrays MakeBN(const TShape& s, int ax, DType dt = DType::kFloat64) {
  const TShape c{s[ax]};
  const DType pt = dt == DType::kFloat16 ? DType::kFloat32 : dt;
  return {RandomArray(s, dt, -2, 3, 1), RandomArray(c, pt, 0.5, 2, 2),
          RandomArray(c, pt, -1, 1, 3), RandomArray(c, pt, -1, 1, 4),
          RandomArray(c, pt, 0.5, 2, 5)};
}

std::vector<NDArray> CallBN(const BNArrays& a, const AttrDict& attrs) {
  return nd::CallMulti("BatchNorm", {a.x, a.gamma, a.beta, a.mm, a.mv}, attrs);
}

TEST(BatchNorm, InferenceUsesMovingStatistics) {
  for (const auto& [shape, axis] :
       std::vector<std::pair<TShape, int>>{{{4, 3}, 1},
                                           {{2, 3, 4, 5}, 1},
                                           {{1, 3, 2, 2}, 1},
                                           {{2, 3, 4}, -1},
                                           {{5, 2, 3}, 0}}) {
    for (bool fix_gamma : {true, false}) {
      const int ax = axis < 0 ? axis + shape.ndim() : axis;
      BNArrays a = MakeBN(shape, ax);
      const std::vector<double> mm = ToDouble(a.mm), mv = ToDouble(a.mv);
      std::vector<NDArray> out =
          CallBN(a, {{"eps", "0.001"},
                     {"fix_gamma", fix_gamma ? "True" : "False"},
                     {"axis", std::to_string(axis)}});
      ASSERT_EQ(out.size(), 3u);
      BNRef ref =
          RefBatchNorm(ToDouble(a.x), shape, ax, ToDouble(a.gamma),
                       ToDouble(a.beta), mm.data(), mv.data(), 1e-3, fix_gamma);
      EXPECT_TRUE(AllClose(ToDouble(out[0]), ref.out, 1e-10, 1e-10))
          << shape << " axis=" << axis << " fix_gamma=" << fix_gamma;
      EXPECT_TRUE(AllClose(ToDouble(out[1]), mm, 0, 0));
      EXPECT_TRUE(AllClose(ToDouble(out[2]), mv, 0, 0));
      // The moving statistics are left alone.
      EXPECT_TRUE(AllClose(ToDouble(a.mm), mm, 0, 0));
      EXPECT_TRUE(AllClose(ToDouble(a.mv), mv, 0, 0));
    }
  }
}

TEST(BatchNorm, TrainingUsesBatchStatisticsAndUpdatesMovingOnes) {
  imperative::TrainingScope train(true);
  for (const auto& [shape, ax] : std::vector<std::pair<TShape, int>>{
           {{8, 3}, 1}, {{2, 3, 4, 5}, 1}, {{1, 4, 3, 3}, 1}}) {
    BNArrays a = MakeBN(shape, ax);
    const std::vector<double> mm = ToDouble(a.mm), mv = ToDouble(a.mv);
    NDArray y = nd::BatchNorm(a.x, a.gamma, a.beta, a.mm, a.mv, 1e-5, 0.8,
                              /*fix_gamma=*/false);
    BNRef ref = RefBatchNorm(ToDouble(a.x), shape, ax, ToDouble(a.gamma),
                             ToDouble(a.beta), nullptr, nullptr, 1e-5, false);
    EXPECT_TRUE(AllClose(ToDouble(y), ref.out, 1e-9, 1e-9)) << shape;
    std::vector<double> mm_new, mv_new;
    for (size_t c = 0; c < mm.size(); ++c) {
      mm_new.push_back(mm[c] * 0.8 + ref.mean[c] * 0.2);
      mv_new.push_back(mv[c] * 0.8 + ref.var[c] * 0.2);
    }
    EXPECT_TRUE(AllClose(ToDouble(a.mm), mm_new, 1e-12, 1e-12)) << shape;
    EXPECT_TRUE(AllClose(ToDouble(a.mv), mv_new, 1e-12, 1e-12)) << shape;
    // Outputs 1 and 2 are the batch statistics.
    BNArrays b = MakeBN(shape, ax);
    std::vector<NDArray> out = CallBN(b, {{"fix_gamma", "True"}});
    BNRef ref_b = RefBatchNorm(ToDouble(b.x), shape, ax, {}, ToDouble(b.beta),
                               nullptr, nullptr, 1e-3, true);
    EXPECT_TRUE(AllClose(ToDouble(out[0]), ref_b.out, 1e-9, 1e-9));
    EXPECT_TRUE(AllClose(ToDouble(out[1]), ref_b.mean, 1e-12, 1e-12));
    EXPECT_TRUE(AllClose(ToDouble(out[2]), ref_b.var, 1e-12, 1e-12));
  }
}

TEST(BatchNorm, UseGlobalStatsInTrainingLeavesMovingStatistics) {
  imperative::TrainingScope train(true);
  BNArrays a = MakeBN({4, 3, 2}, 1);
  const std::vector<double> mm = ToDouble(a.mm), mv = ToDouble(a.mv);
  NDArray y = nd::BatchNorm(a.x, a.gamma, a.beta, a.mm, a.mv, 1e-3, 0.9, true,
                            /*use_global_stats=*/true);
  BNRef ref = RefBatchNorm(ToDouble(a.x), {4, 3, 2}, 1, {}, ToDouble(a.beta),
                           mm.data(), mv.data(), 1e-3, true);
  EXPECT_TRUE(AllClose(ToDouble(y), ref.out, 1e-10, 1e-10));
  EXPECT_TRUE(AllClose(ToDouble(a.mm), mm, 0, 0));
  EXPECT_TRUE(AllClose(ToDouble(a.mv), mv, 0, 0));
}

TEST(BatchNorm, EmptyBatchInTrainingKeepsMovingStatistics) {
  imperative::TrainingScope train(true);
  BNArrays a = MakeBN({0, 3, 2}, 1);
  const std::vector<double> mm = ToDouble(a.mm);
  std::vector<NDArray> out = CallBN(a, {});
  EXPECT_EQ(out[0].shape(), (TShape{0, 3, 2}));
  EXPECT_TRUE(AllClose(ToDouble(out[1]), mm, 0, 0));
  EXPECT_TRUE(AllClose(ToDouble(a.mm), mm, 0, 0));
}

TEST(BatchNorm, Float16DataTakesFloat32Statistics) {
  BNArrays a = MakeBN({2, 3, 4}, 1, DType::kFloat16);
  std::vector<NDArray> out = CallBN(a, {{"fix_gamma", "False"}});
  EXPECT_EQ(out[0].dtype(), DType::kFloat16);
  EXPECT_EQ(out[1].dtype(), DType::kFloat32);
  const std::vector<double> mm = ToDouble(a.mm), mv = ToDouble(a.mv);
  BNRef ref = RefBatchNorm(ToDouble(a.x), {2, 3, 4}, 1, ToDouble(a.gamma),
                           ToDouble(a.beta), mm.data(), mv.data(), 1e-3, false);
  EXPECT_TRUE(AllClose(ToDouble(out[0]), ref.out, 5e-3, 5e-3));
  BNArrays h = a;
  h.gamma = RandomArray({3}, DType::kFloat16);
  EXPECT_THROW(CallBN(h, {}), DTypeError);
}

TEST(BatchNorm, ShapeInferenceFillsPerChannelShapes) {
  const Op& op = OpRegistry::Get()->Lookup("BatchNorm");
  NodeAttrs attrs = MakeAttrs(op, {{"axis", "-1"}});
  std::vector<TShape> in(5), out(3);
  in[0] = TShape{2, 5, 7};
  op.infer_shape()(attrs, &in, &out);
  for (int i = 1; i < 5; ++i) EXPECT_EQ(in[i], TShape{7}) << i;
  EXPECT_EQ(out[0], (TShape{2, 5, 7}));
  EXPECT_EQ(out[1], TShape{7});
  EXPECT_EQ(out[2], TShape{7});
}

TEST(BatchNorm, BadInputsAreTypedErrors) {
  BNArrays a = MakeBN({2, 3, 4}, 1);
  BNArrays bad = a;
  bad.gamma = RandomArray({4}, DType::kFloat64);
  try {
    CallBN(bad, {});
    FAIL();
  } catch (const ShapeError& e) {
    EXPECT_TRUE(Contains(e.what(), "op \"BatchNorm\"")) << e.what();
    EXPECT_TRUE(Contains(e.what(), "gamma")) << e.what();
    EXPECT_TRUE(Contains(e.what(), "(4,)")) << e.what();
    EXPECT_TRUE(Contains(e.what(), "(3,)")) << e.what();
  }
  EXPECT_THROW(CallBN(a, {{"axis", "3"}}), ShapeError);
  BNArrays ints = a;
  ints.x = RandomArray({2, 3, 4}, DType::kInt32);
  EXPECT_THROW(CallBN(ints, {}), DTypeError);
}

// ---- Dropout. ----

TEST(Dropout, IdentityOutsideTraining) {
  for (DType dt : kFloats) {
    NDArray x = RandomArray({4, 5}, dt, -1, 1, 6);
    std::vector<NDArray> out =
        nd::CallMulti("Dropout", {x}, {{"p", "0.5"}, {"mode", "training"}});
    EXPECT_TRUE(AllClose(ToDouble(out[0]), ToDouble(x), 0, 0));
    EXPECT_TRUE(AllClose(ToDouble(out[1]), std::vector<double>(20, 1.0), 0, 0));
  }
}

TEST(Dropout, TrainingZeroesAboutPAndScalesTheRest) {
  imperative::TrainingScope train(true);
  for (DType dt : {DType::kFloat64, DType::kFloat32}) {
    const double p = 0.3;
    NDArray x = RandomArray({100, 100}, dt, 0.5, 1.5, 7);
    std::vector<NDArray> out =
        nd::CallMulti("Dropout", {x}, {{"p", nd::Attr(p)}});
    const std::vector<double> vx = ToDouble(x), vy = ToDouble(out[0]),
                              vm = ToDouble(out[1]);
    int zeros = 0;
    std::vector<double> expected;
    for (size_t i = 0; i < vx.size(); ++i) {
      EXPECT_TRUE(vm[i] == 0 || std::fabs(vm[i] - 1 / (1 - p)) < 1e-6) << vm[i];
      zeros += vm[i] == 0;
      expected.push_back(vx[i] * vm[i]);
    }
    EXPECT_TRUE(AllClose(vy, expected, 1e-6, 0));
    EXPECT_NEAR(zeros / 10000.0, p, 0.03);
  }
}

TEST(Dropout, SameSeedGivesSameMask) {
  imperative::TrainingScope train(true);
  NDArray x = RandomArray({64, 32});
  auto mask = [&] {
    return ToDouble(nd::CallMulti("Dropout", {x}, {{"p", "0.5"}})[1]);
  };
  random::Seed(42);
  const std::vector<double> m1 = mask(), m2 = mask();
  random::Seed(42);
  const std::vector<double> m3 = mask();
  random::Seed(43);
  const std::vector<double> m4 = mask();
  EXPECT_EQ(m1, m3);
  EXPECT_NE(m1, m2);
  EXPECT_NE(m1, m4);
}

TEST(Dropout, AlwaysModeIsActiveOutsideTraining) {
  NDArray x = RandomArray({50, 40}, DType::kFloat32, 0.5, 1.5);
  NDArray y = nd::Dropout(x, 0.5, "always");
  int zeros = 0;
  for (double v : ToDouble(y)) zeros += v == 0;
  EXPECT_GT(zeros, 800);
  EXPECT_LT(zeros, 1200);
}

TEST(Dropout, AxesShareTheMask) {
  imperative::TrainingScope train(true);
  NDArray x = RandomArray({6, 5, 4}, DType::kFloat64, 0.5, 1.5, 8);
  std::vector<NDArray> out =
      nd::CallMulti("Dropout", {x}, {{"p", "0.5"}, {"axes", "(1,)"}});
  ASSERT_EQ(out[1].shape(), (TShape{6, 1, 4}));
  const std::vector<double> vx = ToDouble(x), vy = ToDouble(out[0]),
                            vm = ToDouble(out[1]);
  for (int i = 0; i < 6; ++i)
    for (int j = 0; j < 5; ++j)
      for (int k = 0; k < 4; ++k) {
        const int idx = (i * 5 + j) * 4 + k;
        EXPECT_DOUBLE_EQ(vy[idx], vx[idx] * vm[i * 4 + k]);
      }
}

// MXNet accepts p = 1: every output (and the gradient) is zero.
TEST(Dropout, POneDropsEverything) {
  imperative::TrainingScope train(true);
  for (DType dt : kFloats) {
    NDArray x = RandomArray({8, 5}, dt, 0.5, 1.5, 9);
    std::vector<NDArray> out = nd::CallMulti("Dropout", {x}, {{"p", "1"}});
    EXPECT_EQ(ToDouble(out[0]), std::vector<double>(40, 0.0));
    EXPECT_EQ(ToDouble(out[1]), std::vector<double>(40, 0.0));
  }
}

TEST(Dropout, BadInputsAreTypedErrors) {
  NDArray x = RandomArray({3});
  for (const char* p : {"-0.1", "1.5", "nan"}) {
    try {
      nd::Call("Dropout", {x}, {{"p", p}});
      FAIL() << p;
    } catch (const InvalidArgument& e) {
      EXPECT_TRUE(Contains(e.what(), "op \"Dropout\"")) << e.what();
    }
  }
  EXPECT_THROW(nd::Dropout(x, 0.5, "sometimes"), InvalidArgument);
  EXPECT_THROW(nd::Dropout(RandomArray({3}, DType::kInt32)), DTypeError);
  EXPECT_THROW(nd::Call("Dropout", {x}, {{"axes", "(2,)"}}), ShapeError);
  EXPECT_EQ(nd::Dropout(RandomArray({0, 3})).shape(), (TShape{0, 3}));
}

}  // namespace
}  // namespace testing
}  // namespace mx
