// The seed's network structures 1-7, each checked four ways, and the
// partitioner's reports and errors.
#include "subgraph/partition_graph.h"

#include "gtest/gtest.h"
#include "testing/op_test_util.h"
#include "testing/subgraph_test_util.h"

namespace mx {
namespace {

using testing::CheckFourWays;
using testing::Contains;
using testing::CountOps;

Symbol Var(const std::string& name, const TShape& shape = TShape()) {
  return Symbol::Variable(name, shape);
}
Symbol Op(const std::string& op, const std::vector<Symbol>& in,
          const AttrDict& attrs = {}, const std::string& name = "") {
  return Symbol::Create(op, in, attrs, name);
}

// exp -> (cos, sin) -> add: claiming exp, sin and add closes a cycle
// through cos.
Symbol Diamond() { return testing::SeedStructure(2); }

const std::vector<std::string> kAddNames = {"_Plus", "elemwise_add", "_plus"};
std::vector<std::string> With(std::vector<std::string> names) {
  names.insert(names.end(), kAddNames.begin(), kAddNames.end());
  return names;
}

TEST(PartitionGraph, Structure1ConvolutionsSharingAWeight) {
  CheckFourWays(testing::SeedStructure(1), {"Convolution"});
}

TEST(PartitionGraph, Structure2CycleThroughAnOutsideNode) {
  CheckFourWays(Diamond(), With({"exp", "sin"}));
  CheckFourWays(Diamond(), With({"exp", "cos"}));
}

TEST(PartitionGraph, Structure3BatchNormKeepsAuxStates) {
  Symbol bn = testing::SeedStructure(3);
  CheckFourWays(bn, With({"exp", "sin"}));
  CheckFourWays(bn, With({"exp", "cos"}));
  CheckFourWays(bn, With({"exp", "sin", "BatchNorm"}));
  CheckFourWays(bn, With({"exp", "cos", "BatchNorm"}));
  CheckFourWays(bn, {"exp", "BatchNorm"});
  CheckFourWays(bn, {"BatchNorm"});
}

TEST(PartitionGraph, Structure4DuplicateOutputs) {
  CheckFourWays(testing::SeedStructure(4), {"exp"});
}

TEST(PartitionGraph, Structure5DuplicateInputs) {
  CheckFourWays(testing::SeedStructure(5), kAddNames);
}

// data2 is declared (1, 0, 2, 2) in the seed, 0 meaning unknown (-1 here):
// its channel count flows back from the convolution's weight through sin,
// and through the subgraph node when sin is claimed.
TEST(PartitionGraph, Structure6SinFeedingConvolutionWeight) {
  Symbol conv = testing::SeedStructure(6);
  for (const auto& names : std::vector<std::vector<std::string>>{
           {}, {"sin"}, {"Convolution"}, {"sin", "Convolution"}}) {
    CheckFourWays(conv, names);
  }
}

TEST(PartitionGraph, Structure7LongPathCycle) {
  CheckFourWays(testing::SeedStructure(7), With({"sin"}));
}

void ExpectSameAsUnpartitioned(const Symbol& net, const Symbol& part) {
  auto ref =
      Executor::SimpleBind(net, Context::CPU(), {}, {}, OpReqType::kNullOp);
  auto exec =
      Executor::SimpleBind(part, Context::CPU(), {}, {}, OpReqType::kNullOp);
  testing::FillRandom(ref.get(), -1, 1);
  testing::CopyInputs(*ref, exec.get());
  ref->Forward();
  exec->Forward();
  EXPECT_TRUE(testing::SameOutputs(*ref, *exec));
}

// The partitioned symbol saved as JSON loads back with its subgraphs and
// computes exactly what the unpartitioned symbol does.
void ExpectJSONRoundTrip(const Symbol& net,
                         const std::vector<std::string>& op_names) {
  SetSubgraphPropertyOpNames("default", op_names);
  const Symbol part = PartitionGraph(net, "default");
  RemoveSubgraphPropertyOpNames("default");
  const std::string json = part.ToJSON();
  const Symbol loaded = Symbol::FromJSON(json);
  EXPECT_EQ(loaded.ToJSON(), json);
  EXPECT_GT(CountOps(loaded, "_default_subgraph_op"), 0);
  EXPECT_EQ(loaded.ListArguments(), net.ListArguments());
  EXPECT_EQ(loaded.ListAuxiliaryStates(), net.ListAuxiliaryStates());
  auto ref =
      Executor::SimpleBind(net, Context::CPU(), {}, {}, OpReqType::kNullOp);
  auto exec =
      Executor::SimpleBind(loaded, Context::CPU(), {}, {}, OpReqType::kNullOp);
  testing::FillRandom(ref.get(), -1, 1);
  testing::CopyInputs(*ref, exec.get());
  for (int run = 0; run < 2; ++run) {
    ref->Forward(/*is_train=*/run == 1);
    exec->Forward(/*is_train=*/run == 1);
    EXPECT_TRUE(testing::SameOutputs(*ref, *exec));
  }
}

TEST(PartitionGraph, SavedAsJSONLoadsBackAndComputesTheSame) {
  ExpectJSONRoundTrip(Diamond(), With({"exp", "sin"}));
  Symbol bn =
      Op("BatchNorm", {Op("BatchNorm", {Diamond()}, {}, "bn0")}, {}, "bn1");
  ExpectJSONRoundTrip(bn, With({"exp", "cos", "BatchNorm"}));
  // Inputs reordered inside the subgraph: x feeds the second op first.
  Symbol x = Var("x", {3, 2}), y = Var("y", {3, 2});
  ExpectJSONRoundTrip(
      Op("elemwise_sub", {Op("sin", {y}), Op("elemwise_mul", {x, y})}),
      {"sin", "elemwise_mul", "elemwise_sub"});
}

std::vector<std::vector<std::string>> Claimed(const PartitionReport& r) {
  std::vector<std::vector<std::string>> groups;
  for (const auto& s : r.subgraphs) groups.push_back(s.claimed);
  return groups;
}

TEST(PartitionGraph, CycleBreakingExcludesWhatMXNetExcludes) {
  // Ids: s=1, m=3, x=4, a=5, v=6; tanh (x) is not claimed. From seed s
  // the candidate is {s, a, v, m} (m pulled in as an input of v); x both
  // consumes m and feeds a, so MXNet excludes the larger of the two, a,
  // and regrows: {s}. From seed m, {m, v, a} loses a the same way; then
  // m -> x -> a -> v still leaves and re-enters {m, v}, so v goes too.
  // The rest forms {a, v}. (Excluding m first would have kept {s, a, v}.)
  Symbol s = Op("sin", {Var("x0", {2, 3})}, {}, "s");
  Symbol m = Op("cos", {Var("x1", {2, 3})}, {}, "m");
  Symbol x = Op("tanh", {m}, {}, "x");
  Symbol a = Op("elemwise_add", {s, x}, {}, "a");
  Symbol v = Op("elemwise_mul", {a, m}, {}, "v");
  SetSubgraphPropertyOpNames("default",
                             {"sin", "cos", "elemwise_add", "elemwise_mul"});
  PartitionReport report;
  const Symbol part = PartitionGraph(v, "default", {}, &report);
  RemoveSubgraphPropertyOpNames("default");
  EXPECT_EQ(Claimed(report),
            (std::vector<std::vector<std::string>>{{"s"}, {"m"}, {"a", "v"}}));
  ASSERT_EQ(report.subgraphs.size(), 3u);
  EXPECT_EQ(report.subgraphs[0].excluded, std::vector<std::string>{"a"});
  EXPECT_EQ(report.subgraphs[1].excluded, (std::vector<std::string>{"a", "v"}));
  ExpectSameAsUnpartitioned(v, part);
}

TEST(PartitionGraph, CycleBreakingExcludesTheLargestConsumerFirst) {
  // s feeds c1 and c2 directly and through the unclaimed cos nodes y1, y2,
  // c1 feeds c2. MXNet excludes the largest consumer of a cycle's outside
  // node (c2), regrows, then excludes c1.
  Symbol s = Op("sin", {Var("x", {4})}, {}, "s");
  Symbol y1 = Op("cos", {s}, {}, "y1");
  Symbol c1 = Op("elemwise_add", {s, y1}, {}, "c1");
  Symbol y2 = Op("cos", {s}, {}, "y2");
  Symbol c2 = Op("elemwise_mul", {c1, y2}, {}, "c2");
  SetSubgraphPropertyOpNames("default",
                             {"sin", "elemwise_add", "elemwise_mul"});
  PartitionReport report;
  const Symbol part = PartitionGraph(c2, "default", {}, &report);
  RemoveSubgraphPropertyOpNames("default");
  EXPECT_EQ(Claimed(report),
            (std::vector<std::vector<std::string>>{{"s"}, {"c1", "c2"}}));
  ASSERT_FALSE(report.subgraphs.empty());
  EXPECT_EQ(report.subgraphs[0].excluded,
            (std::vector<std::string>{"c2", "c1"}));
  ExpectSameAsUnpartitioned(c2, part);
}

// Seeds only on elemwise_add; grows into the ops named.
class AddSeedProperty : public SubgraphProperty {
 public:
  class Selector : public SubgraphSelector {
   public:
    bool Select(const Node& n) override {
      return n.op()->name() == "elemwise_add";
    }
    bool SelectInput(const Node&, const Node& n) override { return Grows(n); }
    bool SelectOutput(const Node&, const Node& n) override { return Grows(n); }

