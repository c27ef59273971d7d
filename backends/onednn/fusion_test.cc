// The "onednn" subgraph property (plugin loaded through MX_PLUGINS, set in
// BUILD): fused graphs give the unfused graph's outputs. The unfused graph
// runs the plugin's per-op kernels; fused ones fold BatchNorm into the
// weights and use other primitives, so outputs agree within float32
// rounding: relative 1e-4 plus absolute 1e-4 of the output's scale.
#include <dlfcn.h>
#include <limits.h>
#include <stdlib.h>

#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>
#include <random>
#include <sstream>

#include "base/error.h"
#include "gtest/gtest.h"
#include "imperative/executor.h"
#include "imperative/nd.h"
#include "nn/nn.h"
#include "plugin/plugin.h"
#include "subgraph/partition_graph.h"
#include "testing/op_test_util.h"
#include "testing/shared_data.h"
#include "testing/subgraph_test_util.h"

namespace mx {
namespace {

using testing::CountOps;
using testing::ToDouble;

Symbol Op(const std::string& op, const std::vector<Symbol>& in,
          const AttrDict& attrs = {}, const std::string& name = "") {
  return Symbol::Create(op, in, attrs, name);
}

// Uniform values per input; BatchNorm variances positive.
void Fill(Executor* exec, uint32_t seed) {
  std::mt19937 rng(seed);
  auto fill = [&](const std::string& name, NDArray a) {
    const bool positive = name.find("var") != std::string::npos;
    std::uniform_real_distribution<float> u(positive ? 0.5f : -1.0f, 1.0f);
    std::vector<float> v(a.size());
    for (float& x : v) x = u(rng);
    a.SyncCopyFromCPU(v.data(), v.size());
  };
  for (auto& [name, a] : exec->arg_dict()) fill(name, a);
  for (auto& [name, a] : exec->aux_dict()) fill(name, a);
}

int64_t Preparations() {
  using Fn = int64_t (*)();
  const char* path = std::getenv("MX_PLUGINS");
  void* plugin = path ? dlopen(path, RTLD_NOW | RTLD_NOLOAD) : nullptr;
  auto fn = reinterpret_cast<Fn>(
      plugin ? dlsym(plugin, "mx_onednn_weight_preparations") : nullptr);
  return fn == nullptr ? -1 : fn();
}

void ExpectClose(const Executor& fused, const Executor& ref) {
  ASSERT_EQ(fused.outputs().size(), ref.outputs().size());
  for (size_t i = 0; i < ref.outputs().size(); ++i) {
    const std::vector<double> a = ToDouble(fused.outputs()[i]);
    const std::vector<double> b = ToDouble(ref.outputs()[i]);
    ASSERT_EQ(a.size(), b.size());
    double scale = 0;
    for (double x : b) scale = std::max(scale, std::abs(x));
    size_t bad = 0;
    for (size_t j = 0; j < a.size(); ++j) {
      if (!(std::abs(a[j] - b[j]) <= 1e-4 * std::abs(b[j]) + 1e-4 * scale)) {
        if (bad++ < 5)
          ADD_FAILURE() << "output " << i << "[" << j << "]: fused " << a[j]
                        << " vs " << b[j];
      }
    }
    EXPECT_EQ(bad, 0u);
  }
}

// The fused convolutions of a partitioned graph, as nodes or as steps of
// regions (fused_region.h), and the regions' pooling steps.
struct FusedCounts {
  int convs = 0, regions = 0, region_pools = 0;
};

FusedCounts CountFused(const Symbol& part) {
  FusedCounts c;
  DFSVisit(part.outputs, [&](const NodePtr& n) {
    if (n->is_variable()) return;
    if (n->op()->name() == "_sg_onednn_conv") ++c.convs;
    if (n->op()->name() != "_sg_onednn_region") return;
    ++c.regions;
    const auto spec = nlohmann::json::parse(n->attrs.dict.at("steps"));
    for (const auto& step : spec.at("steps")) {
      const std::string op = step.at("op");
      c.convs += op == "_sg_onednn_conv";
      c.region_pools += op == "Pooling";
    }
  });
  return c;
}

// `part` holds one region of `convs` fused convolutions and `pools`
// poolings, and no Pooling or _sg_onednn_conv outside it.
void ExpectOneRegion(const Symbol& part, int convs, int pools) {
  const FusedCounts fused = CountFused(part);
  EXPECT_EQ(fused.regions, 1);
  EXPECT_EQ(fused.convs, convs);
  EXPECT_EQ(fused.region_pools, pools);
  EXPECT_EQ(CountOps(part, "Pooling"), 0);
  EXPECT_EQ(CountOps(part, "_sg_onednn_conv"), 0);
}

// Binds `net` unfused and partitioned with "onednn", runs both on the same
// random inputs and compares; returns the partitioned symbol.
Symbol CheckFused(const Symbol& net,
                  const std::map<std::string, TShape>& shapes) {
  PartitionReport report;
  const Symbol part = PartitionGraph(net, "onednn", {}, &report);
  EXPECT_EQ(part.ListArguments(), net.ListArguments());
  EXPECT_EQ(part.ListAuxiliaryStates(), net.ListAuxiliaryStates());
  auto ref =
      Executor::SimpleBind(net, Context::CPU(), shapes, {}, OpReqType::kNullOp);
  auto fused = Executor::SimpleBind(part, Context::CPU(), shapes, {},
                                    OpReqType::kNullOp);
  Fill(ref.get(), 7);
  testing::CopyInputs(*ref, fused.get());
  ref->Forward();
  fused->Forward();
  ExpectClose(*fused, *ref);
  return part;
}

// data -> conv-bn-relu -> conv-bn -> + data -> relu.
Symbol ResidualBlock(const std::string& act = "relu") {
  Symbol x = Symbol::Variable("data");
  auto conv_bn = [](Symbol in, const std::string& name) {
    Symbol c = Op("Convolution", {in},
                  {{"kernel", "(3, 3)"},
                   {"pad", "(1, 1)"},
                   {"num_filter", "8"},
                   {"no_bias", "True"}},
                  name + "_conv");
    return Op("BatchNorm", {c}, {{"fix_gamma", "False"}, {"eps", "1e-5"}},
              name + "_bn");
  };
  Symbol a = Op("Activation", {conv_bn(x, "a")}, {{"act_type", act}}, "a_act");
  Symbol sum = Op("elemwise_add", {conv_bn(a, "b"), x}, {}, "sum");
  return Op("Activation", {sum}, {{"act_type", "relu"}}, "out");
}

TEST(OnednnFusion, ResidualBlockFusesIntoOneRegionOfTwoConvolutions) {
  const Symbol part = CheckFused(ResidualBlock(), {{"data", {2, 8, 9, 7}}});
  ExpectOneRegion(part, 2, 0);
  EXPECT_EQ(CountOps(part, "BatchNorm"), 0);
  EXPECT_EQ(CountOps(part, "elemwise_add"), 0);
  EXPECT_EQ(CountOps(part, "Activation"), 0);
}

// A region with poolings between its convolutions (max with padding, avg
// without counting it, global), a residual that is a pooling's result,
// and three outputs, one of them also read inside the region; odd sizes.
TEST(OnednnFusion, RegionWithPoolingsAndSeveralOutputs) {
  Symbol x = Symbol::Variable("data");
  auto conv = [](Symbol in, const std::string& name, const char* kernel,
                 const char* pad) {
    return Op("Convolution", {in},
              {{"kernel", kernel}, {"pad", pad}, {"num_filter", "8"}}, name);
  };
  Symbol a = Op("Activation", {conv(x, "a", "(3, 3)", "(1, 1)")},
                {{"act_type", "relu"}});
  Symbol p = Op("Pooling", {a},
                {{"pool_type", "max"},
                 {"kernel", "(3, 3)"},
                 {"stride", "(2, 2)"},
                 {"pad", "(1, 1)"}},
                "p");
  Symbol bn = Op("BatchNorm", {conv(p, "b", "(3, 3)", "(1, 1)")},
                 {{"fix_gamma", "False"}}, "b_bn");
  Symbol b = Op("Activation", {Op("elemwise_add", {bn, p})},
                {{"act_type", "relu"}}, "b_out");
  Symbol q = Op("Pooling", {b},
                {{"pool_type", "avg"},
                 {"kernel", "(2, 2)"},
                 {"pad", "(1, 1)"},
                 {"count_include_pad", "False"}},
                "q");
  Symbol c = conv(q, "c", "(1, 1)", "(0, 0)");
  Symbol g =
      Op("Pooling", {c}, {{"pool_type", "avg"}, {"global_pool", "True"}}, "g");
  const Symbol net = Symbol::Group({g, Op("sin", {b}), c});
  const Symbol part = CheckFused(net, {{"data", {2, 3, 9, 11}}});
  ExpectOneRegion(part, 3, 3);
}

TEST(OnednnFusion, OtherActivationsAndBias) {
  CheckFused(ResidualBlock("tanh"), {{"data", {1, 8, 5, 5}}});
  CheckFused(ResidualBlock("sigmoid"), {{"data", {1, 8, 5, 5}}});
  Symbol x = Symbol::Variable("data");
  Symbol c = Op("Convolution", {x},
                {{"kernel", "(3, 3)"},
                 {"stride", "(2, 2)"},
                 {"dilate", "(2, 2)"},
                 {"num_filter", "6"},
                 {"num_group", "2"}},
                "c");
  Symbol net = Op("LeakyReLU", {c}, {{"act_type", "leaky"}, {"slope", "0.1"}});
  const Symbol part = CheckFused(net, {{"data", {3, 4, 11, 12}}});
  EXPECT_EQ(CountOps(part, "_sg_onednn_conv"), 1);
  EXPECT_EQ(CountOps(part, "LeakyReLU"), 0);
}

TEST(OnednnFusion, FullyConnectedWithActivation) {
  Symbol x = Symbol::Variable("data");
  Symbol h = Op("Activation",
                {Op("FullyConnected", {x}, {{"num_hidden", "16"}}, "fc1")},
                {{"act_type", "relu"}});
  Symbol net = Op("FullyConnected", {h}, {{"num_hidden", "5"}}, "fc2");
  const Symbol part = CheckFused(net, {{"data", {4, 3, 5}}});
  EXPECT_EQ(CountOps(part, "_sg_onednn_fc"), 2);
}

// Bound with MX_SUBGRAPH_BACKEND=onednn, a float16 or float64 convolution
// with relu runs:
// the executor infers dtypes before partitioning, so the property sees them
// and leaves those convolutions to the per-op kernels (its fused op is
// float32-only: they were fused and failed at run time before 2026-11-30);
// float32 is still fused.
TEST(OnednnFusion, BindLeavesOtherDTypesUnfused) {
  const Symbol net =
      Op("Activation",
         {Op("Convolution", {Symbol::Variable("data")},
             {{"kernel", "(3, 3)"}, {"pad", "(1, 1)"}, {"num_filter", "8"}},
             "conv")},
         {{"act_type", "relu"}}, "relu");
  const std::map<std::string, TShape> shapes = {{"data", {2, 8, 6, 6}}};
  for (DType dtype : {DType::kFloat32, DType::kFloat16, DType::kFloat64}) {
    SCOPED_TRACE(DTypeName(dtype));
    std::map<std::string, DType> types;
    for (const std::string& name : net.ListInputNames()) types[name] = dtype;
    auto ref = Executor::SimpleBind(net, Context::CPU(), shapes, types,
                                    OpReqType::kNullOp);
    auto bound = testing::SimpleBindWithBackend(net, "onednn", shapes, types);
    EXPECT_EQ(CountOps(bound->symbol(), "_sg_onednn_region") +
                  CountOps(bound->symbol(), "_sg_onednn_conv"),
              dtype == DType::kFloat32 ? 1 : 0);
    if (dtype == DType::kFloat32) continue;
    testing::FillRandom(ref.get(), -1, 1);
    testing::CopyInputs(*ref, bound.get());
    ref->Forward();
    bound->Forward();
    EXPECT_TRUE(testing::SameOutputs(*ref, *bound));
  }
}

// A hybridized float16 convolution with MX_SUBGRAPH_BACKEND=onednn: the
// CachedOp's partition sees the traced input's and the parameters' dtypes
// and leaves the convolution unfused, so it runs and equals the block run
// without the backend.
TEST(OnednnFusion, HybridizedFloat16BlockRunsUnfused) {
  nn::Conv2D::Options options;
  options.padding = {1, 1};
  options.activation = "relu";
  options.dtype = DType::kFloat16;
  auto conv = std::make_shared<nn::Conv2D>(4, TShape{3, 3}, options);
  conv->Initialize(nn::init::Xavier());
  const NDArray x =
      nd::cast(testing::RandomArray({2, 3, 5, 5}), DType::kFloat16);
  const NDArray want = (*conv)(x);
  conv->Hybridize();
  testing::ScopedEnv env("MX_SUBGRAPH_BACKEND", "onednn");
  const NDArray got = (*conv)(x);
  EXPECT_EQ(got.dtype(), DType::kFloat16);
  EXPECT_EQ(ToDouble(got), ToDouble(want));
}

TEST(OnednnFusion, SeedStructuresGiveTheSameOutputs) {
  for (int i = 1; i <= 7; ++i) {
    SCOPED_TRACE("structure " + std::to_string(i));
    CheckFused(testing::SeedStructure(i), {});
  }
}

TEST(OnednnFusion, IntermediateUsedElsewhereStaysUnfused) {
  Symbol x = Symbol::Variable("data");
  Symbol c =
      Op("Convolution", {x}, {{"kernel", "(1, 1)"}, {"num_filter", "4"}}, "c");
  Symbol r = Op("Activation", {c}, {{"act_type", "relu"}});
  const Symbol net = Symbol::Group({r, Op("sin", {c})});
  const Symbol part = CheckFused(net, {{"data", {1, 2, 3, 3}}});
  EXPECT_EQ(CountOps(part, "_sg_onednn_conv"), 0);
}

TEST(OnednnFusion, WeightsArePreparedOnceAndAgainWhenChanged) {
  const Symbol net = ResidualBlock();
  const Symbol part = PartitionGraph(net, "onednn");
  const std::map<std::string, TShape> shapes = {{"data", {1, 8, 6, 6}}};
  auto ref =
      Executor::SimpleBind(net, Context::CPU(), shapes, {}, OpReqType::kNullOp);
  auto fused = Executor::SimpleBind(part, Context::CPU(), shapes, {},
                                    OpReqType::kNullOp);
  Fill(ref.get(), 3);
  testing::CopyInputs(*ref, fused.get());
  const int64_t before = Preparations();
  ASSERT_GE(before, 0) << "mx_onednn_weight_preparations not found";
  for (int i = 0; i < 3; ++i) {
    fused->Forward();
    ToDouble(fused->outputs()[0]);  // Waits for the kernels.
  }
  EXPECT_EQ(Preparations() - before, 2);  // One per fused node.
  ref->Forward();
  ExpectClose(*fused, *ref);
  // New weights and moving statistics: prepared again, new outputs.
  Fill(ref.get(), 11);
  testing::CopyInputs(*ref, fused.get());
  fused->Forward();
  ref->Forward();
  ToDouble(fused->outputs()[0]);
  EXPECT_EQ(Preparations() - before, 4);
  ExpectClose(*fused, *ref);
  // Only a moving variance changes.
  NDArray var = fused->aux_dict().at("b_bn_moving_var");
  std::vector<float> v(var.size(), 2.0f);
  var.SyncCopyFromCPU(v.data(), v.size());
  ref->aux_dict().at("b_bn_moving_var").SyncCopyFromCPU(v.data(), v.size());
  fused->Forward();
  ref->Forward();
  ToDouble(fused->outputs()[0]);
  EXPECT_EQ(Preparations() - before, 5);
  ExpectClose(*fused, *ref);
}

TEST(OnednnFusion, ResNet18FromMxnetJson) {
  const std::string path =
      mx::testing::MxnetModelsDir() + "/resnet18_v1-symbol.json";
  const std::string json = mx::testing::ReadTextFile(path);
  ASSERT_FALSE(json.empty()) << path << " not found (set MX_MXNET_MODELS_DIR)";
  const Symbol net = Symbol::FromJSON(json);
  const Symbol part = CheckFused(net, {{"data", {1, 3, 64, 64}}});
  // 20 convolutions (with their BatchNorm, ReLU and the 8 residual adds),
  // the stem's max pooling and the global average pooling in one region
  // (the activations enter it and leave it once), and the classifier.
  ExpectOneRegion(part, 20, 2);
  EXPECT_EQ(CountOps(part, "_sg_onednn_fc"), 1);
  EXPECT_EQ(CountOps(part, "BatchNorm"), 0);
  EXPECT_EQ(CountOps(part, "elemwise_add"), 0);
}

// Models exported by MXNet's Gluon record a Dense weight's unknown input
// size as 0 ("__shape__": "(128, 0)"): the fused ops fill it in from the
// data, as FullyConnected and Convolution do.
TEST(OnednnFusion, MxnetModelsWithPartlyKnownWeightShapes) {
  for (const char* model :
       {"advosbig_mnist_mlp", "fashion_mnist", "fcrc_lenet"}) {
    SCOPED_TRACE(model);
    const std::string path =
        mx::testing::MxnetModelsDir() + "/" + model + "-symbol.json";
    const std::string json = mx::testing::ReadTextFile(path);
    ASSERT_FALSE(json.empty())
        << path << " not found (set MX_MXNET_MODELS_DIR)";
    const Symbol part =
        CheckFused(Symbol::FromJSON(json), {{"data", {2, 1, 28, 28}}});
    EXPECT_GE(CountOps(part, "_sg_onednn_fc"), 1);
  }
  // A known size that disagrees with the data is the fused op's ShapeError.
  Symbol x = Symbol::Variable("data");
  Symbol w = Symbol::Variable("w", TShape{16, 7});
  Symbol fc = Op("Activation",
                 {Op("FullyConnected", {x, w},
                     {{"num_hidden", "16"}, {"no_bias", "True"}}, "fc")},
                 {{"act_type", "relu"}});
  const Symbol part = PartitionGraph(fc, "onednn");
  ASSERT_EQ(CountOps(part, "_sg_onednn_fc"), 1);
  try {
    Executor::SimpleBind(part, Context::CPU(), {{"data", {2, 3, 5}}}, {},
                         OpReqType::kNullOp);
    ADD_FAILURE() << "bound a (16, 7) weight to 15 inputs";
  } catch (const ShapeError& e) {
    EXPECT_NE(std::string(e.what()).find("_sg_onednn_fc"), std::string::npos)
        << e.what();
    EXPECT_NE(std::string(e.what()).find("(16, 15)"), std::string::npos)
        << e.what();
  }
}

TEST(OnednnFusion, BadAttributesAreTypedErrors) {
  Symbol x = Symbol::Variable("x"), w = Symbol::Variable("w");
  testing::ExpectError<InvalidArgument>(
      [&] {
        Op("_sg_onednn_conv", {x, w},
           {{"num_inputs", "2"},
            {"data_input", "0"},
            {"weight_input", "5"},
            {"kernel", "(3, 3)"},
            {"num_filter", "4"}});
      },
      {"_sg_onednn_conv", "inconsistent attributes"});
  testing::ExpectError<InvalidArgument>(
      [&] {
        Op("_sg_onednn_conv", {x, w},
           {{"num_inputs", "2"},
            {"data_input", "0"},
            {"weight_input", "1"},
            {"kernel", "(3, 3)"},
            {"num_filter", "4"},
            {"act", "gelu"}});
      },
      {"unknown activation \"gelu\""});
}

TEST(OnednnFusion, BadRegionsAreTypedErrors) {
  Symbol x = Symbol::Variable("x"), w = Symbol::Variable("w");
  const std::string conv =
      R"j({"op": "_sg_onednn_conv", "inputs": [INPUTS], "attrs": {)j"
      R"j("num_inputs": "2", "data_input": "0", "weight_input": "1", )j"
      R"j("kernel": "(1, 1)", "num_filter": "2"}})j";
  auto region = [&](const std::string& second_inputs) {
    std::string first = conv, second = conv;
    first.replace(first.find("INPUTS"), 6, R"("i0", "i1")");
    second.replace(second.find("INPUTS"), 6, second_inputs);
    return R"({"steps": [)" + first + ", " + second + R"(], "outputs": [1]})";
  };
  auto make = [&](const std::string& steps) {
    Op("_sg_onednn_region", {x, w}, {{"num_inputs", "2"}, {"steps", steps}});
  };
  testing::ExpectError<InvalidArgument>([&] { make("{steps"); },
                                        {"_sg_onednn_region", "not JSON"});
  testing::ExpectError<InvalidArgument>([&] { make(region(R"("s0", "i7")")); },
                                        {"step 1", "neither a region input"});
  testing::ExpectError<InvalidArgument>([&] { make(region(R"("s1", "i1")")); },
                                        {"earlier step"});
  testing::ExpectError<InvalidArgument>(
      [&] { make(region(R"("i0", "s0")")); },
      {"step 1", "not the data or the residual"});
  testing::ExpectError<InvalidArgument>(
      [&] { make(region(R"([[[["s0"]]]], "i1")")); },
      {"step 1", "(not a ref)"});
  // A step's result as data and, through a repeated role, as the weight.
  std::string aliased = region(R"("s0", "i1")");
  const size_t second = aliased.rfind(R"("weight_input": "1")");
  aliased.replace(second, 19, R"("weight_input": "0")");
  testing::ExpectError<InvalidArgument>([&] { make(aliased); },
                                        {"step 1", "residual only"});
  std::string bad_op = region(R"("s0", "i1")");
  bad_op.replace(bad_op.find(R"("_sg_onednn_conv")"), 17, "5");
  testing::ExpectError<InvalidArgument>([&] { make(bad_op); },
                                        {"\"op\" is not a string"});
  // A well-formed region whose shapes do not chain: a typed shape error.
  Symbol ok = Op("_sg_onednn_region", {x, w},
                 {{"num_inputs", "2"}, {"steps", region(R"("s0", "i1")")}});
  testing::ExpectError<ShapeError>(
      [&] {
        Executor::SimpleBind(ok, Context::CPU(),
                             {{"x", {1, 3, 4, 4}}, {"w", {2, 3, 1, 1}}}, {},
                             OpReqType::kNullOp);
      },
      {"_sg_onednn_region step 1",
       "has shape (2, 3, 1, 1), needs (2, 2, 1, 1)"});
}

}  // namespace
}  // namespace mx
