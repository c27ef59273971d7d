// Executor: bound symbols give the same results as imperative calls.
#include "imperative/executor.h"

#include <cmath>
#include <cstdlib>

#include "base/error.h"
#include "gtest/gtest.h"
#include "imperative/nd.h"
#include "testing/op_test_util.h"

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
  // A second Backward after the same Forward reads the forward values
  // unchanged (the plan keeps them): the same gradients.
  exec->Backward();
  EXPECT_TRUE(AllClose(ToDouble(gx), ex, 1e-10, 1e-12));
  EXPECT_TRUE(AllClose(ToDouble(gw), ew, 1e-10, 1e-12));
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
  Symbol x = Symbol::Variable("x"), g = Symbol::Variable("g");
  Symbol c = Symbol::Create("sgd_update", {x, g}, {{"lr", "0.1"}}, "c");
  try {
    Executor::SimpleBind(c, Context::CPU(), {{"x", {2}}, {"g", {2}}});
    FAIL();
  } catch (const NotImplemented& e) {
    EXPECT_STREQ(e.what(),
                 "Gradient: op \"sgd_update\" (node \"c\") has no gradient");
  }
}

// A small CNN and an MLP: executor outputs equal imperative calls, BatchNorm
// moving statistics are auxiliary states updated in training, and the
// memory plan needs less than one buffer per value.
Symbol SmallCNN() {
  Symbol data = Symbol::Variable("data");
  Symbol c1 =
      Symbol::Create("Convolution", {data},
                     {{"kernel", "(3,3)"}, {"num_filter", "4"}}, "conv1");
  Symbol bn =
      Symbol::Create("BatchNorm", {c1}, {{"fix_gamma", "False"}}, "bn1");
  Symbol a1 =
      Symbol::Create("Activation", {bn}, {{"act_type", "relu"}}, "relu1");
  Symbol p1 = Symbol::Create(
      "Pooling", {a1}, {{"kernel", "(2,2)"}, {"stride", "(2,2)"}}, "pool1");
  Symbol f = Symbol::Create("Flatten", {p1}, {}, "flat");
  return Symbol::Create("FullyConnected", {f}, {{"num_hidden", "3"}}, "fc1");
}

TEST(Executor, SmallCNNMatchesImperativeAndUpdatesAuxStates) {
  Symbol net = SmallCNN();
  EXPECT_EQ(net.ListAuxiliaryStates(),
            (std::vector<std::string>{"bn1_moving_mean", "bn1_moving_var"}));
  auto exec = Executor::SimpleBind(
      net, Context::CPU(), {{"data", {2, 1, 8, 8}}}, {}, OpReqType::kNullOp);
  auto args = exec->arg_dict();
  EXPECT_EQ(args.at("conv1_weight").shape(), TShape({4, 1, 3, 3}));
  EXPECT_EQ(args.at("fc1_weight").shape(), TShape({3, 36}));
  int seed = 10;
  for (auto& [name, arr] : args) {
    CopyFromTo(RandomArray(arr.shape(), DType::kFloat32, -0.5, 0.5, seed++),
               arr);
  }
  auto aux = exec->aux_dict();
  CopyFromTo(nd::ones({4}), aux.at("bn1_moving_var"));
  exec->Forward(/*is_train=*/true);
  NDArray mean = nd::zeros({4}), var = nd::ones({4});
  NDArray expected;
  {
    imperative::TrainingScope train(true);
    NDArray c = nd::Convolution(args.at("data"), args.at("conv1_weight"),
                                args.at("conv1_bias"), {3, 3}, 4);
    NDArray b = nd::BatchNorm(c, args.at("bn1_gamma"), args.at("bn1_beta"),
                              mean, var, 1e-3, 0.9, /*fix_gamma=*/false);
    NDArray p = nd::Pooling(nd::Activation(b, "relu"), {2, 2}, "max", {2, 2});
    expected = nd::FullyConnected(nd::flatten(p), args.at("fc1_weight"),
                                  args.at("fc1_bias"), 3);
  }
  EXPECT_TRUE(
      AllClose(ToDouble(exec->outputs()[0]), ToDouble(expected), 1e-5, 1e-6));
  EXPECT_TRUE(AllClose(ToDouble(aux.at("bn1_moving_mean")), ToDouble(mean)));
  EXPECT_TRUE(AllClose(ToDouble(aux.at("bn1_moving_var")), ToDouble(var)));
  EXPECT_LT(exec->planned_bytes(), exec->bytes_without_reuse());
  std::printf(
      "[memory] small CNN, batch 2: planned %zu bytes, %zu without reuse\n",
      exec->planned_bytes(), exec->bytes_without_reuse());
}

TEST(Executor, MLPMemoryPlanReport) {
  Symbol s = Symbol::Variable("data");
  for (int i = 0; i < 3; ++i) {
    s = Symbol::Create("FullyConnected", {s}, {{"num_hidden", "256"}},
                       "fc" + std::to_string(i));
    s = Symbol::Create("Activation", {s}, {{"act_type", "relu"}},
                       "relu" + std::to_string(i));
  }
  s = Symbol::Create("FullyConnected", {s}, {{"num_hidden", "10"}}, "out");
  auto exec = Executor::SimpleBind(s, Context::CPU(), {{"data", {64, 784}}}, {},
                                   OpReqType::kNullOp);
  // Six 64x256 float values plus the output. Relus run in place, each FC
  // writes the block its input's producer freed, and the small output
  // fits in a freed block too: two 64x256 blocks in all.
  EXPECT_EQ(exec->bytes_without_reuse(), 6u * 64 * 256 * 4 + 64 * 10 * 4);
  EXPECT_EQ(exec->planned_bytes(), 2u * 64 * 256 * 4);
  std::printf(
      "[memory] MLP 784-256-256-256-10, batch 64: planned %zu bytes, "
      "%zu without reuse\n",
      exec->planned_bytes(), exec->bytes_without_reuse());
}

TEST(Executor, SubgraphBackendWithoutPartitionPassSaysWhatToLink) {
  // This test binary does not link //subgraph:partition_graph.
  setenv("MX_SUBGRAPH_BACKEND", "default", 1);
  try {
    Executor::SimpleBind(SmallNet(), Context::CPU(), {{"x", {2}}});
    ADD_FAILURE() << "no error";
  } catch (const ConfigError& e) {
    EXPECT_TRUE(testing::Contains(e.what(), "MX_SUBGRAPH_BACKEND=default"));
    EXPECT_TRUE(testing::Contains(e.what(), "//subgraph:partition_graph"));
  }
  unsetenv("MX_SUBGRAPH_BACKEND");
  // NONE means no partitioning, linked or not.
  setenv("MX_SUBGRAPH_BACKEND", "NONE", 1);
  EXPECT_NO_THROW(
      Executor::SimpleBind(SmallNet(), Context::CPU(), {{"x", {2}}}));
  unsetenv("MX_SUBGRAPH_BACKEND");
}

}  // namespace
}  // namespace mx
