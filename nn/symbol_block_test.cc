// SymbolBlock: deferred parameter shapes inferred from the graph, training
// through it, and Export after a call.
#include "gtest/gtest.h"
#include "nn/nn_test_util.h"

namespace mx {
namespace nn {
namespace testing {
namespace {

// data -> fc1 (4 units) -> relu -> fc2 (2 units); weights undeclared.
Symbol Mlp() {
  Symbol data = Symbol::Variable("data");
  Symbol h =
      Symbol::Create("FullyConnected", {data}, {{"num_hidden", "4"}}, "fc1");
  h = Symbol::Create("Activation", {h}, {{"act_type", "relu"}}, "relu1");
  return Symbol::Create("FullyConnected", {h}, {{"num_hidden", "2"}}, "fc2");
}

std::map<std::string, TShape> Shapes(const Block& block) {
  std::map<std::string, TShape> shapes;
  for (const auto& [name, p] : block.CollectParams()) shapes[name] = p->shape();
  return shapes;
}

// y = relu(x W1^T + b1) W2^T + b2, by hand.
std::vector<double> Reference(const Block& block, const NDArray& x) {
  std::map<std::string, std::vector<double>> p;
  for (const auto& [name, param] : block.CollectParams()) {
    p[name] = ToDouble(param->data());
  }
  const std::vector<double> xv = ToDouble(x);
  const int64_t n = x.shape()[0], k = x.shape()[1];
  std::vector<double> y;
  for (int64_t r = 0; r < n; ++r) {
    std::vector<double> h(4);
    for (int u = 0; u < 4; ++u) {
      double s = p["fc1_bias"][u];
      for (int64_t j = 0; j < k; ++j) {
        s += xv[r * k + j] * p["fc1_weight"][u * k + j];
      }
      h[u] = s > 0 ? s : 0;
    }
    for (int o = 0; o < 2; ++o) {
      double s = p["fc2_bias"][o];
      for (int u = 0; u < 4; ++u) s += h[u] * p["fc2_weight"][o * 4 + u];
      y.push_back(s);
    }
  }
  return y;
}

TEST(SymbolBlock, InfersParameterShapesFromTheGraphAndInputs) {
  SymbolBlock block(Mlp(), {"data"});
  block.Initialize(init::Normal(0.5));
  for (const auto& [name, p] : block.CollectParams()) {
    EXPECT_FALSE(p->shape_known()) << name;
    EXPECT_TRUE(p->is_deferred()) << name;
  }
  const NDArray x = RandomArray({3, 5});
  const NDArray y = block(x);
  EXPECT_EQ(Shapes(block),
            (std::map<std::string, TShape>{{"fc1_weight", TShape({4, 5})},
                                           {"fc1_bias", TShape({4})},
                                           {"fc2_weight", TShape({2, 4})},
                                           {"fc2_bias", TShape({2})}}));
  EXPECT_TRUE(AllClose(ToDouble(y), Reference(block, x), 1e-5, 1e-5));
}

TEST(SymbolBlock, GradientsReachInferredParameters) {
  SymbolBlock block(Mlp(), {"data"});
  block.Initialize(init::Normal(0.5));
  const NDArray x = RandomArray({3, 5});
  const NDArray head = RandomArray({3, 2}, DType::kFloat32, -1, 1, 9);
  const testing::RunResult r = testing::RunWithGrad(block, x, head);
  // d sum(head * y) / d b2 = column sums of head.
  const std::vector<double> hv = ToDouble(head);
  EXPECT_TRUE(AllClose(r.grads.at("fc2_bias"),
                       {hv[0] + hv[2] + hv[4], hv[1] + hv[3] + hv[5]}, 1e-5,
                       1e-6));
}

// As MXNet's initializers: by name, BatchNorm's gamma and moving variance
// start at 1, beta, moving mean and biases at 0; weights take Xavier (which
// has no meaning for 1-D shapes and would refuse them).
TEST(SymbolBlock, InitializersFollowParameterNamesAsInMxnet) {
  Symbol data = Symbol::Variable("data");
  Symbol h =
      Symbol::Create("FullyConnected", {data}, {{"num_hidden", "3"}}, "fc1");
  h = Symbol::Create("BatchNorm", {h}, {{"fix_gamma", "False"}}, "bn1");
  SymbolBlock block(h, {"data"});
  block.Initialize(init::Xavier());
  const NDArray x = RandomArray({4, 5}, DType::kFloat32, -1, 1, 3);
  ToDouble(block(x));
  std::map<std::string, std::vector<double>> v;
  for (const auto& [name, p] : block.CollectParams()) {
    v[name] = ToDouble(p->data());
  }
  EXPECT_EQ(v["bn1_gamma"], std::vector<double>(3, 1.0));
  EXPECT_EQ(v["bn1_beta"], std::vector<double>(3, 0.0));
  EXPECT_EQ(v["bn1_moving_var"], std::vector<double>(3, 1.0));
  EXPECT_EQ(v["bn1_moving_mean"], std::vector<double>(3, 0.0));
  EXPECT_EQ(v["fc1_bias"], std::vector<double>(3, 0.0));
  EXPECT_EQ(v["fc1_weight"].size(), 15u);
  EXPECT_NE(v["fc1_weight"], std::vector<double>(15, 0.0));
}

TEST(SymbolBlock, ExportAfterACallRoundTrips) {
  auto block =
      std::make_shared<SymbolBlock>(Mlp(), std::vector<std::string>{"data"});
  block->Initialize(init::Normal(0.5));
  const NDArray x = RandomArray({3, 5});
  const std::vector<double> expected = ToDouble((*block)(x));
  const std::string prefix = TempPath("symbol_block");
  block->Export(prefix, 2);
  auto loaded = SymbolBlock::Import(prefix + "-symbol.json", {"data"},
                                    prefix + "-0002.params");
  EXPECT_TRUE(AllClose(ToDouble((*loaded)(x)), expected));
  EXPECT_EQ(Shapes(*loaded), Shapes(*block));
}

TEST(SymbolBlock, ExportBeforeShapesAreKnownNamesTheParameter) {
  SymbolBlock block(Mlp(), {"data"});
  block.Initialize();
  const std::string msg =
      ErrorOf<StateError>([&] { block.Export(TempPath("too_early")); });
  EXPECT_TRUE(Contains(msg, "fc1_weight") && Contains(msg, "unknown shape"))
      << msg;
}

TEST(SymbolBlock, ContradictingInputShapesAreAShapeError) {
  // fc1's weight is (4, 5) after the first call; a 7-feature input cannot
  // use it.
  SymbolBlock block(Mlp(), {"data"});
  block.Initialize();
  block(RandomArray({3, 5}));
  EXPECT_THROW(block(RandomArray({3, 7})), ShapeError);
}

}  // namespace
}  // namespace testing
}  // namespace nn
}  // namespace mx
