// Graphs and training on a real GPU: the `cuda` fusion property's
// generated kernels against the unfused graph (and cached),
// _default_subgraph_op forward and backward, a bound executor, and imperative
// and hybridized training against the CPU (device and kernel tests:
// cuda_test.cc). Without a usable GPU every test skips with one line saying
// why.
#include <dlfcn.h>

#include <cstdint>
#include <cstdio>
#include <string>
#include <utility>
#include <vector>

#include "autograd/autograd.h"
#include "backends/cuda/cuda_test_util.h"
#include "engine/engine.h"
#include "gtest/gtest.h"
#include "imperative/executor.h"
#include "imperative/imperative.h"
#include "imperative/nd.h"
#include "nn/nn.h"
#include "subgraph/partition_graph.h"
#include "testing/op_test_util.h"
#include "testing/subgraph_test_util.h"
#include "tools/models.h"

namespace mx {
namespace {

using testing::AllClose;
using testing::CudaPluginPath;
using testing::Host;
using testing::RandomArray;
using testing::ToDouble;

// x -> 8 elementwise ops, and a two-input tree, as the fusion benchmark.
Symbol FusableGraph() {
  Symbol x = Symbol::Variable("x"), z = Symbol::Variable("z");
  Symbol s = x;
  const std::vector<std::pair<std::string, AttrDict>> ops = {
      {"_mul_scalar", {{"scalar", "1.5"}}},
      {"_plus_scalar", {{"scalar", "1"}}},
      {"relu", {}},
      {"square", {}},
      {"_minus_scalar", {{"scalar", "3"}}},
      {"abs", {}},
      {"negative", {}},
      {"sigmoid", {}}};
  for (const auto& [op, attrs] : ops) s = Symbol::Create(op, {s}, attrs);
  Symbol t =
      Symbol::Create("elemwise_mul", {Symbol::Create("tanh", {z}, {}), s}, {});
  return Symbol::Group({s, Symbol::Create("elemwise_add", {t, x}, {})});
}

int64_t FusedCompiles() {
  void* lib = dlopen(CudaPluginPath(), RTLD_NOW | RTLD_NOLOAD);
  auto fn = lib == nullptr ? nullptr
                           : reinterpret_cast<int64_t (*)()>(
                                 dlsym(lib, "mx_cuda_fused_compiles"));
  const int64_t n = fn == nullptr ? -1 : fn();
  if (lib != nullptr) dlclose(lib);
  return n;
}

std::vector<std::vector<double>> RunGraph(const Symbol& net, Context ctx,
                                          const NDArray& x, const NDArray& z) {
  auto exec = Executor::SimpleBind(
      net, ctx, {{"x", x.shape()}, {"z", z.shape()}},
      {{"x", x.dtype()}, {"z", z.dtype()}}, OpReqType::kNullOp);
  CopyFromTo(x.Copy(ctx), exec->arg_dict().at("x"));
  CopyFromTo(z.Copy(ctx), exec->arg_dict().at("z"));
  exec->Forward(/*is_train=*/false);
  std::vector<std::vector<double>> r;
  for (const NDArray& o : exec->outputs()) r.push_back(Host(o));
  return r;
}

TEST(CudaFusion, GeneratedKernelsMatchTheUnfusedGraphAndAreCached) {
  MX_SKIP_WITHOUT_GPU();
  const Symbol net = FusableGraph();
  const Symbol fused = PartitionGraph(net, "cuda");
  EXPECT_EQ(testing::CountOps(fused, "_cuda_fused_elemwise"), 1)
      << "one subgraph: the chain and the tree";
  const NDArray x = RandomArray({1000, 37}, DType::kFloat32, -2, 2, 1);
  const NDArray z = RandomArray({1000, 37}, DType::kFloat32, -2, 2, 2);
  const auto want = RunGraph(net, Context::CPU(), x, z);
  const int64_t before = FusedCompiles();
  const auto got = RunGraph(fused, Context::GPU(0), x, z);
  const int64_t after_first = FusedCompiles();
  const auto again = RunGraph(fused, Context::GPU(0), x, z);
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < want.size(); ++i) {
    EXPECT_TRUE(AllClose(got[i], want[i], 1e-5, 1e-6)) << "output " << i;
    EXPECT_EQ(again[i], got[i]);
  }
  EXPECT_EQ(after_first, before + 1);
  EXPECT_EQ(FusedCompiles(), after_first) << "the kernel was compiled again";
  // The fused op on the CPU: the program interpreter.
  const auto cpu = RunGraph(fused, Context::CPU(), x, z);
  for (size_t i = 0; i < want.size(); ++i) {
    EXPECT_TRUE(AllClose(cpu[i], want[i], 1e-6, 1e-7)) << "output " << i;
  }
}

// float16: the generated kernel computes in float and rounds each
// instruction's result to float16 as the unfused kernels store theirs, so
// the fused graph gives the unfused one's bits on the GPU (and the CPU
// interpreter the CPU's).
TEST(CudaFusion, Float16GivesTheUnfusedGraphsBits) {
  MX_SKIP_WITHOUT_GPU();
  const Symbol net = FusableGraph();
  const Symbol fused = PartitionGraph(net, "cuda");
  ASSERT_EQ(testing::CountOps(fused, "_cuda_fused_elemwise"), 1);
  const NDArray x = RandomArray({1000, 37}, DType::kFloat16, -2, 2, 3);
  const NDArray z = RandomArray({1000, 37}, DType::kFloat16, -2, 2, 4);
  EXPECT_EQ(RunGraph(fused, Context::GPU(0), x, z),
            RunGraph(net, Context::GPU(0), x, z));
  EXPECT_EQ(RunGraph(fused, Context::CPU(), x, z),
            RunGraph(net, Context::CPU(), x, z));
}

// _default_subgraph_op on the GPU: its subgraph (and the backward one)
// run with the GPU kernels. In the second net one inner result is both
// gradients, so it is computed aside and copied (the device copy) or added
// (grad_req add: the GPU's elemwise_add).
TEST(CudaGraph, DefaultSubgraphOpRunsForwardAndBackwardOnTheGpu) {
  MX_SKIP_WITHOUT_GPU();
  for (OpReqType req : {OpReqType::kWriteTo, OpReqType::kAddTo}) {
    for (const testing::SubgraphNet& net :
         {testing::TwoOutputNet(), testing::ScaledSumNet()}) {
      EXPECT_GT(
          testing::ExpectSameForwardBackward(
              net.symbol,
              testing::PartitionWithDefault(net.symbol, net.claimed),
              Context::GPU(0), {{"x", {3, 4}}, {"w", {3, 4}}}, req, 1e-10),
          0);
    }
  }
}

// A bound executor (forward and backward, default head gradients) on the
// GPU against the same on the CPU.
TEST(CudaExecutor, ForwardAndBackwardMatchTheCpu) {
  MX_SKIP_WITHOUT_GPU();
  Symbol h = Symbol::Create("FullyConnected", {Symbol::Variable("data")},
                            {{"num_hidden", "16"}}, "fc1");
  h = Symbol::Create("Activation", {h}, {{"act_type", "relu"}}, "relu1");
  h = Symbol::Create("FullyConnected", {h}, {{"num_hidden", "4"}}, "fc2");
  auto run = [&](Context ctx) {
    auto exec = Executor::SimpleBind(h, ctx, {{"data", {8, 12}}});
    uint32_t seed = 1;
    for (const auto& [name, arr] : exec->arg_dict()) {
      CopyFromTo(
          RandomArray(arr.shape(), DType::kFloat32, -1, 1, seed++).Copy(ctx),
          arr);
    }
    exec->Forward(/*is_train=*/true);
    exec->Backward();
    std::vector<std::vector<double>> r{Host(exec->outputs()[0])};
    for (const auto& [name, g] : exec->grad_dict()) r.push_back(Host(g));
    return r;
  };
  const auto want = run(Context::CPU());
  const auto got = run(Context::GPU(0));
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < want.size(); ++i) {
    EXPECT_TRUE(AllClose(got[i], want[i], 1e-4, 1e-5)) << "value " << i;
  }
}

