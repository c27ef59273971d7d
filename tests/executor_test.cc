// Executor: bound symbols give the same results as imperative calls.
#include "imperative/executor.h"

#include <cmath>

#include "backends/cpu/op_test_util.h"
#include "base/error.h"
#include "gtest/gtest.h"
#include "imperative/nd.h"

namespace mx {
namespace {

using testing::AllClose;
using testing::RandomArray;
using testing::ToDouble;

// y = exp(x) * w + sin(x), then a few more elementwise steps.
Symbol SmallNet() {
  Symbol x = Symbol::Variable("x"), w = Symbol::Variable("w");
  Symbol e = Symbol::Create("exp", {x}, {}, "e");
  Symbol m = Symbol::Create("elemwise_mul", {e, w}, {}, "m");
  Symbol s = Symbol::Create("sin", {x}, {}, "s");
  Symbol a = Symbol::Create("elemwise_add", {m, s}, {}, "a");
  Symbol t = Symbol::Create("tanh", {a}, {}, "t");
  return Symbol::Create("_mul_scalar", {t}, {{"scalar", "3"}}, "out");
}

NDArray Imperative(const NDArray& x, const NDArray& w) {
  return nd::tanh(nd::exp(x) * w + nd::sin(x)) * 3.0;
}

TEST(Executor, BindMatchesImperative) {
  NDArray x = RandomArray({4, 5}, DType::kFloat32, -1, 1, 1);
  NDArray w = RandomArray({4, 5}, DType::kFloat32, -1, 1, 2);
  Symbol net = SmallNet();
  ASSERT_EQ(net.ListArguments(), (std::vector<std::string>{"x", "w"}));
  auto exec = Executor::Bind(net, Context::CPU(), {x, w}, {}, {}, {});
  exec->Forward();
  ASSERT_EQ(exec->outputs().size(), 1u);
  EXPECT_EQ(exec->outputs()[0].shape(), TShape({4, 5}));
  EXPECT_TRUE(
      AllClose(ToDouble(exec->outputs()[0]), ToDouble(Imperative(x, w))));
  // New inputs, same executor.
  NDArray x2 = RandomArray({4, 5}, DType::kFloat32, -1, 1, 3);
  CopyFromTo(x2, exec->arg_dict()["x"]);
  exec->Forward();
  EXPECT_TRUE(
      AllClose(ToDouble(exec->outputs()[0]), ToDouble(Imperative(x2, w))));
}

TEST(Executor, MemoryPlanReusesBuffers) {
  auto exec = Executor::SimpleBind(SmallNet(), Context::CPU(),
                                   {{"x", {100}}, {"w", {100}}}, {},
                                   OpReqType::kNullOp);
  // Six ops of 400 bytes; the plan needs far fewer distinct blocks.
  EXPECT_EQ(exec->bytes_without_reuse(), 6u * 400);
  EXPECT_LT(exec->planned_bytes(), exec->bytes_without_reuse());
  exec->Forward();
  const NDArray x = exec->arg_dict()["x"], w = exec->arg_dict()["w"];
  EXPECT_TRUE(
      AllClose(ToDouble(exec->outputs()[0]), ToDouble(Imperative(x, w))));
}

TEST(Executor, SimpleBindAllocatesArgumentsAndGradients) {
  auto exec = Executor::SimpleBind(SmallNet(), Context::CPU(), {{"x", {2, 3}}});
  EXPECT_EQ(exec->arg_dict().at("w").shape(), TShape({2, 3}));  // Inferred.
  EXPECT_EQ(exec->grad_dict().size(), 2u);
  EXPECT_TRUE(
      AllClose(ToDouble(exec->arg_dict().at("x")), std::vector<double>(6, 0)));
}

TEST(Executor, BadBindingsAreClearErrors) {
  NDArray x = RandomArray({2});
  try {
    Executor::Bind(SmallNet(), Context::CPU(), {x}, {}, {}, {});
    FAIL();
  } catch (const InvalidArgument& e) {
    EXPECT_STREQ(e.what(), "Executor::Bind: 1 arguments given for 2 (x, w)");
  }
  EXPECT_THROW(Executor::Bind(SmallNet(), Context::CPU(), {x, RandomArray({3})},
                              {}, {}, {}),
               ShapeError);
  EXPECT_THROW(Executor::SimpleBind(SmallNet(), Context::CPU(), {}),
               ShapeError);
}

// f = 3 tanh(a), a = exp(x) w + sin(x):
//   df/dx = 3 (1 - t^2) (exp(x) w + cos(x)),  df/dw = 3 (1 - t^2) exp(x).
TEST(Executor, BackwardMatchesAnalyticGradients) {
  NDArray x = RandomArray({3, 4}, DType::kFloat64, -1, 1, 1);
  NDArray w = RandomArray({3, 4}, DType::kFloat64, -1, 1, 2);
  NDArray gx({3, 4}, Context::CPU(), DType::kFloat64);
  NDArray gw({3, 4}, Context::CPU(), DType::kFloat64);
  auto exec = Executor::Bind(SmallNet(), Context::CPU(), {x, w}, {gx, gw},
                             {OpReqType::kWriteTo, OpReqType::kWriteTo}, {});
  exec->Forward(true);
  exec->Backward();
  std::vector<double> vx = ToDouble(x), vw = ToDouble(w), ex, ew;
  for (size_t i = 0; i < vx.size(); ++i) {
    const double t = std::tanh(std::exp(vx[i]) * vw[i] + std::sin(vx[i]));
    ex.push_back(3 * (1 - t * t) * (std::exp(vx[i]) * vw[i] + std::cos(vx[i])));
    ew.push_back(3 * (1 - t * t) * std::exp(vx[i]));
  }
  EXPECT_TRUE(AllClose(ToDouble(gx), ex, 1e-10, 1e-12));
  EXPECT_TRUE(AllClose(ToDouble(gw), ew, 1e-10, 1e-12));
  // Forward outputs still equal the imperative result after Backward.
  EXPECT_TRUE(
      AllClose(ToDouble(exec->outputs()[0]), ToDouble(Imperative(x, w))));
}

TEST(Executor, BackwardMatchesFiniteDifferences) {
  // Head gradient h: d/dx of sum(h * f(x, w)).
  NDArray x = RandomArray({5}, DType::kFloat64, -1, 1, 3);
  NDArray w = RandomArray({5}, DType::kFloat64, -1, 1, 4);
  NDArray h = RandomArray({5}, DType::kFloat64, -1, 1, 5);
  auto exec =
      Executor::SimpleBind(SmallNet(), Context::CPU(), {{"x", {5}}},
                           {{"x", DType::kFloat64}, {"w", DType::kFloat64}});
  CopyFromTo(x, exec->arg_dict()["x"]);
  CopyFromTo(w, exec->arg_dict()["w"]);
  exec->Forward(true);
  exec->Backward({h});
  const std::vector<double> grad = ToDouble(exec->grad_dict()["x"]);
  const std::vector<double> vx = ToDouble(x), vh = ToDouble(h);
  const double eps = 1e-6;
  std::vector<double> numeric;
  for (size_t i = 0; i < vx.size(); ++i) {
    auto f = [&](double xi) {
      std::vector<double> xs = vx;
      xs[i] = xi;
      NDArray xa = NDArray::FromVector<double>({5}, xs);
      std::vector<double> y = ToDouble(Imperative(xa, w));
      double s = 0;
      for (size_t k = 0; k < y.size(); ++k) s += vh[k] * y[k];
      return s;
    };
    numeric.push_back((f(vx[i] + eps) - f(vx[i] - eps)) / (2 * eps));
  }
  EXPECT_TRUE(AllClose(grad, numeric, 1e-6, 1e-8));
}

TEST(Executor, AddRequestAccumulatesAndNullSkips) {
  NDArray x = RandomArray({4}, DType::kFloat64, -1, 1, 6);
  NDArray w = RandomArray({4}, DType::kFloat64, -1, 1, 7);
  NDArray gx = testing::ArrayOf({4}, {1, 1, 1, 1}, DType::kFloat64);
  auto exec =
      Executor::Bind(SmallNet(), Context::CPU(), {x, w}, {gx, NDArray()},
                     {OpReqType::kAddTo, OpReqType::kNullOp}, {});
  exec->Forward(true);
  exec->Backward();
  const std::vector<double> once = ToDouble(gx);
  exec->Forward(true);
  exec->Backward();
  const std::vector<double> twice = ToDouble(gx);
  for (size_t i = 0; i < once.size(); ++i) {
    EXPECT_NEAR(twice[i] - 1, 2 * (once[i] - 1), 1e-12);
  }
  EXPECT_EQ(exec->grad_dict().size(), 1u);
}

TEST(Executor, BackwardErrors) {
  auto no_grad = Executor::SimpleBind(SmallNet(), Context::CPU(), {{"x", {2}}},
                                      {}, OpReqType::kNullOp);
  no_grad->Forward();
  EXPECT_THROW(no_grad->Backward(), StateError);
  auto exec = Executor::SimpleBind(SmallNet(), Context::CPU(), {{"x", {2}}});
  EXPECT_THROW(exec->Backward(), StateError);  // Forward first.
  // An op without a gradient on the path is named at bind time.
  Symbol x = Symbol::Variable("x");
  Symbol c = Symbol::Create("clip", {x}, {{"a_min", "0"}, {"a_max", "1"}}, "c");
  try {
    Executor::SimpleBind(c, Context::CPU(), {{"x", {2}}});
    FAIL();
  } catch (const NotImplemented& e) {
    EXPECT_STREQ(e.what(),
                 "Gradient: op \"clip\" (node \"c\") has no gradient");
  }
}

}  // namespace
}  // namespace mx
