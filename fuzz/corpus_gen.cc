// Writes the generated seed corpora under fuzz/corpus/ (files of a few KB):
//   bazel run //fuzz:corpus_gen -- $PWD/fuzz/corpus
// Symbol JSON seeds are graphs written by Symbol::ToJSON; params seeds are
// files written by nn::SaveArrays; op_attrs and IDX seeds are encoded in
// their targets' input formats (see the comments at the top of
// op_attrs_fuzzer.cc and idx_fuzzer.cc), including the issue-16 findings
// (F-numbers in the file names) as regression inputs.
#include <sys/stat.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "fuzz/vocab.h"
#include "graph/symbol.h"
#include "imperative/imperative.h"
#include "nn/mxnet_params_file.h"
#include "nn/params_file.h"

namespace {

using mx::Symbol;

std::string root;

void Write(const std::string& dir, const std::string& name,
           const std::string& bytes) {
  std::string d = root + "/" + dir;
  mkdir(d.c_str(), 0755);
  std::string path = d + "/" + name;
  FILE* f = fopen(path.c_str(), "wb");
  if (f == nullptr) {
    perror(path.c_str());
    exit(1);
  }
  fwrite(bytes.data(), 1, bytes.size(), f);
  fclose(f);
}

// ---- Symbol JSON ----
std::vector<std::pair<std::string, Symbol>> Graphs() {
  std::vector<std::pair<std::string, Symbol>> g;
  {
    Symbol x = Symbol::Variable("data", {4, 8});
    Symbol h = Symbol::Create("FullyConnected", {x}, {{"num_hidden", "6"}},
                              "fc1");
    h = Symbol::Create("Activation", {h}, {{"act_type", "relu"}}, "relu1");
    h = Symbol::Create("FullyConnected", {h}, {{"num_hidden", "3"}}, "fc2");
    g.push_back({"mlp", Symbol::Create("softmax", {h}, {}, "out")});
  }
  {
    Symbol x = Symbol::Variable("data", {2, 1, 8, 8});
    Symbol h = Symbol::Create(
        "Convolution", {x},
        {{"kernel", "(3,3)"}, {"num_filter", "4"}, {"pad", "(1,1)"}}, "conv");
    h = Symbol::Create("BatchNorm", {h}, {}, "bn");
    h = Symbol::Create("Pooling", {h},
                       {{"kernel", "(2,2)"}, {"stride", "(2,2)"},
                        {"pool_type", "max"}},
                       "pool");
    h = Symbol::Create("Flatten", {h}, {}, "flat");
    h = Symbol::Create("FullyConnected", {h}, {{"num_hidden", "10"}}, "fc");
    Symbol label = Symbol::Variable("label", {2});
    g.push_back({"cnn", Symbol::Create("softmax_cross_entropy", {h, label}, {}, "sm")});
  }
  {
    Symbol x = Symbol::Variable("x", {6, 4});
    Symbol parts = Symbol::Create("SliceChannel", {x},
                                  {{"num_outputs", "3"}, {"axis", "0"}}, "split");
    Symbol c = Symbol::Create("Concat", {parts[2], parts[0], parts[1]},
                              {{"num_args", "3"}, {"dim", "1"}}, "concat");
    Symbol r = Symbol::Create("Reshape", {c}, {{"shape", "(-1,0)"}}, "reshape");
    Symbol t = Symbol::Create("transpose", {r}, {{"axes", "(1,0)"}}, "t");
    g.push_back({"split_concat", Symbol::Group({t, parts[1]})});
  }
  {
    Symbol a = Symbol::Variable("a", {3, 4});
    Symbol b = Symbol::Variable("b", {4, 5});
    Symbol d = Symbol::Create("dot", {a, b}, {}, "dot");
    Symbol s = Symbol::Create("sum", {d}, {{"axis", "1"}, {"keepdims", "True"}},
                              "sum");
    Symbol e = Symbol::Create("broadcast_add", {d, s}, {}, "badd");
    Symbol m = Symbol::Create("_mul_scalar", {e}, {{"scalar", "0.5"}}, "half");
    g.push_back({"dot_reduce", Symbol::Create("clip", {m},
                                              {{"a_min", "-1"}, {"a_max", "1"}},
                                              "clip")});
  }
  {
    Symbol z = Symbol::Create("_zeros", {}, {{"shape", "(2,3)"}}, "zeros");
    Symbol r = Symbol::Create("_random_uniform", {},
                              {{"shape", "(2,3)"}, {"low", "-1"}, {"high", "1"}},
                              "rand");
    Symbol ar = Symbol::Create("_arange", {},
                               {{"start", "0"}, {"stop", "6"}, {"step", "1"}},
                               "arange");
    Symbol ar2 = Symbol::Create("Reshape", {ar}, {{"shape", "(2,3)"}}, "ar2");
    g.push_back({"init_ops", Symbol::Create("add_n", {z, r, ar2},
                                            {{"num_args", "3"}}, "addn")});
  }
  {
    Symbol idx = Symbol::Variable("idx", {5});
    Symbol emb = Symbol::Create("Embedding", {idx},
                                {{"input_dim", "10"}, {"output_dim", "4"}}, "emb");
    Symbol oh = Symbol::Create("one_hot", {idx}, {{"depth", "4"}}, "oh");
    Symbol p = Symbol::Create("Pad", {emb},
                              {{"mode", "constant"}, {"pad_width", "(1,1,0,2)"}},
                              "pad");
    Symbol dr = Symbol::Create("Dropout", {p}, {{"p", "0.5"}}, "drop");
    g.push_back({"embed_pad", Symbol::Group({dr, oh})});
  }
  return g;
}

void SymbolCorpora() {
  for (auto& [name, s] : Graphs()) {
    std::string json = s.ToJSON();
    Write("symbol_json_fuzzer", name + ".json", json);
    Write("symbol_mut_fuzzer", name + ".json", json);
  }
  // Hand-written edge cases (each loads or is a typed error).
  const char* relu = R"({"nodes": [{"op": "null", "name": "x", "inputs": []},
 {"op": "relu", "name": "r", "inputs": [[0, 0, 0]]}], "heads": [%s]%s})";
  auto doc = [&](const char* heads, const char* extra) {
    char buf[512];
    snprintf(buf, sizeof(buf), relu, heads, extra);
    return std::string(buf);
  };
  Write("symbol_json_fuzzer", "F1_version_float.json", doc("[1, 0, 1e300]", ""));
  Write("symbol_json_fuzzer", "negative_index.json", doc("[-1, 0, 0]", ""));
  Write("symbol_json_fuzzer", "attrs_mxnet.json",
        doc("[1, 0, 0]", R"(, "arg_nodes": [0], "node_row_ptr": [0, 1, 2],
 "attrs": {"mxnet_version": ["int", 10900]})"));
  Write("symbol_json_fuzzer", "F2_control_dep_float.json",
        R"({"nodes": [{"op": "null", "name": "x", "inputs": []},
 {"op": "relu", "name": "r", "inputs": [[0, 0, 0]], "control_deps": [1e300]}],
 "heads": [[1, 0, 0]]})");
  Write("symbol_json_fuzzer", "F5_split_huge.json",
        R"({"nodes": [{"op": "null", "name": "x", "inputs": []},
 {"op": "SliceChannel", "name": "s", "attrs": {"num_outputs": "2147483647"},
  "inputs": [[0, 0, 0]]}], "heads": [[1, 0, 0]]})");
  Write("symbol_json_fuzzer", "F8_reshape_overflow.json",
        R"J({"nodes": [{"op": "null", "name": "x", "attrs": {"__shape__": "(6,)"},
  "inputs": []},
 {"op": "Reshape", "name": "r", "attrs": {"shape": "(4611686018427387904,4)"},
  "inputs": [[0, 0, 0]]}], "heads": [[1, 0, 0]]})J");
  Write("symbol_json_fuzzer", "nested_attr.json",
        R"({"nodes": [{"op": "null", "name": "x", "inputs": [],
  "attrs": {"k": [[[[1]]]], "n": 3, "o": {"a": null}}}], "heads": [[0, 0, 0]]})");
  Write("symbol_json_fuzzer", "subgraph.json",
        R"({"nodes": [{"op": "null", "name": "x", "inputs": []},
 {"op": "relu", "name": "r", "inputs": [[0, 0, 0]], "subgraphs": [
  {"nodes": [{"op": "null", "name": "y", "inputs": []}], "heads": [[0, 0, 0]]}]}],
 "heads": [[1, 0, 0]]})");
}

