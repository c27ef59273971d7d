// Symbol::FromJSON / ToJSON on hostile input: every malformed document is a
// typed error, never undefined behaviour, a stack overflow or a huge
// allocation (issue 16, findings F1-F7).
#include <string>

#include "base/error.h"
#include "graph/graph.h"
#include "graph/symbol.h"
#include "gtest/gtest.h"
#include "testing/op_test_util.h"

namespace mx {
namespace {

using testing::ExpectError;

// A document with one variable "x" and one relu node whose input entry and
// head entry are `entry` and `head`.
std::string ReluGraph(const std::string& entry, const std::string& head) {
  return R"({"nodes": [{"op": "null", "name": "x", "inputs": []},
                       {"op": "relu", "name": "r", "inputs": [)" +
         entry + R"(]}], "heads": [)" + head + "]}";
}

TEST(SymbolJSON, ValidEntryVersionsLoad) {
  Symbol s = Symbol::FromJSON(ReluGraph("[0, 0, 4294967295]", "[1, 0, 7]"));
  EXPECT_EQ(s.outputs[0].version, 7u);
  EXPECT_EQ(s.outputs[0].node->inputs[0].version, 4294967295u);
}

TEST(SymbolJSON, FloatEntryVersionIsAnError) {
  ExpectError<InvalidArgument>(
      [] { Symbol::FromJSON(ReluGraph("[0, 0, 0]", "[1, 0, 1e300]")); },
      {"heads", "version"});
  ExpectError<InvalidArgument>(
      [] { Symbol::FromJSON(ReluGraph("[0, 0, 1e300]", "[1, 0, 0]")); },
      {"node 1", "version"});
  ExpectError<InvalidArgument>(
      [] { Symbol::FromJSON(ReluGraph("[0, 0, 0.5]", "[1, 0, 0]")); },
      {"version"});
}

TEST(SymbolJSON, NegativeOrHugeEntryVersionIsAnError) {
  ExpectError<InvalidArgument>(
      [] { Symbol::FromJSON(ReluGraph("[0, 0, -1]", "[1, 0, 0]")); },
      {"version", "-1"});
  ExpectError<InvalidArgument>(
      [] { Symbol::FromJSON(ReluGraph("[0, 0, 4294967296]", "[1, 0, 0]")); },
      {"version", "4294967296"});
  ExpectError<InvalidArgument>(
      [] {
        Symbol::FromJSON(
            ReluGraph("[0, 0, 0]", "[1, 0, 18446744073709551615]"));
      },
      {"version"});
}

TEST(SymbolJSON, FloatOrHugeNodeIndexIsAnError) {
  ExpectError<InvalidArgument>(
      [] { Symbol::FromJSON(ReluGraph("[0.0, 0]", "[1, 0]")); }, {"node 1"});
  ExpectError<InvalidArgument>(
      [] {
        Symbol::FromJSON(ReluGraph("[18446744073709551615, 0]", "[1, 0]"));
      },
      {"node 1"});
}

std::string WithControlDeps(const std::string& deps) {
  return R"({"nodes": [{"op": "null", "name": "x", "inputs": []},
                       {"op": "relu", "name": "r", "inputs": [[0, 0]],
                        "control_deps": )" +
         deps + R"(}], "heads": [[1, 0]]})";
}

TEST(SymbolJSON, ControlDependenciesMustBeNodeIndices) {
  Symbol s = Symbol::FromJSON(WithControlDeps("[0]"));
  EXPECT_EQ(s.outputs[0].node->control_deps.size(), 1u);
  for (const char* bad : {"[1e300]", "[0.5]", "[-1]", "[\"0\"]",
                          "[18446744073709551615]", "0", "{\"a\": 0}"}) {
    ExpectError<InvalidArgument>(
        [&] { Symbol::FromJSON(WithControlDeps(bad)); }, {"control"});
  }
}

TEST(SymbolJSON, InputsAndHeadsMustBeArrays) {
  const std::string inputs_object =
      R"({"nodes": [{"op": "null", "name": "x", "inputs": []},
                    {"op": "relu", "name": "r", "inputs": {"a": [0, 0]}}],
          "heads": [[1, 0]]})";
  ExpectError<InvalidArgument>([&] { Symbol::FromJSON(inputs_object); },
                               {"node 1", "\"inputs\"", "array"});
  const std::string heads_object =
      R"({"nodes": [{"op": "null", "name": "x", "inputs": []}],
          "heads": {"a": [0, 0]}})";
  ExpectError<InvalidArgument>([&] { Symbol::FromJSON(heads_object); },
                               {"\"heads\"", "array"});
}

TEST(SymbolJSON, VariableWithInputsIsAnError) {
  const std::string doc =
      R"({"nodes": [{"op": "null", "name": "x", "inputs": []},
                    {"op": "null", "name": "y", "inputs": [[0, 0]]}],
          "heads": [[1, 0]]})";
  ExpectError<InvalidArgument>([&] { Symbol::FromJSON(doc); },
                               {"node 1 (\"y\")", "variable", "inputs"});
}

// `levels` nested arrays around a 1, as one attribute value.
std::string DeepAttrValue(int levels) {
  return R"({"nodes": [{"op": "null", "name": "x", "attrs": {"k": )" +
         std::string(levels, '[') + "1" + std::string(levels, ']') +
         R"(}, "inputs": []}], "heads": [[0, 0]]})";
}

