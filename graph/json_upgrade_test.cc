// The legacy symbol JSON upgrades, one behaviour each, on the document and
// through Symbol::FromJSON.
#include "graph/json_upgrade.h"

#include <string>

#include "base/error.h"
#include "graph/symbol.h"
#include "gtest/gtest.h"

namespace mx {
namespace json_upgrade {
namespace {

using nlohmann::json;

// A variable "x" with `x_attrs` feeding `op` (attributes in `op_key`), in a
// document of `version` (0: none declared).
json OneOp(int version, const std::string& op, const json& op_attrs,
           const std::string& op_key = "attrs", const json& x_attrs = {}) {
  json x = {{"op", "null"}, {"name", "x"}, {"inputs", json::array()}};
  if (!x_attrs.is_null()) x["attrs"] = x_attrs;
  json doc = {{"nodes",
               {x,
                {{"op", op},
                 {"name", "y"},
                 {op_key, op_attrs},
                 {"inputs", {{0, 0, 0}}}}}},
              {"arg_nodes", {0}},
              {"heads", {{1, 0, 0}}}};
  if (version > 0) doc["attrs"] = {{"mxnet_version", {"int", version}}};
  return doc;
}

TEST(JsonUpgrade, VersionIsZeroWhenTheDocumentDeclaresNone) {
  EXPECT_EQ(DocumentVersion(OneOp(0, "relu", json::object())), 0);
  EXPECT_EQ(DocumentVersion(OneOp(10500, "relu", json::object())), 10500);
}

TEST(JsonUpgrade, MalformedVersionIsAnError) {
  json doc = OneOp(0, "relu", json::object());
  doc["attrs"] = {{"mxnet_version", "ten"}};
  EXPECT_THROW(DocumentVersion(doc), InvalidArgument);
}

TEST(JsonUpgrade, LegacyParamAndAttrKeysMergeIntoAttrs) {
  json doc = OneOp(0, "Activation", {{"act_type", "relu"}}, "param");
  doc["nodes"][1]["attr"] = {{"__lr_mult__", "2"}};
  MergeAttributeKeys(&doc);
  const json& y = doc["nodes"][1];
  EXPECT_FALSE(y.contains("param"));
  EXPECT_FALSE(y.contains("attr"));
  EXPECT_EQ(y["attrs"]["act_type"], "relu");
  EXPECT_EQ(y["attrs"]["__lr_mult__"], "2");
  // And the op reads its parameter through FromJSON.
  const Symbol s = Symbol::FromJSON(
      OneOp(0, "Activation", {{"act_type", "tanh"}}, "param").dump());
  EXPECT_EQ(s.outputs[0].node->attrs.dict.at("act_type"), "tanh");
}

TEST(JsonUpgrade, HiddenKeysGetUnderscoresBeforeVersion900) {
  json doc = OneOp(
      0, "relu", json::object(), "attrs",
      {{"ctx_group", "dev1"}, {"lr_mult", "0.5"}, {"weight_lr_mult", "1.2"}});
  RenameHiddenKeys(&doc);
  const json& x = doc["nodes"][0]["attrs"];
  EXPECT_EQ(x["__ctx_group__"], "dev1");
  EXPECT_EQ(x["__lr_mult__"], "0.5");
  EXPECT_EQ(x["__weight_lr_mult__"], "1.2");
  EXPECT_FALSE(x.contains("ctx_group"));
  EXPECT_FALSE(x.contains("weight_lr_mult"));
  // An op carrying them (0.8 copied them onto the op) still parses.
  json fc = OneOp(0, "Activation", {{"act_type", "relu"}}, "param");
  fc["nodes"][1]["attr"] = {{"weight_lr_mult", "1.2"}, {"ctx_group", "a"}};
  EXPECT_EQ(Symbol::FromJSON(fc.dump()).outputs[0].node->attrs.dict.at(
                "__weight_lr_mult__"),
            "1.2");
  // A 1.x document keeps the key as written.
  json modern =
      OneOp(10500, "relu", json::object(), "attrs", {{"ctx_group", "dev1"}});
  UpgradeLegacyJSON(&modern);
  EXPECT_TRUE(modern["nodes"][0]["attrs"].contains("ctx_group"));
}

json ThreeInputBatchNorm(int version) {
  json doc = {
      {"nodes",
       {{{"op", "null"}, {"name", "data"}, {"inputs", json::array()}},
        {{"op", "null"}, {"name", "bn_gamma"}, {"inputs", json::array()}},
        {{"op", "null"}, {"name", "bn_beta"}, {"inputs", json::array()}},
        {{"op", "BatchNorm"},
         {"name", "bn"},
         {"param", {{"eps", "0.001"}}},
         {"inputs", {{0, 0}, {1, 0}, {2, 0}}}},
        {{"op", "relu"}, {"name", "r"}, {"inputs", {{3, 0}}}}}},
      {"arg_nodes", {0, 1, 2}},
      {"heads", {{4, 0}}}};
  if (version > 0) doc["attrs"] = {{"mxnet_version", {"int", version}}};
  return doc;
}

TEST(JsonUpgrade, BatchNormWithThreeInputsGetsItsMovingStatistics) {
  json doc = ThreeInputBatchNorm(0);
  AddBatchNormAuxInputs(&doc);
  const json& nodes = doc["nodes"];
  ASSERT_EQ(nodes.size(), 7u);
  EXPECT_EQ(nodes[3]["name"], "bn_moving_mean");
  EXPECT_EQ(nodes[4]["name"], "bn_moving_var");
  EXPECT_EQ(nodes[5]["inputs"].size(), 5u);
  EXPECT_EQ(nodes[6]["inputs"][0][0], 5);  // relu follows bn to its new id
  EXPECT_EQ(doc["heads"][0][0], 6);
  const Symbol s = Symbol::FromJSON(ThreeInputBatchNorm(0).dump());
  EXPECT_EQ(s.ListAuxiliaryStates(),
            (std::vector<std::string>{"bn_moving_mean", "bn_moving_var"}));
}

TEST(JsonUpgrade, BatchNormIsLeftAloneFromVersion904) {
  // 0.9.4 and later always list five inputs: three are an error there.
  EXPECT_THROW(Symbol::FromJSON(ThreeInputBatchNorm(904).dump()),
               InvalidArgument);
}

TEST(JsonUpgrade, ZeroInALegacyShapeHintMeansUnknown) {
  json doc = OneOp(10500, "relu", json::object(), "attrs",
                   {{"__shape__", "(64, 0, 7, 7)"}});
  MarkUnknownShapeDims(&doc);
  EXPECT_EQ(doc["nodes"][0]["attrs"]["__shape__"], "(64,-1,7,7)");
  json empty =
      OneOp(10500, "relu", json::object(), "attrs", {{"__shape__", "()"}});
  MarkUnknownShapeDims(&empty);
  EXPECT_FALSE(empty["nodes"][0]["attrs"].contains("__shape__"));
}

TEST(JsonUpgrade, ZeroInALegacyCreationShapeMeansUnknown) {
  // Gluon 1.x's begin state; its batch axis comes from shape inference.
  json doc =
      OneOp(10600, "_zeros", {{"shape", "(1, 0, 3)"}, {"dtype", "float32"}});
  MarkUnknownShapeDims(&doc);
  EXPECT_EQ(doc["nodes"][1]["attrs"]["shape"], "(1,-1,3)");
  // Other ops' shape attributes, and NumPy-shape documents, keep theirs.
  json reshape = OneOp(10600, "Reshape", {{"shape", "(0, -1)"}});
  MarkUnknownShapeDims(&reshape);
  EXPECT_EQ(reshape["nodes"][1]["attrs"]["shape"], "(0, -1)");
  json np = OneOp(10900, "_zeros", {{"shape", "(0, 3)"}});
  np["attrs"]["is_np_shape"] = {"int", 1};
  UpgradeLegacyJSON(&np);
  EXPECT_EQ(np["nodes"][1]["attrs"]["shape"], "(0, 3)");
}

TEST(JsonUpgrade, NumPyShapeDocumentsKeepZeroSizeDimensions) {
  json doc =
      OneOp(10900, "relu", json::object(), "attrs", {{"__shape__", "(0,3)"}});
  doc["attrs"]["is_np_shape"] = {"int", 1};
  UpgradeLegacyJSON(&doc);
  EXPECT_EQ(doc["nodes"][0]["attrs"]["__shape__"], "(0,3)");
}

TEST(JsonUpgrade, MxcoreWritesNumPyShapeSoItsOwnZeroSizeHintsRoundTrip) {
  const Symbol x = Symbol::Variable("x", TShape({0, 3}));
  const json doc = json::parse(x.ToJSON());
  EXPECT_EQ(doc["attrs"]["is_np_shape"], json({"int", 1}));
  const Symbol back = Symbol::FromJSON(x.ToJSON());
  EXPECT_EQ(back.outputs[0].node->attrs.dict.at("__shape__"), "(0,3)");
}

}  // namespace
}  // namespace json_upgrade
}  // namespace mx