// ---- op attributes (encoder for op_attrs_fuzzer's format) ----
class Enc {
 public:
  void U8(int v) { s_.push_back(static_cast<char>(v & 0xff)); }
  void U16(int v) {
    U8(v);
    U8(v >> 8);
  }
  void Range(int v, int lo) { U16(v - lo); }
  void Str(const std::string& t) {
    U8(static_cast<int>(t.size()));
    s_ += t;
  }
  std::string bytes() const { return s_; }
  std::string s_;
};

int IndexOf(const std::vector<std::string>& v, const std::string& x) {
  auto it = std::find(v.begin(), v.end(), x);
  if (it == v.end()) {
    fprintf(stderr, "corpus_gen: \"%s\" not in table\n", x.c_str());
    exit(1);
  }
  return static_cast<int>(it - v.begin());
}

// A value: a word, an int, a tuple "(...)" of ints, a float literal from
// the target's table, or (wild mode) a wild value / raw string.
struct Val {
  enum Kind { kWord, kInt, kTuple, kFloat, kWild, kRaw } kind;
  std::string text;
  std::vector<int> tuple;
};
Val Word(const std::string& w) { return {Val::kWord, w, {}}; }
Val Int(int v) { return {Val::kInt, std::to_string(v), {}}; }
Val Tuple(std::vector<int> t) { return {Val::kTuple, "", std::move(t)}; }
Val Float(const std::string& f) { return {Val::kFloat, f, {}}; }
Val Wild(const std::string& w) { return {Val::kWild, w, {}}; }
Val Raw(const std::string& r) { return {Val::kRaw, r, {}}; }

