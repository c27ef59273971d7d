// Hybridized blocks: same outputs and gradients as imperative, re-tracing,
// inlining, errors, Export and SymbolBlock::Import.
#include <cmath>
#include <fstream>

#include "gtest/gtest.h"
#include "imperative/imperative.h"
#include "nn/nn_test_util.h"

namespace mx {
namespace nn {
namespace testing {
namespace {

NamedArrays Snapshot(const Block& block) {
  NamedArrays values;
  for (const auto& [name, p] : block.CollectParams()) {
    values.emplace_back(name, p->data().Copy(Context::CPU()));
  }
  return values;
}

void Restore(const Block& block, const NamedArrays& values) {
  const ParameterList params = block.CollectParams();
  for (size_t i = 0; i < params.size(); ++i) {
    params[i].second->SetData(values[i].second);
  }
}

// Runs `block` on `x` imperatively and hybridized from the same parameter
// values and random seed; outputs, parameter and input gradients, and the
// parameters after the step (running statistics) must agree.
void ExpectHybridMatchesImperative(std::shared_ptr<HybridBlock> block,
                                   const TShape& in_shape) {
  random::Seed(11);
  block->Initialize(init::Normal(0.3));
  const NDArray x = RandomArray(in_shape, DType::kFloat32, -1, 1, 3);
  const NDArray probe = (*block)(x);  // completes deferred shapes
  const NDArray head = RandomArray(probe.shape(), DType::kFloat32, -1, 1, 5);
  const NamedArrays start = Snapshot(*block);

  random::Seed(5);
  const RunResult imperative = RunWithGrad(*block, x, head);
  const NamedArrays after_imperative = Snapshot(*block);

  Restore(*block, start);
  block->Hybridize();
  random::Seed(5);
  const RunResult hybrid = RunWithGrad(*block, x, head);
  EXPECT_EQ(block->num_traces(), 1);
  const NamedArrays after_hybrid = Snapshot(*block);

  EXPECT_TRUE(AllClose(hybrid.output, imperative.output, 1e-4, 1e-5));
  EXPECT_TRUE(AllClose(hybrid.input_grad, imperative.input_grad, 1e-4, 1e-5));
  ASSERT_EQ(hybrid.grads.size(), imperative.grads.size());
  for (const auto& [name, grad] : imperative.grads) {
    EXPECT_TRUE(AllClose(hybrid.grads.at(name), grad, 1e-4, 1e-5)) << name;
  }
  for (size_t i = 0; i < after_hybrid.size(); ++i) {
    EXPECT_TRUE(AllClose(ToDouble(after_hybrid[i].second),
                         ToDouble(after_imperative[i].second), 1e-4, 1e-5))
        << after_hybrid[i].first;
  }
}

TEST(Hybridize, DenseMatchesImperative) {
  ExpectHybridMatchesImperative(std::make_shared<Dense>(4, "relu"), {3, 2, 3});
}

TEST(Hybridize, Conv2DMatchesImperative) {
  Conv2D::Options o;
  o.padding = {1, 0};
  o.strides = {1, 2};
  o.activation = "tanh";
  ExpectHybridMatchesImperative(std::make_shared<Conv2D>(3, TShape{3, 3}, o),
                                {2, 2, 5, 6});
}

TEST(Hybridize, PoolingMatchesImperative) {
  ExpectHybridMatchesImperative(std::make_shared<MaxPool2D>(), {2, 2, 4, 6});
  ExpectHybridMatchesImperative(std::make_shared<AvgPool2D>(TShape{3, 2}),
                                {2, 2, 6, 4});
  ExpectHybridMatchesImperative(std::make_shared<GlobalAvgPool2D>(),
                                {2, 3, 4, 4});
}

TEST(Hybridize, BatchNormMatchesImperativeIncludingRunningStats) {
  ExpectHybridMatchesImperative(std::make_shared<BatchNorm>(), {6, 3, 2, 2});
}

TEST(Hybridize, DropoutActivationFlattenMatchImperative) {
  ExpectHybridMatchesImperative(std::make_shared<Dropout>(0.3), {4, 50});
  ExpectHybridMatchesImperative(std::make_shared<Activation>("softrelu"),
                                {3, 4});
  ExpectHybridMatchesImperative(std::make_shared<Flatten>(), {2, 3, 4});
}

TEST(Hybridize, WholeNetworkMatchesImperative) {
  auto net = std::make_shared<HybridSequential>();
  net->Add(std::make_shared<Conv2D>(4, TShape{3, 3}))
      .Add(std::make_shared<BatchNorm>())
      .Add(std::make_shared<Activation>("relu"))
      .Add(std::make_shared<MaxPool2D>())
      .Add(std::make_shared<Flatten>())
      .Add(std::make_shared<Dropout>(0.2))
      .Add(std::make_shared<Dense>(3));
  ExpectHybridMatchesImperative(net, {4, 2, 6, 6});
}

// A loss block's values and its gradient with respect to a random pred.
std::pair<std::vector<double>, std::vector<double>> LossAndGradient(
    HybridBlock& loss, const TShape& pred_shape, uint32_t seed,
    const NDArray& label) {
  NDArray pred = RandomArray(pred_shape, DType::kFloat32, -1, 1, seed);
  autograd::AttachGrad(&pred);
  NDArray l;
  {
    autograd::RecordScope record;
    l = loss({pred, label})[0];
  }
  autograd::Backward({l});
  return std::make_pair(ToDouble(l), ToDouble(pred.grad()));
}

TEST(Hybridize, LossMatchesImperative) {
  SoftmaxCrossEntropyLoss loss;
  const NDArray label = NDArray::FromVector<float>({3}, {2, 0, 1});
  const auto run = [&] { return LossAndGradient(loss, {3, 4}, 9, label); };
  const auto imperative = run();
  loss.Hybridize();
  const auto hybrid = run();
  EXPECT_EQ(loss.num_traces(), 1);
  EXPECT_EQ(loss.symbol().ListInputNames(),
            (std::vector<std::string>{"data0", "data1"}));
  EXPECT_TRUE(AllClose(hybrid.first, imperative.first));
  EXPECT_TRUE(AllClose(hybrid.second, imperative.second));
}

TEST(Hybridize, CtcLossGradientMatchesImperative) {
  // The op's gradient comes from its hidden output: through CachedOp too.
  CTCLoss loss;
  const NDArray label =
      NDArray::FromVector<float>({2, 3}, {0, 1, 1, 2, -1, -1});
  const auto run = [&] { return LossAndGradient(loss, {2, 5, 4}, 10, label); };
  const auto imperative = run();
  loss.Hybridize();
  const auto traced = run();
  const auto cached = run();
  EXPECT_EQ(loss.num_traces(), 1);
  EXPECT_TRUE(AllClose(traced.first, imperative.first));
  EXPECT_TRUE(AllClose(cached.second, imperative.second));
  // Every frame's gradient sums to 0 over the classes (softmax minus a
  // distribution), and is not all zero.
  double total = 0, norm = 0;
  for (size_t i = 0; i < imperative.second.size(); ++i) {
    total += imperative.second[i];
    norm += std::abs(imperative.second[i]);
  }
  EXPECT_NEAR(total, 0, 1e-5);
  EXPECT_GT(norm, 0.1);
}

// Counts how often Forward runs; multiplies by a shape-derived constant.
class Counting : public HybridBlock {
 public:
  std::vector<NDArray> Forward(const std::vector<NDArray>& x) override {
    ++forward_calls;
    return {x[0] * static_cast<double>(x[0].shape()[0])};
  }
  int forward_calls = 0;
};

TEST(Hybridize, RetracesOnNewShapesAndDTypesOnly) {
  Counting block;
  block.Hybridize();
  const NDArray a = nd::ones({2, 3});
  EXPECT_EQ(ToDouble(block(a))[0], 2);
  EXPECT_EQ(ToDouble(block(a * 3.0))[0], 6);
  EXPECT_EQ(block.num_traces(), 1);
  EXPECT_EQ(block.forward_calls, 1);
  EXPECT_EQ(ToDouble(block(nd::ones({5, 3})))[0], 5);  // new shape
  EXPECT_EQ(block.num_traces(), 2);
  EXPECT_EQ(
      ToDouble(block(nd::ones({2, 3}, Context::CPU(), DType::kFloat64)))[0],
      2);  // new dtype
  EXPECT_EQ(block.num_traces(), 3);
  EXPECT_EQ(ToDouble(block(a))[0], 2);  // cached
  EXPECT_EQ(block.num_traces(), 3);
  EXPECT_EQ(block.forward_calls, 3);
}

TEST(Hybridize, ChildrenAreInlinedIntoTheParentsTrace) {
  auto child = std::make_shared<Dense>(3);
  auto net = std::make_shared<HybridSequential>();
  net->Add(child).Add(std::make_shared<Dense>(2));
  net->Initialize();
  child->Hybridize();  // hybridized on its own ...
  net->Hybridize();    // ... and as part of the parent
  (*net)(RandomArray({4, 5}));
  EXPECT_EQ(net->num_traces(), 1);
  EXPECT_EQ(child->num_traces(), 0);
  EXPECT_EQ(net->symbol().ListInputNames(),
            (std::vector<std::string>{"data", "0.weight", "0.bias", "1.weight",
                                      "1.bias"}));
}

TEST(Hybridize, MissingInferShapeNamesTheParameters) {
  class Scaled : public HybridBlock {
   public:
    Scaled() { RegisterParameter("gain", TShape{0}); }
    std::vector<NDArray> Forward(const std::vector<NDArray>& x) override {
      return {x[0] * own_params()[0].second->data()};
    }
    std::string TypeName() const override { return "Scaled"; }
  };
  Scaled block;
  block.Initialize();
  block.Hybridize();
  const std::string msg = ErrorOf<StateError>([&] {
    block(RandomArray({2, 3}));
  });
  EXPECT_TRUE(Contains(msg, "Scaled") && Contains(msg, "gain (0,)") &&
              Contains(msg, "InferShape"))
      << msg;
}

TEST(Hybridize, InferShapeOverrideCompletesDeferredParameters) {
  class Scaled : public HybridBlock {
   public:
    Scaled() { gain_ = RegisterParameter("gain", TShape{0}); }
    void InferShape(const std::vector<NDArray>& x) override {
      gain_->SetShape({x[0].shape()[1]});
    }
    std::vector<NDArray> Forward(const std::vector<NDArray>& x) override {
      return {x[0] * gain_->data()};
    }
    ParameterPtr gain_;
  };
  Scaled block;
  block.Initialize(init::Constant(2));
  block.Hybridize();
  EXPECT_EQ(ToDouble(block(nd::ones({2, 3}))), (std::vector<double>(6, 2.0)));
}

TEST(Hybridize, UnregisteredParameterIsReported) {
  class Sneaky : public HybridBlock {
   public:
    Sneaky() : hidden_("hidden", TShape{3}) { hidden_.Initialize(); }
    std::vector<NDArray> Forward(const std::vector<NDArray>& x) override {
      return {x[0] + hidden_.data()};
    }
    std::string TypeName() const override { return "Sneaky"; }
    Parameter hidden_;
  };
  Sneaky block;
  block.Hybridize();
  const std::string msg = ErrorOf<InvalidArgument>([&] {
    block(RandomArray({2, 3}));
  });
  EXPECT_TRUE(Contains(msg, "Sneaky") && Contains(msg, "\"hidden\"")) << msg;
}

TEST(Hybridize, ExportThenImportGivesTheSameOutputs) {
  auto net = std::make_shared<HybridSequential>();
  net->Add(std::make_shared<Conv2D>(3, TShape{3, 3}))
      .Add(std::make_shared<BatchNorm>())
      .Add(std::make_shared<Activation>("relu"))
      .Add(std::make_shared<GlobalAvgPool2D>())
      .Add(std::make_shared<Dense>(2));
  net->Initialize(init::Xavier());
  const NDArray x = RandomArray({2, 1, 5, 5});
  EXPECT_THROW(net->Export(TempPath("net")), StateError);
  net->Hybridize();
  {
    autograd::TrainModeScope train;  // moves the running statistics
    (*net)(x);
  }
  const std::vector<double> expected = ToDouble((*net)(x));
  const std::string prefix = TempPath("net");
  net->Export(prefix);
  EXPECT_TRUE(std::ifstream(prefix + "-symbol.json").good());

  auto loaded = SymbolBlock::Import(prefix + "-symbol.json", {"data"},
                                    prefix + "-0000.params");
  EXPECT_TRUE(AllClose(ToDouble((*loaded)(x)), expected));
  EXPECT_EQ(loaded->CollectParams().size(), net->CollectParams().size());
  for (const auto& [name, p] : loaded->CollectParams()) {
    const bool aux = Contains(name, "running_");
    EXPECT_EQ(p->grad_req() == GradReq::kNull, aux) << name;
  }

  const std::string msg = ErrorOf<InvalidArgument>([&] {
    SymbolBlock::Import(prefix + "-symbol.json", {"input"},
                        prefix + "-0000.params");
  });
  EXPECT_TRUE(Contains(msg, "\"input\"")) << msg;
  EXPECT_THROW(SymbolBlock::Import(TempPath("nothing-symbol.json"), {"data"}),
               NotFound);
}

// The seed's dynamic-shape block: boolean indexing and flatnonzero inside
// a hybridized Forward give what the imperative Forward gives.
class DynamicShapeBlock : public HybridBlock {
 public:
  DynamicShapeBlock()
      : dense_(RegisterChild("dense", std::make_shared<Dense>(10))) {}
  std::vector<NDArray> Forward(const std::vector<NDArray>& in) override {
    return {nd::boolean_mask(in[0].Reshape({-1}), in[1]).Reshape({2, 2}),
            nd::flatnonzero((*dense_)(in[0]))};
  }

