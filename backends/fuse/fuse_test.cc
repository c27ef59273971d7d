// The fuse plugin, loaded only through MX_PLUGINS (set in BUILD).
#include <algorithm>

#include "base/error.h"
#include "gtest/gtest.h"
#include "imperative/executor.h"
#include "plugin/plugin.h"
#include "subgraph/partition_graph.h"
#include "testing/op_test_util.h"
#include "testing/subgraph_test_util.h"

namespace mx {
namespace {

using testing::CountOps;

Symbol Op(const std::string& op, const std::vector<Symbol>& in,
          const AttrDict& attrs = {}, const std::string& name = "") {
  return Symbol::Create(op, in, attrs, name);
}

// x -> 8 elementwise ops, with a branch that rejoins (a tree).
Symbol Chain() {
  Symbol x = Symbol::Variable("x"), w = Symbol::Variable("w");
  Symbol a = Op("_mul_scalar", {x}, {{"scalar", "1.5"}});
  Symbol b = Op("sin", {a});
  Symbol c = Op("elemwise_mul", {b, w});
  Symbol d = Op("tanh", {a});
  Symbol e = Op("elemwise_add", {c, d});
  Symbol f = Op("_rminus_scalar", {e}, {{"scalar", "2"}});
  Symbol g = Op("sigmoid", {f});
  return Op("relu", {Op("elemwise_sub", {g, x})});
}

// Same random inputs into both executors: outputs equal bit for bit.
void ExpectSameForward(Executor* ref, Executor* other) {
  testing::FillRandom(ref, -2, 2);
  testing::CopyInputs(*ref, other);
  ref->Forward();
  other->Forward();
  EXPECT_TRUE(testing::SameOutputs(*ref, *other));
}

void ExpectFusedMatches(const Symbol& net, DType dtype, int fused_nodes) {
  const std::map<std::string, TShape> shapes = {{"x", {5, 7}}, {"w", {5, 7}}};
  const std::map<std::string, DType> types = {{"x", dtype}, {"w", dtype}};
  auto ref = Executor::SimpleBind(net, Context::CPU(), shapes, types,
                                  OpReqType::kNullOp);
  auto fused = testing::SimpleBindWithBackend(net, "fuse", shapes, types);
  EXPECT_EQ(CountOps(fused->symbol(), "_fused_elemwise"), fused_nodes);
  ExpectSameForward(ref.get(), fused.get());
}

TEST(FusePlugin, LoadedFromMxPlugins) {
  const std::vector<std::string> names = ListSubgraphBackends();
  EXPECT_NE(std::find(names.begin(), names.end(), "fuse"), names.end());
  bool listed = false;
  for (const PluginInfo& p : ListPlugins()) listed |= p.name == "fuse";
  EXPECT_TRUE(listed);
}

TEST(FusePlugin, ChainAndTreeBecomeOneFusedOpWithEqualResults) {
  ExpectFusedMatches(Chain(), DType::kFloat32, 1);
  ExpectFusedMatches(Chain(), DType::kFloat64, 1);
  // Each instruction rounded to float16 as the unfused op stores it.
  ExpectFusedMatches(Chain(), DType::kFloat16, 1);
}

TEST(FusePlugin, NonElementwiseOpsSplitTheChain) {
  Symbol x = Symbol::Variable("x");
  Symbol a = Op("exp", {Op("_mul_scalar", {x}, {{"scalar", "0.1"}})});
  Symbol t = Op("transpose", {Op("transpose", {a})});
  Symbol net = Op("cos", {Op("sin", {t})});
  Symbol out = Symbol::Group({net, a});  // `a` also leaves the first group.
  const std::map<std::string, TShape> shapes = {{"x", {5, 7}}};
  PartitionReport report;
  const Symbol part = PartitionGraph(out, "fuse", {}, &report);
  EXPECT_EQ(CountOps(part, "_fused_elemwise"), 2) << report.ToString();
  auto ref =
      Executor::SimpleBind(out, Context::CPU(), shapes, {}, OpReqType::kNullOp);
  auto exec = Executor::SimpleBind(part, Context::CPU(), shapes, {},
                                   OpReqType::kNullOp);
  ExpectSameForward(ref.get(), exec.get());
}

TEST(FusePlugin, SkippedWhenGradientsAreRequested) {
  PartitionOptions options;
  options.need_grad = true;
  PartitionReport report;
  const Symbol part = PartitionGraph(Chain(), "fuse", options, &report);
  EXPECT_EQ(CountOps(part, "_fused_elemwise"), 0);
  ASSERT_EQ(report.notes.size(), 1u);
  EXPECT_TRUE(testing::Contains(report.notes[0], "inference only"));
}

TEST(FusePlugin, PartitionedGraphSurvivesJsonRoundTrip) {
  const Symbol part = PartitionGraph(Chain(), "fuse");
  ASSERT_EQ(CountOps(part, "_fused_elemwise"), 1);
  const Symbol loaded = Symbol::FromJSON(part.ToJSON());
  EXPECT_EQ(loaded.ToJSON(), part.ToJSON());
  const std::map<std::string, TShape> shapes = {{"x", {3, 4}}, {"w", {3, 4}}};
  auto a = Executor::SimpleBind(part, Context::CPU(), shapes, {},
                                OpReqType::kNullOp);
  auto b = Executor::SimpleBind(loaded, Context::CPU(), shapes, {},
                                OpReqType::kNullOp);
  ExpectSameForward(a.get(), b.get());
}

TEST(FusePlugin, MalformedProgramsAreTypedErrors) {
  const Symbol x = Symbol::Variable("x");
  auto create = [&](AttrDict attrs) {
    return Symbol::Create("_fused_elemwise", {x}, attrs);
  };
  testing::ExpectError<InvalidArgument>(
      [&] {
        create(
            {{"num_inputs", "1"}, {"program", "exp 5 -1 0"}, {"outputs", "1"}});
      },
      {"plugin \"fuse\"", "malformed program instruction"});
  testing::ExpectError<InvalidArgument>(
      [&] {
        create({{"num_inputs", "1"},
                {"program", "launch 0 -1 0"},
                {"outputs", "1"}});
      },
      {"unknown instruction \"launch\""});
  testing::ExpectError<InvalidArgument>(
      [&] {
        create(
            {{"num_inputs", "1"}, {"program", "exp 0 -1 0"}, {"outputs", "9"}});
      },
      {"bad output register \"9\""});
  testing::ExpectError<InvalidArgument>(
      [&] {
        create({{"num_inputs", "1"}, {"outputs", "1"}});
      },
      {"attribute \"program\" is required"});
}

}  // namespace
}  // namespace mx
