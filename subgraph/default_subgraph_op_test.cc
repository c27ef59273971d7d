// _default_subgraph_op: backward through partitioned graphs equals
// backward of the original graph; shape/dtype inference and aux states.
#include "graph/pass.h"
#include "gtest/gtest.h"
#include "subgraph/partition_graph.h"
#include "testing/op_test_util.h"
#include "testing/subgraph_test_util.h"

namespace mx {
namespace {

using testing::ToDouble;

Symbol Op(const std::string& op, const std::vector<Symbol>& in,
          const AttrDict& attrs = {}, const std::string& name = "") {
  return Symbol::Create(op, in, attrs, name);
}

const std::map<std::string, TShape> kShapes = {{"x", {3, 4}}, {"w", {3, 4}}};

void ExpectSameGradients(const Symbol& partitioned_or_original, bool use_env,
                         OpReqType req) {
  testing::ScopedEnv env("MX_SUBGRAPH_BACKEND", use_env ? "default" : "NONE");
  EXPECT_GT(testing::ExpectSameForwardBackward(
                testing::TwoOutputNet().symbol, partitioned_or_original,
                Context::CPU(), kShapes, req, 1e-12),
            0);
}

TEST(DefaultSubgraphOp, BackwardOfPartitionedSymbolMatchesOriginal) {
  const testing::SubgraphNet net = testing::TwoOutputNet();
  const Symbol part = testing::PartitionWithDefault(net.symbol, net.claimed);
  ExpectSameGradients(part, /*use_env=*/false, OpReqType::kWriteTo);
  ExpectSameGradients(part, /*use_env=*/false, OpReqType::kAddTo);
}

TEST(DefaultSubgraphOp, BackwardWithBackendFromEnvironmentMatchesOriginal) {
  const testing::SubgraphNet net = testing::TwoOutputNet();
  SetSubgraphPropertyOpNames("default", net.claimed);
  ExpectSameGradients(net.symbol, /*use_env=*/true, OpReqType::kWriteTo);
  RemoveSubgraphPropertyOpNames("default");
}

TEST(DefaultSubgraphOp, GradientIsAnotherSubgraphOp) {
  SetSubgraphPropertyOpNames("default", {"exp", "sin"});
  Symbol x = Symbol::Variable("x");
  const Symbol part =
      PartitionGraph(Op("sin", {Op("exp", {x}, {}, "a")}, {}, "b"), "default");
  RemoveSubgraphPropertyOpNames("default");
  ASSERT_EQ(testing::CountOps(part, "_default_subgraph_op"), 1);
  Graph g(part);
  g.SetAttr("grad_ys", part.outputs);
  g.SetAttr("grad_ys_out_grad",
            std::vector<NodeEntry>{Symbol::Variable("head").outputs[0]});
  g.SetAttr("grad_xs", std::vector<NodeEntry>{x.outputs[0]});
  Symbol grads;
  grads.outputs = ApplyPass(g, "Gradient").outputs;
  ASSERT_EQ(grads.outputs.size(), 1u);
  const Node& bwd = *grads.outputs[0].node;
  EXPECT_EQ(bwd.op()->name(), "_default_subgraph_op");
  EXPECT_EQ(bwd.name(), "_default_subgraph0_backward");
  // Reads x, the head gradient and nothing it could recompute cheaply.
  EXPECT_EQ(grads.ListInputNames(), (std::vector<std::string>{"x", "head"}));
}

TEST(DefaultSubgraphOp, InfersShapesAndTypesThroughTheSubgraph) {
  SetSubgraphPropertyOpNames("default", {"FullyConnected", "relu"});
  Symbol fc = Op("FullyConnected", {Symbol::Variable("data")},
                 {{"num_hidden", "5"}}, "fc");
  const Symbol part = PartitionGraph(Op("relu", {fc}), "default");
  RemoveSubgraphPropertyOpNames("default");
  auto exec = Executor::SimpleBind(part, Context::CPU(), {{"data", {2, 7}}}, {},
                                   OpReqType::kNullOp);
  EXPECT_EQ(exec->arg_dict().at("fc_weight").shape(), TShape({5, 7}));
  exec->Forward();
  EXPECT_EQ(exec->outputs()[0].shape(), TShape({2, 5}));
  // A wrong dtype is reported through the subgraph.
  testing::ExpectError<DTypeError>(
      [&] {
        Executor::SimpleBind(part, Context::CPU(), {{"data", {2, 7}}},
                             {{"data", DType::kFloat64}}, OpReqType::kNullOp);
      },
      {"fc"});
}

// x is known only through y, which meets the subgraph's output.
Symbol SinPlusY(DType y_type) {
  Symbol x = Symbol::Variable("x");
  Symbol y = Symbol::Variable("y", TShape({2, 3}), y_type);
  return Op("elemwise_add", {Op("sin", {x}, {}, "s"), y});
}

Symbol ClaimSin(const Symbol& net) {
  SetSubgraphPropertyOpNames("default", {"sin"});
  const Symbol part = PartitionGraph(net, "default");
  RemoveSubgraphPropertyOpNames("default");
  EXPECT_EQ(testing::CountOps(part, "_default_subgraph_op"), 1);
  return part;
}

TEST(DefaultSubgraphOp, OutputShapeFlowsBackToTheSubgraphInputs) {
  const Symbol net = SinPlusY(DType::kUnknown);
  const Symbol part = ClaimSin(net);
  auto ref =
      Executor::SimpleBind(net, Context::CPU(), {}, {}, OpReqType::kNullOp);
  auto exec =
      Executor::SimpleBind(part, Context::CPU(), {}, {}, OpReqType::kNullOp);
  EXPECT_EQ(exec->arg_dict().at("x").shape(), TShape({2, 3}));
  testing::FillRandom(ref.get(), -1, 1);
  testing::CopyInputs(*ref, exec.get());
  ref->Forward();
  exec->Forward();
  EXPECT_TRUE(testing::SameOutputs(*ref, *exec));
}

TEST(DefaultSubgraphOp, OutputTypeFlowsBackToTheSubgraphInputs) {
  const Symbol part = ClaimSin(SinPlusY(DType::kFloat64));
  const Graph g = ApplyPass(Graph(part), "InferType");
  EXPECT_EQ(g.GetAttr<size_t>("dtype_num_unknown_nodes"), 0u);
  const IndexedGraph& idx = g.indexed_graph();
  for (uint32_t nid : idx.input_nodes()) {
    EXPECT_EQ(g.GetAttr<std::vector<DType>>("dtype")[idx.entry_id(nid, 0)],
              DType::kFloat64)
        << idx[nid].source->name();
  }
}

TEST(DefaultSubgraphOp, BatchNormMovingStatisticsStayAuxStatesAndUpdate) {
  SetSubgraphPropertyOpNames("default", {"BatchNorm", "relu"});
  Symbol bn = Op("BatchNorm", {Symbol::Variable("data")}, {}, "bn");
  const Symbol net = Op("relu", {bn});
  const Symbol part = PartitionGraph(net, "default");
  RemoveSubgraphPropertyOpNames("default");
  EXPECT_EQ(part.ListAuxiliaryStates(), net.ListAuxiliaryStates());
  auto ref = Executor::SimpleBind(net, Context::CPU(), {{"data", {4, 3}}}, {},
                                  OpReqType::kNullOp);
  auto exec = Executor::SimpleBind(part, Context::CPU(), {{"data", {4, 3}}}, {},
                                   OpReqType::kNullOp);
  testing::FillRandom(ref.get());
  testing::CopyInputs(*ref, exec.get());
  ref->Forward(/*is_train=*/true);
  exec->Forward(/*is_train=*/true);
  EXPECT_TRUE(testing::SameOutputs(*ref, *exec));
  for (const auto& [name, a] : ref->aux_dict()) {
    EXPECT_EQ(ToDouble(exec->aux_dict().at(name)), ToDouble(a)) << name;
  }
}

}  // namespace
}  // namespace mx