void EncodeBounded(Enc* e, const Val& v) {
  static const std::vector<std::string> floats = {
      "0", "1", "-1", "0.5", "2", "3.5", "-2.5", "5", "-5", "nan", "inf",
      "-inf", "1e-3", "-0", "0.25"};
  switch (v.kind) {
    case Val::kWord:
      e->U8(0);
      e->U8(IndexOf(mx::fuzz::AttrWords(), v.text));
      break;
    case Val::kInt:
      e->U8(2);
      e->Range(std::stoi(v.text), -4);
      break;
    case Val::kTuple:
      e->U8(3);
      e->U8(static_cast<int>(v.tuple.size()));
      e->U8(1);  // "("
      for (int x : v.tuple) e->Range(x, -4);
      if (v.tuple.size() == 1) e->U8(0);
      break;
    case Val::kFloat:
      e->U8(4);
      e->U8(IndexOf(floats, v.text));
      break;
    default:
      fprintf(stderr, "corpus_gen: wild value in bounded mode\n");
      exit(1);
  }
}

void EncodeWild(Enc* e, const Val& v) {
  if (v.kind == Val::kWild) {
    e->U8(0);
    e->U8(IndexOf(mx::fuzz::WildValues(), v.text));
  } else if (v.kind == Val::kRaw) {
    e->U8(1);
    e->Str(v.text);
  } else {
    e->U8(2);
    EncodeBounded(e, v);
  }
}