// Loss of each step of an imperative conv + FC network trained with SGD
// momentum on ctx, and the final weights (same initial values on both).
std::vector<std::vector<double>> TrainImperative(Context ctx) {
  std::vector<NDArray> w = {
      RandomArray({8, 1, 3, 3}, DType::kFloat32, -0.3, 0.3, 21),
      RandomArray({8}, DType::kFloat32, -0.1, 0.1, 22),
      RandomArray({10, 8 * 6 * 6}, DType::kFloat32, -0.1, 0.1, 23),
      RandomArray({10}, DType::kFloat32, -0.1, 0.1, 24)};
  std::vector<NDArray> mom;
  for (NDArray& p : w) {
    p = p.Copy(ctx);
    autograd::AttachGrad(&p);
    mom.push_back(nd::zeros_like(p));
  }
  const NDArray x =
      RandomArray({16, 1, 12, 12}, DType::kFloat32, 0, 1, 9).Copy(ctx);
  std::vector<double> labels(16 * 10, 0.0);
  for (int i = 0; i < 16; ++i) labels[i * 10 + (i * 7) % 10] = 1;
  const NDArray target = testing::ArrayOf({16, 10}, labels).Copy(ctx);
  std::vector<double> losses;
  for (int step = 0; step < 5; ++step) {
    NDArray loss;
    {
      autograd::RecordScope record;
      NDArray h = nd::Call(
          "Convolution", {x, w[0], w[1]},
          {{"kernel", "(3,3)"}, {"num_filter", "8"}, {"pad", "(1,1)"}});
      h = nd::Call("Activation", {h}, {{"act_type", "relu"}});
      h = nd::Pooling(h, {2, 2}, "max", {2, 2});
      NDArray logits =
          nd::Call("FullyConnected", {h, w[2], w[3]}, {{"num_hidden", "10"}});
      NDArray logp = nd::Call("log_softmax", {logits}, {});
      const NDArray picked =
          nd::Call("sum", {nd::Call("elemwise_mul", {logp, target}, {})},
                   {{"axis", "1"}});
      loss = nd::Call("negative", {nd::Call("mean", {picked}, {})}, {});
    }
    autograd::Backward({loss});
    for (size_t i = 0; i < w.size(); ++i) {
      nd::CallInto("sgd_mom_update", {w[i], w[i].grad(), mom[i]},
                   {{"lr", "0.1"}, {"momentum", "0.9"}, {"wd", "0.0001"}},
                   w[i]);
    }
    losses.push_back(Host(loss)[0]);
  }
  std::vector<std::vector<double>> r{losses};
  for (const NDArray& p : w) r.push_back(Host(p));
  return r;
}

