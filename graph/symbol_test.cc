#include "graph/symbol.h"

#include "base/error.h"
#include "gtest/gtest.h"

namespace mx {
namespace {

// A stand-in with BatchNorm's input layout: inputs 3 and 4 are mutated.
const bool kTestOpsRegistered = [] {
  OpRegistry::Get()
      ->Register("_test_norm")
      .SetNumInputs(5)
      .SetInputNames({"data", "gamma", "beta", "moving_mean", "moving_var"})
      .SetMutateInputs([](const NodeAttrs&) {
        return std::vector<int>{3, 4};
      })
      .SetInferShape(SameShape)
      .SetInferType(SameType);
  OpRegistry::Get()
      ->Register("_test_dense")
      .SetNumInputs(3)
      .SetInputNames({"data", "weight", "bias"})
      .SetOutputNames({"output"});
  OpRegistry::Get()
      ->Register("_test_hidden")
      .SetNumOutputs(3)
      .SetNumVisibleOutputs([](const NodeAttrs&) { return 1; });
  OpRegistry::Get()
      ->Register("_test_split2")
      .SetNumOutputs(2)
      .SetOutputNames({"first", "second"});
  return true;
}();

TEST(Symbol, CreateNamesMissingInputsAfterTheNode) {
  Symbol data = Symbol::Variable("data");
  Symbol fc = Symbol::Create("_test_dense", {data}, {}, "fc1");
  EXPECT_EQ(fc.ListInputNames(),
            (std::vector<std::string>{"data", "fc1_weight", "fc1_bias"}));
  EXPECT_EQ(fc.ListOutputNames(), (std::vector<std::string>{"fc1_output"}));
  EXPECT_THROW(Symbol::Create("_test_dense", {data, data, data, data}),
               InvalidArgument);
  EXPECT_THROW(Symbol::Create("no_such_op", {data}), NotFound);
}

TEST(Symbol, ArgumentsAndAuxiliaryStatesOfTwoNormLayers) {
  Symbol data = Symbol::Variable("data");
  Symbol bn1 = Symbol::Create("_test_norm", {data}, {}, "bn1");
  Symbol act = Symbol::Create("relu", {bn1}, {}, "act");
  Symbol bn2 = Symbol::Create("_test_norm", {act}, {}, "bn2");
  EXPECT_EQ(bn2.ListArguments(),
            (std::vector<std::string>{"data", "bn1_gamma", "bn1_beta",
                                      "bn2_gamma", "bn2_beta"}));
  EXPECT_EQ(bn2.ListAuxiliaryStates(),
            (std::vector<std::string>{"bn1_moving_mean", "bn1_moving_var",
                                      "bn2_moving_mean", "bn2_moving_var"}));
  EXPECT_EQ(bn2.ListInputNames().size(), 9u);
}

TEST(Symbol, InternalsChildrenGroupAndIndexing) {
  Symbol x = Symbol::Variable("x"), y = Symbol::Variable("y");
  Symbol sum = Symbol::Create("broadcast_add", {x, y}, {}, "sum");
  Symbol e = Symbol::Create("exp", {sum}, {}, "e");
  EXPECT_EQ(e.GetInternals().ListOutputNames(),
            (std::vector<std::string>{"x", "y", "sum_output", "e_output"}));
  EXPECT_EQ(e.GetChildren().ListOutputNames(),
            (std::vector<std::string>{"sum_output"}));
  Symbol g = Symbol::Group({e, sum});
  EXPECT_EQ(g.ListOutputNames(),
            (std::vector<std::string>{"e_output", "sum_output"}));
  EXPECT_EQ(g[1].ListOutputNames(), (std::vector<std::string>{"sum_output"}));
  EXPECT_THROW(g[2], InvalidArgument);
  Symbol split = Symbol::Create("_test_split2", {x}, {}, "sp");
  EXPECT_EQ(split.ListOutputNames(),
            (std::vector<std::string>{"sp_first", "sp_second"}));
}

TEST(Symbol, ComposedSymbolExposesVisibleOutputsOnly) {
  Symbol h = Symbol::Create("_test_hidden", {Symbol::Variable("x")}, {}, "h");
  EXPECT_EQ(h.outputs.size(), 1u);
  EXPECT_EQ(h.GetInternals().outputs.size(), 4u);  // x plus all three.
}

TEST(Symbol, CopyIsIndependent) {
  Symbol x = Symbol::Variable("x");
  Symbol s = Symbol::Create("_plus_scalar", {x}, {{"scalar", "1"}}, "p");
  Symbol c = s.Copy();
  c.SetAttr("scalar", "5");
  EXPECT_EQ(*s.GetAttr("scalar"), "1");
  EXPECT_EQ(*c.GetAttr("scalar"), "5");
  EXPECT_NE(c.outputs[0].node, s.outputs[0].node);
  EXPECT_EQ(c.ListInputNames(), s.ListInputNames());
  EXPECT_THROW(c.SetAttr("scalar", "abc"), InvalidArgument);
}

TEST(Symbol, AttributesAndPrint) {
  Symbol x = Symbol::Variable("x", TShape({2, 3}), DType::kFloat32);
  EXPECT_EQ(*x.GetAttr("__shape__"), "(2,3)");
  EXPECT_EQ(*x.GetAttr("__dtype__"), "0");
  Symbol r = Symbol::Create("relu", {x}, {}, "r");
  r.SetAttr("__ctx_group__", "dev1");
  EXPECT_EQ(r.Print(),
            "var x {__dtype__=0, __shape__=(2,3)}\n"
            "r = relu(x) {__ctx_group__=dev1}\n"
            "outputs: r_output\n");
}

TEST(Symbol, DotExport) {
  Symbol x = Symbol::Variable("x");
  Symbol sp = Symbol::Create("_test_split2", {x}, {}, "sp");
  Symbol r = Symbol::Create("relu", {sp[1]}, {}, "r");
  EXPECT_EQ(r.ToDOT(),
            "digraph mxcore {\n  node [fontsize=10];\n"
            "  n0 [label=\"x\", shape=ellipse];\n"
            "  n1 [label=\"sp\\n_test_split2\", shape=box];\n"
            "  n0 -> n1;\n"
            "  n2 [label=\"r\\nrelu\", shape=box];\n"
            "  n1 -> n2 [label=\"sp_second\"];\n}\n");
}

TEST(SymbolJSON, RoundTripKeepsStructureAndAttributes) {
  Symbol data = Symbol::Variable("data");
  Symbol bn = Symbol::Create("_test_norm", {data}, {}, "bn");
  Symbol s = Symbol::Create("_mul_scalar", {bn}, {{"scalar", "2.5"}}, "m");
  Symbol g = Symbol::Group({s, bn});
  Symbol back = Symbol::FromJSON(g.ToJSON());
  EXPECT_EQ(back.ListOutputNames(), g.ListOutputNames());
  EXPECT_EQ(back.ListArguments(), g.ListArguments());
  EXPECT_EQ(back.ListAuxiliaryStates(), g.ListAuxiliaryStates());
  EXPECT_EQ(*back[0].GetAttr("scalar"), "2.5");
  EXPECT_EQ(back.ToJSON(), g.ToJSON());
}

TEST(SymbolJSON, LoadsHandWrittenMXNetFile) {
  // The layout MXNet 1.x writes (older files use "attr"/"param").
  const char* kFile = R"JSON({
    "nodes": [
      {"op": "null", "name": "data", "inputs": []},
      {"op": "null", "name": "bias", "attr": {"__shape__": "(4,)"}, "inputs": []},
      {"op": "broadcast_add", "name": "add0", "inputs": [[0, 0, 0], [1, 0, 0]]},
      {"op": "Activation_missing_is_fine_if_unused", "name": "x", "inputs": []}
    ],
    "arg_nodes": [0, 1],
    "node_row_ptr": [0, 1, 2, 3],
    "heads": [[2, 0, 0]],
    "attrs": {"mxnet_version": ["int", 10900]}
  })JSON";
  // Unknown ops are errors even when unreachable: every node is built.
  try {
    Symbol::FromJSON(kFile);
    FAIL();
  } catch (const NotFound& e) {
    EXPECT_NE(std::string(e.what()).find("node 3 (\"x\") has unknown op"),
              std::string::npos)
        << e.what();
  }
  const char* kGood = R"JSON({
    "nodes": [
      {"op": "null", "name": "data", "inputs": []},
      {"op": "null", "name": "bias", "attr": {"__shape__": "(4,)"}, "inputs": []},
      {"op": "broadcast_add", "name": "add0", "inputs": [[0, 0], [1, 0, 0]]},
      {"op": "_plus_scalar", "name": "p", "param": {"scalar": "3"},
       "inputs": [[2, 0, 0]]}
    ],
    "arg_nodes": [0, 1],
    "heads": [[3, 0, 0]]
  })JSON";
  Symbol s = Symbol::FromJSON(kGood);
  EXPECT_EQ(s.ListInputNames(), (std::vector<std::string>{"data", "bias"}));
  EXPECT_EQ(s.ListOutputNames(), (std::vector<std::string>{"p_output"}));
  EXPECT_EQ(*s.GetChildren().GetChildren()[1].GetAttr("__shape__"), "(4,)");
}