   private:
    static bool Grows(const Node& n) {
      return !n.is_variable() && n.op()->name() != "tanh";
    }
  };
  std::string name() const override { return "add_seed"; }
  SubgraphSelectorPtr CreateSubgraphSelector() const override {
    return std::make_shared<Selector>();
  }
  NodePtr CreateSubgraphNode(const Symbol& s, int id) const override {
    return MakeSubgraphOpNode("_default_subgraph_op", s,
                              "sg" + std::to_string(id));
  }
};

TEST(PartitionGraph, SeedClosingACycleKeepsTheSeedAndExcludesItsProducer) {
  // The seed add pulls in its producer m; m -> x -> add is a cycle whose
  // largest consumer is the seed itself. MXNet aborts here ("A cycle is
  // found in the computational graph"); mxcore excludes m.
  Symbol m = Op("cos", {Var("x0", {3})}, {}, "m");
  Symbol add = Op("elemwise_add", {m, Op("tanh", {m}, {}, "x")}, {}, "add");
  AddSeedProperty prop;
  PartitionReport report;
  const Symbol part = PartitionGraph(add, prop, {}, &report);
  EXPECT_EQ(Claimed(report), (std::vector<std::vector<std::string>>{{"add"}}));
  ASSERT_EQ(report.subgraphs.size(), 1u);
  EXPECT_EQ(report.subgraphs[0].excluded, std::vector<std::string>{"m"});
  ExpectSameAsUnpartitioned(add, part);
}

TEST(PartitionGraph, ReportNamesClaimedAndExcludedNodes) {
  SetSubgraphPropertyOpNames("default", With({"exp", "sin"}));
  PartitionReport report;
  const Symbol part = PartitionGraph(Diamond(), "default", {}, &report);
  RemoveSubgraphPropertyOpNames("default");
  // add0 would close exp0 -> cos0 -> add0; it stands alone.
  ASSERT_EQ(report.subgraphs.size(), 2u);
  EXPECT_EQ(report.subgraphs[0].claimed,
            (std::vector<std::string>{"exp0", "sin0"}));
  EXPECT_EQ(report.subgraphs[0].excluded, std::vector<std::string>{"add0"});
  EXPECT_EQ(report.subgraphs[1].claimed, std::vector<std::string>{"add0"});
  EXPECT_EQ(CountOps(part, "_default_subgraph_op"), 2);
  const std::string text = report.ToString();
  EXPECT_TRUE(Contains(text, "excluded to break cycles: add0")) << text;
  const std::string dot = PartitionedToDOT(part);
  EXPECT_TRUE(Contains(dot, "_default_subgraph_op")) << dot;
  EXPECT_TRUE(Contains(dot, "subgraph cluster_0")) << dot;
  EXPECT_TRUE(Contains(dot, "s0_n1 -> s0_n2")) << dot;  // exp0 -> sin0.
}

TEST(PartitionGraph, VerboseEnvPrintsTheReport) {
  testing::ScopedEnv env("MX_SUBGRAPH_VERBOSE", "1");
  SetSubgraphPropertyOpNames("default", {"exp"});
  ::testing::internal::CaptureStderr();
  PartitionGraph(Diamond(), "default");
  const std::string err = ::testing::internal::GetCapturedStderr();
  RemoveSubgraphPropertyOpNames("default");
  EXPECT_TRUE(Contains(err, "claims 1: exp0")) << err;
}

TEST(PartitionGraph, BadVerboseValueNamesTheVariable) {
  testing::ScopedEnv env("MX_SUBGRAPH_VERBOSE", "maybe");
  SetSubgraphPropertyOpNames("default", {"exp"});
  testing::ExpectError<ConfigError>(
      [] { PartitionGraph(Diamond(), "default"); }, {"MX_SUBGRAPH_VERBOSE"});
  RemoveSubgraphPropertyOpNames("default");
}

TEST(PartitionGraph, UnknownBackendListsRegisteredOnes) {
  testing::ExpectError<NotFound>(
      [] { PartitionGraph(Diamond(), "nope"); },
      {"unknown subgraph backend \"nope\"", "default", "NONE"});
}

TEST(PartitionGraph, NoneLeavesTheGraphAlone) {
  const Symbol s = Diamond();
  EXPECT_EQ(PartitionGraph(s, "NONE").outputs, s.outputs);
}

TEST(PartitionGraph, DefaultWithoutOpNamesIsAClearError) {
  testing::ExpectError<InvalidArgument>(
      [] { PartitionGraph(Diamond(), "default"); },
      {"SetSubgraphPropertyOpNames"});
}

TEST(PartitionGraph, BadBackendInEnvironmentNamesTheVariable) {
  testing::ScopedEnv env("MX_SUBGRAPH_BACKEND", "nope");
  testing::ExpectError<ConfigError>(
      [] {
        Executor::SimpleBind(Diamond(), Context::CPU(), {}, {},
                             OpReqType::kNullOp);
      },
      {"MX_SUBGRAPH_BACKEND=nope", "default"});
}

// Claims everything; declares itself inference-only.
class InferenceOnlyProperty : public SubgraphProperty {
 public:
  class All : public SubgraphSelector {
   public:
    bool Select(const Node&) override { return true; }
    bool SelectInput(const Node&, const Node&) override { return true; }
    bool SelectOutput(const Node&, const Node&) override { return true; }
  };
  std::string name() const override { return "inference_only"; }
  bool inference_only() const override { return true; }
  SubgraphSelectorPtr CreateSubgraphSelector() const override {
    return std::make_shared<All>();
  }
  NodePtr CreateSubgraphNode(const Symbol& s, int id) const override {
    return MakeSubgraphOpNode("_default_subgraph_op", s,
                              "all" + std::to_string(id));
  }
};

TEST(PartitionGraph, InferenceOnlyPropertySkippedWhenGradientsNeeded) {
  InferenceOnlyProperty prop;
  PartitionReport report;
  PartitionOptions options;
  EXPECT_EQ(CountOps(PartitionGraph(Diamond(), prop, options, &report),
                     "_default_subgraph_op"),
            1);
  options.need_grad = true;
  const Symbol same = PartitionGraph(Diamond(), prop, options, &report);
  EXPECT_EQ(CountOps(same, "_default_subgraph_op"), 0);
  ASSERT_EQ(report.notes.size(), 1u);
  EXPECT_TRUE(Contains(report.notes[0], "inference only")) << report.notes[0];
}

// Filter drops the middle of a chain: the rest splits in two.
class DropMiddleProperty : public InferenceOnlyProperty {
 public:
  class Selector : public All {
   public:
    std::vector<const Node*> Filter(
        const std::vector<const Node*>& c) override {
      std::vector<const Node*> kept;
      for (const Node* n : c) {
        if (n->name() != "b") kept.push_back(n);
      }
      return kept;
    }
  };
  bool inference_only() const override { return false; }
  SubgraphSelectorPtr CreateSubgraphSelector() const override {
    return std::make_shared<Selector>();
  }
};

TEST(PartitionGraph, FilterSplitsTheRestByConnectivity) {
  Symbol x = Var("x", {4});
  Symbol chain =
      Op("sin", {Op("cos", {Op("exp", {x}, {}, "a")}, {}, "b")}, {}, "c");
  DropMiddleProperty prop;
  PartitionReport report;
  const Symbol part = PartitionGraph(chain, prop, {}, &report);
  ASSERT_EQ(report.subgraphs.size(), 2u);
  EXPECT_EQ(report.subgraphs[0].claimed, std::vector<std::string>{"a"});
  EXPECT_EQ(report.subgraphs[1].claimed, std::vector<std::string>{"c"});
  EXPECT_EQ(CountOps(part, "cos"), 1);
}

// The default backend's choice of groups, declining those of fewer than
// `min_size` nodes.
class MinSizeProperty : public SubgraphProperty {
 public:
  explicit MinSizeProperty(size_t min_size) : min_size_(min_size) {}
  std::string name() const override { return "min_size"; }
  SubgraphSelectorPtr CreateSubgraphSelector() const override {
    return default_->CreateSubgraphSelector();
  }
  NodePtr CreateSubgraphNode(const Symbol& s, int id) const override {
    size_t ops = 0;
    DFSVisit(s.outputs, [&](const NodePtr& n) { ops += !n->is_variable(); });
    if (ops < min_size_) return nullptr;
    return MakeSubgraphOpNode("_default_subgraph_op", s,
                              "big" + std::to_string(id));
  }