TEST(CudaTraining, ImperativeStepsMatchTheCpu) {
  MX_SKIP_WITHOUT_GPU();
  const auto want = TrainImperative(Context::CPU());
  const auto got = TrainImperative(Context::GPU(0));
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < want.size(); ++i) {
    EXPECT_TRUE(AllClose(got[i], want[i], 1e-3, 1e-5)) << "value " << i;
  }
  EXPECT_LT(want[0].back(), want[0].front());
}

// A hybridized model trained on the GPU from a seeded initialization.
std::vector<double> HybridLossCurve(const std::string& model, Context ctx) {
  random::Seed(3);
  auto net = models::Make(model);
  net->Initialize(nn::init::Xavier(), ctx);
  net->Hybridize();
  nn::SoftmaxCrossEntropyLoss loss_fn;
  nn::SGDOptions sgd;
  sgd.learning_rate = 0.05;
  sgd.momentum = 0.9;
  nn::Trainer trainer(net->CollectParams(), nn::MakeSGD(sgd));
  const NDArray x =
      RandomArray({16, 1, 28, 28}, DType::kFloat32, 0, 1, 9).Copy(ctx);
  std::vector<double> labels(16);
  for (int i = 0; i < 16; ++i) labels[i] = (i * 7) % 10;
  const NDArray y = testing::ArrayOf({16}, labels).Copy(ctx);
  std::vector<double> losses;
  for (int s = 0; s < 8; ++s) {
    NDArray loss;
    {
      autograd::RecordScope record;
      loss = loss_fn({(*net)(x), y})[0];
    }
    autograd::Backward({loss});
    trainer.Step(16);
    losses.push_back(Host(nd::mean(loss))[0]);
  }
  engine::Engine::Get()->WaitForAll();
  return losses;
}

TEST(CudaTraining, HybridizedModelsLearnAndSeedsReproduce) {
  MX_SKIP_WITHOUT_GPU();
  for (const char* model : {"mlp", "cnn", "cnn_bn"}) {
    SCOPED_TRACE(model);
    try {
      const std::vector<double> a = HybridLossCurve(model, Context::GPU(0));
      const std::vector<double> b = HybridLossCurve(model, Context::GPU(0));
      // The same initialization and dropout masks (seeded); gradients of
      // pooling (atomic adds) and some cuDNN algorithms sum in a varying
      // order, as in PyTorch by default, so runs agree to rounding only.
      EXPECT_TRUE(AllClose(a, b, 1e-4, 1e-6))
          << "the same seed gave different GPU runs";
      EXPECT_LT(a.back(), a.front() - 0.1);
      std::printf("hybridized %s on gpu(0), loss per step:", model);
      for (double l : a) std::printf(" %.4f", l);
      std::printf("\n");
    } catch (const Error& e) {
      ADD_FAILURE() << e.what();
    }
  }
}

}  // namespace
}  // namespace mx
