// Cases of MXNet 2's NumPy-interface ops: the elementwise ones as the legacy
// op's case, and with an int32 operand (the promotion a device must do:
// int32 with float meets in the float, integer data of a float function or
// a float scalar gives a float).
#include <string>
#include <vector>

#include "tests/plugin_conformance/op_cases.h"

namespace mx {
namespace conformance {
namespace cases {

namespace {

const std::vector<Shapes> kBroadcastShapes = {
    {{3, 4}, {1, 4}}, {{2, 3, 5}, {2, 1, 5}}, {{6}, {6}}};

// `c` and the same case with input `input` int32 integers in [lo, hi).
void WithInt32Operand(OpCase c, int input, double lo, double hi,
                      std::vector<OpCase>* t) {
  t->push_back(c);
  c.int32_inputs = {input};
  if (c.ranges.size() <= static_cast<size_t>(input)) {
    c.ranges.resize(input + 1, {c.lo, c.hi});
  }
  c.ranges[input] = {lo, hi};
  t->push_back(c);
}

}  // namespace

void AddNumpyCases(std::vector<OpCase>* t) {
  for (const char* op : {"add", "subtract", "multiply", "maximum", "minimum"}) {
    WithInt32Operand(Shaped(std::string("_npi_") + op, kBroadcastShapes, {{}}),
                     1, -3, 3, t);
  }
  // Divisors and bases away from 0.
  for (const char* op : {"true_divide", "mod", "power"}) {
    OpCase c = Shaped(std::string("_npi_") + op, kBroadcastShapes, {{}});
    c.lo = 0.5;
    c.hi = 2;
    WithInt32Operand(c, 1, 1, 3, t);
  }
  for (const char* op : {"equal", "not_equal", "greater", "greater_equal",
                         "less", "less_equal"}) {
    WithInt32Operand(Shaped(std::string("_npi_") + op, kBroadcastShapes, {{}}),
                     0, -1, 1, t);
  }

  // Scalar forms: int and float scalars (float ones make float64 of
  // integer data).
  const std::vector<AttrDict> scalars = {
      {{"scalar", "2"}},
      {{"scalar", "0.5"}, {"is_int", "False"}},
      {{"scalar", "-3"}, {"is_int", "True"}}};
  for (const char* op : {"add", "subtract", "rsubtract", "multiply", "maximum",
                         "minimum", "equal", "not_equal", "greater",
                         "greater_equal", "less", "less_equal"}) {
    OpCase c = Unary(std::string("_npi_") + op + "_scalar");
    c.attrs = scalars;
    WithInt32Operand(c, 0, -3, 3, t);
  }
  for (const char* op :
       {"true_divide", "rtrue_divide", "mod", "rmod", "power", "rpower"}) {
    OpCase c = Unary(std::string("_npi_") + op + "_scalar", 0.5, 2);
    c.attrs = {{{"scalar", "2"}}, {{"scalar", "0.5"}, {"is_int", "False"}}};
    WithInt32Operand(c, 0, 1, 4, t);
  }

  // The reshapes (the same bytes, a new shape).
  t->push_back(Shaped("_npx_reshape", {{{2, 1, 12}}},
                      {{{"newshape", "(-2, -3, -6, 3, -1)"}},
                       {{"newshape", "(-1, -2)"}, {"reverse", "True"}}}));
  t->push_back(Shaped("_npx_reshape", {{{2, 3, 4}}, {{6, 2, 2}}},
                      {{{"newshape", "(-5, -2)"}}, {{"newshape", "(-4,)"}}}));
  t->push_back(
      Shaped("_npi_concatenate", {{{2, 3}, {4, 3}}, {{1, 3}, {2, 3}}},
             {{{"num_args", "2"}}, {{"num_args", "2"}, {"axis", "0"}}}));
  // Reductions: every axis form, and the dtype conversions (int32 data).
  for (const char* op :
       {"_np_sum", "_npi_mean", "_np_prod", "_np_max", "_np_min"}) {
    OpCase c = Shaped(op, {{{3, 4}}, {{2, 3, 5}}},
                      {{},
                       {{"axis", "(0,)"}, {"keepdims", "True"}},
                       {{"axis", "-1"}},
                       {{"axis", "()"}}});
    c.lo = 0.5;
    c.hi = 1.5;
    WithInt32Operand(c, 0, -3, 3, t);
  }
  t->push_back(Shaped("_np_sum", {{{2, 3, 5}}},
                      {{{"axis", "(0, 2)"}, {"dtype", "float64"}}}));
  t->push_back(Shaped("_npi_mean", {{{2, 3, 5}}},
                      {{{"axis", "(0, 2)"}, {"dtype", "float32"}}}));
  t->push_back(Shaped("_npi_concatenate", {{{2, 3, 2}, {2, 3, 1}}},
                      {{{"num_args", "2"}, {"axis", "-1"}}}));
  t->push_back(Shaped("_npi_concatenate", {{{2, 3}, {4}}, {{5}, {1, 2, 2}}},
                      {{{"num_args", "2"}, {"axis", "None"}}}));
  // np.matmul: plain, 1-D operands, batches broadcast whole (one strided
  // call on cuBLAS) and partly (a call per matrix); the gradient kernel.
  t->push_back(Shaped("_npi_matmul",
                      {{{3, 4}, {4, 5}},
                       {{4}, {2, 4, 3}},
                       {{2, 3, 4}, {4}},
                       {{2, 1, 3, 4}, {3, 4, 2}}},
                      {{}}));
  t->push_back(Shaped("_backward_npi_matmul",
                      {{{2, 3, 5}, {2, 3, 4}, {4, 5}},
                       {{2, 3, 3, 2}, {2, 1, 3, 4}, {3, 4, 2}},
                       {{2, 3}, {4}, {2, 4, 3}}},
                      {{}}));
  // np.einsum: a product with broadcast batches through '...' (explicit
  // and implicit output), a diagonal, a transpose, a trace, three
  // operands; the gradient kernel.
  const AttrDict two_matmul = {{"num_args", "2"},
                               {"subscripts", "...ij,...jk->...ik"}};
  t->push_back(Shaped(
      "_npi_einsum",
      {{{3, 4}, {4, 5}}, {{2, 3, 4}, {2, 4, 5}}, {{2, 1, 3, 4}, {3, 4, 2}}},
      {two_matmul, {{"num_args", "2"}, {"subscripts", "...ij,...jk"}}}));
  t->push_back(Shaped("_npi_einsum", {{{3, 3}}, {{4, 4}}},
                      {{{"num_args", "1"}, {"subscripts", "ii->i"}},
                       {{"num_args", "1"}, {"subscripts", "ij->ji"}},
                       {{"num_args", "1"}, {"subscripts", "ii"}}}));
  t->push_back(Shaped("_npi_einsum", {{{2, 3}, {3, 4}, {4}}},
                      {{{"num_args", "3"}, {"subscripts", "ij,jk,k->ji"}}}));
  t->push_back(Shaped("_backward_npi_einsum",
                      {{{3, 5}, {3, 4}, {4, 5}},
                       {{2, 3, 5}, {2, 3, 4}, {2, 4, 5}},
                       {{2, 3, 3, 2}, {2, 1, 3, 4}, {3, 4, 2}}},
                      {two_matmul}));
  // np.split (_split_v2): indices with np.split's leading 0, a first piece
  // past 0, an empty piece, sections, squeeze_axis.
  t->push_back(Shaped("_split_v2", {{{6, 4}}, {{5, 2}}},
                      {{{"indices", "(0, 2, 3)"}, {"axis", "0"}},
                       {{"indices", "(1, 3, 3)"}, {"axis", "0"}}}));
  t->push_back(
      Shaped("_split_v2", {{{2, 6, 3}}, {{1, 3, 3}}},
             {{{"sections", "3"}, {"axis", "1"}},
              {{"sections", "3"}, {"axis", "-1"}, {"squeeze_axis", "True"}}}));
  t->push_back(Shaped("_np_reshape", {{{2, 3, 4}}, {{4, 6}}},
                      {{{"newshape", "(4, -1)"}}, {{"newshape", "(24,)"}}}));

  // The float functions (of int32 data too) and the dtype-keeping ones.
  for (const char* op :
       {"exp", "sin", "cos", "tan", "arctan", "sinh", "cosh", "tanh", "arcsinh",
        "degrees", "radians", "expm1", "cbrt"}) {
    WithInt32Operand(Unary(std::string("_npi_") + op), 0, -2, 2, t);
  }
  for (const char* op : {"log", "log2", "log10", "log1p", "sqrt"}) {
    WithInt32Operand(Unary(std::string("_npi_") + op, 0.1, 2), 0, 1, 5, t);
  }
  for (const char* op : {"arcsin", "arccos", "arctanh"}) {
    WithInt32Operand(Unary(std::string("_npi_") + op, -0.9, 0.9), 0, 0, 1, t);
  }
  WithInt32Operand(Unary("_npi_arccosh", 1.2, 4), 0, 1, 5, t);
  for (const char* op : {"negative", "absolute", "sign", "square"}) {
    t->push_back(Unary(std::string("_npi_") + op));
  }
  t->push_back(Unary("_npi_reciprocal", 0.5, 2));
  for (const char* op : {"rint", "ceil", "floor", "trunc", "fix"}) {
    t->push_back(Unary(std::string("_npi_") + op, -3, 3));
  }
}

}  // namespace cases
}  // namespace conformance
}  // namespace mx
