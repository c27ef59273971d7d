// The op table's cases for indexing, norm, loss and deconvolution ops
// (see op_cases.h).
#include <string>
#include <vector>

#include "tests/plugin_conformance/op_cases.h"

namespace mx {
namespace conformance {
namespace cases {

// The indexing ops (take, pick, gather_nd, index_add/update,
// constraint_check, where, the sequence ops, argmax/min, argsort/sort/topk,
// _arange, tril, triu) and the gradients the CUDA plugin claims. Index
// inputs are int32 and reach past the axis for clip/wrap; raise, gather_nd
// and index_add/update get indices in range (the reference raises
// otherwise).
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
  // pick: the index has the output's shape; clip and wrap reach past the
  // axis. Its gradient: (out_grad, index, data).
  OpCase pick = Shaped("pick", {{{5, 4}, {5}}, {{6, 3, 2}, {6, 3}}},
                       {{}, {{"mode", "wrap"}}});
  pick.ranges = {{-1, 1}, {-3, 8}};
  pick.int32_inputs = {1};
  t->push_back(pick);
  OpCase pick_axis =
      Shaped("pick", {{{6, 3, 2}, {6, 2}}, {{4, 5}, {5}}},
             {{{"axis", "-2"}}, {{"axis", "-2"}, {"mode", "wrap"}}});
  pick_axis.ranges = {{-1, 1}, {-4, 6}};
  pick_axis.int32_inputs = {1};
  t->push_back(pick_axis);
  OpCase pick_keep = Shaped("pick", {{{5, 4}, {5, 1}}, {{2, 3, 4}, {2, 1, 4}}},
                            {{{"axis", "1"}, {"keepdims", "True"}}});
  pick_keep.ranges = {{-1, 1}, {-3, 8}};
  pick_keep.int32_inputs = {1};
  t->push_back(pick_keep);
  OpCase back_pick = Shaped(
      "_backward_pick", {{{5}, {5}, {5, 4}}, {{6, 2}, {6, 2}, {6, 3, 2}}},
      {{{"axis", "1"}}, {{"axis", "1"}, {"mode", "wrap"}}});
  back_pick.ranges = {{-1, 1}, {-3, 8}, {-1, 1}};
  back_pick.int32_inputs = {1};
  t->push_back(back_pick);
  OpCase embedding = Shaped("Embedding", {{{4}, {10, 3}}, {{2, 3}, {10, 3}}},
                            {{{"input_dim", "10"}, {"output_dim", "3"}}});
  embedding.ranges = {{-2, 13}, {-1, 1}};
  embedding.int32_inputs = {0};
  embedding.dtype_attr = "dtype";
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
  // npx.index_add / index_update: ind of one and of two index axes, every
  // position in [0, 3) (so in range for every a here), repeats at random,
  // val broadcast along positions and the tail. Their gradients take
  // (out_grad, ind, val), or (out_grad, ind) for index_update's a.
  const std::vector<std::vector<TShape>> modify = {
      {{5, 4}, {7}, {7, 4}}, {{4, 3, 2}, {2, 6}, {6, 1}}, {{3, 4}, {3}, {4}}};
  for (const char* op :
       {"_npx_index_add", "_npx_index_update", "_backward_index_add_val",
        "_backward_index_update_val"}) {
    OpCase c = Shaped(op, modify, {{}});
    c.ranges = {{-1, 1}, {0, 3}, {-1, 1}};
    c.int32_inputs = {1};
    t->push_back(c);
  }
  OpCase back_update_a = Shaped("_backward_index_update_a",
                                {{{5, 4}, {7}}, {{4, 3, 2}, {2, 6}}}, {{}});
  back_update_a.ranges = {{-1, 1}, {0, 3}};
  back_update_a.int32_inputs = {1};
  t->push_back(back_update_a);
  // MXNet 2's x[index]: integer indices (negative ones from the end) and a
  // bool mask; the gradient for integer indices (rows repeat at random).
  OpCase advanced = Shaped("_npi_advanced_indexing",
                           {{{5, 3}, {4}}, {{4, 2, 3}, {2, 3}}}, {{}});
  advanced.ranges = {{-1, 1}, {-4, 4}};
  advanced.int32_inputs = {1};
  t->push_back(advanced);
  OpCase advanced_mask =
      Shaped("_npi_advanced_indexing", {{{5, 3}, {5}}, {{4, 2}, {4}}}, {{}});
  advanced_mask.bool_inputs = {1};
  advanced_mask.no_grad = {1};
  t->push_back(advanced_mask);
  OpCase back_advanced =
      Shaped("_backward_np_advanced_indexing",
             {{{4, 3}, {5, 3}, {4}}, {{2, 3, 2, 3}, {4, 2, 3}, {2, 3}}}, {{}});
  back_advanced.ranges = {{-1, 1}, {-1, 1}, {-4, 4}};
  back_advanced.int32_inputs = {2};
  t->push_back(back_advanced);
  // npx.constraint_check on inputs that hold (every element true).
  OpCase check = Shaped("_npx_constraint_check", {{{7}}, {{2, 3, 4}}},
                        {{}, {{"msg", "must hold"}}});
  check.ranges = {{1, 2}};
  check.bool_inputs = {0};
  t->push_back(check);
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
  // MXNet 2's np.where: a 1-D condition along the last axis, and the
  // scalar forms.
  OpCase np_where = Shaped(
      "_npi_where", {{{3}, {3, 3}, {3, 3}}, {{2, 1}, {1, 4}, {2, 4}}}, {{}});
  np_where.ranges = {{0, 2}, {-1, 1}, {-1, 1}};
  np_where.int32_inputs = {0};
  t->push_back(np_where);
  for (const char* op : {"_npi_where_lscalar", "_npi_where_rscalar"}) {
    OpCase with_scalar =
        Shaped(op, {{{3, 4}, {3, 4}}, {{3, 1}, {1, 4}}}, {{{"scalar", "0.5"}}});
    with_scalar.ranges = {{0, 2}, {-1, 1}};
    with_scalar.int32_inputs = {0};
    t->push_back(with_scalar);
  }
  OpCase scalar2 = Shaped("_npi_where_scalar2", {{{3, 4}}, {{5}}},
                          {{{"x", "1.5"}, {"y", "-2"}}});
  scalar2.ranges = {{0, 2}};
  scalar2.int32_inputs = {0};
  t->push_back(scalar2);
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
  // SequenceLast and SequenceReverse; lengths int32 in [1, 5) (every T
  // here is 4 or 5, SequenceLast needs at least 1).
  for (const char* op : {"SequenceLast", "SequenceReverse"}) {
    const bool last = std::string(op) == "SequenceLast";
    t->push_back(Shaped(op, {{{4, 3}}, {{5, 3, 2}}},
                        last ? std::vector<AttrDict>{{}, {{"axis", "1"}}}
                             : std::vector<AttrDict>{{}}));
    OpCase with_lengths = Shaped(op, {{{5, 3, 2}, {3}}, {{4, 2}, {2}}},
                                 {{{"use_sequence_length", "True"}}});
    with_lengths.ranges = {{-1, 1}, {last ? 1.0 : 0.0, 5}};
    with_lengths.int32_inputs = {1};
    t->push_back(with_lengths);
  }
  OpCase last_axis1 =
      Shaped("SequenceLast", {{{3, 5, 2}, {3}}, {{2, 4}, {2}}},
             {{{"use_sequence_length", "True"}, {"axis", "1"}}});
  last_axis1.ranges = {{-1, 1}, {1, 5}};
  last_axis1.int32_inputs = {1};
  t->push_back(last_axis1);
  t->push_back(Shaped("_backward_SequenceLast",
                      {{{3, 2}, {5, 3, 2}}, {{4}, {5, 4}}}, {{}}));
  t->push_back(Shaped("_backward_SequenceLast",
                      {{{5, 2}, {5, 3, 2}}, {{5}, {5, 4}}}, {{{"axis", "1"}}}));
  OpCase last_backward = Shaped("_backward_SequenceLast",
                                {{{3, 2}, {5, 3, 2}, {3}}, {{2}, {4, 2}, {2}}},
                                {{{"use_sequence_length", "True"}}});
  last_backward.ranges = {{-1, 1}, {-1, 1}, {1, 5}};
  last_backward.int32_inputs = {2};
  t->push_back(last_backward);
  t->push_back(Shaped("argmax_channel",
                      {{{3, 4}}, {{2, 3, 5}}, {{2, 300}}, {{6}}}, {{}}));
  for (const char* op : {"argmax", "argmin", "_npi_argmax", "_npi_argmin"}) {
    t->push_back(Shaped(op, {{{3, 4}}, {{2, 3, 5}}, {{4, 1, 6}}, {{2, 300, 3}}},
                        {{},
                         {{"axis", "1"}},
                         {{"axis", "0"}, {"keepdims", "True"}},
                         {{"axis", "-1"}}}));
  }
  t->push_back(Shaped("cumsum", {{{7}}, {{3, 4}}, {{2, 3, 5}}},
                      {{},
                       {{"axis", "0"}},
                       {{"axis", "-1"}},
                       {{"axis", "-1"}, {"dtype", "float64"}},
                       {{"dtype", "int32"}}}));
  t->push_back(
      Shaped("argsort", {{{3, 4}}, {{2, 3, 5}}, {{5, 8}}, {{2, 300, 3}}},
             {{},
              {{"axis", "0"}},
              {{"axis", "None"}},
              {{"is_ascend", "False"}},
              {{"axis", "1"}, {"dtype", "int32"}},
              {{"axis", "0"}, {"is_ascend", "0"}, {"dtype", "int64"}}}));
  // MXNet's fused attention products (heads 2, head_dim 3, batch 2) and
  // their gradients (out_grad first).
  const AttrDict heads = {{"heads", "2"}};
  t->push_back(Shaped("_contrib_interleaved_matmul_selfatt_qk",
                      {{{4, 2, 18}}, {{1, 2, 18}}}, {heads}));
  t->push_back(Shaped("_contrib_interleaved_matmul_selfatt_valatt",
                      {{{4, 2, 18}, {4, 4, 4}}}, {heads}));
  t->push_back(Shaped("_contrib_interleaved_matmul_encdec_qk",
                      {{{3, 2, 6}, {5, 2, 12}}}, {heads}));
  t->push_back(Shaped("_contrib_interleaved_matmul_encdec_valatt",
                      {{{5, 2, 12}, {4, 3, 5}}}, {heads}));
  t->push_back(Shaped("_backward_interleaved_matmul_selfatt_qk",
                      {{{4, 4, 4}, {4, 2, 18}}}, {heads}));
  t->push_back(Shaped("_backward_interleaved_matmul_selfatt_valatt",
                      {{{4, 2, 6}, {4, 2, 18}, {4, 4, 4}}}, {heads}));
  t->push_back(Shaped("_backward_interleaved_matmul_encdec_qk",
                      {{{4, 3, 5}, {3, 2, 6}, {5, 2, 12}}}, {heads}));
  t->push_back(Shaped("_backward_interleaved_matmul_encdec_valatt",
                      {{{3, 2, 6}, {5, 2, 12}, {4, 3, 5}}}, {heads}));
  t->push_back(Shaped("_contrib_arange_like", {{{3, 4}}, {{5}}},
                      {{},
                       {{"start", "2"}, {"step", "-0.5"}, {"repeat", "2"}},
                       {{"axis", "0"}, {"start", "1"}}}));
  t->push_back(Shaped("sort", {{{3, 4}}, {{2, 3, 5}}, {{2, 300, 3}}},
                      {{},
                       {{"axis", "0"}},
                       {{"axis", "None"}},
                       {{"axis", "1"}, {"is_ascend", "False"}}}));
  t->push_back(Shaped("topk", {{{3, 4}}, {{2, 3, 5}}, {{2, 300, 3}}},
                      {{},
                       {{"k", "2"}, {"ret_typ", "value"}},
                       {{"k", "3"}, {"ret_typ", "both"}, {"axis", "1"}},
                       {{"k", "2"}, {"ret_typ", "mask"}, {"axis", "0"}},
                       {{"k", "0"},
                        {"ret_typ", "both"},
                        {"is_ascend", "1"},
                        {"dtype", "int32"}},
                       {{"k", "4"}, {"axis", "None"}, {"ret_typ", "value"}}}));
  // One kept position per line (positions in [0, 5)), so no two gradients
  // meet.
  const std::vector<std::pair<Shapes, AttrDict>> topk_backward_cases = {
      {{{3, 1}, {3, 1}, {3, 5}}, {}},
      {{{1}, {1}, {5, 2}}, {{"axis", "None"}}},
      {{{1, 4}, {1, 4}, {6, 4}}, {{"axis", "0"}}}};
  for (const auto& [shapes, attrs] : topk_backward_cases) {
    OpCase c = Shaped("_backward_topk", {shapes}, {attrs});
    c.int32_inputs = {1};
    c.ranges = {{-1, 1}, {0, 5}, {-1, 1}};
    t->push_back(c);
  }
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

// 70 anchor sizes 0.05, 0.06, ..., 0.74.
constexpr char kManySizes[] =
    "(0.05, 0.06, 0.07, 0.08, 0.09, 0.10, 0.11, 0.12, 0.13, 0.14, 0.15, 0.16, "
    "0.17, 0.18, 0.19, 0.20, 0.21, 0.22, 0.23, 0.24, 0.25, 0.26, 0.27, 0.28, "
    "0.29, 0.30, 0.31, 0.32, 0.33, 0.34, 0.35, 0.36, 0.37, 0.38, 0.39, 0.40, "
    "0.41, 0.42, 0.43, 0.44, 0.45, 0.46, 0.47, 0.48, 0.49, 0.50, 0.51, 0.52, "
    "0.53, 0.54, 0.55, 0.56, 0.57, 0.58, 0.59, 0.60, 0.61, 0.62, 0.63, 0.64, "
    "0.65, 0.66, 0.67, 0.68, 0.69, 0.70, 0.71, 0.72, 0.73, 0.74)";

// Ops of the CUDA plugin's norm, loss and deconvolution kernels (and any
// plugin claiming them): shapes and attributes from the CPU op tests.
// Labels are int32 class indices, as the CPU kernels also take them.
void AddNnCases(std::vector<OpCase>* t) {
  // LRN: windows clipped at both ends, an even nsize, one channel.
  t->push_back(Shaped("LRN", {{{2, 5, 3, 3}}, {{1, 7, 2, 4}}, {{3, 1, 2, 2}}},
                      {{{"nsize", "3"}},
                       {{"nsize", "5"}, {"alpha", "0.5"}, {"beta", "0.6"}},
                       {{"nsize", "4"}, {"alpha", "2"}, {"knorm", "1.5"}}}));
  OpCase lrn_backward =
      Shaped("_backward_LRN", {{{2, 5, 3, 3}, {2, 5, 3, 3}, {2, 5, 3, 3}}},
             {{{"nsize", "3"}, {"alpha", "0.5"}}});
  lrn_backward.ranges = {{-1, 1}, {-2, 2}, {0.5, 3}};  // tmp_norm > 0.
  t->push_back(lrn_backward);
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
  // GroupNorm / InstanceNorm: (data, gamma, beta); gradients (out_grad,
  // data, gamma).
  t->push_back(Shaped(
      "GroupNorm", {{{2, 4, 3, 2}, {4}, {4}}, {{3, 6}, {6}, {6}}},
      {{{"num_groups", "2"}},
       {{"num_groups", "1"}, {"output_mean_var", "True"}},
       {{"num_groups", "2"}, {"eps", "0.01"}, {"output_mean_var", "True"}}}));
  t->push_back(
      Shaped("_backward_GroupNorm",
             {{{2, 4, 3, 2}, {2, 4, 3, 2}, {4}}, {{3, 6}, {3, 6}, {6}}},
             {{{"num_groups", "2"}}, {{"num_groups", "1"}}}));
  t->push_back(Shaped("InstanceNorm",
                      {{{2, 3, 5}, {3}, {3}}, {{1, 2, 3, 4}, {2}, {2}}},
                      {{}, {{"eps", "0.1"}}}));
  t->push_back(Shaped(
      "_backward_InstanceNorm",
      {{{2, 3, 5}, {2, 3, 5}, {3}}, {{1, 2, 3, 4}, {1, 2, 3, 4}, {2}}}, {{}}));
  // _contrib_BilinearResize2D: up and down, both corner modes, by scale,
  // like and parity; the gradient takes (out_grad, data[, like]).
  t->push_back(
      Shaped("_contrib_BilinearResize2D", {{{2, 3, 4, 5}}, {{1, 2, 1, 3}}},
             {{{"height", "7"}, {"width", "3"}},
              {{"height", "2"}, {"width", "9"}, {"align_corners", "0"}},
              {{"scale_height", "2"}, {"scale_width", "1.5"}},
              {{"mode", "to_odd_up"}}}));
  t->push_back(Shaped("_contrib_BilinearResize2D",
                      {{{1, 2, 3, 3}, {1, 1, 5, 2}}}, {{{"mode", "like"}}}));
  t->push_back(Shaped(
      "_backward_contrib_BilinearResize2D", {{{2, 3, 7, 3}, {2, 3, 4, 5}}},
      {{{"height", "7"}, {"width", "3"}},
       {{"height", "7"}, {"width", "3"}, {"align_corners", "0"}}}));
  t->push_back(Shaped("_backward_contrib_BilinearResize2D",
                      {{{1, 2, 5, 2}, {1, 2, 3, 3}, {1, 1, 5, 2}}},
                      {{{"mode", "like"}}}));
  // Crop: to h_w at an offset, centred on a crop_like; the gradient takes
  // (out_grad, data[, crop_like]).
  t->push_back(Shaped(
      "Crop", {{{2, 3, 5, 6}}},
      {{{"num_args", "1"}, {"h_w", "(3, 4)"}, {"offset", "(2, 1)"}},
       {{"num_args", "1"}, {"h_w", "(2, 2)"}, {"center_crop", "True"}}}));
  t->push_back(Shaped("Crop", {{{2, 3, 5, 6}, {1, 1, 4, 3}}},
                      {{{"num_args", "2"}, {"center_crop", "True"}},
                       {{"num_args", "2"}, {"offset", "(1, 3)"}}}));
  t->push_back(
      Shaped("_backward_Crop", {{{2, 3, 3, 4}, {2, 3, 5, 6}}},
             {{{"num_args", "1"}, {"h_w", "(3, 4)"}, {"offset", "(2, 1)"}}}));
  t->push_back(Shaped("_backward_Crop",
                      {{{2, 3, 4, 3}, {2, 3, 5, 6}, {1, 1, 4, 3}}},
                      {{{"num_args", "2"}, {"center_crop", "True"}}}));
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
  // CTCLoss: (data (T, N, C), label (N, L)[, lengths]); labels int32 in
  // [0, C) (0 pads with the blank first) or [-1, C - 1) (-1 pads with the
  // blank last); at least 3 frames, so 2 labels (even repeated) fit.
  OpCase ctc =
      Shaped("CTCLoss",
             {{{5, 2, 4}, {2, 2}}, {{4, 3, 3}, {3, 2}}, {{3, 1, 5}, {1, 1}}},
             {{}, {{"blank_label", "first"}}});
  ctc.ranges = {{-2, 2}, {0, 3}};
  ctc.int32_inputs = {1};
  ctc.no_grad = {1};
  t->push_back(ctc);
  OpCase ctc_last =
      Shaped("CTCLoss", {{{5, 2, 4}, {2, 2}}, {{4, 3, 3}, {3, 2}}},
             {{{"blank_label", "last"}}});
  ctc_last.ranges = {{-2, 2}, {-1, 2}};
  ctc_last.int32_inputs = {1};
  ctc_last.no_grad = {1};
  t->push_back(ctc_last);
  OpCase ctc_lengths = Shaped(
      "CTCLoss", {{{5, 2, 4}, {2, 2}, {2}, {2}}, {{4, 3, 3}, {3, 2}, {3}, {3}}},
      {{{"use_data_lengths", "True"}, {"use_label_lengths", "True"}}});
  ctc_lengths.ranges = {{-2, 2}, {1, 3}, {3, 5}, {0, 3}};
  ctc_lengths.int32_inputs = {1, 2, 3};
  ctc_lengths.no_grad = {1, 2, 3};
  t->push_back(ctc_lengths);
  // (out_grad (N,), grad (T, N, C)).
  t->push_back(
      Shaped("_backward_CTCLoss", {{{2}, {5, 2, 4}}, {{3}, {4, 3, 3}}}, {{}}));
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
  // MultiBoxPrior: anchors from data's shape only.
  t->push_back(Shaped("_contrib_MultiBoxPrior",
                      {{{1, 3, 4, 5}}, {{2, 1, 3, 3}}},
                      {{},
                       {{"sizes", "(0.5, 0.25)"}, {"ratios", "(1, 2, 0.5)"}},
                       {{"sizes", "(0.9,)"},
                        {"clip", "True"},
                        {"steps", "(0.1, 0.2)"},
                        {"offsets", "(0, 1)"}},
                       // 72 anchors per cell (the GPU once stopped at 64).
                       {{"sizes", kManySizes}, {"ratios", "(1, 2, 3)"}}}));
  // MultiBoxDetection: probabilities and anchors in [0, 1], so boxes
  // overlap, some anchors fall under the thresholds and classes compete.
  OpCase detection = Shaped(
      "_contrib_MultiBoxDetection",
      {{{2, 3, 8}, {2, 32}, {1, 8, 4}},
       {{1, 2, 5}, {1, 20}, {1, 5, 4}},
       {{3, 4, 16}, {3, 64}, {1, 16, 4}}},
      {{},
       {{"nms_threshold", "0.3"}, {"nms_topk", "3"}, {"force_suppress", "1"}},
       {{"clip", "False"},
        {"threshold", "0.4"},
        {"variances", "(0.2, 0.2, 0.5, 0.5)"}},
       {{"nms_threshold", "0"}}});
  detection.ranges = {{0, 1}, {-1, 1}, {0, 1}};
  t->push_back(detection);
  // MultiBoxTarget: anchors and boxes in [0, 1] (some inverted), every
  // label row a ground truth; negative mining ranks cls_pred's softmax.
  OpCase targets = Shaped(
      "_contrib_MultiBoxTarget",
      {{{1, 8, 4}, {2, 3, 5}, {2, 3, 8}}, {{1, 5, 4}, {1, 2, 6}, {1, 2, 5}}},
      {{},
       {{"negative_mining_ratio", "2"}, {"negative_mining_thresh", "0.3"}},
       {{"overlap_threshold", "0.1"}, {"variances", "(0.2, 0.2, 0.3, 0.3)"}}});
  targets.ranges = {{0, 1}, {0, 1}, {-1, 1}};
  t->push_back(targets);
  // ROIPooling on the same regions; its gradient takes (out_grad, data,
  // rois, argmax) with argmax offsets inside the 5x5 plane (or -1).
  OpCase roi_pool =
      Shaped("ROIPooling", {{{2, 4, 5, 5}, {3, 5}}, {{2, 4, 6, 4}, {2, 5}}},
             {{{"pooled_size", "(2,2)"}, {"spatial_scale", "2"}},
              {{"pooled_size", "(3,1)"}, {"spatial_scale", "0.5"}}});
  roi_pool.ranges = {{-1, 1}, {0, 2}};
  roi_pool.no_grad = {1};
  t->push_back(roi_pool);
  OpCase roi_pool_grad =
      Shaped("_backward_ROIPooling",
             {{{3, 4, 2, 2}, {2, 4, 5, 5}, {3, 5}, {3, 4, 2, 2}}},
             {{{"pooled_size", "(2,2)"}, {"spatial_scale", "2"}}});
  roi_pool_grad.ranges = {{-1, 1}, {-1, 1}, {0, 2}, {-1, 25}};
  roi_pool_grad.int32_inputs = {3};
  t->push_back(roi_pool_grad);
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

}  // namespace cases
}  // namespace conformance
}  // namespace mx