TEST(SymbolJSON, ModestlyNestedAttributeValueIsKept) {
  Symbol s = Symbol::FromJSON(DeepAttrValue(3));
  EXPECT_EQ(*s.GetAttr("k"), "[[[1]]]");
}

TEST(SymbolJSON, DeeplyNestedAttributeValueIsAnErrorNotAStackOverflow) {
  ExpectError<InvalidArgument>([] { Symbol::FromJSON(DeepAttrValue(200000)); },
                               {"nest", std::to_string(Symbol::kMaxJSONDepth)});
  // Unbalanced (so also invalid JSON): still refused by depth first.
  ExpectError<InvalidArgument>(
      [] { Symbol::FromJSON(std::string(200000, '[')); }, {"nest"});
}

TEST(SymbolJSON, BracketsInsideStringsDoNotCountAsNesting) {
  const std::string doc = R"({"nodes": [{"op": "null", "name": ")" +
                          std::string(1000, '[') +
                          R"(\"", "inputs": []}], "heads": [[0, 0]]})";
  EXPECT_EQ(Symbol::FromJSON(doc).outputs[0].node->name(),
            std::string(1000, '[') + "\"");
}

// A relu whose subgraph holds a relu whose subgraph ... `levels` deep.
std::string DeepSubgraphs(int levels) {
  std::string doc;
  const std::string open =
      R"({"nodes": [{"op": "null", "name": "x", "inputs": []},
                    {"op": "relu", "name": "r", "inputs": [[0, 0]],
                     "subgraphs": [)";
  const std::string close = R"(]}], "heads": [[1, 0]]})";
  doc.reserve((open.size() + close.size()) * levels + 200);
  for (int i = 0; i < levels; ++i) doc += open;
  doc += R"({"nodes": [{"op": "null", "name": "x", "inputs": []}],
             "heads": [[0, 0]]})";
  for (int i = 0; i < levels; ++i) doc += close;
  return doc;
}

TEST(SymbolJSON, NestedSubgraphsWithinTheLimitLoad) {
  Symbol s = Symbol::FromJSON(DeepSubgraphs(10));
  int depth = 0;
  for (const Node* n = s.outputs[0].node.get(); !n->attrs.subgraphs.empty();
       n = n->attrs.subgraphs[0]->outputs[0].node.get()) {
    ++depth;
  }
  EXPECT_EQ(depth, 10);
}

TEST(SymbolJSON, DeeplyNestedSubgraphsAreAnErrorNotAStackOverflow) {
  ExpectError<InvalidArgument>([] { Symbol::FromJSON(DeepSubgraphs(50000)); },
                               {"nest"});
}

TEST(SymbolJSON, SubgraphsMustBeAnArray) {
  const std::string doc =
      R"({"nodes": [{"op": "null", "name": "x", "inputs": []},
                    {"op": "relu", "name": "r", "inputs": [[0, 0]],
                     "subgraphs": 5}], "heads": [[1, 0]]})";
  ExpectError<InvalidArgument>([&] { Symbol::FromJSON(doc); },
                               {"subgraphs", "array"});
}

TEST(SymbolJSON, InvalidUtf8InANameIsATypedErrorFromToJSON) {
  Symbol x = Symbol::Variable("x\xff");
  ExpectError<InvalidArgument>([&] { x.ToJSON(); },
                               {"ToJSON", "UTF-8", "name"});
}

TEST(SymbolJSON, InvalidUtf8InAnAttributeIsATypedErrorFromToJSON) {
  Symbol s = Symbol::Create("_plus_scalar", {Symbol::Variable("x")},
                            {{"scalar", "1"}}, "p");
  s.SetAttr("__note__", "caf\xc3");  // Truncated two-byte sequence.
  ExpectError<InvalidArgument>([&] { s.ToJSON(); },
                               {"ToJSON", "UTF-8", "\"p\"", "__note__"});
  // Overlong encoding of '/', and an encoded surrogate half.
  for (const char* bad : {"\xc0\xaf", "\xed\xa0\x80", "\xf4\x90\x80\x80"}) {
    Symbol v = Symbol::Variable("v");
    v.SetAttr("__k__", bad);
    ExpectError<InvalidArgument>([&] { v.ToJSON(); }, {"UTF-8"});
  }
}

TEST(SymbolJSON, ValidUtf8RoundTrips) {
  Symbol x = Symbol::Variable("caf\xc3\xa9_\xe2\x82\xac_\xf0\x9f\x98\x80");
  EXPECT_EQ(Symbol::FromJSON(x.ToJSON()).outputs[0].node->name(),
            x.outputs[0].node->name());
}

std::string SplitGraph(const std::string& num_outputs) {
  return R"({"nodes": [{"op": "null", "name": "x", "inputs": []},
                       {"op": "SliceChannel", "name": "s", "inputs": [[0, 0]],
                        "attrs": {"num_outputs": ")" +
         num_outputs + R"("}}], "heads": [[1, 0]]})";
}

TEST(SymbolJSON, HugeNumOutputsIsRefusedWhenParsed) {
  ExpectError<InvalidArgument>(
      [] { Symbol::FromJSON(SplitGraph("2147483647")); },
      {"SliceChannel", "num_outputs", "at most 65536"});
  Symbol s = Symbol::FromJSON(SplitGraph(std::to_string(kMaxOpArity)));
  EXPECT_EQ(s.outputs[0].node->num_outputs(),
            static_cast<uint32_t>(kMaxOpArity));
  EXPECT_EQ(Symbol::FromJSON(s.ToJSON()).ToJSON(), s.ToJSON());
}

}  // namespace
}  // namespace mx
