#include "graph/pass.h"

#include "base/error.h"
#include "gtest/gtest.h"

namespace mx {
namespace {

TShape ShapeOf(const Graph& g, const Symbol& s) {
  return g.GetAttr<std::vector<TShape>>(
      "shape")[g.indexed_graph().entry_id(s.outputs[0])];
}

TEST(InferShape, FullKnowledgeFromInputs) {
  Symbol x = Symbol::Variable("x"), y = Symbol::Variable("y");
  Symbol s = Symbol::Create("broadcast_add", {x, y}, {}, "add");
  Symbol e = Symbol::Create("exp", {s}, {}, "e");
  Graph g(e);
  g.SetAttr("shape_inputs", std::vector<TShape>{{2, 3}, {3}});
  g = ApplyPass(g, "InferShape");
  EXPECT_EQ(ShapeOf(g, e), TShape({2, 3}));
  EXPECT_EQ(g.GetAttr<size_t>("shape_num_unknown_nodes"), 0u);
}

TEST(InferShape, BackwardFromTheOutputSide) {
  // Only the last input is known; equal-shape ops carry it backwards
  // (broadcasting ops cannot: (1,5) and (4,5) would both fit).
  Symbol x = Symbol::Variable("x");
  Symbol r = Symbol::Create("relu", {x}, {}, "r");
  Symbol t = Symbol::Create("tanh", {r}, {}, "t");
  Symbol hint = Symbol::Variable("h", TShape({4, 5}));
  Symbol m = Symbol::Create("elemwise_mul", {t, hint}, {}, "m");
  Graph g = ApplyPass(Graph(m), "InferShape");
  const IndexedGraph& idx = g.indexed_graph();
  const auto& shapes = g.GetAttr<std::vector<TShape>>("shape");
  EXPECT_EQ(shapes[idx.entry_id(x.outputs[0])], TShape({4, 5}));
  EXPECT_EQ(ShapeOf(g, m), TShape({4, 5}));
}

TEST(InferShape, KnownOutputShapesFlowBackToInputs) {
  // x is (2, -1): only the given output shape completes it.
  Symbol x = Symbol::Variable("x", TShape({2, -1}));
  Symbol s = Symbol::Create("sin", {x}, {}, "s");
  Symbol c = Symbol::Create("cos", {x}, {}, "c");
  Graph g(Symbol::Group({s, c}));
  g.SetAttr("shape_outputs", std::vector<TShape>{TShape(), {2, 7}});
  g = ApplyPass(std::move(g), "InferShape");
  const auto& shapes = g.GetAttr<std::vector<TShape>>("shape");
  EXPECT_EQ(shapes[g.indexed_graph().entry_id(x.outputs[0])], TShape({2, 7}));
  EXPECT_EQ(shapes[g.indexed_graph().entry_id(s.outputs[0])], TShape({2, 7}));
  EXPECT_EQ(g.GetAttr<size_t>("shape_num_unknown_nodes"), 0u);
}

TEST(InferShape, OutputShapesOfTheWrongCountOrContradictingAreErrors) {
  Symbol x = Symbol::Variable("x", TShape({2, 3}));
  Graph g(Symbol::Create("sin", {x}, {}, "s"));
  g.SetAttr("shape_outputs", std::vector<TShape>{{2, 3}, {2, 3}});
  try {
    ApplyPass(g, "InferShape");
    FAIL();
  } catch (const InvalidArgument& e) {
    EXPECT_STREQ(e.what(),
                 "Infershape: graph attribute \"shape_outputs\" has 2 "
                 "entries for 1 outputs");
  }
  g.SetAttr("shape_outputs", std::vector<TShape>{{4, 3}});
  EXPECT_THROW(ApplyPass(g, "InferShape"), ShapeError);
}

TEST(InferType, KnownOutputTypesFlowBackToInputs) {
  Symbol x = Symbol::Variable("x");
  Graph g(Symbol::Create("relu", {x}, {}, "r"));
  g.SetAttr("dtype_outputs", std::vector<DType>{DType::kFloat64});
  g = ApplyPass(std::move(g), "InferType");
  EXPECT_EQ(g.GetAttr<std::vector<DType>>(
                "dtype")[g.indexed_graph().entry_id(x.outputs[0])],
            DType::kFloat64);
}

TEST(InferShape, ReportsNodesThatStayUnknown) {
  Symbol x = Symbol::Variable("x");
  Symbol r = Symbol::Create("relu", {x}, {}, "r");
  Graph g = ApplyPass(Graph(r), "InferShape");
  EXPECT_EQ(g.GetAttr<size_t>("shape_num_unknown_nodes"), 2u);
  EXPECT_EQ(g.GetAttr<std::string>("shape_unknown_report"),
            "input \"x\": shape unknown (give it in shape_inputs or "
            "__shape__)\n"
            "node \"r\" (relu): output 0 unknown; inputs: x=<unknown>\n");
}

TEST(InferShape, ContradictionNamesNodeAndBothShapes) {
  Symbol x = Symbol::Variable("x", TShape({2, 3}));
  Symbol y = Symbol::Variable("y", TShape({4}));
  Symbol s = Symbol::Create("broadcast_add", {x, y}, {}, "bad_add");
  try {
    ApplyPass(Graph(s), "InferShape");
    FAIL();
  } catch (const ShapeError& e) {
    EXPECT_STREQ(e.what(),
                 "op \"broadcast_add\" (node \"bad_add\"): shapes (2,3) and "
                 "(4,) cannot be broadcast together");
  }
  Symbol z = Symbol::Variable("z", TShape({2, 2}));
  Graph g(Symbol::Create("relu", {z}, {}, "r"));
  g.SetAttr("shape_inputs", std::vector<TShape>{{3, 3}});
  EXPECT_THROW(ApplyPass(g, "InferShape"), ShapeError);
}

TEST(InferType, PropagatesAndReportsConflicts) {
  Symbol x = Symbol::Variable("x", TShape(), DType::kFloat64);
  Symbol c = Symbol::Create("_npi_greater_scalar", {x}, {{"scalar", "0"}}, "c");
  Graph g = ApplyPass(Graph(c), "InferType");
  const auto& types = g.GetAttr<std::vector<DType>>("dtype");
  EXPECT_EQ(types[g.indexed_graph().entry_id(c.outputs[0])], DType::kBool);
  Symbol a = Symbol::Variable("a", TShape(), DType::kFloat32);
  Symbol b = Symbol::Variable("b", TShape(), DType::kInt32);
  EXPECT_THROW(
      ApplyPass(Graph(Symbol::Create("broadcast_add", {a, b})), "InferType"),
      DTypeError);
}

TEST(Passes, UnknownPassAndMissingAttributesAreClear) {
  Graph g(Symbol::Variable("x"));
  try {
    ApplyPass(g, "NoSuchPass");
    FAIL();
  } catch (const NotFound& e) {
    EXPECT_NE(std::string(e.what()).find("InferShape"), std::string::npos);
  }
  PassRegistry::Get()->Register(PassInfo{
      "_TestNeedsShape", "", {"shape"}, {}, [](Graph g) { return g; }});
  try {
    ApplyPass(g, "_TestNeedsShape");
    FAIL();
  } catch (const InvalidArgument& e) {
    EXPECT_STREQ(e.what(),
                 "pass \"_TestNeedsShape\" needs graph attribute \"shape\" "
                 "(run InferShape first)");
  }
  EXPECT_NO_THROW(ApplyPasses(g, {"InferShape", "_TestNeedsShape"}));
  EXPECT_THROW(g.GetAttr<int>("nothing"), NotFound);
}

TEST(PlanMemory, ChainRunsInPlaceAndReusesDeadBlocks) {
  // x -> exp -> sin -> cos -> ... : every op may run in place on its input,
  // so the ten intermediate results share one block.
  Symbol s = Symbol::Variable("x", TShape({1000}), DType::kFloat32);
  const char* ops[] = {"exp", "sin", "cos", "tanh", "relu"};
  for (int i = 0; i < 10; ++i) s = Symbol::Create(ops[i % 5], {s});
  Graph g = ApplyPasses(Graph(s), {"InferShape", "InferType", "PlanMemory"});
  EXPECT_EQ(g.GetAttr<size_t>("memory_bytes_without_reuse"), 10u * 4000);
  EXPECT_EQ(g.GetAttr<size_t>("memory_planned_bytes"), 4000u);
  const auto& sid = g.GetAttr<std::vector<int>>("storage_id");
  EXPECT_EQ(sid[g.indexed_graph().entry_id(s.outputs[0])], 0);
  EXPECT_EQ(sid[0], -1);  // The input variable is external.
}

TEST(PlanMemory, BranchesKeepLiveValuesApart) {
  // a = exp(x); b = sin(a); c = a + b: `a` is read twice, so sin cannot
  // overwrite it, but add can take either block.
  Symbol x = Symbol::Variable("x", TShape({100}), DType::kFloat32);
  Symbol a = Symbol::Create("exp", {x}, {}, "a");
  Symbol b = Symbol::Create("sin", {a}, {}, "b");
  Symbol c = Symbol::Create("elemwise_add", {a, b}, {}, "c");
  Graph g = ApplyPasses(Graph(c), {"InferShape", "InferType", "PlanMemory"});
  const IndexedGraph& idx = g.indexed_graph();
  const auto& sid = g.GetAttr<std::vector<int>>("storage_id");
  EXPECT_NE(sid[idx.entry_id(a.outputs[0])], sid[idx.entry_id(b.outputs[0])]);
  EXPECT_EQ(g.GetAttr<size_t>("memory_planned_bytes"), 800u);
  EXPECT_EQ(g.GetAttr<size_t>("memory_bytes_without_reuse"), 1200u);
}

TEST(PlanMemory, NeedsShapesFirst) {
  Graph g(Symbol::Create("exp", {Symbol::Variable("x")}));
  EXPECT_THROW(ApplyPass(g, "PlanMemory"), InvalidArgument);
}

TEST(IndexedGraph, NumbersNodesEntriesAndMutableInputs) {
  Symbol x = Symbol::Variable("x");
  Symbol r = Symbol::Create("relu", {x}, {}, "r");
  Graph g(Symbol::Group({r, x}));
  const IndexedGraph& idx = g.indexed_graph();
  EXPECT_EQ(idx.num_nodes(), 2u);
  EXPECT_EQ(idx.num_node_entries(), 2u);
  EXPECT_EQ(idx.input_nodes(), std::vector<uint32_t>{0});
  EXPECT_EQ(idx[1].inputs[0].node_id, 0u);
  EXPECT_EQ(idx.outputs()[0].node_id, 1u);
  EXPECT_EQ(idx.outputs()[1].node_id, 0u);
  EXPECT_TRUE(idx.mutable_input_nodes().empty());
}

TEST(IndexedGraph, EntryCountPastUint32IsAnErrorNotAWrap) {
  // 65,537 nodes of kMaxOpArity outputs each: 2^32 + 2^16 entries.
  const Op& split = *OpRegistry::Get()->Find("SliceChannel");
  NodePtr x = Node::Variable("x");
  const AttrDict attrs{{"num_outputs", std::to_string(kMaxOpArity)}};
  std::vector<NodeEntry> heads;
  for (int i = 0; i <= kMaxOpArity; ++i) {
    NodePtr n = Node::Create(split, attrs, "s" + std::to_string(i));
    n->inputs.push_back(NodeEntry{x, 0, 0});
    heads.push_back(NodeEntry{n, 0, 0});
  }
  try {
    IndexedGraph idx(heads);
    FAIL() << "no exception";
  } catch (const InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find("4294967295 node entries"),
              std::string::npos)
        << e.what();
  }
  heads.pop_back();
  heads.pop_back();  // 65,535 nodes: 2^32 - 2^16 + 1 entries fit.
  EXPECT_EQ(IndexedGraph(heads).num_node_entries(),
            uint64_t{kMaxOpArity - 1} * kMaxOpArity + 1);
}

TEST(Gradient, MoreContributionsThanAddNTakesAreSummedAsATree) {
  // x reaches y through kMaxOpArity + 1 uses: more than one add_n may sum.
  Symbol x = Symbol::Variable("x");
  Symbol sum = Symbol::Create("add_n", std::vector<Symbol>(kMaxOpArity, x),
                              {{"num_args", std::to_string(kMaxOpArity)}});
  Symbol y = Symbol::Create("elemwise_add", {sum, x});
  Graph g(y);
  g.SetAttr("grad_ys", y.outputs);
  g.SetAttr("grad_ys_out_grad",
            std::vector<NodeEntry>{Symbol::Variable("head").outputs[0]});
  g.SetAttr("grad_xs", x.outputs);
  const Graph grad = ApplyPass(g, "Gradient");
  int64_t summed_inputs = 0, sums = 0;
  DFSVisit(grad.outputs, [&](const NodePtr& n) {
    if (n->is_variable() || n->op()->name() != "add_n") return;
    ++sums;
    EXPECT_LE(n->inputs.size(), static_cast<size_t>(kMaxOpArity));
    summed_inputs += static_cast<int64_t>(n->inputs.size());
  });
  // One add_n of kMaxOpArity parts, then one adding the last part to it.
  EXPECT_EQ(sums, 2);
  EXPECT_EQ(summed_inputs, kMaxOpArity + 2);
}

}  // namespace
}  // namespace mx
