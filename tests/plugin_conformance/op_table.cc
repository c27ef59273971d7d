// The op table: for every existing op a oneDNN or CUDA plugin would claim,
// input shapes and attribute sets taken from the op tests in backends/cpu.
// A plugin claiming an op missing here fails the suite: add a case.
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "tests/plugin_conformance/conformance.h"
#include "tests/plugin_conformance/op_cases.h"

namespace mx {
namespace conformance {
namespace cases {

// The same shape list for every input of an n-ary elementwise op.
std::function<Shapes(int)> Same(int arity) {
  return [arity](int v) {
    static const TShape kShapes[] = {{7}, {3, 4}, {2, 3, 5}, {64, 65}};
    return Shapes(arity, kShapes[v]);
  };
}

std::function<Shapes(int)> Fixed(std::vector<Shapes> variants) {
  return [variants](int v) { return variants[v]; };
}

OpCase Unary(const std::string& op, double lo, double hi) {
  OpCase c;
  c.op = op;
  c.shapes = Same(1);
  c.num_variants = 4;
  c.lo = lo;
  c.hi = hi;
  return c;
}

OpCase Binary(const std::string& op, double lo, double hi) {
  OpCase c = Unary(op, lo, hi);
  c.shapes = Same(2);
  return c;
}

OpCase Scalar(const std::string& op, double lo, double hi) {
  OpCase c = Unary(op, lo, hi);
  c.attrs = {{{"scalar", "0.5"}}, {{"scalar", "2"}}, {{"scalar", "-3"}}};
  return c;
}

OpCase Shaped(const std::string& op, std::vector<Shapes> variants,
              std::vector<AttrDict> attrs) {
  OpCase c;
  c.op = op;
  c.num_variants = static_cast<int>(variants.size());
  c.shapes = Fixed(std::move(variants));
  c.attrs = std::move(attrs);
  return c;
}

OpCase BatchNorm(bool train) {
  OpCase c = Shaped("BatchNorm",
                    {{{2, 3, 4, 4}, {3}, {3}, {3}, {3}},
                     {{4, 3}, {3}, {3}, {3}, {3}},
                     {{3, 2, 2, 2}, {2}, {2}, {2}, {2}}},
                    {{{"fix_gamma", "False"}}, {{"fix_gamma", "True"}}});
  c.ranges = {{-1, 1}, {0.5, 1.5}, {-1, 1}, {-0.5, 0.5}, {0.5, 1.5}};
  c.train = train;
  c.no_grad = {3, 4};
  c.float32_in_float16 = {1, 2, 3, 4};
  return c;
}

}  // namespace cases

namespace {

using namespace cases;  // NOLINT: the table is written in the builders.

std::vector<OpCase> MakeTable() {
  std::vector<OpCase> t;
  for (const char* op : {"negative", "relu", "sigmoid", "tanh", "exp", "abs",
                         "sin", "cos", "square"}) {
    t.push_back(Unary(op));
  }
  t.push_back(Unary("log", 0.1, 2));
  t.push_back(Unary("sqrt", 0.1, 2));
  for (const char* op : {"elemwise_add", "elemwise_sub", "elemwise_mul"}) {
    t.push_back(Binary(op));
  }
  t.push_back(Binary("elemwise_div", 0.5, 2));
  for (const char* op : {"broadcast_add", "broadcast_sub", "broadcast_mul"}) {
    t.push_back(Shaped(
        op, {{{3, 4}, {1, 4}}, {{2, 3, 5}, {2, 1, 5}}, {{6}, {6}}}, {{}}));
  }
  for (const char* op : {"_plus_scalar", "_minus_scalar", "_rminus_scalar",
                         "_mul_scalar", "_div_scalar"}) {
    t.push_back(Scalar(op));
  }
  t.push_back(Scalar("_rdiv_scalar", 0.5, 2));
  t.push_back(Scalar("_power_scalar", 0.1, 2));
  OpCase act = Unary("Activation");
  act.attrs.clear();
  for (const char* a : {"relu", "sigmoid", "tanh", "softrelu", "softsign",
                        "log_sigmoid", "mish"}) {
    act.attrs.push_back({{"act_type", a}});
  }
  t.push_back(act);
  OpCase leaky = Unary("LeakyReLU");
  leaky.attrs.clear();
  for (const char* a : {"leaky", "elu", "selu", "gelu"}) {
    leaky.attrs.push_back({{"act_type", a}, {"slope", "0.3"}});
  }
  t.push_back(leaky);
  for (const char* op : {"softmax", "log_softmax", "softmin"}) {
    t.push_back(Shaped(op, {{{3, 4}}, {{2, 3, 5}}, {{5, 1}}},
                       {{}, {{"axis", "0"}}, {{"axis", "-1"}}}));
  }
  // MXNet 2's masked softmax: bool masks, broadcast along axis 1 in the
  // second variant; lines with nothing unmasked occur at random.
  for (const char* op : {"masked_softmax", "masked_log_softmax"}) {
    OpCase masked = Shaped(op, {{{3, 4}, {3, 4}}, {{2, 3, 5}, {2, 1, 5}}},
                           {{}, {{"axis", "1"}, {"temperature", "0.5"}}});
    masked.bool_inputs = {1};
    masked.no_grad = {1};
    t.push_back(masked);
    OpCase backward =
        Shaped(std::string("_backward_") + op,
               {{{3, 4}, {3, 4}, {3, 4}}, {{2, 3, 5}, {2, 1, 5}, {2, 3, 5}}},
               {{}, {{"axis", "1"}, {"temperature", "0.5"}}});
    backward.bool_inputs = {1};
    backward.no_grad = {1};
    t.push_back(backward);
  }
  t.push_back(Shaped(
      "softmin", {{{3, 4}}, {{2, 3, 5}}},
      {{{"temperature", "2.5"}}, {{"axis", "1"}, {"temperature", "0.5"}}}));
  t.push_back(Shaped(
      "FullyConnected",
      {{{2, 4}, {3, 4}, {3}}, {{1, 7}, {3, 7}, {3}}, {{5, 2, 3}, {3, 6}, {3}}},
      {{{"num_hidden", "3"}}}));
  t.push_back(Shaped("FullyConnected", {{{2, 4}, {5, 4}}, {{3, 2, 2}, {5, 4}}},
                     {{{"num_hidden", "5"}, {"no_bias", "True"}}}));
  t.push_back(Shaped("Convolution",
                     {{{2, 3, 6, 6}, {4, 3, 3, 3}, {4}},
                      {{1, 3, 5, 7}, {4, 3, 3, 3}, {4}},
                      {{3, 3, 8, 8}, {4, 3, 3, 3}, {4}}},
                     {{{"kernel", "(3,3)"}, {"num_filter", "4"}},
                      {{"kernel", "(3,3)"},
                       {"num_filter", "4"},
                       {"stride", "(2,2)"},
                       {"pad", "(1,1)"}},
                      {{"kernel", "(3,3)"},
                       {"num_filter", "4"},
                       {"dilate", "(1,2)"},
                       {"pad", "(1,2)"}}}));
  t.push_back(
      Shaped("Convolution",
             {{{2, 4, 5, 5}, {4, 2, 2, 2}}, {{1, 4, 4, 3}, {4, 2, 2, 2}}},
             {{{"kernel", "(2,2)"},
               {"num_filter", "4"},
               {"num_group", "2"},
               {"no_bias", "True"}}}));
  t.push_back(Shaped("Convolution",
                     {{{2, 3, 9}, {2, 3, 3}, {2}}, {{1, 3, 5}, {2, 3, 3}, {2}}},
                     {{{"kernel", "(3,)"}, {"num_filter", "2"}}}));
  // Weights (C, F/g, k...); MXNet's default is no bias.
  t.push_back(
      Shaped("Deconvolution",
             {{{2, 3, 4, 4}, {3, 4, 3, 3}}, {{1, 3, 5, 3}, {3, 4, 3, 3}}},
             {{{"kernel", "(3,3)"}, {"num_filter", "4"}},
              {{"kernel", "(3,3)"},
               {"num_filter", "4"},
               {"stride", "(2,2)"},
               {"pad", "(1,1)"},
               {"adj", "(1,1)"}},
              {{"kernel", "(3,3)"},
               {"num_filter", "4"},
               {"dilate", "(2,1)"},
               {"target_shape", "(7,4)"},
               {"stride", "(1,1)"}}}));
  // Groups, stride, pad, adj and a bias; its gradient op below too.
  const AttrDict deconv_grouped = {{"kernel", "(3,2)"}, {"num_filter", "4"},
                                   {"num_group", "2"},  {"stride", "(2,1)"},
                                   {"pad", "(1,1)"},    {"adj", "(1,0)"},
                                   {"no_bias", "False"}};
  t.push_back(Shaped(
      "Deconvolution",
      {{{2, 2, 3, 3}, {2, 2, 3, 2}, {4}}, {{1, 2, 4, 2}, {2, 2, 3, 2}, {4}}},
      {deconv_grouped}));
  t.push_back(Shaped("Deconvolution", {{{1, 3, 4}, {3, 2, 3}}},
                     {{{"kernel", "(3)"},
                       {"num_filter", "2"},
                       {"stride", "(3)"},
                       {"dilate", "(2)"}}}));
  OpCase pool =
      Shaped("Pooling", {{{2, 3, 6, 5}}, {{1, 2, 4, 4}}, {{2, 1, 7, 7}}}, {});
  for (const char* type : {"max", "avg", "sum"}) {
    pool.attrs.push_back(
        {{"kernel", "(2,2)"}, {"pool_type", type}, {"stride", "(2,2)"}});
    pool.attrs.push_back({{"kernel", "(3,2)"},
                          {"pool_type", type},
                          {"stride", "(2,1)"},
                          {"pad", "(1,0)"},
                          {"pooling_convention", "full"}});
  }
  for (const char* counted : {"True", "False"}) {
    pool.attrs.push_back({{"kernel", "(3,3)"},
                          {"pool_type", "avg"},
                          {"pad", "(1,1)"},
                          {"count_include_pad", counted}});
  }
  pool.attrs.push_back({{"global_pool", "True"}, {"pool_type", "avg"}});
  pool.attrs.push_back({{"global_pool", "True"}, {"pool_type", "max"}});
  t.push_back(pool);
  t.push_back(BatchNorm(false));
  t.push_back(BatchNorm(true));
  t.push_back(Shaped(
      "dot", {{{2, 3}, {3, 4}}, {{1, 5}, {5, 1}}, {{4, 7}, {7, 3}}}, {{}}));
  t.push_back(Shaped("dot", {{{3, 2}, {4, 3}}, {{5, 1}, {2, 5}}},
                     {{{"transpose_a", "True"}, {"transpose_b", "True"}}}));
  t.push_back(Shaped(
      "batch_dot",
      {{{2, 3, 4}, {2, 4, 5}}, {{1, 2, 2}, {1, 2, 3}}, {{3, 1, 6}, {3, 6, 2}}},
      {{}}));
  t.push_back(Shaped("batch_dot", {{{2, 4, 3}, {2, 5, 4}}},
                     {{{"transpose_a", "True"}, {"transpose_b", "True"}}}));
  t.push_back(Shaped(
      "Concat",
      {{{2, 1, 3}, {2, 2, 3}, {2, 3, 3}}, {{1, 4, 1}, {1, 1, 1}, {1, 2, 1}}},
      {{{"num_args", "3"}, {"dim", "1"}}}));
  t.push_back(Shaped("Concat", {{{2, 3}, {4, 3}}, {{1, 1}, {1, 1}}},
                     {{{"num_args", "2"}, {"dim", "0"}}}));
  // Backward ops a CPU plugin replaces (oneDNN's): called directly with
  // (out_grad, forward inputs...) shapes that fit the forward's.
  t.push_back(Shaped(
      "_backward_Convolution",
      {{{2, 4, 4, 4}, {2, 3, 6, 6}, {4, 3, 3, 3}},
       {{1, 4, 3, 5}, {1, 3, 5, 7}, {4, 3, 3, 3}}},
      {{{"kernel", "(3,3)"}, {"num_filter", "4"}},
       {{"kernel", "(3,3)"}, {"num_filter", "4"}, {"no_bias", "True"}}}));
  t.push_back(Shaped("_backward_Convolution",
                     {{{2, 4, 3, 3}, {2, 3, 6, 6}, {4, 3, 3, 3}},
                      {{1, 4, 3, 4}, {1, 3, 5, 7}, {4, 3, 3, 3}}},
                     {{{"kernel", "(3,3)"},
                       {"num_filter", "4"},
                       {"stride", "(2,2)"},
                       {"pad", "(1,1)"}}}));
  t.push_back(Shaped("_backward_Convolution",
                     {{{2, 4, 3, 3}, {2, 4, 5, 5}, {4, 2, 2, 2}},
                      {{1, 4, 2, 3}, {1, 4, 4, 5}, {4, 2, 2, 2}}},
                     {{{"kernel", "(2,2)"},
                       {"num_filter", "4"},
                       {"num_group", "2"},
                       {"dilate", "(2,2)"},
                       {"no_bias", "True"}}}));
  for (const char* type : {"max", "avg"}) {
    t.push_back(Shaped(
        "_backward_Pooling",
        {{{2, 3, 3, 2}, {2, 3, 6, 5}}, {{1, 2, 2, 2}, {1, 2, 4, 4}}},
        {{{"kernel", "(2,2)"}, {"pool_type", type}, {"stride", "(2,2)"}}}));
    t.push_back(
        Shaped("_backward_Pooling",
               {{{2, 3, 4, 4}, {2, 3, 6, 5}}, {{2, 1, 4, 6}, {2, 1, 7, 7}}},
               {{{"kernel", "(3,2)"},
                 {"pool_type", type},
                 {"stride", "(2,1)"},
                 {"pad", "(1,0)"},
                 {"pooling_convention", "full"}}}));
    t.push_back(Shaped("_backward_Pooling", {{{2, 3, 1, 1}, {2, 3, 6, 5}}},
                       {{{"global_pool", "True"}, {"pool_type", type}}}));
  }
  // (out_grad, data, gamma, mean, var): with batch statistics (train) and
  // with constant ones.
  for (bool train : {false, true}) {
    OpCase bn = Shaped("_backward_BatchNorm",
                       {{{2, 3, 4, 4}, {2, 3, 4, 4}, {3}, {3}, {3}},
                        {{4, 3}, {4, 3}, {3}, {3}, {3}},
                        {{3, 2, 2, 2, 3}, {3, 2, 2, 2, 3}, {2}, {2}, {2}}},
                       {{{"fix_gamma", "False"}}, {{"fix_gamma", "True"}}});
    bn.ranges = {{-1, 1}, {-1, 1}, {0.5, 1.5}, {-0.5, 0.5}, {0.5, 1.5}};
    bn.train = train;
    bn.float32_in_float16 = {2, 3, 4};
    t.push_back(bn);
  }
  // (out_grad, data, weight) for the Deconvolution cases above.
  t.push_back(Shaped("_backward_Deconvolution",
                     {{{2, 4, 6, 6}, {2, 3, 4, 4}, {3, 4, 3, 3}}},
                     {{{"kernel", "(3,3)"}, {"num_filter", "4"}}}));
  t.push_back(Shaped("_backward_Deconvolution",
                     {{{2, 4, 6, 2}, {2, 2, 3, 3}, {2, 2, 3, 2}}},
                     {deconv_grouped}));
  t.push_back(Shaped("_backward_dot",
                     {{{2, 4}, {2, 3}, {3, 4}}, {{1, 1}, {1, 5}, {5, 1}}},
                     {{}}));
  t.push_back(Shaped("_backward_dot", {{{2, 4}, {3, 2}, {4, 3}}},
                     {{{"transpose_a", "True"}, {"transpose_b", "True"}}}));
  // MXNet's use_length (int32 lengths in [0, 4], every axis here 4 long)
  // and dtype.
  for (const char* op : {"softmax", "log_softmax", "softmin"}) {
    OpCase with_length =
        Shaped(op, {{{3, 4}, {3}}, {{2, 4}, {2}}}, {{{"use_length", "True"}}});
    with_length.ranges = {{-2, 2}, {0, 5}};
    with_length.int32_inputs = {1};
    t.push_back(with_length);
    OpCase axis0 = Shaped(op, {{{4, 3}, {3}}, {{4, 2, 2}, {2, 2}}},
                          {{{"use_length", "True"}, {"axis", "0"}}});
    axis0.ranges = {{-2, 2}, {0, 5}};
    axis0.int32_inputs = {1};
    t.push_back(axis0);
    // Widening only: the comparison's tolerance is the data's dtype's.
    t.push_back(Shaped(op, {{{3, 4}}, {{2, 3, 5}}}, {{{"dtype", "float64"}}}));
  }
  for (const char* op :
       {"_backward_softmax", "_backward_log_softmax", "_backward_softmin"}) {
    OpCase with_length =
        Shaped(op, {{{3, 4}, {3, 4}, {3}}}, {{{"use_length", "True"}}});
    with_length.ranges = {{-1, 1}, {0, 1}, {0, 5}};
    with_length.int32_inputs = {2};
    t.push_back(with_length);
  }
  for (const char* op :
       {"_backward_softmax", "_backward_log_softmax", "_backward_softmin"}) {
    t.push_back(Shaped(op, {{{3, 4}, {3, 4}}, {{2, 3, 5}, {2, 3, 5}}},
                       {{}, {{"axis", "0"}}}));
  }
  for (const char* op : {"sum", "mean"}) {
    t.push_back(Shaped(op, {{{3, 4}}, {{2, 3, 5}}, {{4, 1, 6}}},
                       {{},
                        {{"axis", "1"}},
                        {{"axis", "0"}, {"keepdims", "True"}},
                        {{"axis", "(0, 1)"}}}));
    // Reduced axes that are not adjacent (also once length-1 dims are
    // left out: (4, 1, 6) over (0, 2) is adjacent).
    t.push_back(Shaped(op, {{{2, 3, 5}}, {{4, 1, 6}}, {{2, 3, 4, 5}}},
                       {{{"axis", "(0, 2)"}},
                        {{"axis", "(0, 2)"}, {"keepdims", "True"}},
                        {{"axis", "1"}, {"exclude", "True"}}}));
  }
  for (const char* op : {"max", "min"}) {
    t.push_back(Shaped(
        op, {{{2, 3, 5}}, {{2, 3, 4, 5}}},
        {{{"axis", "(0, 2)"}}, {{"axis", "(-1, 0)"}, {"keepdims", "True"}}}));
  }
  // An empty sum is 0, an empty mean NaN (0 for integers); over adjacent
  // axes and not.
  for (const char* op : {"sum", "mean"}) {
    t.push_back(Shaped(op, {{{0, 3}}, {{2, 0, 3}}}, {{{"axis", "(0, 1)"}}}));
    t.push_back(Shaped(op, {{{0, 2, 3}}, {{3, 2, 0}}}, {{{"axis", "(0, 2)"}}}));
  }
  // Products of values near 1 (well conditioned), nansum; over adjacent
  // axes and not. _backward_prod takes (out_grad, data).
  for (const char* op : {"prod", "nansum", "nanprod"}) {
    OpCase c = Shaped(op, {{{2, 3, 5}}, {{4, 1, 6}}, {{2, 3, 4, 5}}},
                      {{},
                       {{"axis", "1"}},
                       {{"axis", "(0, 2)"}, {"keepdims", "True"}},
                       {{"axis", "1"}, {"exclude", "True"}}});
    c.lo = 0.5;
    c.hi = 1.5;
    t.push_back(c);
  }
  OpCase prod_grad =
      Shaped("_backward_prod", {{{2, 5}, {2, 3, 5}}}, {{{"axis", "1"}}});
  prod_grad.ranges = {{-1, 1}, {0.5, 1.5}};
  t.push_back(prod_grad);
  t.push_back(Shaped(
      "_backward_prod", {{{3}, {2, 3, 5}}},
      {{{"axis", "(0, 2)"}}, {{"axis", "(0, 2)"}, {"skip_nan", "True"}}}));
  t.push_back(Shaped("_backward_prod", {{{1, 1, 1}, {2, 3, 4}}},
                     {{{"keepdims", "True"}}}));
  t.push_back(Shaped(
      "moments", {{{3, 4}}, {{2, 3, 5}}},
      {{}, {{"axes", "(1,)"}}, {{"axes", "(0, 1)"}, {"keepdims", "True"}}}));
  t.push_back(Shaped("moments", {{{2, 3, 5}}}, {{{"axes", "(0, 2)"}}}));
  t.push_back(Shaped("norm", {{{3, 4}}, {{2, 3, 5}}},
                     {{},
                      {{"ord", "1"}, {"axis", "1"}},
                      {{"axis", "(0, 1)"}, {"keepdims", "True"}},
                      {{"ord", "1"}, {"axis", "-1"}},
                      {{"out_dtype", "float64"}, {"axis", "0"}}}));
  t.push_back(Shaped("norm", {{{2, 3, 5}}, {{2, 3, 4, 5}}},
                     {{{"axis", "(0, 2)"}},
                      {{"ord", "1"}, {"axis", "(0, 2)"}, {"keepdims", "1"}}}));
  AddDeviceCases(&t);
  AddLayoutCases(&t);
  AddIndexCases(&t);
  AddNnCases(&t);
  AddRnnCases(&t);
  AddNumpyCases(&t);
  return t;
}

}  // namespace

const std::vector<OpCase>& KernelTable() {
  static const auto* table = new std::vector<OpCase>(MakeTable());
  return *table;
}

std::vector<int> FindCases(const std::string& op) {
  const Op* found = OpRegistry::Get()->Find(op);
  const std::string name = found ? found->name() : op;
  std::vector<int> cases;
  for (size_t i = 0; i < KernelTable().size(); ++i) {
    if (KernelTable()[i].op == name) cases.push_back(static_cast<int>(i));
  }
  return cases;
}

const std::vector<AttrDict>& NewOpAttrs(const std::string& op) {
  // The repo's plugins' new ops that need attributes or have interesting
  // ones. A vendor adds theirs.
  // fuse: r1 = exp(r0); r2 = r1 * 0.5; outputs r2 and r1; and a
  // two-input program r2 = r0 + r1, r3 = tanh(r2). The CUDA plugin's fused
  // op runs the same programs.
  static const std::vector<AttrDict> programs = {
      {{"num_inputs", "1"},
       {"program", "exp 0 -1 0;_mul_scalar 1 -1 0.5"},
       {"outputs", "2,1"}},
      {{"num_inputs", "2"},
       {"program", "elemwise_add 0 1 0;tanh 2 -1 0"},
       {"outputs", "3"}}};
  static const auto* table = new std::map<std::string, std::vector<AttrDict>>{
      {"_test_plugin_scale", {{}, {{"scale", "0.5"}}, {{"scale", "-3"}}}},
      {"_test_plugin_scale_backward", {{}, {{"scale", "4"}}}},
      {"_test_plugin_offset", {{{"offset", "10"}}, {{"offset", "-0.25"}}}},
      {"_fused_elemwise", programs},
      {"_cuda_fused_elemwise", programs},
  };
  static const auto* none = new std::vector<AttrDict>{{}};
  auto it = table->find(op);
  return it == table->end() ? *none : it->second;
}

}  // namespace conformance
}  // namespace mx