TEST(SymbolJSON, MalformedInputsAreClearErrors) {
  EXPECT_THROW(Symbol::FromJSON("{not json"), InvalidArgument);
  EXPECT_THROW(Symbol::FromJSON("[]"), InvalidArgument);
  try {
    Symbol::FromJSON(R"JSON({"nodes": [{"op": "relu", "name": "r",
                        "inputs": [[5, 0, 0]]}], "heads": [[0, 0, 0]]})JSON");
    FAIL();
  } catch (const InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find("dangling input"), std::string::npos)
        << e.what();
  }
  EXPECT_THROW(Symbol::FromJSON(R"JSON({"nodes": [{"op": "relu", "name": "r",
                                   "inputs": []}], "heads": [[0, 0, 0]]})JSON"),
               InvalidArgument);
  EXPECT_THROW(
      Symbol::FromJSON(R"JSON({"nodes": [{"op": "_plus_scalar", "name": "r",
                          "attrs": {"bogus": "1"}, "inputs": []}],
                          "heads": [[0, 0, 0]]})JSON"),
      InvalidArgument);
}

TEST(DFSVisit, DeepChainDoesNotOverflowAndVisitsInputsFirst) {
  Symbol s = Symbol::Variable("x");
  for (int i = 0; i < 100000; ++i) {
    s = Symbol::Create("negative", {s}, {}, "n" + std::to_string(i));
  }
  int count = 0;
  std::string first, last;
  DFSVisit(s.outputs, [&](const NodePtr& n) {
    if (count++ == 0) first = n->name();
    last = n->name();
  });
  EXPECT_EQ(count, 100001);
  EXPECT_EQ(first, "x");
  EXPECT_EQ(last, "n99999");
}

}  // namespace
}  // namespace mx
