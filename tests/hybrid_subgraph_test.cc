#include <cstdlib>

#include "autograd/autograd.h"
#include "gtest/gtest.h"
#include "imperative/nd.h"
#include "nn/nn.h"
#include "plugin/plugin.h"
#include "testing/op_test_util.h"

namespace mx {
namespace {

using testing::AllClose;
using testing::RandomArray;
using testing::ToDouble;

// A dense layer followed by a chain of elementwise ops for fuse to claim.
class Net : public nn::HybridBlock {
 public:
  Net() : fc_(RegisterChild("fc", std::make_shared<nn::Dense>(8))) {}
  std::vector<NDArray> Forward(const std::vector<NDArray>& x) override {
    NDArray h = (*fc_)(x[0]);
    return {nd::exp(nd::sin(h) * 0.5 + 1) - nd::tanh(h)};
  }

 private:
  std::shared_ptr<nn::Dense> fc_;
};

bool Contains(const Symbol& s, const std::string& op) {
  bool found = false;
  DFSVisit(s.outputs, [&](const NodePtr& n) {
    found |= !n->is_variable() && n->op()->name() == op;
  });
  return found;
}

TEST(HybridSubgraph, FuseBackendGivesTheSameResults) {
  ASSERT_FALSE(ListPlugins().empty()) << "MX_PLUGINS did not load fuse";
  Net net;
  net.Initialize(nn::init::Xavier());
  const NDArray x = RandomArray({4, 5});
  const std::vector<double> expected = ToDouble(net(x));  // Imperative.

  setenv("MX_SUBGRAPH_BACKEND", "fuse", 1);
  net.Hybridize();
  const std::vector<double> fused = ToDouble(net(x));
  unsetenv("MX_SUBGRAPH_BACKEND");
  EXPECT_TRUE(Contains(net.cached_symbol(), "_fused_elemwise"));
  EXPECT_FALSE(Contains(net.symbol(), "_fused_elemwise"));  // Export's.
  EXPECT_TRUE(AllClose(fused, expected, 1e-6, 1e-6));
}

TEST(HybridSubgraph, TrainingSkipsTheInferenceOnlyFusion) {
  Net net;
  net.Initialize(nn::init::Xavier());
  const NDArray x = RandomArray({4, 5});
  setenv("MX_SUBGRAPH_BACKEND", "fuse", 1);
  net.Hybridize();
  NDArray y;
  {
    autograd::RecordScope record;
    y = net(x);
  }
  unsetenv("MX_SUBGRAPH_BACKEND");
  EXPECT_FALSE(Contains(net.cached_symbol(), "_fused_elemwise"));
  autograd::Backward({y});
  EXPECT_EQ(net.CollectParams()[0].second->grad().shape(), TShape({8, 5}));
}

}  // namespace
}  // namespace mx