struct In {
  int dtype;  // mx::DType code
  std::vector<int> dims;
};

std::string OpCase(int flags, const std::string& op, const std::vector<In>& ins,
                   const std::vector<std::pair<std::string, Val>>& attrs,
                   const std::string& fill = "") {
  Enc e;
  e.U8(flags);
  IndexOf(mx::fuzz::OpNames(), op);  // Must be registered.
  e.Str(op);
  e.U8(static_cast<int>(ins.size()));
  for (const In& x : ins) {
    e.U8(x.dtype);
    e.U8(static_cast<int>(x.dims.size()));
    for (int d : x.dims) e.U8(d < 6 ? d : 192 + d);  // See kLongDim.
  }
  e.U8(static_cast<int>(attrs.size()));
  for (const auto& [k, v] : attrs) {
    e.U8(IndexOf(mx::fuzz::AttrKeys(), k));
    if (flags & 1) {
      EncodeWild(&e, v);
    } else {
      EncodeBounded(&e, v);
    }
  }
  return e.bytes() + fill;
}

void OpAttrCorpus() {
  const std::string d = "op_attrs_fuzzer";
  const int f32 = 0, u8 = 3, i8 = 5, i32 = 4;
  const std::string fill = "\x01\x80\x3f\x00\x00\xc0\x40\x7f";
  Write(d, "fully_connected", OpCase(0, "FullyConnected", {{f32, {2, 3}}, {f32, {4, 3}}, {f32, {4}}},
                                     {{"num_hidden", Int(4)}}, fill));
  Write(d, "convolution", OpCase(4, "Convolution", {{f32, {1, 1, 4, 4}}, {f32, {2, 1, 3, 3}}, {f32, {2}}},
                                 {{"kernel", Tuple({3, 3})}, {"num_filter", Int(2)}, {"pad", Tuple({1, 1})}}, fill));
  Write(d, "convolution_1d_dilate", OpCase(0, "Convolution", {{f32, {1, 2, 5}}, {f32, {2, 2, 2}}},
                                   {{"kernel", Tuple({2})}, {"num_filter", Int(2)}, {"dilate", Tuple({2})}, {"no_bias", Word("True")}}, fill));
  Write(d, "leaky_relu_elu", OpCase(4, "LeakyReLU", {{f32, {2, 3}}}, {{"act_type", Word("elu")}, {"slope", Float("0.25")}}, fill));
  Write(d, "slice", OpCase(0, "slice", {{f32, {3, 4}}}, {{"begin", Tuple({1, 0})}, {"end", Tuple({3, -1})}}, fill));
  Write(d, "take_wrap", OpCase(0, "take", {{f32, {4, 2}}, {i32, {3}}}, {{"mode", Word("wrap")}}, fill));
  Write(d, "pooling", OpCase(0, "Pooling", {{f32, {1, 2, 4, 4}}},
                             {{"kernel", Tuple({2, 2})}, {"pool_type", Word("avg")}, {"stride", Tuple({2, 2})}}, fill));
  // Max pooling's vectorized 2x2 / stride-2 kernel and its gradient (odd
  // sizes: a last row and column in no window), recorded and differentiated.
  Write(d, "pooling_max_2x2_grad", OpCase(4, "Pooling", {{f32, {1, 2, 5, 5}}},
                                          {{"kernel", Tuple({2, 2})}, {"stride", Tuple({2, 2})}}, fill));
  Write(d, "pick_wrap_grad", OpCase(4, "pick", {{f32, {3, 4}}, {i32, {3, 1}}},
                                    {{"axis", Int(1)}, {"keepdims", Word("True")}, {"mode", Word("wrap")}}, fill));
  Write(d, "reshape", OpCase(0, "Reshape", {{f32, {2, 3, 4}}}, {{"shape", Tuple({-1, 0})}}, fill));
  Write(d, "slice_channel", OpCase(4, "SliceChannel", {{f32, {4, 2}}},
                                   {{"num_outputs", Int(2)}, {"axis", Int(0)}}, fill));
  Write(d, "concat", OpCase(0, "Concat", {{f32, {2, 2}}, {f32, {2, 3}}},
                            {{"num_args", Int(2)}, {"dim", Int(1)}}, fill));
  Write(d, "zeros", OpCase(0, "_zeros", {}, {{"shape", Tuple({2, 5})}, {"dtype", Word("int8")}}));
  Write(d, "arange", OpCase(0, "_arange", {}, {{"start", Float("-1")}, {"stop", Float("5")}, {"step", Float("0.5")}}));
  Write(d, "one_hot", OpCase(0, "one_hot", {{i32, {3}}}, {{"depth", Int(4)}}, fill));
  Write(d, "pad", OpCase(0, "Pad", {{f32, {1, 1, 2, 2}}},
                         {{"mode", Word("reflect")}, {"pad_width", Tuple({0, 0, 0, 0, 1, 1, 1, 1})}}, fill));
  Write(d, "batchnorm_train", OpCase(6, "BatchNorm", {{f32, {2, 2, 2}}, {f32, {2}}, {f32, {2}}, {f32, {2}}, {f32, {2}}},
                                     {{"fix_gamma", Word("False")}}, fill));
  Write(d, "dropout_train", OpCase(2, "Dropout", {{f32, {4, 4}}}, {{"p", Float("0.5")}}, fill));
  Write(d, "softmax", OpCase(4, "softmax", {{f32, {2, 3}}}, {{"axis", Int(-1)}, {"temperature", Float("2")}}, fill));
  Write(d, "embedding", OpCase(0, "Embedding", {{f32, {3}}, {f32, {5, 2}}},
                               {{"input_dim", Int(5)}, {"output_dim", Int(2)}}, std::string(4, '\0')));
  Write(d, "transpose", OpCase(0, "transpose", {{f32, {2, 3, 1}}}, {{"axes", Tuple({2, 0, 1})}}, fill));
  Write(d, "batch_dot", OpCase(4, "batch_dot", {{f32, {2, 2, 3}}, {f32, {2, 3, 2}}}, {}, fill));
  Write(d, "broadcast_add", OpCase(4, "broadcast_add", {{f32, {2, 1}}, {f32, {1, 3}}}, {}, fill));
  Write(d, "sum_keepdims", OpCase(0, "sum", {{f32, {2, 3}}}, {{"axis", Tuple({1})}, {"keepdims", Word("True")}}, fill));
  Write(d, "clip_int", OpCase(0, "clip", {{i32, {5}}}, {{"a_min", Float("-1")}, {"a_max", Float("2")}}, fill));
  // MXNet's fused RNN: an LSTM differentiated, a bidirectional GRU with
  // sequence lengths, two clipped LSTM layers with dropout in training
  // (parameter vectors of 48, 24 and 32: long dims).
  Write(d, "rnn_lstm_grad", OpCase(4, "RNN", {{f32, {2, 2, 2}}, {f32, {48}}, {f32, {1, 2, 2}}, {f32, {1, 2, 2}}},
                                   {{"state_size", Int(2)}, {"num_layers", Int(1)}, {"mode", Word("lstm")},
                                    {"state_outputs", Word("True")}}, fill));
  Write(d, "rnn_gru_bidirectional_lengths",
        OpCase(4, "RNN", {{f32, {3, 2, 1}}, {f32, {24}}, {f32, {2, 2, 1}}, {i32, {2}}},
               {{"state_size", Int(1)}, {"num_layers", Int(1)}, {"mode", Word("gru")},
                {"bidirectional", Word("True")}, {"use_sequence_length", Word("True")},
                {"state_outputs", Word("True")}},
               std::string("\x02\x00\x00\x00\x01\x00\x00\x00", 8)));
  Write(d, "rnn_lstm_clip_dropout_train",
        OpCase(6, "RNN", {{f32, {2, 1, 1}}, {f32, {32}}, {f32, {2, 1, 1}}, {f32, {2, 1, 1}}},
               {{"state_size", Int(1)}, {"num_layers", Int(2)}, {"mode", Word("lstm")}, {"p", Float("0.5")},
                {"lstm_state_clip_min", Float("-1")}, {"lstm_state_clip_max", Float("1")}}, fill));
  Write(d, "ctc_loss_grad", OpCase(4, "CTCLoss", {{f32, {4, 2, 3}}, {f32, {2, 2}}}, {}, fill));
  // Regression inputs for issue 16's findings.
  Write(d, "F8_reshape_overflow", OpCase(1, "Reshape", {{f32, {6}}}, {{"shape", Wild("(4611686018427387904,4)")}}));
  Write(d, "F8_zeros_overflow", OpCase(1, "_zeros", {}, {{"shape", Wild("(4611686018427387904,4)")}}));
  Write(d, "F9_backward_pooling_rank", OpCase(0, "_backward_Pooling", {{f32, {}}, {f32, {}}}, {{"global_pool", Word("True")}}));
  Write(d, "F10_backward_dot_rank", OpCase(0, "_backward_dot", {{f32, {0, 0, 0, 0}}, {f32, {}}, {f32, {}}}, {}));
  Write(d, "F11_split_like_num_args", OpCase(1, "_split_like", {{f32, {2}}}, {{"num_args", Wild("2147483647")}}));
  Write(d, "F12_rdiv_scalar_uint8", OpCase(0, "_rdiv_scalar", {{u8, {3}}}, {{"scalar", Int(-2)}}, "\x01\x02\x00"));
  Write(d, "F12_rdiv_scalar_nan_int8", OpCase(0, "_rdiv_scalar", {{i8, {3}}}, {{"scalar", Float("nan")}}, "\x01\xff\x00"));
  Write(d, "F12_power_scalar_int8", OpCase(0, "_power_scalar", {{i8, {2}}}, {{"scalar", Int(-3)}}, std::string(2, '\0')));
  Write(d, "F12_reduce_sum_like_int8", OpCase(0, "_reduce_sum_like", {{i8, {5, 4}}, {i8, {1, 4}}}, {}, "\x81\x82\x83\x84"));
  Write(d, "F13_mean_empty", OpCase(0, "mean", {{f32, {0, 2}}}, {{"axis", Int(0)}}));
  Write(d, "F14_slice_channel_huge", OpCase(1, "SliceChannel", {{f32, {2}}}, {{"num_outputs", Wild("2147483647")}}));
  Write(d, "F14_add_n_huge", OpCase(1, "add_n", {}, {{"num_args", Wild("2147483647")}}));
  // CI's slow unit: two inputs and num_args=65536 made 65,534 variables.
  Write(d, "F15_add_n_missing_inputs", OpCase(1, "add_n", {{f32, {2}}, {f32, {2}}}, {{"num_args", Wild("65536")}}));
  Write(d, "F7_random_normal_utf8", OpCase(1, "_random_normal", {}, {{"scale", Raw("\xfc\x80\x80")}}));
}

