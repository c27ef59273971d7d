// MXNet 2's NumPy-interface ops. Elementwise: MXNet's dtype promotion for
// mixed operands, scalars with is_int, the float functions of integers,
// values against hand computations, and gradients (numerical, and in each
// operand's dtype through autograd). Reshapes (_npx_reshape's codes,
// _np_reshape), _npi_concatenate, the reductions (_np_sum ...) and the
// _np/_npi names of legacy ops.
#include <cmath>
#include <map>
#include <string>
#include <vector>

#include "autograd/autograd.h"
#include "base/error.h"
#include "graph/op.h"
#include "graph/symbol.h"
#include "gtest/gtest.h"
#include "imperative/executor.h"
#include "imperative/nd.h"
#include "testing/grad_check.h"
#include "testing/op_test_util.h"

namespace mx {
namespace testing {
namespace {

NDArray Npi(const std::string& op, const std::vector<NDArray>& in,
            const AttrDict& attrs = {}) {
  return nd::Call(op, in, attrs);
}

TEST(NumpyBinary, MixedOperandsMeetInMxnetsPromotedDtype) {
  const NDArray i32 = ArrayOf({3}, {1, -2, 3}, DType::kInt32);
  const NDArray f16 = ArrayOf({3}, {0.5, 0.25, -1}, DType::kFloat16);
  NDArray y = Npi("_npi_add", {i32, f16});
  EXPECT_EQ(y.dtype(), DType::kFloat16);  // NumPy would say float64.
  EXPECT_EQ(ToDouble(y), (std::vector<double>{1.5, -1.75, 2}));
  y = Npi("_npi_add", {f16, i32});
  EXPECT_EQ(y.dtype(), DType::kFloat16);
  // uint8 with int8 meets in int32, so 200 + 100 does not wrap.
  y = Npi("_npi_add", {ArrayOf({2}, {200, 255}, DType::kUInt8),
                       ArrayOf({2}, {100, -128}, DType::kInt8)});
  EXPECT_EQ(y.dtype(), DType::kInt32);
  EXPECT_EQ(ToDouble(y), (std::vector<double>{300, 127}));
  // int64 past 2^31 with int32.
  y = Npi("_npi_multiply", {ArrayOf({1}, {4294967296.0}, DType::kInt64),
                            ArrayOf({1}, {3}, DType::kInt32)});
  EXPECT_EQ(y.dtype(), DType::kInt64);
  EXPECT_EQ(ToDouble(y), (std::vector<double>{12884901888.0}));
  // bool meets the other operand's dtype.
  y = Npi("_npi_subtract", {ArrayOf({2}, {1, 0}, DType::kBool),
                            ArrayOf({2}, {5, 5}, DType::kInt8)});
  EXPECT_EQ(y.dtype(), DType::kInt8);
  EXPECT_EQ(ToDouble(y), (std::vector<double>{-4, -5}));
  // float32 with float64, broadcasting.
  y = Npi("_npi_maximum", {ArrayOf({2, 2}, {1, 5, -3, 2}),
                           ArrayOf({2}, {2, 2}, DType::kFloat64)});
  EXPECT_EQ(y.dtype(), DType::kFloat64);
  EXPECT_EQ(y.shape(), TShape({2, 2}));
  EXPECT_EQ(ToDouble(y), (std::vector<double>{2, 5, 2, 2}));
}

TEST(NumpyBinary, ValuesAsTheLegacyOps) {
  const NDArray a = ArrayOf({2, 3}, {7, -7, 2.5, 0, 9, -1});
  const NDArray b = ArrayOf({3}, {3, 3, -2});
  EXPECT_EQ(ToDouble(Npi("_npi_subtract", {a, b})),
            (std::vector<double>{4, -10, 4.5, -3, 6, 1}));
  EXPECT_EQ(ToDouble(Npi("_npi_mod", {a, b})),
            (std::vector<double>{1, 2, -1.5, 0, 0, -1}));  // b's sign.
  EXPECT_EQ(ToDouble(Npi("_npi_power",
                         {ArrayOf({3}, {2, 3, 4}), ArrayOf({3}, {3, 2, 0.5})})),
            (std::vector<double>{8, 9, 2}));
  const std::vector<double> min = ToDouble(
      Npi("_npi_minimum", {ArrayOf({2}, {NAN, 1}), ArrayOf({2}, {0, NAN})}));
  EXPECT_TRUE(std::isnan(min[0]) && std::isnan(min[1]));  // NaN wins.
}

TEST(NumpyBinary, TrueDivideIsAFloat) {
  const NDArray seven = ArrayOf({2}, {7, -7}, DType::kInt32);
  const NDArray two = ArrayOf({2}, {2, 2}, DType::kInt64);
  NDArray y = Npi("_npi_true_divide", {seven, two});
  EXPECT_EQ(y.dtype(), DType::kFloat32);
  EXPECT_EQ(ToDouble(y), (std::vector<double>{3.5, -3.5}));
  y = Npi("_npi_true_divide", {seven, ArrayOf({2}, {4, 4}, DType::kFloat64)});
  EXPECT_EQ(y.dtype(), DType::kFloat64);
  EXPECT_EQ(ToDouble(y), (std::vector<double>{1.75, -1.75}));
  // Integer division by zero: inf, as NumPy's true_divide.
  EXPECT_EQ(ToDouble(Npi("_npi_true_divide",
                         {seven, ArrayOf({2}, {0, 0}, DType::kInt32)})),
            (std::vector<double>{INFINITY, -INFINITY}));
}

TEST(NumpyBinary, BoolArithmeticAndShapesAreRefused) {
  const NDArray t = ArrayOf({2}, {1, 0}, DType::kBool);
  ExpectError<DTypeError>(
      [&] {
        Npi("_npi_add", {t, t});
      },
      {"_npi_add", "bool"});
  ExpectError<ShapeError>(
      [&] {
        Npi("_npi_multiply",
            {ArrayOf({3}, {1, 2, 3}), ArrayOf({2}, {1, 2}, DType::kInt32)});
      },
      {"_npi_multiply"});
}

TEST(NumpyScalar, IsIntDecidesTheDtype) {
  const NDArray i32 = ArrayOf({2}, {1, -2}, DType::kInt32);
  // An int scalar keeps int32; a float scalar makes float64 (MXNet 2).
  NDArray y = Npi("_npi_add_scalar", {i32}, {{"scalar", "3"}});
  EXPECT_EQ(y.dtype(), DType::kInt32);
  EXPECT_EQ(ToDouble(y), (std::vector<double>{4, 1}));
  y = Npi("_npi_add_scalar", {i32}, {{"scalar", "0.5"}, {"is_int", "False"}});
  EXPECT_EQ(y.dtype(), DType::kFloat64);
  EXPECT_EQ(ToDouble(y), (std::vector<double>{1.5, -1.5}));
  y = Npi("_npi_multiply_scalar", {ArrayOf({2}, {1, 0}, DType::kBool)},
          {{"scalar", "3"}, {"is_int", "1"}});
  EXPECT_EQ(y.dtype(), DType::kInt64);
  EXPECT_EQ(ToDouble(y), (std::vector<double>{3, 0}));
  y = Npi("_npi_power_scalar", {ArrayOf({2}, {4, 9}, DType::kUInt8)},
          {{"scalar", "0.5"}, {"is_int", "0"}});
  EXPECT_EQ(y.dtype(), DType::kFloat64);
  EXPECT_EQ(ToDouble(y), (std::vector<double>{2, 3}));
  // Float data keeps its dtype whatever the scalar.
  y = Npi("_npi_subtract_scalar", {ArrayOf({1}, {1}, DType::kFloat16)},
          {{"scalar", "0.25"}, {"is_int", "False"}});
  EXPECT_EQ(y.dtype(), DType::kFloat16);
  EXPECT_EQ(ToDouble(y), (std::vector<double>{0.75}));
  ExpectError<InvalidArgument>(
      [&] {
        Npi("_npi_add_scalar", {i32}, {{"is_int", "maybe"}});
      },
      {"_npi_add_scalar", "is_int"});
}

TEST(NumpyScalar, EveryForm) {
  const NDArray x = ArrayOf({3}, {4, -6, 1.5});
  const AttrDict s = {{"scalar", "4"}, {"is_int", "False"}};
  auto run = [&](const char* op) { return ToDouble(Npi(op, {x}, s)); };
  using V = std::vector<double>;
  EXPECT_EQ(run("_npi_rsubtract_scalar"), (V{0, 10, 2.5}));
  EXPECT_EQ(run("_npi_true_divide_scalar"), (V{1, -1.5, 0.375}));
  EXPECT_TRUE(
      AllClose(run("_npi_rtrue_divide_scalar"), {1, -4.0 / 6, 4 / 1.5}));
  EXPECT_EQ(run("_npi_mod_scalar"), (V{0, 2, 1.5}));
  EXPECT_EQ(run("_npi_rmod_scalar"), (V{0, -2, 1}));
  EXPECT_EQ(run("_npi_rpower_scalar"), (V{256, std::pow(4.0, -6), 8}));
  EXPECT_EQ(run("_npi_maximum_scalar"), (V{4, 4, 4}));
  EXPECT_EQ(run("_npi_minimum_scalar"), (V{4, -6, 1.5}));
  // true_divide of integers by a scalar: float32.
  const NDArray y = Npi("_npi_true_divide_scalar",
                        {ArrayOf({1}, {3}, DType::kInt64)}, {{"scalar", "2"}});
  EXPECT_EQ(y.dtype(), DType::kFloat32);
  EXPECT_EQ(ToDouble(y), (V{1.5}));
}

TEST(NumpyCompare, MixedDtypesCompareInThePromotedDtype) {
  const NDArray two = ArrayOf({2}, {2, 3}, DType::kInt32);
  // 2 < 2.5 (a truncated 2.5 would say false).
  NDArray y = Npi("_npi_less", {two, ArrayOf({2}, {2.5, 2.5})});
  EXPECT_EQ(y.dtype(), DType::kBool);
  EXPECT_EQ(ToDouble(y), (std::vector<double>{1, 0}));
  y = Npi("_npi_greater_equal_scalar", {two},
          {{"scalar", "2.5"}, {"is_int", "False"}});
  EXPECT_EQ(ToDouble(y), (std::vector<double>{0, 1}));
  y = Npi("_npi_equal_scalar", {ArrayOf({2}, {1, 0}, DType::kBool)},
          {{"scalar", "1"}});
  EXPECT_EQ(ToDouble(y), (std::vector<double>{1, 0}));
  // The short names are the NumPy ones.
  EXPECT_EQ(ToDouble(nd::Call("not_equal", {two, ArrayOf({2}, {2, 2})})),
            (std::vector<double>{0, 1}));
}

TEST(NumpyUnary, IntegersGiveFloat32) {
  NDArray y = Npi("_npi_exp", {ArrayOf({2}, {0, 1}, DType::kInt32)});
  EXPECT_EQ(y.dtype(), DType::kFloat32);
  EXPECT_TRUE(AllClose(ToDouble(y), {1, std::exp(1.0)}));
  y = Npi("_npi_sqrt", {ArrayOf({2}, {1, 0}, DType::kBool)});
  EXPECT_EQ(y.dtype(), DType::kFloat32);
  EXPECT_EQ(ToDouble(y), (std::vector<double>{1, 0}));
  y = Npi("_npi_tanh", {ArrayOf({1}, {0.5}, DType::kFloat64)});
  EXPECT_EQ(y.dtype(), DType::kFloat64);
  EXPECT_EQ(ToDouble(y), (std::vector<double>{std::tanh(0.5)}));
  // The NumPy names of dtype-keeping functions.
  y = Npi("_npi_absolute", {ArrayOf({2}, {-3, 4}, DType::kInt8)});
  EXPECT_EQ(y.dtype(), DType::kInt8);
  EXPECT_EQ(ToDouble(y), (std::vector<double>{3, 4}));
  y = Npi("_npi_floor", {ArrayOf({2}, {7, -7}, DType::kInt64)});
  EXPECT_EQ(y.dtype(), DType::kInt64);
  EXPECT_EQ(ToDouble(Npi("_npi_fix", {ArrayOf({2}, {-2.5, 2.5})})),
            (std::vector<double>{-2, 2}));
  ExpectError<DTypeError>(
      [&] { Npi("_npi_reciprocal", {ArrayOf({1}, {2}, DType::kInt32)}); },
      {"_npi_reciprocal", "int32"});
}

TEST(NumpyGradient, BinaryAgainstCentralDifferences) {
  const NDArray a = ArrayOf({2, 3}, {1.3, -0.7, 2.2, 0.4, -1.9, 0.8});
  const NDArray b = ArrayOf({3}, {0.6, 1.7, -1.1});
  for (const char* op : {"_npi_add", "_npi_subtract", "_npi_multiply",
                         "_npi_true_divide", "_npi_maximum", "_npi_minimum"}) {
    EXPECT_TRUE(CheckGradient(op, {}, {a, b})) << op;
    EXPECT_TRUE(CheckGradient(op, {}, {b, a})) << op;
  }
  // mod away from its jumps; power of positive bases.
  EXPECT_TRUE(CheckGradient(
      "_npi_mod", {},
      {ArrayOf({3}, {4.3, -3.1, 5.9}), ArrayOf({3}, {1.7, -1.3, 2.4})}));
  EXPECT_TRUE(CheckGradient(
      "_npi_power", {}, {ArrayOf({2, 3}, {1.3, 0.7, 2.2, 0.4, 1.9, 0.8}), b}));
  CheckSecondOrder("_npi_multiply", {}, {a, b}, RandomArray({2, 3}));
  CheckSecondOrder("_npi_true_divide", {}, {a, b}, RandomArray({2, 3}), 1);
}

TEST(NumpyGradient, MixedOperandWithAnIntegerOne) {
  // d(x * k)/dx = k for an int32 k (not differentiated).
  const NDArray x = ArrayOf({2, 2}, {0.5, -1, 2, 3});
  const NDArray k = ArrayOf({2}, {3, -2}, DType::kInt32);
  EXPECT_TRUE(CheckGradient("_npi_multiply", {}, {x, k}));
  EXPECT_TRUE(CheckGradient("_npi_true_divide", {}, {x, k}));
  EXPECT_TRUE(CheckGradient("_npi_power", {}, {ArrayOf({2}, {1.5, 0.5}), k}));
  const auto g =
      Gradients("_npi_multiply", {}, {x, k}, {ArrayOf({2, 2}, {1, 1, 1, 1})});
  EXPECT_EQ(g[0], (std::vector<double>{3, -2, 3, -2}));
}

TEST(NumpyGradient, ScalarFormsAndUnary) {
  const NDArray x = ArrayOf({4}, {1.6, -2.1, 3.1, 0.9});
  const NDArray pos = ArrayOf({4}, {1.6, 2.1, 3.1, 0.9});
  // 0.65: no element is a multiple of it (where mod jumps).
  const AttrDict s = {{"scalar", "0.65"}, {"is_int", "False"}};
  for (const char* op :
       {"_npi_add_scalar", "_npi_subtract_scalar", "_npi_rsubtract_scalar",
        "_npi_multiply_scalar", "_npi_true_divide_scalar",
        "_npi_rtrue_divide_scalar", "_npi_mod_scalar", "_npi_rmod_scalar",
        "_npi_rpower_scalar", "_npi_maximum_scalar", "_npi_minimum_scalar"}) {
    EXPECT_TRUE(CheckGradient(op, s, {x})) << op;
  }
  EXPECT_TRUE(CheckGradient("_npi_power_scalar", s, {pos}));
  for (const char* op : {"_npi_exp", "_npi_log", "_npi_tanh", "_npi_arcsinh",
                         "_npi_negative", "_npi_square", "_npi_reciprocal"}) {
    EXPECT_TRUE(CheckGradient(op, {}, {pos})) << op;
  }
  // max(x, s) at a tie gives the gradient to x, as the legacy op.
  const auto g =
      Gradients("_npi_maximum_scalar", {{"scalar", "2"}},
                {ArrayOf({3}, {2, 1, 3})}, {ArrayOf({3}, {1, 1, 1})});
  EXPECT_EQ(g[0], (std::vector<double>{1, 0, 1}));
}

// Each operand's gradient comes back in its own dtype.
TEST(NumpyGradient, AutogradKeepsEachOperandsDtype) {
  NDArray half = ArrayOf({2}, {0.5, 2}, DType::kFloat16);
  NDArray single = ArrayOf({2, 2}, {1, 2, 3, 4});
  autograd::AttachGrad(&half);
  autograd::AttachGrad(&single);
  NDArray y;
  {
    autograd::RecordScope record;
    y = nd::Call("sum", {Npi("_npi_multiply", {half, single})});
  }
  autograd::Backward({y});
  EXPECT_EQ(half.grad().dtype(), DType::kFloat16);
  EXPECT_EQ(single.grad().dtype(), DType::kFloat32);
  EXPECT_EQ(ToDouble(half.grad()), (std::vector<double>{4, 6}));
  EXPECT_EQ(ToDouble(single.grad()), (std::vector<double>{0.5, 2, 0.5, 2}));
}

TEST(NumpyReshape, NpxCodesAndPlainNewshape) {
  const NDArray x = RandomArray({2, 1, 12});
  NDArray y = Npi("_npx_reshape", {x}, {{"newshape", "(-2, -3, -6, 3, -1)"}});
  EXPECT_EQ(y.shape(), TShape({2, 3, 4}));
  EXPECT_EQ(ToDouble(y), ToDouble(x));  // The same elements in order.
  y = Npi("_npi_reshape", {x}, {{"newshape", "(-1, -2)"}, {"reverse", "True"}});
  EXPECT_EQ(y.shape(), TShape({2, 12}));
  y = Npi("_np_reshape", {x}, {{"newshape", "(4, -1)"}});
  EXPECT_EQ(y.shape(), TShape({4, 6}));
  EXPECT_EQ(ToDouble(y), ToDouble(x));
  ExpectError<ShapeError>(
      [&] {
        Npi("_npx_reshape", {x}, {{"newshape", "(-3, -4)"}});
      },
      {"_npx_reshape", "-3 drops input dim 2, not 1"});
  ExpectError<ShapeError>(
      [&] {
        Npi("_np_reshape", {x}, {{"newshape", "(-2,)"}});
      },
      {"_np_reshape", "only -1 is inferred"});
  ExpectError<InvalidArgument>(
      [&] {
        Npi("_np_reshape", {x}, {{"newshape", "(24,)"}, {"reverse", "1"}});
      },
      {"_np_reshape", "reverse"});
  ExpectError<InvalidArgument>(
      [&] {
        Npi("_npx_reshape", {x}, {{"newshape", "(24,)"}, {"order", "F"}});
      },
      {"_npx_reshape", "order"});
  EXPECT_TRUE(CheckGradient("_npx_reshape", {{"newshape", "(-5, -6, 2, -1)"}},
                            {RandomArray({2, 3, 4})}));
  EXPECT_TRUE(CheckGradient("_np_reshape", {{"newshape", "(-1,)"}},
                            {RandomArray({2, 3})}));
}

TEST(NumpyConcatenate, AxisDefaultsToZeroAndNoneFlattens) {
  const NDArray a = ArrayOf({1, 2}, {1, 2});
  const NDArray b = ArrayOf({2, 2}, {3, 4, 5, 6});
  NDArray y = Npi("_npi_concatenate", {a, b}, {{"num_args", "2"}});
  EXPECT_EQ(y.shape(), TShape({3, 2}));
  EXPECT_EQ(ToDouble(y), (std::vector<double>{1, 2, 3, 4, 5, 6}));
  y = Npi("_npi_concatenate", {b, b}, {{"num_args", "2"}, {"axis", "-1"}});
  EXPECT_EQ(y.shape(), TShape({2, 4}));
  EXPECT_EQ(ToDouble(y), (std::vector<double>{3, 4, 3, 4, 5, 6, 5, 6}));
  // axis=None: the flattened arrays joined into a vector (any shapes).
  y = Npi("_npi_concatenate",
          {ArrayOf({2, 1}, {1, 2}), ArrayOf({3}, {3, 4, 5}),
           ArrayOf(TShape::Scalar(), {6})},
          {{"num_args", "3"}, {"axis", "None"}});
  EXPECT_EQ(y.shape(), TShape({6}));
  EXPECT_EQ(ToDouble(y), (std::vector<double>{1, 2, 3, 4, 5, 6}));
  EXPECT_TRUE(CheckGradient(
      "_npi_concatenate", {{"num_args", "3"}, {"axis", "None"}},
      {RandomArray({2, 3}), RandomArray({4}), RandomArray({1, 2, 2})}));
  ExpectError<ShapeError>(
      [&] {
        Npi("_npi_concatenate", {a, b}, {{"num_args", "2"}, {"axis", "1"}});
      },
      {"_npi_concatenate"});
  EXPECT_TRUE(CheckGradient(
      "_npi_concatenate", {{"num_args", "3"}, {"axis", "1"}},
      {RandomArray({2, 1}), RandomArray({2, 3}), RandomArray({2, 2})}));
}

TEST(NumpyReduce, AxesAndMxnet2Dtypes) {
  const NDArray x = ArrayOf({2, 3}, {1, 2, 3, 4, 5, 6}, DType::kInt32);
  NDArray y = Npi("_np_sum", {x});  // axis None: everything.
  EXPECT_EQ(y.dtype(), DType::kInt32);
  EXPECT_EQ(y.shape(), TShape(std::vector<int64_t>{}));
  EXPECT_EQ(ToDouble(y), (std::vector<double>{21}));
  y = Npi("_np_sum", {x}, {{"axis", "(-1,)"}, {"keepdims", "True"}});
  EXPECT_EQ(y.shape(), TShape({2, 1}));
  EXPECT_EQ(ToDouble(y), (std::vector<double>{6, 15}));
  // axis=() reduces nothing: the data, in the output's dtype.
  y = Npi("_np_sum", {x}, {{"axis", "()"}, {"dtype", "float64"}});
  EXPECT_EQ(y.dtype(), DType::kFloat64);
  EXPECT_EQ(y.shape(), TShape({2, 3}));
  EXPECT_EQ(ToDouble(y), ToDouble(x));
  // The mean of integers is a float32 (the legacy mean truncates).
  y = Npi("_npi_mean", {x}, {{"axis", "0"}});
  EXPECT_EQ(y.dtype(), DType::kFloat32);
  EXPECT_EQ(ToDouble(y), (std::vector<double>{2.5, 3.5, 4.5}));
  // dtype: the sum accumulates in it (int8 would wrap).
  const NDArray big = ArrayOf({3}, {100, 100, 100}, DType::kInt8);
  y = Npi("_np_sum", {big}, {{"dtype", "int32"}});
  EXPECT_EQ(y.dtype(), DType::kInt32);
  EXPECT_EQ(ToDouble(y), (std::vector<double>{300}));
  y = Npi("_np_sum", {ArrayOf({3}, {1, 0, 1}, DType::kBool)});
  EXPECT_EQ(y.dtype(), DType::kInt64);
  EXPECT_EQ(ToDouble(y), (std::vector<double>{2}));
  EXPECT_EQ(ToDouble(Npi("_np_prod", {x}, {{"axis", "1"}})),
            (std::vector<double>{6, 120}));
  EXPECT_EQ(ToDouble(Npi("_np_max", {x}, {{"axis", "0"}})),
            (std::vector<double>{4, 5, 6}));
  EXPECT_EQ(ToDouble(Npi("_np_min", {x})), (std::vector<double>{1}));
  ExpectError<NotImplemented>(
      [&] {
        Npi("_np_sum", {x}, {{"initial", "1"}});
      },
      {"_np_sum", "initial"});
  ExpectError<InvalidArgument>(
      [&] {
        Npi("_np_max", {x}, {{"dtype", "float32"}});
      },
      {"_np_max", "dtype"});
  ExpectError<InvalidArgument>(
      [&] {
        Npi("_np_min", {ArrayOf({0, 2}, {})}, {{"axis", "0"}});
      },
      {"_np_min", "no identity"});
}

TEST(NumpyReduce, Gradients) {
  const NDArray x = ArrayOf({2, 3}, {0.5, -1.2, 2.1, 0.9, 1.4, -0.3});
  for (const char* op :
       {"_np_sum", "_npi_mean", "_np_prod", "_np_max", "_np_min"}) {
    EXPECT_TRUE(CheckGradient(op, {}, {x})) << op;
    EXPECT_TRUE(CheckGradient(op, {{"axis", "(1,)"}, {"keepdims", "1"}}, {x}))
        << op;
    EXPECT_TRUE(CheckGradient(op, {{"axis", "()"}}, {x})) << op;
  }
  // (A float32 dtype would make the numerical gradient float32's.)
  EXPECT_TRUE(
      CheckGradient("_np_sum", {{"axis", "0"}, {"dtype", "float64"}}, {x}));
  // The gradient comes back in the data's dtype.
  NDArray half = ArrayOf({2}, {1, 3}, DType::kFloat16);
  autograd::AttachGrad(&half);
  NDArray y;
  {
    autograd::RecordScope record;
    y = Npi("_npi_mean", {half}, {{"dtype", "float32"}});
  }
  autograd::Backward({y});
  EXPECT_EQ(half.grad().dtype(), DType::kFloat16);
  EXPECT_EQ(ToDouble(half.grad()), (std::vector<double>{0.5, 0.5}));
}

// MXNet 2's names of legacy ops with the same attributes.
TEST(NumpyNames, OfLegacyOps) {
  const NDArray x = ArrayOf({2, 3}, {1, 2, 3, 4, 5, 6});
  EXPECT_EQ(ToDouble(Npi("_np_transpose", {x}, {{"axes", "(1, 0)"}})),
            (std::vector<double>{1, 4, 2, 5, 3, 6}));
  EXPECT_EQ(ToDouble(Npi("_np_copy", {x})), ToDouble(x));
  EXPECT_EQ(
      Npi("_npi_stack", {x, x}, {{"num_args", "2"}, {"axis", "1"}}).shape(),
      TShape({2, 2, 3}));
  EXPECT_EQ(Npi("_npi_expand_dims", {x}, {{"axis", "0"}}).shape(),
            TShape({1, 2, 3}));
  const NDArray zeros =
      Npi("_npi_zeros", {}, {{"shape", "(2,)"}, {"dtype", "int32"}});
  EXPECT_EQ(zeros.dtype(), DType::kInt32);
  EXPECT_EQ(ToDouble(zeros), (std::vector<double>{0, 0}));
  EXPECT_EQ(ToDouble(Npi("_npi_ones", {}, {{"shape", "(1,)"}})),
            (std::vector<double>{1}));
  EXPECT_EQ(ToDouble(Npi("_npi_full", {}, {{"shape", "(2,)"}, {"value", "7"}})),
            (std::vector<double>{7, 7}));
  EXPECT_EQ(ToDouble(Npi("_npi_arange", {},
                         {{"start", "0"}, {"stop", "5"}, {"step", "2"}})),
            (std::vector<double>{0, 2, 4}));
}

// MXNet 2's `_npx_` names of the legacy layers and its NumPy names that
// are legacy ops (backends/cpu/mxnet2_names.cc): the same op, by name and
// by value.
TEST(NumpyNames, Mxnet2NamesOfLegacyLayers) {
  for (const auto& [mxnet2, legacy] :
       std::vector<std::pair<std::string, std::string>>{
           {"_npx_fully_connected", "FullyConnected"},
           {"_npx_convolution", "Convolution"},
           {"_npx_batch_norm", "BatchNorm"},
           {"_npx_batch_flatten", "Flatten"},
           {"_npx_stop_gradient", "BlockGrad"},
           {"_npi_swapaxes", "SwapAxis"},
           {"_npi_copy", "_copy"},
           {"_npi_slice", "slice"},
           {"_npi_take", "take"},
           {"_npi_boolean_mask", "boolean_mask"},
           {"_npi_array_split", "_split_v2"},
           {"_npx_gather_nd", "gather_nd"},
           {"_npi_advanced_indexing_multiple", "gather_nd"}}) {
    EXPECT_EQ(OpRegistry::Get()->Lookup(mxnet2).name(), legacy);
  }
  const NDArray x = ArrayOf({2, 3}, {1, -2, 3, -4, 5, -6});
  // np.transpose(x) without axes: MXNet 2 writes axes=None (reverse).
  EXPECT_EQ(ToDouble(Npi("_npi_transpose", {x}, {{"axes", "None"}})),
            (std::vector<double>{1, -4, -2, 5, 3, -6}));
  EXPECT_EQ(ToDouble(Npi("_npi_transpose", {x}, {{"axes", "(-1, 0)"}})),
            (std::vector<double>{1, -4, -2, 5, 3, -6}));
  EXPECT_EQ(Npi("_npi_swapaxes", {ArrayOf({1, 2, 3}, {1, 2, 3, 4, 5, 6})},
                {{"dim1", "0"}, {"dim2", "2"}})
                .shape(),
            TShape({3, 2, 1}));
  EXPECT_EQ(ToDouble(Npi("_npx_relu", {x})),
            (std::vector<double>{1, 0, 3, 0, 5, 0}));
  EXPECT_EQ(ToDouble(Npi("_npx_sigmoid", {x})), ToDouble(Npi("sigmoid", {x})));
  const NDArray w = ArrayOf({2, 3}, {1, 0, 0, 0, 1, 1});
  EXPECT_EQ(ToDouble(Npi("_npx_fully_connected", {x, w},
                         {{"num_hidden", "2"}, {"no_bias", "True"}})),
            (std::vector<double>{1, 1, -4, -1}));
  EXPECT_EQ(ToDouble(Npi("_npx_activation", {x}, {{"act_type", "relu"}})),
            (std::vector<double>{1, 0, 3, 0, 5, 0}));
  EXPECT_EQ(Npi("_npx_batch_flatten", {ArrayOf({2, 1, 3}, {1, 2, 3, 4, 5, 6})})
                .shape(),
            TShape({2, 3}));
}

// np.where: NumPy broadcasting, so a 1-D condition runs along the last
// axis (MXNet's legacy where reads it as rows of a square x).
TEST(NumpyWhere, BroadcastsLikeNumpy) {
  const NDArray cond = ArrayOf({3}, {1, 0, 1});
  const NDArray x = ArrayOf({3, 3}, {1, 2, 3, 4, 5, 6, 7, 8, 9});
  const NDArray y = ArrayOf({3, 3}, {-1, -2, -3, -4, -5, -6, -7, -8, -9});
  EXPECT_EQ(ToDouble(Npi("_npi_where", {cond, x, y})),
            (std::vector<double>{1, -2, 3, 4, -5, 6, 7, -8, 9}));
  EXPECT_EQ(ToDouble(Npi("where", {cond, x, y})),
            (std::vector<double>{1, 2, 3, -4, -5, -6, 7, 8, 9}));
  // (2, 1) condition, (1, 3) x, 0-d y; a bool condition.
  const NDArray c2 = ArrayOf({2, 1}, {0, 1}, DType::kBool);
  const NDArray out = Npi("_npi_where", {c2, ArrayOf({1, 3}, {1, 2, 3}),
                                         ArrayOf(TShape::Scalar(), {9})});
  EXPECT_EQ(out.shape(), TShape({2, 3}));
  EXPECT_EQ(ToDouble(out), (std::vector<double>{9, 9, 9, 1, 2, 3}));
  // x and y of two dtypes are refused (MXNet 2 does not promote).
  EXPECT_THROW(Npi("_npi_where", {cond, ArrayOf({3}, {1, 2, 3}, DType::kInt32),
                                  ArrayOf({3}, {1, 2, 3})}),
               DTypeError);
}

TEST(NumpyWhere, ScalarForms) {
  const NDArray cond = ArrayOf({2, 1}, {1, 0});
  const NDArray a = ArrayOf({1, 3}, {1, 2, 3}, DType::kInt32);
  // lscalar: condition ? scalar : array; the scalar truncated to int32.
  NDArray y = Npi("_npi_where_lscalar", {cond, a}, {{"scalar", "7.9"}});
  EXPECT_EQ(y.dtype(), DType::kInt32);
  EXPECT_EQ(y.shape(), TShape({2, 3}));
  EXPECT_EQ(ToDouble(y), (std::vector<double>{7, 7, 7, 1, 2, 3}));
  y = Npi("_npi_where_rscalar", {cond, a}, {{"scalar", "-1"}});
  EXPECT_EQ(ToDouble(y), (std::vector<double>{1, 2, 3, -1, -1, -1}));
  y = Npi("_npi_where_scalar2", {ArrayOf({3}, {0, 2, 0}, DType::kInt64)},
          {{"x", "1.5"}, {"y", "-2"}});
  EXPECT_EQ(y.dtype(), DType::kFloat32);
  EXPECT_EQ(ToDouble(y), (std::vector<double>{-2, 1.5, -2}));
}

TEST(NumpyWhere, Gradients) {
  GradCheckOptions o;
  o.skip = {0};
  EXPECT_TRUE(
      CheckGradient("_npi_where", {},
                    {ArrayOf({3}, {1, 0, 1}), RandomArray({3, 3}, {}, -1, 1, 1),
                     RandomArray({1, 3}, {}, -1, 1, 2)},
                    o));
  for (const char* op : {"_npi_where_lscalar", "_npi_where_rscalar"}) {
    EXPECT_TRUE(CheckGradient(
        op, {{"scalar", "0.5"}},
        {ArrayOf({2, 1}, {1, 0}), RandomArray({1, 3}, {}, -1, 1, 3)}, o))
        << op;
  }
  // The array gets the output's gradient where it was taken.
  const NDArray g = ArrayOf({2, 1}, {1, 0});
  NDArray a = ArrayOf({2, 1}, {5, 6});
  autograd::AttachGrad(&a);
  {
    autograd::RecordScope record;
    const NDArray y = Npi("_npi_where_lscalar", {g, a}, {{"scalar", "0"}});
    autograd::Backward({y});
  }
  EXPECT_EQ(ToDouble(a.grad()), (std::vector<double>{0, 1}));
}

// A graph as MXNet 2 exports one (attribute spellings included): float32
// data times a float scalar, plus int32 ids, then exp; forward and the
// data's gradient through the executor.
TEST(NumpyGraph, Mxnet2ExportRunsWithMixedDtypes) {
  const Symbol net = Symbol::FromJSON(R"({
    "nodes": [
      {"op": "null", "name": "data", "inputs": []},
      {"op": "null", "name": "ids", "inputs": []},
      {"op": "_npi_multiply_scalar", "name": "mul",
       "attrs": {"scalar": "0.5", "is_int": "False"}, "inputs": [[0, 0, 0]]},
      {"op": "_npi_add", "name": "add", "inputs": [[2, 0, 0], [1, 0, 0]]},
      {"op": "_npi_exp", "name": "exp", "inputs": [[3, 0, 0]]}],
    "arg_nodes": [0, 1], "node_row_ptr": [0, 1, 2, 3, 4, 5],
    "heads": [[4, 0, 0]], "attrs": {"mxnet_version": ["int", 20000]}})");
  const NDArray data = ArrayOf({2, 3}, {0, 1, 2, -2, 4, 0.5});
  const NDArray ids = ArrayOf({3}, {1, 0, -1}, DType::kInt32);
  NDArray data_grad(data.shape());
  auto exec =
      Executor::Bind(net, Context::CPU(), {data, ids}, {data_grad, NDArray()},
                     {OpReqType::kWriteTo, OpReqType::kNullOp}, {});
  exec->Forward(/*is_train=*/true);
  const NDArray& y = exec->outputs()[0];
  EXPECT_EQ(y.dtype(), DType::kFloat32);
  std::vector<double> expected;
  const std::vector<double> d = ToDouble(data), k = {1, 0, -1, 1, 0, -1};
  for (int i = 0; i < 6; ++i) expected.push_back(std::exp(0.5 * d[i] + k[i]));
  EXPECT_TRUE(AllClose(ToDouble(y), expected));
  exec->Backward();
  for (double& e : expected) e *= 0.5;  // d/d(data) = 0.5 exp(...)
  EXPECT_TRUE(AllClose(ToDouble(exec->grad_dict().at("data")), expected));
}

// GluonNLP-style attention as an MXNet 2 export writes it (alias names
// included): _npi_matmul of q and k transposed, masked_softmax, _npi_matmul
// with v; the executor's outputs and gradients against the same calls
// under autograd.
TEST(NumpyGraph, Mxnet2AttentionRuns) {
  const Symbol net = Symbol::FromJSON(R"json({
    "nodes": [
      {"op": "null", "name": "q", "inputs": []},
      {"op": "null", "name": "k", "inputs": []},
      {"op": "null", "name": "v", "inputs": []},
      {"op": "null", "name": "mask", "inputs": []},
      {"op": "_npi_transpose", "name": "kt", "attrs": {"axes": "(0, 2, 1)"},
       "inputs": [[1, 0, 0]]},
      {"op": "_npi_matmul", "name": "scores", "inputs": [[0, 0, 0], [4, 0, 0]]},
      {"op": "_npx_masked_softmax", "name": "probs",
       "attrs": {"axis": "-1", "temperature": "None", "normalize": "True"},
       "inputs": [[5, 0, 0], [3, 0, 0]]},
      {"op": "_npi_matmul", "name": "context", "inputs": [[6, 0, 0], [2, 0, 0]]}],
    "arg_nodes": [0, 1, 2, 3], "node_row_ptr": [0, 1, 2, 3, 4, 5, 6, 7, 8],
    "heads": [[7, 0, 0]], "attrs": {"mxnet_version": ["int", 20000]}})json");
  const NDArray q = RandomArray({2, 3, 4}, {}, -1, 1, 1);
  const NDArray k = RandomArray({2, 5, 4}, {}, -1, 1, 2);
  const NDArray v = RandomArray({2, 5, 6}, {}, -1, 1, 3);
  const NDArray mask = ArrayOf({2, 1, 5}, {1, 1, 1, 0, 0, 1, 1, 1, 1, 1},
                               DType::kBool);  // lengths 3, 5
  const std::map<std::string, NDArray> by_name = {
      {"q", q}, {"k", k}, {"v", v}, {"mask", mask}};
  std::vector<NDArray> args, grads;
  std::vector<OpReqType> reqs;
  for (const std::string& name : net.ListArguments()) {  // the graph's order
    const NDArray& a = by_name.at(name);
    args.push_back(a);
    grads.push_back(name == "mask" ? NDArray() : NDArray(a.shape()));
    reqs.push_back(name == "mask" ? OpReqType::kNullOp : OpReqType::kWriteTo);
  }
  auto exec = Executor::Bind(net, Context::CPU(), args, grads, reqs, {});
  exec->Forward(/*is_train=*/true);
  const NDArray head = RandomArray({2, 3, 6}, {}, -1, 1, 4);
  exec->Backward({head});

  NDArray qa = q.Copy(Context::CPU()), ka = k.Copy(Context::CPU()),
          va = v.Copy(Context::CPU());
  for (NDArray* x : {&qa, &ka, &va}) autograd::AttachGrad(x);
  NDArray y;
  {
    autograd::RecordScope record;
    const NDArray s = Npi(
        "_npi_matmul", {qa, Npi("transpose", {ka}, {{"axes", "(0, 2, 1)"}})});
    y = Npi("_npi_matmul", {Npi("masked_softmax", {s, mask}), va});
  }
  autograd::Backward({y}, {head});
  EXPECT_TRUE(AllClose(ToDouble(exec->outputs()[0]), ToDouble(y)));
  EXPECT_TRUE(
      AllClose(ToDouble(exec->grad_dict().at("q")), ToDouble(qa.grad())));
  EXPECT_TRUE(
      AllClose(ToDouble(exec->grad_dict().at("k")), ToDouble(ka.grad())));
  EXPECT_TRUE(
      AllClose(ToDouble(exec->grad_dict().at("v")), ToDouble(va.grad())));
}

}  // namespace
}  // namespace testing
}  // namespace mx
