// A hybridized block's traced graphs are dropped when its tree changes:
// a child registered or replaced, a parameter replaced or reshaped.
#include "gtest/gtest.h"
#include "nn/nn_test_util.h"

namespace mx {
namespace nn {
namespace testing {
namespace {

TEST(HybridCache, AddingAChildRetraces) {
  auto first = std::make_shared<Dense>(3);
  auto second = std::make_shared<Dense>(5);
  HybridSequential net;
  net.Add(first);
  net.Initialize(init::Normal(0.5));
  net.Hybridize();
  const NDArray x = RandomArray({2, 4});
  EXPECT_EQ(net(x).shape(), TShape({2, 3}));
  net.Add(second);
  second->Initialize(init::Normal(0.5));
  const NDArray y = net(x);
  EXPECT_EQ(y.shape(), TShape({2, 5}));
  EXPECT_EQ(net.num_traces(), 2);
  // Same values as the two layers run imperatively.
  first->Hybridize(false);
  second->Hybridize(false);
  EXPECT_TRUE(AllClose(ToDouble(y), ToDouble((*second)((*first)(x)))));
}

// A block whose head layer (a child) and scale (a parameter) can be
// swapped after construction, as `self.head = ...` does in Python.
class Swappable : public HybridBlock {
 public:
  Swappable() {
    head_ = RegisterChild("head", std::make_shared<Dense>(3));
    SetScale(1);
  }
  void SetHead(int64_t units) {
    head_ = RegisterChild("head", std::make_shared<Dense>(units));
  }
  void SetScale(int64_t n) {
    Parameter::Options options;
    options.init = init::Constant(2);
    scale_ = RegisterParameter("scale", TShape{n}, options);
  }
  std::vector<NDArray> Forward(const std::vector<NDArray>& x) override {
    // The scale's shape is baked into the trace (the Reshape target).
    const int64_t n = scale_->shape()[0];
    return {nd::multiply((*head_)(x[0]), scale_->data().Reshape({1, n}))};
  }
  std::shared_ptr<Dense> head_;
  ParameterPtr scale_;
};

TEST(HybridCache, ReplacingAChildByNameRetraces) {
  Swappable block;
  block.Initialize(init::Normal(0.5));
  block.Hybridize();
  const NDArray x = RandomArray({2, 4});
  EXPECT_EQ(block(x).shape(), TShape({2, 3}));
  block.SetHead(6);
  block.head_->Initialize(init::Normal(0.5));
  const NDArray y = block(x);
  EXPECT_EQ(y.shape(), TShape({2, 6}));
  EXPECT_EQ(block.num_traces(), 2);
  block.head_->Hybridize(false);
  EXPECT_TRUE(AllClose(ToDouble(y), ToDouble((*block.head_)(x)*2.0)));
}

TEST(HybridCache, ChangingAParameterShapeRetraces) {
  Swappable block;
  block.Initialize(init::Normal(0.5));
  block.Hybridize();
  const NDArray x = RandomArray({2, 4});
  const std::vector<double> before = ToDouble(block(x));
  block.SetScale(3);  // (1,) -> (3,): a new Reshape target
  block.scale_->Initialize();
  const NDArray y = block(x);
  EXPECT_EQ(block.num_traces(), 2);
  EXPECT_TRUE(AllClose(ToDouble(y), before));  // 2 * head(x) either way
  EXPECT_EQ(
      block.symbol().ListInputNames(),
      (std::vector<std::string>{"data", "head.weight", "head.bias", "scale"}));
}

TEST(HybridCache, ChangeInsideANestedChildRetracesTheParent) {
  auto inner = std::make_shared<HybridSequential>();
  inner->Add(std::make_shared<Dense>(3));
  HybridSequential outer;
  outer.Add(inner);
  outer.Initialize(init::Normal(0.5));
  outer.Hybridize();
  const NDArray x = RandomArray({2, 4});
  EXPECT_EQ(outer(x).shape(), TShape({2, 3}));
  auto added = std::make_shared<Dense>(4);
  inner->Add(added);
  added->Initialize(init::Normal(0.5));
  EXPECT_EQ(outer(x).shape(), TShape({2, 4}));
  EXPECT_EQ(outer.num_traces(), 2);
}

TEST(HybridCache, StaleGraphIsNotExported) {
  Swappable block;
  block.Initialize(init::Normal(0.5));
  block.Hybridize();
  block(RandomArray({2, 4}));
  block.SetHead(2);
  const std::string msg =
      ErrorOf<StateError>([&] { block.Export(TempPath("stale")); });
  EXPECT_TRUE(Contains(msg, "changed since its latest trace")) << msg;
}

TEST(HybridCache, UnchangedTreeKeepsItsTrace) {
  Swappable block;
  block.Initialize(init::Normal(0.5));
  block.Hybridize();
  const NDArray x = RandomArray({2, 4});
  block(x);
  block.ZeroGrad();
  block.Initialize(init::Normal(0.5), Context::CPU(), /*force_reinit=*/true);
  block(x);
  EXPECT_EQ(block.num_traces(), 1);
}

}  // namespace
}  // namespace testing
}  // namespace nn
}  // namespace mx