// ---- params files ----
void ParamsCorpus() {
  const std::string d = "params_file_fuzzer";
  const std::string tmp = root + "/../mxfuzz_corpus_tmp.params";
  auto save = [&](const std::string& name, const mx::nn::NamedArrays& a,
                  bool mxnet = false,
                  mx::nn::ParamsFormat format = mx::nn::ParamsFormat::kMxcore) {
    if (mxnet) {
      mx::nn::SaveMXNetArrays(tmp, a);
    } else {
      mx::nn::SaveArrays(tmp, a, format);
    }
    FILE* f = fopen(tmp.c_str(), "rb");
    std::string bytes;
    char buf[4096];
    size_t n;
    while ((n = fread(buf, 1, sizeof(buf), f)) > 0) bytes.append(buf, n);
    fclose(f);
    remove(tmp.c_str());
    Write(d, name, bytes);
  };
  using mx::NDArray;
  save("empty.params", {});
  save("two_floats.params",
       {{"0.weight", NDArray::FromVector<float>({2, 3}, {1, 2, 3, 4, 5, 6})},
        {"0.bias", NDArray::FromVector<float>({2}, {0.5f, -1})}});
  save("dtypes.params",
       {{"f64", NDArray::FromVector<double>({2}, {1.5, -2})},
        {"u8", NDArray::FromVector<uint8_t>({3}, {0, 7, 255})},
        {"i32", NDArray::FromVector<int32_t>({1, 2}, {-1, 2})},
        {"i8", NDArray::FromVector<int8_t>({2}, {-128, 127})},
        {"i64", NDArray::FromVector<int64_t>({1}, {1LL << 40})},
        {"b", NDArray::FromVector<bool>({2}, {true, false})}});
  save("scalar_and_empty.params",
       {{"s", NDArray::FromVector<float>(mx::TShape::Scalar(), {3})},
        {"e", mx::imperative::Invoke("_zeros", {}, {{"shape", "(0,3)"}})[0]}});
  // MXNet's NDArray-list format (nn/mxnet_params_file.h).
  save("mxnet_v2_named.params",
       {{"arg:fc_weight", NDArray::FromVector<float>({2, 3}, {1, 2, 3, 4, 5, 6})},
        {"aux:bn_moving_var", NDArray::FromVector<float>({2}, {0.5f, 1})}},
       true);
  save("mxnet_dtypes.params",
       {{"f64", NDArray::FromVector<double>({2}, {1.5, -2})},
        {"f16", mx::imperative::Invoke("_ones", {}, {{"shape", "(2,)"},
                                                     {"dtype", "float16"}})[0]},
        {"u8", NDArray::FromVector<uint8_t>({3}, {0, 7, 255})},
        {"i64", NDArray::FromVector<int64_t>({1}, {1LL << 40})},
        {"b", NDArray::FromVector<bool>({2}, {true, false})}},
       true);
  save("mxnet_v3_scalar_empty_none_unnamed.params",
       {{"", NDArray::FromVector<float>(mx::TShape::Scalar(), {3})},
        {"", mx::imperative::Invoke("_zeros", {}, {{"shape", "(0,3)"}})[0]},
        {"", NDArray()}},
       true);
  // MXNet 2's .npz (nn/npz_file.h); deflated, streamed and ZIP64 archives
  // are nn/testdata's fixtures, copied in as npz_*.
  save("npz_export.params",
       {{"arg:fc_weight",
         NDArray::FromVector<float>({2, 3}, {1, 2, 3, 4, 5, 6})},
        {"aux:bn_moving_var", NDArray::FromVector<float>({2}, {0.5f, 1})},
        {"s", NDArray::FromVector<float>(mx::TShape::Scalar(), {3})},
        {"b", NDArray::FromVector<bool>({2}, {true, false})}},
       false, mx::nn::ParamsFormat::kNpz);
  // Layouts only older MXNet writes, built by hand: header, count 2, a V1
  // record (no storage type) and a pre-V1 record (rank, uint32 dims), then
  // two names.
  std::string legacy;
  auto put = [&legacy](auto v) {
    legacy.append(reinterpret_cast<const char*>(&v), sizeof(v));
  };
  put(uint64_t{0x112}), put(uint64_t{0}), put(uint64_t{2});
  put(uint32_t{0xF993FAC8}), put(int32_t{1}), put(int64_t{2});
  put(int32_t{1}), put(int32_t{0}), put(int32_t{0}), put(1.0f), put(2.0f);
  put(uint32_t{2}), put(uint32_t{1}), put(uint32_t{1});
  put(int32_t{2}), put(int32_t{0}), put(int32_t{0}), put(3.0f);
  put(uint64_t{2});
  put(uint64_t{1}), legacy += "a";
  put(uint64_t{1}), legacy += "b";
  Write(d, "mxnet_v1_and_pre_v1.params", legacy);
  // A csr record: refused (NotImplemented) after its storage type.
  std::string csr;
  csr.append("\x12\x01\0\0\0\0\0\0", 8).append(8, '\0');
  csr.append("\x01\0\0\0\0\0\0\0", 8);
  csr.append("\xc9\xfa\x93\xf9\x02\0\0\0", 8);
  Write(d, "mxnet_csr.params", csr);
}

