// The op table: for every existing op a oneDNN or CUDA plugin would claim,
// input shapes and attribute sets taken from the op tests in backends/cpu.
// A plugin claiming an op missing here fails the suite: add a case.
#include <utility>

#include "tests/plugin_conformance/conformance.h"

namespace mx {
namespace conformance {
namespace {

using Shapes = std::vector<TShape>;

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

OpCase Unary(const std::string& op, double lo = -1, double hi = 1) {
  OpCase c;
  c.op = op;
  c.shapes = Same(1);
  c.num_variants = 4;
  c.lo = lo;
  c.hi = hi;
  return c;
}

OpCase Binary(const std::string& op, double lo = -1, double hi = 1) {
  OpCase c = Unary(op, lo, hi);
  c.shapes = Same(2);
  return c;
}

OpCase Scalar(const std::string& op, double lo = -1, double hi = 1) {
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
  return c;
}

// Ops a device backend (the CUDA plugin) claims beyond the CPU plugins':
// the rest of the elementwise family, shape ops, fills, random numbers,
// optimizer updates and the gradient helpers of autograd.
void AddDeviceCases(std::vector<OpCase>* t) {
  for (const char* op : {"sign", "erf", "expm1", "BlockGrad", "_copy",
                         "zeros_like", "ones_like"}) {
    t->push_back(Unary(op));
  }
  for (const char* op : {"rsqrt", "reciprocal"})
    t->push_back(Unary(op, 0.5, 2));
  t->push_back(Unary("log1p", -0.5, 1));
  t->push_back(Binary("_backward_relu"));
  for (const char* op :
       {"broadcast_div", "broadcast_maximum", "broadcast_minimum"}) {
    t->push_back(Shaped(
        op, {{{3, 4}, {1, 4}}, {{2, 3, 5}, {2, 1, 5}}, {{6}, {6}}}, {{}}));
  }
  OpCase power = Shaped("broadcast_power",
                        {{{3, 4}, {1, 4}}, {{2, 3, 5}, {2, 1, 5}}}, {{}});
  power.lo = 0.5;
  power.hi = 2;
  t->push_back(power);
  for (const char* op : {"_maximum_scalar", "_minimum_scalar"}) {
    t->push_back(Scalar(op));
  }
  OpCase add_n = Unary("add_n");
  add_n.shapes = Same(3);
  add_n.attrs = {{{"num_args", "3"}}};
  t->push_back(add_n);
  t->push_back(Shaped("Reshape", {{{2, 3, 4}}, {{6, 4}}},
                      {{{"shape", "(4, -1)"}}, {{"shape", "(0, 2, -1)"}}}));
  t->push_back(Shaped("Flatten", {{{2, 3, 4}}, {{5, 2}}, {{3}}}, {{}}));
  t->push_back(
      Shaped("reshape_like", {{{2, 6}, {3, 4}}, {{12}, {2, 2, 3}}}, {{}}));
  t->push_back(Shaped("expand_dims", {{{2, 3}}, {{4}}},
                      {{{"axis", "1"}}, {{"axis", "-1"}}}));
  t->push_back(Shaped("_split_like", {{{4, 6}, {4, 2}, {4, 4}}},
                      {{{"num_args", "2"}, {"dim", "1"}}}));
  t->push_back(Shaped("_split_like", {{{5, 3}, {2, 3}, {3, 3}}},
                      {{{"num_args", "2"}, {"dim", "0"}}}));
  t->push_back(Shaped("_reduce_sum_like",
                      {{{3, 4}, {1, 4}}, {{2, 3, 4}, {3, 1}}, {{5}, {5}}},
                      {{}}));
  t->push_back(
      Shaped("_broadcast_reduced_like", {{{3, 1}, {3, 4}}},
             {{{"axis", "1"}, {"keepdims", "True"}},
              {{"axis", "1"}, {"keepdims", "True"}, {"normalize", "True"}}}));
  t->push_back(Shaped("_broadcast_reduced_like", {{{4}, {3, 4}}},
                      {{{"axis", "0"}}, {{"axis", "0"}, {"normalize", "1"}}}));
  for (const char* op : {"_zeros", "_ones"}) {
    t->push_back(
        Shaped(op, {{}}, {{{"shape", "(3, 4)"}}, {{"shape", "(5,)"}}}));
  }
  t->push_back(Shaped("_full", {{}},
                      {{{"shape", "(3, 4)"}, {"value", "2.5"}},
                       {{"shape", "(2,)"}, {"value", "-1"}}}));
  for (const char* op : {"_random_uniform", "_random_normal"}) {
    OpCase r =
        Shaped(op, {{}}, {{{"shape", "(3, 4)"}}, {{"shape", "(1000,)"}}});
    r.random_values = true;
    t->push_back(r);
  }
  OpCase one_hot =
      Shaped("one_hot", {{{6}}, {{2, 3}}},
             {{{"depth", "5"}},
              {{"depth", "4"}, {"on_value", "2"}, {"off_value", "-1"}}});
  one_hot.lo = 0;
  one_hot.hi = 4;
  one_hot.int32_inputs = {0};
  t->push_back(one_hot);
  const AttrDict clip = {{"lr", "0.1"},
                         {"wd", "0.01"},
                         {"rescale_grad", "0.5"},
                         {"clip_gradient", "0.2"}};
  t->push_back(Shaped("sgd_update", {{{3, 4}, {3, 4}}, {{7}, {7}}},
                      {{{"lr", "0.1"}}, clip}));
  AttrDict mom = clip;
  mom["momentum"] = "0.9";
  t->push_back(Shaped("sgd_mom_update",
                      {{{3, 4}, {3, 4}, {3, 4}}, {{7}, {7}, {7}}},
                      {{{"lr", "0.1"}, {"momentum", "0.9"}}, mom}));
  t->push_back(
      Shaped("_multi_sgd_mom_update", {{{3, 4}, {3, 4}, {3, 4}, {7}, {7}, {7}}},
             {{{"lr", "0.1"}, {"momentum", "0.9"}, {"num_weights", "2"}},
              {{"lr", "0.05"},
               {"momentum", "0.5"},
               {"wd", "0.01"},
               {"rescale_grad", "0.5"},
               {"clip_gradient", "0.2"},
               {"num_weights", "2"}}}));
  OpCase adam = Shaped("adam_update",
                       {{{3, 4}, {3, 4}, {3, 4}, {3, 4}}, {{7}, {7}, {7}, {7}}},
                       {{{"lr", "0.01"}}, clip});
  adam.ranges = {{-1, 1}, {-1, 1}, {-0.1, 0.1}, {0.01, 0.1}};
  t->push_back(adam);
  // (out_grad, argmax, data): argmax positions inside each 7x9 plane.
  OpCase pool_max = Shaped("_backward_Pooling_max",
                           {{{2, 3, 4, 5}, {2, 3, 4, 5}, {2, 3, 7, 9}}},
                           {{{"kernel", "(3,3)"},
                             {"stride", "(2,2)"},
                             {"pad", "(1,1)"},
                             {"pool_type", "max"}}});
  pool_max.ranges = {{-1, 1}, {0, 63}, {-1, 1}};
  pool_max.int32_inputs = {1};
  t->push_back(pool_max);
  for (const char* op : {"max", "min"}) {
    t->push_back(Shaped(op, {{{3, 4}}, {{2, 3, 5}}, {{4, 1, 6}}},
                        {{},
                         {{"axis", "1"}},
                         {{"axis", "0"}, {"keepdims", "True"}},
                         {{"axis", "-1"}, {"keepdims", "True"}}}));
  }
  // Integer bounds too, and one beyond int8's range (int32 data: 8x).
  t->push_back(Shaped("clip", {{{7}}, {{3, 4}}},
                      {{{"a_min", "-0.5"}, {"a_max", "0.25"}},
                       {{"a_min", "0"}, {"a_max", "0"}},
                       {{"a_min", "-3"}, {"a_max", "5"}},
                       {{"a_min", "-1000"}, {"a_max", "2"}}}));
  t->push_back(Shaped("broadcast_to", {{{1, 4}}}, {{{"shape", "(3, 4)"}}}));
  t->push_back(Shaped("broadcast_to", {{{3, 1, 2}}},
                      {{{"shape", "(3, 5, 2)"}}, {{"shape", "(0, 4, 0)"}}}));
  t->push_back(
      Shaped("broadcast_like", {{{1, 4}, {3, 4}}, {{2, 1}, {2, 5}}}, {{}}));
  t->push_back(Shaped("broadcast_axis", {{{3, 1, 2}}},
                      {{{"axis", "1"}, {"size", "3"}}}));
  t->push_back(
      Shaped("broadcast_axis", {{{1, 4}}}, {{{"axis", "0"}, {"size", "2"}}}));
  t->push_back(
      Shaped("transpose", {{{2, 3}}, {{2, 3, 4}}, {{2, 3, 4, 5}}}, {{}}));
  t->push_back(Shaped("transpose", {{{2, 3}}}, {{{"axes", "(1, 0)"}}}));
  t->push_back(Shaped("transpose", {{{2, 3, 4}}},
                      {{{"axes", "(2, 0, 1)"}}, {{"axes", "(1, 2, 0)"}}}));
  t->push_back(Shaped("slice_axis", {{{5, 6}}, {{4, 3, 2}}},
                      {{{"axis", "0"}, {"begin", "1"}, {"end", "3"}},
                       {{"axis", "1"}, {"begin", "-2"}, {"end", "None"}}}));
  t->push_back(Shaped(
      "slice", {{{5, 6}}, {{6, 7}}},
      {{{"begin", "(1, 0)"}, {"end", "(4, 5)"}},
       {{"begin", "(None, 1)"}, {"end", "(None, -1)"}, {"step", "(2, 2)"}},
       {{"begin", "(4, None)"}, {"end", "(0, None)"}, {"step", "(-1, -2)"}}}));
  t->push_back(Shaped(
      "Cast", {{{3, 4}}, {{7}}},
      {{{"dtype", "float16"}}, {{"dtype", "int32"}}, {{"dtype", "float64"}}}));
  t->push_back(Shaped("Dropout", {{{4, 5}}, {{2, 3, 4}}},
                      {{{"p", "0.5"}}, {{"p", "0.3"}, {"axes", "(1,)"}}}));
}

// The rest of the elementwise family (math, comparisons) and the layout
// ops a device backend claims: slices and their gradients, reverse, tile,
// repeat, Pad, stack, SliceChannel, squeeze, shape_array, _cast_like.
void AddLayoutCases(std::vector<OpCase>* t) {
  for (const char* op :
       {"tan", "sinh", "cosh", "arctan", "arcsinh", "degrees", "radians"}) {
    t->push_back(Unary(op));
  }
  for (const char* op : {"arcsin", "arccos", "arctanh"}) {
    t->push_back(Unary(op, -0.9, 0.9));
  }
  t->push_back(Unary("arccosh", 1.2, 4));
  for (const char* op : {"log2", "log10", "cbrt", "rcbrt"}) {
    t->push_back(Unary(op, 0.3, 4));
  }
  for (const char* name : {"equal", "not_equal", "greater", "greater_equal",
                           "lesser", "lesser_equal"}) {
    const std::string n = name;
    const std::string npi =
        n.rfind("lesser", 0) == 0 ? "less" + n.substr(6) : n;
    for (const std::string& op : {"broadcast_" + n, "_npi_" + npi}) {
      t->push_back(Shaped(
          op, {{{3, 4}, {1, 4}}, {{2, 3, 5}, {2, 1, 5}}, {{6}, {6}}}, {{}}));
    }
    t->push_back(Scalar("_" + n + "_scalar"));
    t->push_back(Scalar("_npi_" + npi + "_scalar"));
  }
  OpCase rpower = Scalar("_rpower_scalar");
  rpower.attrs = {{{"scalar", "0.5"}}, {{"scalar", "2"}}, {{"scalar", "3"}}};
  t->push_back(rpower);
  t->push_back(Shaped("squeeze", {{{2, 1, 3}}, {{1, 4, 1}}}, {{}}));
  t->push_back(Shaped("squeeze", {{{2, 1, 3}}}, {{{"axis", "(1,)"}}}));
  t->push_back(Shaped("_cast_like", {{{3, 4}, {3, 4}}, {{5}, {2}}}, {{}}));
  t->push_back(Shaped("shape_array", {{{2, 3, 4}}, {{5}}}, {{}}));
  t->push_back(Shaped("stack", {{{2, 3}, {2, 3}, {2, 3}}},
                      {{{"num_args", "3"}, {"axis", "0"}},
                       {{"num_args", "3"}, {"axis", "1"}},
                       {{"num_args", "3"}, {"axis", "-1"}}}));
  t->push_back(Shaped("SliceChannel", {{{4, 6}}, {{2, 6, 3}}},
                      {{{"num_outputs", "2"}},
                       {{"num_outputs", "3"}, {"axis", "1"}},
                       {{"num_outputs", "2"}, {"axis", "0"}}}));
  t->push_back(Shaped("SliceChannel", {{{2, 3, 4}}},
                      {{{"num_outputs", "3"}, {"squeeze_axis", "True"}}}));
  t->push_back(Shaped("slice_like", {{{5, 6}, {3, 4}}},
                      {{}, {{"axes", "(1,)"}}, {{"axes", "(0, -1)"}}}));
  // (out_grad, data).
  t->push_back(Shaped("_backward_slice_like", {{{3, 4}, {5, 6}}}, {{}}));
  t->push_back(
      Shaped("_backward_slice_like", {{{5, 4}, {5, 6}}}, {{{"axes", "(1,)"}}}));
  // (data = the slice's gradient, like), for the slice cases above.
  t->push_back(Shaped("_backward_slice", {{{3, 5}, {5, 6}}},
                      {{{"begin", "(1, 0)"}, {"end", "(4, 5)"}}}));
  t->push_back(Shaped(
      "_backward_slice", {{{3, 3}, {6, 7}}},
      {{{"begin", "(None, 1)"}, {"end", "(None, -1)"}, {"step", "(2, 2)"}}}));
  t->push_back(Shaped(
      "_backward_slice", {{{4, 4}, {6, 7}}},
      {{{"begin", "(4, None)"}, {"end", "(0, None)"}, {"step", "(-1, -2)"}}}));
  t->push_back(Shaped("_backward_slice_axis", {{{2, 6}, {5, 6}}},
                      {{{"axis", "0"}, {"begin", "1"}, {"end", "3"}}}));
  t->push_back(Shaped("_backward_slice_axis", {{{4, 2, 2}, {4, 3, 2}}},
                      {{{"axis", "1"}, {"begin", "-2"}, {"end", "None"}}}));
  t->push_back(
      Shaped("reverse", {{{3, 4}}, {{2, 3, 4}}},
             {{{"axis", "(0,)"}}, {{"axis", "(1,)"}}, {{"axis", "(0, -1)"}}}));
  t->push_back(Shaped(
      "tile", {{{2, 3}}, {{3}}},
      {{{"reps", "(2,)"}}, {{"reps", "(2, 1, 3)"}}, {{"reps", "(1, 2)"}}}));
  t->push_back(
      Shaped("_backward_tile", {{{4, 9}, {2, 3}}}, {{{"reps", "(2, 3)"}}}));
  t->push_back(
      Shaped("_backward_tile", {{{2, 6}, {3}}}, {{{"reps", "(2, 2)"}}}));
  t->push_back(Shaped("repeat", {{{2, 3}}, {{4}}},
                      {{{"repeats", "2"}},
                       {{"repeats", "3"}, {"axis", "0"}},
                       {{"repeats", "2"}, {"axis", "-1"}}}));
  t->push_back(Shaped("_backward_repeat", {{{2, 6}, {2, 3}}},
                      {{{"repeats", "2"}, {"axis", "1"}}}));
  t->push_back(
      Shaped("_backward_repeat", {{{12}, {2, 3}}}, {{{"repeats", "2"}}}));
  const std::string width = "(0, 0, 0, 0, 1, 2, 2, 1)";
  std::vector<AttrDict> pads;
  for (const char* mode : {"constant", "edge", "reflect"}) {
    pads.push_back({{"mode", mode}, {"pad_width", width}});
  }
  pads.push_back(
      {{"mode", "constant"}, {"pad_width", width}, {"constant_value", "1.5"}});
  t->push_back(Shaped("Pad", {{{2, 3, 4, 5}}, {{1, 1, 3, 3}}}, pads));
  // (out_grad, data).
  t->push_back(Shaped("_backward_Pad", {{{2, 3, 7, 8}, {2, 3, 4, 5}}}, pads));
  // Dynamic-shape ops: integers in {-1, 0, 1}, so some elements are zero.
  OpCase nonzero = Shaped("flatnonzero", {{{7}}, {{3, 4}}, {{2, 3, 5}}}, {{}});
  nonzero.lo = -1;
  nonzero.hi = 2;
  nonzero.int32_inputs = {0};
  t->push_back(nonzero);
  OpCase mask = Shaped("boolean_mask",
                       {{{5, 3}, {5}}, {{6}, {6}}, {{4, 2, 3}, {4}}}, {{}});
  mask.ranges = {{-1, 1}, {0, 2}};
  mask.int32_inputs = {1};
  t->push_back(mask);
  // (out_grad of the kept rows, data, index): a float index in [0.5, 1]
  // keeps every row.
  OpCase mask_grad = Shaped("_backward_boolean_mask",
                            {{{5, 3}, {5, 3}, {5}}, {{4}, {4}, {4}}}, {{}});
  mask_grad.ranges = {{-1, 1}, {-1, 1}, {0.5, 1}};
  t->push_back(mask_grad);
  // box_nms: values in [0, 1], so boxes overlap and some scores fall under
  // valid_thresh; class ids are distinct floats unless forced.
  OpCase nms = Shaped("_contrib_box_nms", {{{2, 8, 6}}, {{9, 6}}},
                      {{},
                       {{"overlap_thresh", "0.3"}, {"topk", "4"}},
                       {{"valid_thresh", "0.5"}, {"id_index", "0"}},
                       {{"force_suppress", "True"},
                        {"id_index", "0"},
                        {"in_format", "center"},
                        {"out_format", "corner"}}});
  nms.lo = 0;
  t->push_back(nms);
  nms = Shaped(
      "_contrib_box_nms", {{{1, 1, 5}}, {{3, 7, 5}}},
      {{{"coord_start", "1"}, {"score_index", "0"}, {"out_format", "center"}}});
  nms.lo = 0;
  t->push_back(nms);
  // (out_grad, source_row, data): source rows in [-1, 8), repeats allowed
  // (the kernels add).
  OpCase nms_grad = Shaped("_backward_contrib_box_nms",
                           {{{2, 8, 6}, {2, 8}, {2, 8, 6}}}, {{}});
  nms_grad.ranges = {{-1, 1}, {-1, 8}, {0, 1}};
  nms_grad.int32_inputs = {1};
  t->push_back(nms_grad);
}

// The indexing ops (take, gather_nd, where, SequenceMask, argmax, argsort,
// _arange, tril, triu) and the gradients the CUDA plugin claims. Index
// inputs are int32 and reach past the axis for clip/wrap; raise and
// gather_nd get indices in range (the reference raises otherwise).
void AddIndexCases(std::vector<OpCase>* t) {
  OpCase take = Shaped("take", {{{5, 4}, {7}}, {{6, 3, 2}, {2, 2}}},
                       {{},
                        {{"mode", "wrap"}},
                        {{"axis", "1"}, {"mode", "clip"}},
                        {{"axis", "-1"}, {"mode", "wrap"}}});
  take.ranges = {{-1, 1}, {-3, 8}};
  take.int32_inputs = {1};
  t->push_back(take);
  OpCase take_raise =
      Shaped("take", {{{5, 4}, {3}}, {{4, 5, 2}, {2, 3}}},
             {{{"mode", "raise"}}, {{"axis", "1"}, {"mode", "raise"}}});
  take_raise.ranges = {{-1, 1}, {-4, 4}};
  take_raise.int32_inputs = {1};
  t->push_back(take_raise);
  // (data shaped like take's output, indices, like): repeated indices add.
  OpCase back_take =
      Shaped("_backward_take",
             {{{7, 4}, {7}, {5, 4}}, {{2, 2, 3, 2}, {2, 2}, {6, 3, 2}}},
             {{}, {{"mode", "wrap"}}});
  back_take.ranges = {{-1, 1}, {-3, 8}, {-1, 1}};
  back_take.int32_inputs = {1};
  t->push_back(back_take);
  OpCase back_take_axis =
      Shaped("_backward_take", {{{6, 2, 4, 2}, {2, 4}, {6, 3, 2}}},
             {{{"axis", "1"}}, {{"axis", "1"}, {"mode", "raise"}}});
  back_take_axis.ranges = {{-1, 1}, {-3, 3}, {-1, 1}};
  back_take_axis.int32_inputs = {1};
  t->push_back(back_take_axis);
  OpCase embedding = Shaped("Embedding", {{{4}, {10, 3}}, {{2, 3}, {10, 3}}},
                            {{{"input_dim", "10"}, {"output_dim", "3"}}});
  embedding.ranges = {{-2, 13}, {-1, 1}};
  embedding.int32_inputs = {0};
  t->push_back(embedding);
  OpCase gather = Shaped(
      "gather_nd",
      {{{3, 4}, {2, 5}}, {{2, 3, 4}, {1, 2, 2}}, {{4, 3, 2}, {3, 6}}}, {{}});
  gather.ranges = {{-1, 1}, {-2, 2}};
  gather.int32_inputs = {1};
  t->push_back(gather);
  // (out_grad, indices, data); 8 rows picked from 3 repeat.
  OpCase back_gather = Shaped("_backward_gather_nd",
                              {{{5}, {2, 5}, {3, 4}},
                               {{2, 2, 3, 4}, {1, 2, 2}, {2, 3, 4}},
                               {{8, 4}, {1, 8}, {3, 4}}},
                              {{}});
  back_gather.ranges = {{-1, 1}, {-2, 2}, {-1, 1}};
  back_gather.int32_inputs = {1};
  t->push_back(back_gather);
  // Conditions of 0 and 1; broadcasting and MXNet's row form.
  OpCase where = Shaped("where",
                        {{{3, 4}, {3, 4}, {3, 4}},
                         {{3, 1}, {3, 4}, {1, 4}},
                         {{3}, {3, 4}, {3, 4}},
                         {{2, 3, 5}, {3, 5}, {2, 1, 5}}},
                        {{}});
  where.ranges = {{0, 2}, {-1, 1}, {-1, 1}};
  where.int32_inputs = {0};
  t->push_back(where);
  t->push_back(
      Shaped("SequenceMask", {{{4, 3}}, {{5, 3, 2}}}, {{}, {{"value", "-1"}}}));
  OpCase mask = Shaped("SequenceMask", {{{5, 3, 2}, {3}}, {{4, 2}, {2}}},
                       {{{"use_sequence_length", "True"}, {"value", "-2"}}});
  mask.ranges = {{-1, 1}, {0, 6}};
  mask.int32_inputs = {1};
  t->push_back(mask);
  // Lengths as floats (compared as such), time on axis 1.
  OpCase mask_axis1 = Shaped(
      "SequenceMask", {{{3, 5, 2}, {3}}, {{2, 4}, {2}}},
      {{{"use_sequence_length", "True"}, {"axis", "1"}},
       {{"use_sequence_length", "True"}, {"axis", "1"}, {"value", "0.5"}}});
  mask_axis1.ranges = {{-1, 1}, {0, 6}};
  t->push_back(mask_axis1);
  t->push_back(Shaped("argmax",
                      {{{3, 4}}, {{2, 3, 5}}, {{4, 1, 6}}, {{2, 300, 3}}},
                      {{},
                       {{"axis", "1"}},
                       {{"axis", "0"}, {"keepdims", "True"}},
                       {{"axis", "-1"}}}));
  t->push_back(
      Shaped("argsort", {{{3, 4}}, {{2, 3, 5}}, {{5, 8}}, {{2, 300, 3}}},
             {{},
              {{"axis", "0"}},
              {{"axis", "None"}},
              {{"is_ascend", "False"}},
              {{"axis", "1"}, {"dtype", "int32"}},
              {{"axis", "0"}, {"is_ascend", "0"}, {"dtype", "int64"}}}));
  t->push_back(
      Shaped("_arange", {{}},
             {{{"start", "5"}},
              {{"start", "1"}, {"stop", "7"}, {"step", "1.5"}},
              {{"start", "10"}, {"stop", "2"}, {"step", "-3"}, {"repeat", "2"}},
              {{"start", "0"}, {"stop", "5"}, {"dtype", "int32"}},
              {{"start", "-2.5"}, {"stop", "3"}, {"dtype", "int64"}},
              {{"start", "0"},
               {"stop", "1"},
               {"step", "0.1"},
               {"dtype", "float64"}}}));
  for (const char* op : {"tril", "triu"}) {
    t->push_back(Shaped(op, {{{4, 5}}, {{2, 3, 4}}, {{5}}},
                        {{}, {{"k", "1"}}, {{"k", "-2"}}}));
  }
}

// Ops of the CUDA plugin's norm, loss and deconvolution kernels (and any
// plugin claiming them): shapes and attributes from the CPU op tests.
// Labels are int32 class indices, as the CPU kernels also take them.
void AddNnCases(std::vector<OpCase>* t) {
  OpCase prelu =
      Shaped("LeakyReLU", {{{2, 3, 4}, {3}}, {{4, 5}, {5}}, {{2, 3}, {1}}},
             {{{"act_type", "prelu"}}});
  t->push_back(prelu);
  // rrelu outside training: the slope is the bounds' mean.
  OpCase rrelu = Unary("LeakyReLU");
  rrelu.attrs = {
      {{"act_type", "rrelu"}},
      {{"act_type", "rrelu"}, {"lower_bound", "0.1"}, {"upper_bound", "0.5"}},
      {{"act_type", "leaky"}},
      {{"act_type", "elu"}, {"slope", "1.5"}}};
  t->push_back(rrelu);
  t->push_back(Shaped("_backward_LeakyReLU_prelu",
                      {{{2, 3, 4}, {2, 3, 4}, {3}},
                       {{4, 5}, {4, 5}, {5}},
                       {{2, 3}, {2, 3}, {1}}},
                      {{{"act_type", "prelu"}}}));
  // (data, gamma, beta) with gamma and beta of the normalized axis.
  t->push_back(Shaped(
      "LayerNorm", {{{2, 3, 4}, {4}, {4}}, {{3, 5}, {5}, {5}}, {{7}, {7}, {7}}},
      {{}, {{"eps", "0.001"}, {"output_mean_var", "True"}}}));
  t->push_back(
      Shaped("LayerNorm", {{{2, 3, 4}, {3}, {3}}, {{4, 3}, {3}, {3}}},
             {{{"axis", "1"}}, {{"axis", "1"}, {"output_mean_var", "True"}}}));
  t->push_back(Shaped("LayerNorm", {{{4, 3}, {4}, {4}}},
                      {{{"axis", "0"}, {"output_mean_var", "True"}}}));
  // (out_grad, data, gamma).
  t->push_back(Shaped("_backward_LayerNorm",
                      {{{2, 3, 4}, {2, 3, 4}, {4}}, {{3, 5}, {3, 5}, {5}}},
                      {{}, {{"eps", "0.001"}}}));
  t->push_back(Shaped("_backward_LayerNorm",
                      {{{2, 3, 4}, {2, 3, 4}, {3}}, {{4, 3}, {4, 3}, {3}}},
                      {{{"axis", "1"}}}));
  std::vector<AttrDict> l2_modes;
  for (const char* mode : {"instance", "channel", "spatial"}) {
    l2_modes.push_back({{"mode", mode}});
  }
  l2_modes.push_back({{"mode", "channel"}, {"eps", "0.5"}});
  t->push_back(Shaped("L2Normalization",
                      {{{2, 3, 4}}, {{2, 3, 2, 2}}, {{3, 5, 1}}}, l2_modes));
  t->push_back(Shaped("L2Normalization", {{{3, 4}}, {{5, 1}}},
                      {{{"mode", "instance"}}}));
  t->push_back(Shaped("_backward_L2Normalization",
                      {{{2, 3, 4}, {2, 3, 4}}, {{2, 3, 2, 2}, {2, 3, 2, 2}}},
                      l2_modes));
  // SoftmaxOutput: (data, label); the gradient attributes matter for the
  // CPU reference's gradient and for _backward_SoftmaxOutput below.
  OpCase so = Shaped("SoftmaxOutput", {{{3, 4}, {3}}, {{2, 5}, {2}}},
                     {{},
                      {{"grad_scale", "2"}, {"normalization", "batch"}},
                      {{"use_ignore", "True"},
                       {"ignore_label", "1"},
                       {"normalization", "valid"}}});
  so.ranges = {{-1, 1}, {0, 4}};
  so.int32_inputs = {1};
  so.no_grad = {1};
  t->push_back(so);
  OpCase so_multi = Shaped("SoftmaxOutput", {{{2, 3, 4}, {2, 4}}},
                           {{{"multi_output", "True"}}});
  so_multi.ranges = {{-1, 1}, {0, 3}};
  so_multi.int32_inputs = {1};
  so_multi.no_grad = {1};
  t->push_back(so_multi);
  OpCase so_keep = Shaped("SoftmaxOutput", {{{2, 3, 4}, {2, 3}}},
                          {{{"preserve_shape", "True"}}});
  so_keep.ranges = {{-1, 1}, {0, 4}};
  so_keep.int32_inputs = {1};
  so_keep.no_grad = {1};
  t->push_back(so_keep);
  // (out_grad, output, label).
  OpCase so_grad = Shaped("_backward_SoftmaxOutput",
                          {{{3, 4}, {3, 4}, {3}}, {{2, 5}, {2, 5}, {2}}},
                          {{},
                           {{"grad_scale", "0.5"}, {"normalization", "batch"}},
                           {{"use_ignore", "True"},
                            {"ignore_label", "0"},
                            {"normalization", "valid"}},
                           {{"smooth_alpha", "0.1"}, {"out_grad", "True"}}});
  so_grad.ranges = {{-1, 1}, {0, 1}, {0, 4}};
  so_grad.int32_inputs = {2};
  t->push_back(so_grad);
  OpCase so_grad_multi =
      Shaped("_backward_SoftmaxOutput", {{{2, 3, 4}, {2, 3, 4}, {2, 4}}},
             {{{"multi_output", "True"}},
              {{"multi_output", "True"},
               {"use_ignore", "True"},
               {"ignore_label", "1"},
               {"normalization", "valid"}}});
  so_grad_multi.ranges = {{-1, 1}, {0, 1}, {0, 3}};
  so_grad_multi.int32_inputs = {2};
  t->push_back(so_grad_multi);
  OpCase so_grad_keep =
      Shaped("_backward_SoftmaxOutput", {{{2, 3, 4}, {2, 3, 4}, {2, 3}}},
             {{{"preserve_shape", "True"}, {"normalization", "batch"}}});
  so_grad_keep.ranges = {{-1, 1}, {0, 1}, {0, 4}};
  so_grad_keep.int32_inputs = {2};
  t->push_back(so_grad_keep);
  t->push_back(Shaped("SoftmaxActivation", {{{3, 4}}, {{2, 3, 4}}, {{5}}},
                      {{}, {{"mode", "instance"}}}));
  t->push_back(Shaped("SoftmaxActivation", {{{2, 3, 4}}, {{2, 3, 2, 2}}},
                      {{{"mode", "channel"}}}));
  // (data, label) and (out_grad (1,), data, label).
  OpCase ce =
      Shaped("softmax_cross_entropy", {{{3, 4}, {3}}, {{5, 2}, {5}}}, {{}});
  ce.ranges = {{-1, 1}, {0, 2}};
  ce.int32_inputs = {1};
  ce.no_grad = {1};
  t->push_back(ce);
  OpCase ce_grad = Shaped("_backward_softmax_cross_entropy",
                          {{{1}, {3, 4}, {3}}, {{1}, {5, 2}, {5}}}, {{}});
  ce_grad.ranges = {{-1, 1}, {-1, 1}, {0, 2}};
  ce_grad.int32_inputs = {2};
  t->push_back(ce_grad);
  t->push_back(Unary("_contrib_div_sqrt_dim"));
  t->push_back(Shaped("_contrib_AdaptiveAvgPooling2D",
                      {{{2, 3, 5, 7}}, {{1, 2, 4, 4}}, {{1, 1, 3, 2}}},
                      {{},
                       {{"output_size", "(2, 3)"}},
                       {{"output_size", "3"}},
                       {{"output_size", "(4, 5)"}}}));
  // (out_grad, data).
  t->push_back(
      Shaped("_backward_contrib_AdaptiveAvgPooling2D",
             {{{2, 3, 2, 3}, {2, 3, 5, 7}}, {{1, 2, 2, 3}, {1, 2, 4, 4}}},
             {{{"output_size", "(2, 3)"}}}));
  t->push_back(Shaped("_backward_contrib_AdaptiveAvgPooling2D",
                      {{{1, 1, 4, 5}, {1, 1, 3, 2}}},
                      {{{"output_size", "(4, 5)"}}}));
  // (data, rois): rois of values in [0, 2) give batch indices 0 and 1 and
  // corners inside the 5x5 and 6x4 planes once scaled by 2.
  OpCase roi = Shaped(
      "_contrib_ROIAlign", {{{2, 4, 5, 5}, {3, 5}}, {{2, 4, 6, 4}, {2, 5}}},
      {{{"pooled_size", "(2,2)"}, {"spatial_scale", "2"}},
       {{"pooled_size", "(2,3)"},
        {"spatial_scale", "2"},
        {"sample_ratio", "2"}},
       {{"pooled_size", "(2,2)"}, {"spatial_scale", "2"}, {"aligned", "True"}},
       {{"pooled_size", "(2,2)"},
        {"spatial_scale", "2"},
        {"position_sensitive", "True"}}});
  roi.ranges = {{-1, 1}, {0, 2}};
  roi.no_grad = {1};
  t->push_back(roi);
  // (out_grad, data, rois).
  OpCase roi_grad = Shaped("_backward_contrib_ROIAlign",
                           {{{3, 4, 2, 2}, {2, 4, 5, 5}, {3, 5}},
                            {{2, 4, 2, 2}, {2, 4, 6, 4}, {2, 5}}},
                           {{{"pooled_size", "(2,2)"}, {"spatial_scale", "2"}},
                            {{"pooled_size", "(2,2)"},
                             {"spatial_scale", "2"},
                             {"sample_ratio", "3"},
                             {"aligned", "True"}}});
  roi_grad.ranges = {{-1, 1}, {-1, 1}, {0, 2}};
  t->push_back(roi_grad);
  OpCase roi_grad_ps = Shaped("_backward_contrib_ROIAlign",
                              {{{3, 1, 2, 2}, {2, 4, 5, 5}, {3, 5}}},
                              {{{"pooled_size", "(2,2)"},
                                {"spatial_scale", "2"},
                                {"position_sensitive", "True"}}});
  roi_grad_ps.ranges = roi_grad.ranges;
  t->push_back(roi_grad_ps);
  // Deconvolution gradients with stride, pad and adj, and 1-D with
  // dilation (the forward cases are in MakeTable).
  t->push_back(Shaped("_backward_Deconvolution",
                      {{{2, 4, 8, 8}, {2, 3, 4, 4}, {3, 4, 3, 3}}},
                      {{{"kernel", "(3,3)"},
                        {"num_filter", "4"},
                        {"stride", "(2,2)"},
                        {"pad", "(1,1)"},
                        {"adj", "(1,1)"}}}));
  t->push_back(Shaped("_backward_Deconvolution",
                      {{{1, 2, 14}, {1, 3, 4}, {3, 2, 3}}},
                      {{{"kernel", "(3)"},
                        {"num_filter", "2"},
                        {"stride", "(3)"},
                        {"dilate", "(2)"}}}));
}

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
  for (const char* op : {"softmax", "log_softmax"}) {
    t.push_back(Shaped(op, {{{3, 4}}, {{2, 3, 5}}, {{5, 1}}},
                       {{}, {{"axis", "0"}}, {{"axis", "-1"}}}));
  }
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
  for (const char* op : {"_backward_softmax", "_backward_log_softmax"}) {
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
  AddDeviceCases(&t);
  AddLayoutCases(&t);
  AddIndexCases(&t);
  AddNnCases(&t);
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
