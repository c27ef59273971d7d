// The op table's cases for ops a device backend claims beyond the CPU
// plugins' (see op_cases.h).
#include <string>
#include <vector>

#include "tests/plugin_conformance/op_cases.h"

namespace mx {
namespace conformance {
namespace cases {

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
  // clip_gradient 0 clips every gradient to 0 (MXNet's kernels: >= 0).
  t->push_back(
      Shaped("sgd_update", {{{3, 4}, {3, 4}}, {{7}, {7}}},
             {{{"lr", "0.1"}},
              clip,
              {{"lr", "0.1"}, {"wd", "0.01"}, {"clip_gradient", "0"}}}));
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
  t->push_back(Shaped("amp_cast", {{{3, 4}}, {{7}}},
                      {{{"dtype", "float16"}}, {{"dtype", "float32"}}}));
  t->push_back(Shaped("amp_multicast", {{{3, 4}, {2}}, {{7}, {7}}},
                      {{{"num_outputs", "2"}},
                       {{"num_outputs", "2"}, {"cast_narrow", "True"}}}));
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
    t->push_back(Shaped("broadcast_" + n,
                        {{{3, 4}, {1, 4}}, {{2, 3, 5}, {2, 1, 5}}, {{6}, {6}}},
                        {{}}));
    t->push_back(Scalar("_" + n + "_scalar"));
  }
  // Rounding, logical ops, special functions, mod, hypot and smooth_l1.
  for (const char* op : {"round", "rint", "fix", "trunc", "floor", "ceil"}) {
    t->push_back(Unary(op, -3, 3));
  }
  t->push_back(Unary("logical_not", -1, 1));
  t->push_back(Unary("gamma", 0.2, 4));
  t->push_back(Unary("gammaln", 0.2, 6));
  t->push_back(Unary("digamma", 0.2, 6));
  OpCase polygamma = Unary("polygamma", 0.2, 6);
  polygamma.attrs = {{{"n", "1"}}, {{"n", "3"}}};
  t->push_back(polygamma);
  t->push_back(Unary("erfinv", -0.99, 0.99));
  for (const char* name :
       {"mod", "hypot", "logical_and", "logical_or", "logical_xor"}) {
    const std::string n = name;
    OpCase broadcast = Shaped("broadcast_" + n,
                              {{{3, 4}, {1, 4}}, {{2, 3, 5}, {2, 1, 5}}}, {{}});
    OpCase elemwise = Binary("_" + n);
    OpCase scalar = Scalar("_" + n + "_scalar");
    for (OpCase* c : {&broadcast, &elemwise, &scalar}) {
      c->lo = -3;
      c->hi = 3;
      t->push_back(*c);
    }
  }
  t->push_back(Scalar("_rmod_scalar", -3, 3));
  t->push_back(Scalar("smooth_l1", -2, 2));
  OpCase rpower = Scalar("_rpower_scalar");
  rpower.attrs = {{{"scalar", "0.5"}}, {{"scalar", "2"}}, {{"scalar", "3"}}};
  t->push_back(rpower);
  t->push_back(Shaped("squeeze", {{{2, 1, 3}}, {{1, 4, 1}}}, {{}}));
  t->push_back(Shaped("squeeze", {{{2, 1, 3}}}, {{{"axis", "(1,)"}}}));
  t->push_back(Shaped("squeeze", {{{1, 1}}}, {{}}));
  t->push_back(Shaped("_npi_squeeze", {{{1, 1}}, {{1, 4, 1}}}, {{}}));
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
  t->push_back(Shaped("reverse", {{{3, 4}}, {{2, 3, 4}}},
                      {{{"axis", "(0,)"}},
                       {{"axis", "(1,)"}},
                       {{"axis", "(0, -1)"}},
                       {{"axis", "(1, 0, -1)"}}}));
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
  // Loss heads: (data, label); their gradients ignore the head gradient.
  for (const char* op : {"LinearRegressionOutput", "LogisticRegressionOutput",
                         "MAERegressionOutput"}) {
    t->push_back(Shaped(op, {{{4, 3}, {4, 3}}, {{5, 1}, {5}}},
                        {{}, {{"grad_scale", "0.5"}}}));
  }
  t->push_back(Shaped("MakeLoss", {{{4, 3}}, {{2, 3, 2}}},
                      {{},
                       {{"normalization", "batch"}},
                       {{"normalization", "valid"}, {"grad_scale", "2"}}}));
  t->push_back(Shaped(
      "SwapAxis", {{{2, 3, 4}}, {{5, 6}}},
      {{{"dim1", "0"}, {"dim2", "1"}}, {{"dim1", "-1"}, {"dim2", "0"}}}));
  // diag: a vector to a matrix, a matrix's and planes' diagonals; the
  // gradient takes (out_grad, data).
  t->push_back(Shaped("diag", {{{4}}, {{3, 4}}, {{5, 3}}},
                      {{}, {{"k", "1"}}, {{"k", "-2"}}}));
  t->push_back(Shaped("diag", {{{2, 3, 4}}, {{3, 2, 2, 5}}},
                      {{{"axis1", "0"}, {"axis2", "2"}},
                       {{"k", "1"}, {"axis1", "-1"}, {"axis2", "1"}}}));
  t->push_back(Shaped("_backward_diag", {{{5, 5}, {3}}}, {{{"k", "2"}}}));
  t->push_back(Shaped("_backward_diag", {{{2}, {3, 4}}}, {{{"k", "2"}}}));
  t->push_back(Shaped("_backward_diag", {{{3, 2}, {2, 3, 4}}},
                      {{{"axis1", "0"}, {"axis2", "2"}, {"k", "0"}}}));
  t->push_back(Shaped("depth_to_space", {{{2, 8, 3, 2}}, {{1, 9, 2, 2}}},
                      {{{"block_size", "1"}}}));
  t->push_back(Shaped("depth_to_space", {{{2, 8, 3, 2}}, {{1, 4, 1, 3}}},
                      {{{"block_size", "2"}}}));
  t->push_back(Shaped("space_to_depth", {{{2, 3, 4, 6}}, {{1, 2, 2, 2}}},
                      {{{"block_size", "2"}}}));
  // UpSampling (nearest): one input, several concatenated, several added;
  // the gradient takes (out_grad, arg0, ...).
  const AttrDict up2 = {{"scale", "2"}, {"sample_type", "nearest"}};
  const AttrDict up3 = {{"scale", "3"}, {"sample_type", "nearest"}};
  t->push_back(
      Shaped("UpSampling", {{{2, 3, 2, 3}}, {{1, 2, 4, 4}}}, {up2, up3}));
  AttrDict concat = up2, sum = up2;
  concat["num_args"] = sum["num_args"] = "2";
  sum["multi_input_mode"] = "sum";
  t->push_back(Shaped("UpSampling", {{{2, 2, 2, 2}, {2, 1, 1, 1}}}, {concat}));
  t->push_back(Shaped("UpSampling", {{{2, 2, 2, 2}, {2, 2, 4, 4}}}, {sum}));
  // bilinear: (data, weight), a grouped Deconvolution.
  t->push_back(Shaped(
      "UpSampling", {{{2, 3, 4, 5}, {3, 1, 4, 4}}},
      {{{"scale", "2"}, {"sample_type", "bilinear"}, {"num_filter", "3"}}}));
  t->push_back(Shaped(
      "UpSampling", {{{1, 2, 3, 3}, {2, 1, 5, 5}}},
      {{{"scale", "3"}, {"sample_type", "bilinear"}, {"num_filter", "2"}}}));
  t->push_back(
      Shaped("_backward_UpSampling", {{{2, 3, 4, 6}, {2, 3, 2, 3}}}, {up2}));
  t->push_back(Shaped("_backward_UpSampling",
                      {{{2, 3, 4, 4}, {2, 2, 2, 2}, {2, 1, 1, 1}}}, {concat}));
  // Dynamic-shape ops: integers in {-1, 0, 1}, so some elements are zero.
  OpCase nonzero = Shaped("flatnonzero", {{{7}}, {{3, 4}}, {{2, 3, 5}}}, {{}});
  nonzero.lo = -1;
  nonzero.hi = 2;
  nonzero.int32_inputs = {0};
  t->push_back(nonzero);
  OpCase coords = Shaped("_npx_nonzero", {{{7}}, {{3, 4}}, {{2, 3, 5}}}, {{}});
  coords.lo = -1;
  coords.hi = 2;
  coords.int32_inputs = {0};
  t->push_back(coords);
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

}  // namespace cases
}  // namespace conformance
}  // namespace mx