// ---- IDX ----
std::string BE32(uint32_t v) {
  std::string s(4, '\0');
  for (int i = 0; i < 4; ++i) s[i] = static_cast<char>(v >> (24 - 8 * i));
  return s;
}

std::string IdxCase(bool gz, const std::string& images,
                    const std::string& labels, int batch) {
  std::string s;
  s.push_back(gz ? 1 : 0);
  s.push_back(static_cast<char>(images.size() & 0xff));
  s.push_back(static_cast<char>(images.size() >> 8));
  s.push_back(static_cast<char>(batch - 1));
  return s + images + labels;
}

void IdxCorpus() {
  const std::string d = "idx_fuzzer";
  auto images = [](uint32_t n, uint32_t r, uint32_t c, size_t pixels) {
    std::string s = BE32(2051) + BE32(n) + BE32(r) + BE32(c);
    for (size_t i = 0; i < pixels; ++i) s.push_back(static_cast<char>(i * 13));
    return s;
  };
  auto labels = [](uint32_t n, size_t count) {
    std::string s = BE32(2049) + BE32(n);
    for (size_t i = 0; i < count; ++i) s.push_back(static_cast<char>(i % 10));
    return s;
  };
  Write(d, "valid_raw", IdxCase(false, images(6, 3, 2, 36), labels(6, 6), 2));
  Write(d, "valid_gz", IdxCase(true, images(5, 2, 2, 20), labels(5, 5), 4));
  Write(d, "label_count_mismatch", IdxCase(false, images(2, 2, 2, 8), labels(3, 3), 1));
  Write(d, "short_pixels", IdxCase(false, images(4, 2, 2, 10), labels(4, 4), 1));
  Write(d, "F18_count_overflow", IdxCase(false, images(4, 0x80000000u, 0x80000000u, 0), labels(4, 4), 2));
  Write(d, "F19_zero_rows", IdxCase(false, images(3, 0, 5, 0), labels(3, 3), 1));
}