 private:
  std::shared_ptr<Dense> dense_;
};

TEST(Hybridize, DynamicShapeInsideABlock) {
  const NDArray x = NDArray::FromVector<float>({3, 2}, {0, 1, 1, 1, 2, 2});
  const NDArray idx = nd::cast(x.Reshape({-1}) < 2, DType::kFloat32);
  DynamicShapeBlock block;
  block.Initialize(init::Normal(0.3));
  const std::vector<NDArray> imperative = block({x, idx});
  block.Hybridize();
  const std::vector<NDArray> hybrid = block({x, idx});
  ASSERT_EQ(hybrid.size(), 2u);
  EXPECT_EQ(hybrid[0].shape(), TShape({2, 2}));
  EXPECT_EQ(ToDouble(hybrid[0]), ToDouble(imperative[0]));
  EXPECT_EQ(ToDouble(hybrid[1]), ToDouble(imperative[1]));
  EXPECT_EQ(block.num_traces(), 1);
}

TEST(Hybridize, DynamicShapeBlockRecordsEveryOutput) {
  // Output 0 reads only x, output 1 only the dense layer's parameters;
  // Backward works from either and reaches x and every parameter.
  NDArray x = NDArray::FromVector<float>({3, 2}, {0, 1, 1, 1, 2, 2});
  const NDArray idx = nd::cast(x.Reshape({-1}) < 2, DType::kFloat32);
  DynamicShapeBlock block;
  block.Initialize(init::Normal(0.3));
  block.Hybridize();
  autograd::AttachGrad(&x);
  std::vector<NDArray> out;
  {
    autograd::RecordScope record;
    out = block({x, idx});
  }
  ASSERT_EQ(out.size(), 2u);
  const NDArray h = NDArray::FromVector<float>({2, 2}, {1, 2, 3, 4});
  autograd::BackwardOptions retain;
  retain.retain_graph = true;
  autograd::Backward({out[0]}, {h}, retain);
  // x's flattened elements 0..3 are < 2 and kept, in order.
  EXPECT_EQ(ToDouble(x.grad()), (std::vector<double>{1, 2, 3, 4, 0, 0}));
  for (const auto& [name, p] : block.CollectParams()) {
    EXPECT_EQ(ToDouble(p->grad()), std::vector<double>(p->data().size(), 0))
        << name;
  }
  autograd::Backward({out[1]});  // flatnonzero: zero gradient everywhere
  EXPECT_EQ(ToDouble(x.grad()), std::vector<double>(6, 0.0));

  // Without a gradient on x, output 0 depends on nothing recorded; it is
  // still recorded (tied to the parameters, which get zeros).
  const NDArray plain = x.Detach();
  {
    autograd::RecordScope record;
    out = block({plain, idx});
  }
  EXPECT_NO_THROW(autograd::Backward({out[0]}));
  EXPECT_EQ(block.num_traces(), 1);
}

}  // namespace
}  // namespace testing
}  // namespace nn
}  // namespace mx
