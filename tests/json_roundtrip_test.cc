// Every registered op survives Symbol -> JSON -> Symbol unchanged. Ops with
// required attributes get them from the table below; a new op that needs
// attributes and is missing from the table fails the test by name.
#include <map>

#include "base/error.h"
#include "graph/symbol.h"
#include "gtest/gtest.h"
#include "imperative/nd.h"  // Links the CPU operator library.

namespace mx {
namespace {

const std::map<std::string, AttrDict>& RequiredAttrs() {
  static const auto* table = new std::map<std::string, AttrDict>{
      {"clip", {{"a_min", "-1"}, {"a_max", "1"}}},
      {"_npx_reshape", {{"newshape", "(-1,)"}}},
      {"_split_v2", {{"indices", "(0, 2)"}, {"axis", "0"}}},
      {"_np_reshape", {{"newshape", "(-1,)"}}},
      {"FullyConnected", {{"num_hidden", "8"}}},
      {"Convolution",
       {{"kernel", "(3,3)"}, {"num_filter", "4"}, {"pad", "(1,1)"}}},
      {"_backward_Convolution", {{"kernel", "(3,3)"}, {"num_filter", "4"}}},
      {"Pooling", {{"kernel", "(2,2)"}, {"pool_type", "avg"}}},
      {"Activation", {{"act_type", "tanh"}}},
      {"LRN", {{"nsize", "5"}, {"alpha", "0.0001"}, {"beta", "0.75"}}},
      {"_backward_LRN", {{"nsize", "3"}}},
      {"Reshape", {{"shape", "(0,-1)"}}},
      {"expand_dims", {{"axis", "1"}}},
      {"slice", {{"begin", "(None,1)"}, {"end", "(2,None)"}}},
      {"slice_axis", {{"axis", "0"}, {"begin", "1"}, {"end", "None"}}},
      {"Concat", {{"num_args", "3"}, {"dim", "0"}}},
      {"_npi_concatenate", {{"num_args", "2"}, {"axis", "-1"}}},
      {"_npi_einsum", {{"num_args", "2"}, {"subscripts", "ij,jk->ik"}}},
      {"_backward_npi_einsum",
       {{"num_args", "2"}, {"subscripts", "ij,jk->ik"}}},
      {"SliceChannel", {{"num_outputs", "2"}}},
      {"stack", {{"num_args", "2"}}},
      {"add_n", {{"num_args", "4"}}},
      {"one_hot", {{"depth", "5"}}},
      {"Cast", {{"dtype", "float16"}}},
      {"amp_cast", {{"dtype", "float16"}}},
      {"_contrib_interleaved_matmul_selfatt_qk", {{"heads", "2"}}},
      {"_contrib_interleaved_matmul_selfatt_valatt", {{"heads", "2"}}},
      {"_contrib_interleaved_matmul_encdec_qk", {{"heads", "2"}}},
      {"_contrib_interleaved_matmul_encdec_valatt", {{"heads", "2"}}},
      {"_backward_interleaved_matmul_selfatt_qk", {{"heads", "2"}}},
      {"_backward_interleaved_matmul_selfatt_valatt", {{"heads", "2"}}},
      {"_backward_interleaved_matmul_encdec_qk", {{"heads", "2"}}},
      {"_backward_interleaved_matmul_encdec_valatt", {{"heads", "2"}}},
      {"amp_multicast", {{"num_outputs", "1"}}},
      {"_full", {{"value", "2.5"}, {"shape", "(2,3)"}}},
      {"_arange", {{"start", "0"}, {"stop", "5"}}},
      {"sgd_update", {{"lr", "0.1"}}},
      {"sgd_mom_update", {{"lr", "0.1"}, {"momentum", "0.9"}}},
      {"adam_update", {{"lr", "0.01"}}},
      {"_multi_sgd_mom_update",
       {{"lr", "0.1"}, {"momentum", "0.9"}, {"num_weights", "2"}}},
      {"broadcast_to", {{"shape", "(2,3)"}}},
      {"_backward_slice", {{"begin", "(None,1)"}, {"end", "(2,None)"}}},
      {"_backward_slice_axis",
       {{"axis", "0"}, {"begin", "1"}, {"end", "None"}}},
      {"_split_like", {{"num_args", "2"}, {"dim", "0"}}},
      {"Embedding", {{"input_dim", "10"}, {"output_dim", "4"}}},
      {"depth_to_space", {{"block_size", "2"}}},
      {"Crop", {{"num_args", "1"}, {"h_w", "(2,2)"}}},
      {"ROIPooling", {{"pooled_size", "(2,2)"}, {"spatial_scale", "0.5"}}},
      {"_backward_ROIPooling",
       {{"pooled_size", "(2,2)"}, {"spatial_scale", "0.5"}}},
      {"_backward_Crop", {{"num_args", "1"}, {"h_w", "(2,2)"}}},
      {"space_to_depth", {{"block_size", "3"}}},
      {"Pad", {{"mode", "reflect"}, {"pad_width", "(0,0,1,1)"}}},
      {"_backward_Pad", {{"pad_width", "(0,0,1,1)"}}},
      {"Deconvolution",
       {{"kernel", "(3,3)"},
        {"num_filter", "4"},
        {"adj", "(1,0)"},
        {"stride", "(2,2)"}}},
      {"_backward_Deconvolution", {{"kernel", "(3,3)"}, {"num_filter", "4"}}},
      {"_contrib_ROIAlign",
       {{"pooled_size", "(2,2)"}, {"spatial_scale", "0.5"}}},
      {"_backward_contrib_ROIAlign",
       {{"pooled_size", "(2,2)"}, {"spatial_scale", "0.5"}}},
      {"repeat", {{"repeats", "2"}, {"axis", "-1"}}},
      {"_backward_repeat", {{"repeats", "2"}}},
      {"tile", {{"reps", "(2,1)"}}},
      {"_backward_tile", {{"reps", "(2,1)"}}},
      {"reverse", {{"axis", "(0,)"}}},
      {"smooth_l1", {{"scalar", "1.5"}}},
      {"polygamma", {{"n", "1"}}},
      {"UpSampling", {{"scale", "2"}, {"sample_type", "nearest"}}},
      {"_backward_UpSampling", {{"scale", "2"}, {"sample_type", "nearest"}}},
      {"RNN", {{"state_size", "4"}, {"num_layers", "2"}, {"mode", "lstm"}}},
      {"_backward_RNN",
       {{"state_size", "4"}, {"num_layers", "1"}, {"mode", "gru"}}},
  };
  return *table;
}

bool IsScalarOp(const std::string& name) {
  const std::string suffix = "_scalar";
  return name.size() > suffix.size() &&
         name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0;
}

TEST(SymbolJSON, EveryRegisteredOpRoundTrips) {
  int checked = 0;
  for (const std::string& name : OpRegistry::Get()->ListNames()) {
    if (name.rfind("_test", 0) == 0) continue;  // Other tests' stand-ins.
    AttrDict attrs;
    auto it = RequiredAttrs().find(name);
    if (it != RequiredAttrs().end()) attrs = it->second;
    if (IsScalarOp(name)) attrs["scalar"] = "1.5";
    Symbol sym;
    try {
      sym = Symbol::Create(name, {}, attrs, "node_" + name);
    } catch (const InvalidArgument& e) {
      ADD_FAILURE() << "op " << name
                    << " needs attributes; add it to RequiredAttrs: "
                    << e.what();
      continue;
    }
    const std::string json = sym.ToJSON();
    Symbol back = Symbol::FromJSON(json);
    EXPECT_EQ(back.ToJSON(), json) << name;
    EXPECT_EQ(back.ListInputNames(), sym.ListInputNames()) << name;
    EXPECT_EQ(back.ListOutputNames(), sym.ListOutputNames()) << name;
    EXPECT_EQ(back.ListAuxiliaryStates(), sym.ListAuxiliaryStates()) << name;
    const Node& node = *back.outputs[0].node;
    EXPECT_EQ(node.op()->name(), name);
    EXPECT_EQ(node.attrs.dict, attrs) << name;
    ++checked;
  }
  EXPECT_GT(checked, 90);
  std::printf("[json] %d ops round-tripped\n", checked);
}

}  // namespace
}  // namespace mx