// ---- TShape::Parse ----
void ShapeCorpus() {
  const std::string d = "shape_parse_fuzzer";
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"tuple", "(2,3)"},        {"list", "[2, 3]"},
      {"trailing_comma", "(2,)"}, {"scalar", "()"},
      {"bare", "2"},              {"unknown_dim", "(-1,3)"},
      {"spaces", " ( 1 , 2 ) "},  {"F15_out_of_range", "(99999999999999999999,1)"},
      {"int64_max", "(9223372036854775807,2)"}, {"none", "(None,1)"},
      {"rank6", "(1,2,3,4,5,6)"}, {"empty", ""}};
  for (const auto& [name, text] : cases) Write(d, name, text);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc == 2 && std::string(argv[1]) == "--list_ops") {
    for (const auto& n : mx::fuzz::OpNames()) printf("%s\n", n.c_str());
    return 0;
  }
  if (argc != 2) {
    fprintf(stderr, "usage: corpus_gen OUTPUT_DIR (fuzz/corpus)\n");
    return 2;
  }
  setenv("MX_ENGINE_TYPE", "NaiveEngine", 0);
  root = argv[1];
  mkdir(root.c_str(), 0755);
  SymbolCorpora();
  OpAttrCorpus();
  ParamsCorpus();
  IdxCorpus();
  ShapeCorpus();
  return 0;
}
