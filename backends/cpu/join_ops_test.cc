#include "base/error.h"
#include "graph/symbol.h"
#include "gtest/gtest.h"
#include "imperative/imperative.h"
#include "imperative/nd.h"
#include "testing/op_test_util.h"

namespace mx {
namespace testing {
namespace {

TShape WithDim(TShape s, int d, int64_t v) {
  s[d] = v;
  return s;
}

// ---- Concat. ----

// Reference: output element (.., k, ..) along `dim` comes from the input
// whose range of lengths covers k.
std::vector<double> RefConcat(const std::vector<NDArray>& xs, int dim,
                              TShape* out) {
  *out = xs[0].shape();
  int64_t total = 0;
  for (const NDArray& x : xs) total += x.shape()[dim];
  (*out)[dim] = total;
  std::vector<std::vector<double>> vals;
  for (const NDArray& x : xs) vals.push_back(ToDouble(x));
  std::vector<double> y;
  for (int64_t i = 0; i < out->Size(); ++i) {
    std::vector<int64_t> idx = Unravel(i, *out);
    size_t j = 0;
    while (idx[dim] >= xs[j].shape()[dim]) idx[dim] -= xs[j++].shape()[dim];
    y.push_back(vals[j][Ravel(idx, xs[j].shape())]);
  }
  return y;
}

TEST(Concat, MatchesReferenceOnEveryAxis) {
  const std::vector<TShape> bases = {{5}, {2, 3}, {2, 3, 4, 2}, {0, 3}};
  for (DType dt :
       {DType::kFloat32, DType::kInt8, DType::kFloat16, DType::kBool}) {
    for (const TShape& base : bases) {
      for (int dim = -base.ndim(); dim < base.ndim(); ++dim) {
        const int d = dim < 0 ? dim + base.ndim() : dim;
        std::vector<NDArray> xs = {
            RandomArray(WithDim(base, d, 1), dt, -5, 5, 1),
            RandomArray(base, dt, -5, 5, 2),
            RandomArray(WithDim(base, d, 0), dt, -5, 5, 3),
            RandomArray(WithDim(base, d, 3), dt, -5, 5, 4)};
        NDArray y = nd::concat(xs, dim);
        TShape expected_shape;
        std::vector<double> expected = RefConcat(xs, d, &expected_shape);
        EXPECT_EQ(y.shape(), expected_shape) << base << " dim " << dim;
        EXPECT_EQ(y.dtype(), dt);
        EXPECT_EQ(ToDouble(y), expected) << base << " dim " << dim;
      }
    }
  }
}

TEST(Concat, SingleInputAndAlias) {
  NDArray x = RandomArray({2, 3});
  EXPECT_EQ(ToDouble(nd::concat({x})), ToDouble(x));
  NDArray y = nd::Call("concat", {x, x}, {{"num_args", "2"}});  // dim=1.
  EXPECT_EQ(y.shape(), TShape({2, 6}));
}

TEST(Concat, MismatchedShapesAreShapeErrors) {
  NDArray a = RandomArray({2, 3}), b = RandomArray({3, 4});
  ExpectError<ShapeError>(
      [&] {
        nd::concat({a, b}, 1);
      },
      {"op \"Concat\"", "arg1", "(3,4)", "(2,3)"});
  ExpectError<ShapeError>(
      [&] {
        nd::concat({a, RandomArray({2, 3, 1})}, 0);
      },
      {"op \"Concat\"", "(2,3,1)"});
  ExpectError<ShapeError>(
      [&] {
        nd::concat({a, a}, 2);
      },
      {"op \"Concat\"", "(2,3)"});
  ExpectError<DTypeError>(
      [&] {
        nd::concat({a, RandomArray({2, 3}, DType::kInt32)});
      },
      {"op \"Concat\""});
  ExpectError<InvalidArgument>(
      [&] {
        nd::Call("Concat", {a, a}, {{"num_args", "3"}});
      },
      {"op \"Concat\"", "3 input(s)"});
  EXPECT_THROW(nd::Call("Concat", {}, {{"num_args", "0"}}), InvalidArgument);
}

TEST(Concat, InfersOneUnknownInputLengthFromTheOutput) {
  const Op& op = OpRegistry::Get()->Lookup("Concat");
  NodeAttrs attrs = MakeAttrs(op, {{"num_args", "2"}, {"dim", "0"}});
  std::vector<TShape> in{TShape{2, 3}, TShape()}, out{TShape{5, 3}};
  op.infer_shape()(attrs, &in, &out);
  EXPECT_EQ(in[1], TShape({3, 3}));
  std::vector<TShape> in2{TShape{2, -1}, TShape{4, 7}}, out2{TShape()};
  op.infer_shape()(attrs, &in2, &out2);
  EXPECT_EQ(in2[0], TShape({2, 7}));
  EXPECT_EQ(out2[0], TShape({6, 7}));
}

// ---- stack. ----

TEST(Stack, MatchesReferenceOnEveryAxis) {
  const std::vector<TShape> shapes = {TShape::Scalar(), {4}, {2, 3, 2}, {0, 2}};
  for (DType dt : {DType::kFloat64, DType::kInt32, DType::kUInt8}) {
    for (const TShape& s : shapes) {
      std::vector<NDArray> xs;
      for (uint32_t k = 0; k < 3; ++k)
        xs.push_back(RandomArray(s, dt, 0, 9, k));
      for (int axis = -s.ndim() - 1; axis <= s.ndim(); ++axis) {
        const int a = axis < 0 ? axis + s.ndim() + 1 : axis;
        NDArray y = nd::stack(xs, axis);
        std::vector<int64_t> dims(s.begin(), s.end());
        dims.insert(dims.begin() + a, 3);
        const TShape os(dims);
        EXPECT_EQ(y.shape(), os);
        std::vector<double> expected;
        for (int64_t i = 0; i < os.Size(); ++i) {
          std::vector<int64_t> idx = Unravel(i, os);
          const int64_t k = idx[a];
          idx.erase(idx.begin() + a);
          expected.push_back(ToDouble(xs[k])[Ravel(idx, s)]);
        }
        EXPECT_EQ(ToDouble(y), expected) << s << " axis " << axis;
      }
    }
  }
}

TEST(Stack, MismatchedShapesOrBadAxisAreShapeErrors) {
  NDArray a = RandomArray({2, 3});
  ExpectError<ShapeError>(
      [&] {
        nd::stack({a, RandomArray({3, 2})});
      },
      {"op \"stack\"", "arg1", "(3,2)", "(2,3)"});
  ExpectError<ShapeError>(
      [&] {
        nd::stack({a, a}, 3);
      },
      {"op \"stack\"", "(2,3)"});
}

// ---- SliceChannel / split. ----

TEST(Split, MatchesReference) {
  struct Case {
    TShape in;
    int n, axis;
    bool squeeze;
  };
  const std::vector<Case> cases = {
      {{6}, 3, 0, false},         {{2, 6}, 2, 1, false},
      {{2, 6, 3}, 3, -2, false},  {{4, 3}, 4, 0, true},
      {{2, 3, 2, 2}, 3, 1, true}, {{0, 4}, 2, 1, false},
      {{2, 4}, 1, -1, false},
  };
  for (DType dt : {DType::kFloat32, DType::kInt64, DType::kFloat16}) {
    for (const Case& c : cases) {
      NDArray x = RandomArray(c.in, dt, -9, 9, 6);
      const std::vector<double> xv = ToDouble(x);
      std::vector<NDArray> ys = nd::split(x, c.n, c.axis, c.squeeze);
      ASSERT_EQ(ys.size(), static_cast<size_t>(c.n));
      const int a = c.axis < 0 ? c.axis + c.in.ndim() : c.axis;
      const int64_t len = c.in[a] / c.n;
      const TShape piece = WithDim(c.in, a, len);
      for (int j = 0; j < c.n; ++j) {
        std::vector<double> expected;
        for (int64_t i = 0; i < piece.Size(); ++i) {
          std::vector<int64_t> idx = Unravel(i, piece);
          idx[a] += j * len;
          expected.push_back(xv[Ravel(idx, c.in)]);
        }
        std::vector<int64_t> dims(piece.begin(), piece.end());
        if (c.squeeze) dims.erase(dims.begin() + a);
        EXPECT_EQ(ys[j].shape(), TShape(dims)) << c.in << " piece " << j;
        EXPECT_EQ(ToDouble(ys[j]), expected) << c.in << " piece " << j;
      }
    }
  }
}

TEST(Split, UnevenOrBadSqueezeIsShapeError) {
  NDArray x = RandomArray({2, 5});
  ExpectError<ShapeError>([&] { nd::split(x, 2, 1); },
                          {"op \"SliceChannel\"", "(2,5)", "5"});
  ExpectError<ShapeError>(
      [&] {
        nd::split(RandomArray({4, 2}), 2, 0, true);
      },
      {"op \"SliceChannel\"", "squeeze_axis", "(4,2)"});
  ExpectError<ShapeError>([&] { nd::split(x, 2, 2); },
                          {"op \"SliceChannel\"", "(2,5)"});
  EXPECT_THROW(nd::CallMulti("split", {x}, {{"num_outputs", "0"}}),
               InvalidArgument);
  EXPECT_EQ(nd::CallMulti("split", {x}, {{"num_outputs", "5"}}).size(), 5u);
}

// ---- add_n. ----

TEST(AddN, SumsSameShapeInputs) {
  for (DType dt : {DType::kFloat32, DType::kFloat64, DType::kFloat16,
                   DType::kInt32, DType::kInt8, DType::kInt64}) {
    for (const TShape& s : {TShape::Scalar(), TShape{0}, TShape{2, 3, 4}}) {
      std::vector<NDArray> xs;
      for (uint32_t k = 0; k < 4; ++k)
        xs.push_back(RandomArray(s, dt, -9, 9, k));
      std::vector<double> expected(s.Size(), 0);
      for (const NDArray& x : xs) {
        std::vector<double> v = ToDouble(x);
        for (size_t i = 0; i < v.size(); ++i) expected[i] += v[i];
      }
      NDArray y = nd::add_n(xs);
      EXPECT_EQ(y.shape(), s);
      EXPECT_EQ(y.dtype(), dt);
      const double tol = dt == DType::kFloat16 ? 1e-2 : 1e-6;
      EXPECT_TRUE(AllClose(ToDouble(y), expected, tol, tol))
          << DTypeName(dt) << " " << s;
    }
  }
  NDArray b = ArrayOf({3}, {0, 1, 0}, DType::kBool);
  NDArray c = ArrayOf({3}, {0, 1, 1}, DType::kBool);
  EXPECT_EQ(nd::add_n({b, c}).ToVector<bool>(),
            (std::vector<bool>{false, true, true}));
  NDArray one = ArrayOf({2}, {1, 2});
  EXPECT_TRUE(AllClose(ToDouble(nd::Call("ElementWiseSum", {one, one, one},
                                         {{"num_args", "3"}})),
                       {3, 6}));
}

TEST(AddN, WritesInPlaceIntoTheFirstInput) {
  NDArray a = ArrayOf({3}, {1, 2, 3}), b = ArrayOf({3}, {10, 20, 30});
  nd::CallInto("add_n", {a, b}, {{"num_args", "2"}}, a);
  EXPECT_TRUE(AllClose(ToDouble(a), {11, 22, 33}));
}

TEST(AddN, MismatchedShapesOrDTypesAreErrors) {
  NDArray a = RandomArray({2, 3});
  ExpectError<ShapeError>(
      [&] {
        nd::add_n({a, RandomArray({3, 2})});
      },
      {"op \"add_n\"", "(3,2)", "(2,3)"});
  ExpectError<DTypeError>(
      [&] {
        nd::add_n({a, RandomArray({2, 3}, DType::kFloat64)});
      },
      {"op \"add_n\"", "float64", "float32"});
}

// Large enough to be split into chunks when MX_CPU_KERNEL_NTHREADS > 1.
TEST(JoinOps, LargeInputsMatchReference) {
  std::vector<NDArray> xs = {RandomArray({20000, 2}, DType::kInt32, -9, 9, 1),
                             RandomArray({20000, 3}, DType::kInt32, -9, 9, 2)};
  TShape shape;
  std::vector<double> expected = RefConcat(xs, 1, &shape);
  NDArray y = nd::concat(xs, 1);
  EXPECT_EQ(ToDouble(y), expected);
  std::vector<NDArray> parts = nd::split(y, 5, 1);
  for (int j = 0; j < 5; ++j) {
    EXPECT_EQ(ToDouble(parts[j]), ToDouble(nd::slice_axis(y, 1, j, j + 1)));
  }
  NDArray s = nd::stack({parts[0], parts[4]}, 1);
  EXPECT_EQ(ToDouble(nd::slice_axis(s, 1, 1, 2)), ToDouble(parts[4]));
  EXPECT_EQ(ToDouble(nd::add_n(parts)), ToDouble(nd::sum(y, {1}, true)));
}

// Arity attributes size graphs and output vectors: a hostile value must be
// refused when parsed, before anything is allocated (issue 16 F5, F11, F14).
TEST(JoinOps, ArityAttributesAboveTheBoundAreRefusedWhenParsed) {
  const std::string huge = "2147483647";
  const Symbol x = Symbol::Variable("x");
  ExpectError<InvalidArgument>(
      [&] {
        Symbol::Create("add_n", {}, {{"num_args", huge}});
      },
      {"add_n", "num_args", "at most 65536"});
  ExpectError<InvalidArgument>(
      [&] {
        Symbol::Create("SliceChannel", {x}, {{"num_outputs", huge}})
            .ListOutputNames();
      },
      {"SliceChannel", "num_outputs", "at most 65536"});
  ExpectError<InvalidArgument>(
      [&] {
        imperative::Invoke("SliceChannel", {ArrayOf({2}, {1, 2})},
                           {{"num_outputs", huge}});
      },
      {"num_outputs", "at most 65536"});
  ExpectError<InvalidArgument>(
      [&] {
        Symbol::Create("_split_like", {}, {{"num_args", huge}});
      },
      {"_split_like", "num_args"});
  for (const char* op : {"Concat", "stack"}) {
    ExpectError<InvalidArgument>(
        [&] {
          Symbol::Create(op, {}, {{"num_args", "65537"}});
        },
        {"num_args", "at most 65536"});
  }
}

// Variadic ops count their inputs, as MXNet's frontend sets num_args; a
// count far above the inputs given is refused instead of making a variable
// for each missing input (one attribute could otherwise add 65536 nodes).
TEST(JoinOps, VariadicOpsCountTheirInputsInSymbolCreate) {
  const Symbol a = Symbol::Variable("a"), b = Symbol::Variable("b");
  for (const char* op : {"add_n", "Concat", "stack"}) {
    Symbol s = Symbol::Create(op, {a, b, a}, {});
    EXPECT_EQ(s.outputs[0].node->attrs.dict.at("num_args"), "3") << op;
    EXPECT_EQ(s.outputs[0].node->inputs.size(), 3u) << op;
    // A few missing inputs become variables, as in MXNet.
    Symbol declared = Symbol::Create(op, {a}, {{"num_args", "3"}}, "d");
    EXPECT_EQ(declared.ListInputNames(),
              (std::vector<std::string>{"a", "d_arg1", "d_arg2"}))
        << op;
    ExpectError<InvalidArgument>(
        [&] {
          Symbol::Create(op, {a, b}, {{"num_args", "65536"}});
        },
        {op, "65534 of its 65536 inputs are missing", "at most 1024"});
    ExpectError<InvalidArgument>(
        [&] {
          Symbol::Create(op, {a, b}, {{"num_args", "1"}});
        },
        {op, "2 inputs given but the op takes 1"});
    // No inputs: nothing to count; num_args stays required.
    ExpectError<InvalidArgument>([&] { Symbol::Create(op, {}, {}); },
                                 {op, "num_args"});
  }
  // Imperative calls count their inputs too.
  const NDArray x = ArrayOf({2}, {1, 2});
  EXPECT_EQ(ToDouble(imperative::Invoke("add_n", {x, x, x})[0]),
            (std::vector<double>{3, 6}));
}

TEST(JoinOps, ArityAtTheBoundIsAccepted) {
  const Symbol s =
      Symbol::Create("SliceChannel", {Symbol::Variable("x")},
                     {{"num_outputs", std::to_string(kMaxOpArity)}}, "s");
  EXPECT_EQ(s.ListOutputNames().size(), static_cast<size_t>(kMaxOpArity));
}

}  // namespace
}  // namespace testing
}  // namespace mx