 private:
  size_t min_size_;
  // Callers remove the op names again.
  SubgraphPropertyPtr default_ = [] {
    SetSubgraphPropertyOpNames("default", With({"exp", "sin"}));
    return SubgraphBackendRegistry::Get()->Lookup("default")[0];
  }();
};

TEST(PartitionGraph, NullSubgraphNodeRejectsThatSubgraphOnly) {
  // Groups are {exp0, sin0} and {add0}; the single-node one is declined.
  MinSizeProperty prop(2);
  PartitionReport report;
  const Symbol part = PartitionGraph(Diamond(), prop, {}, &report);
  RemoveSubgraphPropertyOpNames("default");
  EXPECT_EQ(CountOps(part, "_default_subgraph_op"), 1);
  EXPECT_EQ(CountOps(part, "elemwise_add"), 1);
  EXPECT_EQ(CountOps(part, "cos"), 1);
  ASSERT_EQ(report.subgraphs.size(), 1u);
  EXPECT_EQ(report.subgraphs[0].claimed,
            (std::vector<std::string>{"exp0", "sin0"}));
  ASSERT_EQ(report.notes.size(), 1u);
  EXPECT_TRUE(Contains(report.notes[0], "\"add0\" rejected"))
      << report.ToString();
  ExpectSameAsUnpartitioned(Diamond(), part);
}

TEST(PartitionGraph, NullSubgraphNodeForEveryGroupLeavesTheGraphUnpartitioned) {
  MinSizeProperty prop(100);
  PartitionReport report;
  const Symbol part = PartitionGraph(Diamond(), prop, {}, &report);
  RemoveSubgraphPropertyOpNames("default");
  EXPECT_EQ(CountOps(part, "_default_subgraph_op"), 0);
  EXPECT_EQ(part.ToJSON(), Diamond().ToJSON());
  EXPECT_TRUE(report.subgraphs.empty());
  EXPECT_EQ(report.notes.size(), 2u);
  ExpectSameAsUnpartitioned(Diamond(), part);
}

}  // namespace
}  // namespace mx
