#include <optional>

#include "base/error.h"
#include "gtest/gtest.h"
#include "imperative/nd.h"
#include "testing/op_test_util.h"

namespace mx {
namespace testing {
namespace {

// ---- transpose. ----

std::vector<double> RefTranspose(const std::vector<double>& x, const TShape& in,
                                 const std::vector<int>& perm, TShape* out) {
  std::vector<int64_t> dims;
  for (int p : perm) dims.push_back(in[p]);
  *out = TShape(dims);
  std::vector<double> y(x.size());
  for (int64_t i = 0; i < out->Size(); ++i) {
    const std::vector<int64_t> o = Unravel(i, *out);
    std::vector<int64_t> src(in.ndim());
    for (size_t d = 0; d < perm.size(); ++d) src[perm[d]] = o[d];
    y[i] = x[Ravel(src, in)];
  }
  return y;
}

TEST(Transpose, MatchesReference) {
  struct Case {
    TShape in;
    std::vector<std::vector<int>> perms;  // {} means the default.
  };
  const std::vector<Case> cases = {
      {TShape::Scalar(), {{}}},
      {{5}, {{}, {0}, {-1}}},
      {{3, 4}, {{}, {1, 0}, {0, 1}, {-1, -2}}},
      {{2, 3, 4, 5}, {{}, {0, 2, 1, 3}, {3, 0, 2, 1}, {-1, 0, -2, 1}}},
      {{2, 0, 3}, {{}, {1, 2, 0}}},
  };
  for (DType dt : {DType::kFloat32, DType::kFloat16, DType::kInt64,
                   DType::kUInt8, DType::kBool}) {
    for (const Case& c : cases) {
      NDArray x = RandomArray(c.in, dt, 0, 9, 4);
      for (const std::vector<int>& perm : c.perms) {
        std::vector<int> p;
        std::vector<int64_t> axes;
        for (int d = 0; d < c.in.ndim(); ++d) {
          const int a = perm.empty() ? c.in.ndim() - 1 - d : perm[d];
          p.push_back(a < 0 ? a + c.in.ndim() : a);
          axes.push_back(a);
        }
        NDArray y = nd::transpose(x, perm.empty() ? TShape() : TShape(axes));
        TShape expected_shape;
        std::vector<double> expected =
            RefTranspose(ToDouble(x), c.in, p, &expected_shape);
        EXPECT_EQ(y.shape(), expected_shape) << c.in;
        EXPECT_EQ(y.dtype(), dt);
        EXPECT_EQ(ToDouble(y), expected) << c.in << " " << TShape(axes);
      }
    }
  }
}

TEST(Transpose, BadAxesAreErrors) {
  NDArray x = RandomArray({2, 3, 4});
  ExpectError<ShapeError>(
      [&] {
        nd::transpose(x, {1, 0});
      },
      {"op \"transpose\"", "(1,0)", "(2,3,4)"});
  ExpectError<InvalidArgument>(
      [&] {
        nd::transpose(x, {0, 1, -2});
      },
      {"op \"transpose\"", "(2,3,4)"});
  ExpectError<ShapeError>(
      [&] {
        nd::transpose(x, {0, 1, 3});
      },
      {"op \"transpose\"", "(2,3,4)"});
}

TEST(Transpose, InfersTheInputShapeFromTheOutput) {
  const Op& op = OpRegistry::Get()->Lookup("transpose");
  NodeAttrs attrs = MakeAttrs(op, {{"axes", "(2,0,1)"}});
  std::vector<TShape> in{TShape()}, out{TShape{4, 2, 3}};
  op.infer_shape()(attrs, &in, &out);
  EXPECT_EQ(in[0], TShape({2, 3, 4}));
}

// ---- slice. ----

using Index = std::optional<int64_t>;

// Python's slice.indices(n), then the indices it selects.
std::vector<int64_t> PySliceIndices(int64_t n, Index b, Index e, int64_t s) {
  const int64_t lower = s < 0 ? -1 : 0, upper = s < 0 ? n - 1 : n;
  auto norm = [&](Index v, int64_t dflt) {
    if (!v) return dflt;
    if (*v < 0) return std::max(*v + n, lower);
    return std::min(*v, upper);
  };
  const int64_t start = norm(b, s < 0 ? upper : lower);
  const int64_t stop = norm(e, s < 0 ? lower : upper);
  std::vector<int64_t> idx;
  for (int64_t i = start; s > 0 ? i < stop : i > stop; i += s) idx.push_back(i);
  return idx;
}

struct Spec {
  Index b, e;
  Index s;
};

std::vector<double> RefSlice(const std::vector<double>& x, const TShape& in,
                             const std::vector<Spec>& specs, TShape* out) {
  std::vector<std::vector<int64_t>> picks;
  std::vector<int64_t> dims;
  for (int d = 0; d < in.ndim(); ++d) {
    const Spec sp = d < static_cast<int>(specs.size()) ? specs[d] : Spec{};
    picks.push_back(PySliceIndices(in[d], sp.b, sp.e, sp.s.value_or(1)));
    dims.push_back(static_cast<int64_t>(picks.back().size()));
  }
  *out = TShape(dims);
  std::vector<double> y;
  for (int64_t i = 0; i < out->Size(); ++i) {
    std::vector<int64_t> o = Unravel(i, *out);
    for (int d = 0; d < in.ndim(); ++d) o[d] = picks[d][o[d]];
    y.push_back(x[Ravel(o, in)]);
  }
  return y;
}

TEST(Slice, MatchesPythonSlicingOverNoneNegativeAndSteps) {
  const std::vector<Spec> axis_specs = {
      {},         {1, 4, {}},   {-3, {}, {}}, {{}, -1, {}},  {{}, {}, -1},
      {5, 1, -2}, {-1, -8, -3}, {0, 100, 2},  {-100, 2, {}}, {2, 2, {}},
      {4, 1, {}}, {1, 5, 3},    {{}, {}, 7},  {100, {}, -1}, {3, {}, -2}};
  const TShape in{6, 5, 3};
  for (DType dt : {DType::kFloat64, DType::kInt32, DType::kFloat16}) {
    NDArray x = RandomArray(in, dt, -50, 50, 8);
    const std::vector<double> xv = ToDouble(x);
    for (const Spec& s0 : axis_specs) {
      for (const Spec& s1 : axis_specs) {
        for (int n_axes = 1; n_axes <= 2; ++n_axes) {
          std::vector<Spec> specs = {s0, s1};
          specs.resize(n_axes);
          OptionalIntTuple begin, end, step;
          bool any_step = false;
          for (const Spec& s : specs) {
            begin.push_back(s.b);
            end.push_back(s.e);
            step.push_back(s.s);
            any_step |= s.s.has_value();
          }
          if (!any_step) step.clear();  // Also covers a missing step.
          NDArray y = nd::slice(x, begin, end, step);
          TShape expected_shape;
          std::vector<double> expected =
              RefSlice(xv, in, specs, &expected_shape);
          const std::string what =
              nd::Attr(begin) + nd::Attr(end) + nd::Attr(step);
          EXPECT_EQ(y.shape(), expected_shape) << what;
          EXPECT_EQ(ToDouble(y), expected) << what;
        }
      }
    }
  }
}

TEST(Slice, HandPickedCases) {
  NDArray x = ArrayOf({6}, {0, 1, 2, 3, 4, 5}, DType::kInt64);
  auto run = [&](Index b, Index e, Index s) {
    return nd::slice(x, {b}, {e}, {s}).ToVector<int64_t>();
  };
  using V = std::vector<int64_t>;
  EXPECT_EQ(run({}, {}, -1), (V{5, 4, 3, 2, 1, 0}));
  EXPECT_EQ(run(-2, {}, {}), (V{4, 5}));
  EXPECT_EQ(run(5, 1, -2), (V{5, 3}));
  EXPECT_EQ(run({}, -7, -1), (V{5, 4, 3, 2, 1, 0}));
  EXPECT_EQ(run(1, {}, 2), (V{1, 3, 5}));
  EXPECT_EQ(run(3, 3, {}), V{});
}

TEST(Slice, ScalarZeroSizeAndBool) {
  NDArray s = ArrayOf(TShape::Scalar(), {7});
  EXPECT_EQ(nd::slice(s, {}, {}).shape(), TShape::Scalar());
  EXPECT_EQ(ToDouble(nd::slice(s, {}, {})), (std::vector<double>{7}));
  NDArray z = ArrayOf({0, 3}, {});
  EXPECT_EQ(nd::slice(z, {{}, 1}, {{}, {}}).shape(), TShape({0, 2}));
  EXPECT_EQ(nd::slice(z, {{}}, {{}}, {-1}).shape(), TShape({0, 3}));
  NDArray b = ArrayOf({4}, {1, 0, 0, 1}, DType::kBool);
  EXPECT_EQ(nd::slice(b, {{}}, {{}}, {-2}).ToVector<bool>(),
            (std::vector<bool>{true, false}));
}

TEST(Slice, BadArgumentsAreErrors) {
  NDArray x = RandomArray({3, 4});
  ExpectError<InvalidArgument>([&] { nd::slice(x, {0}, {2}, {0}); },
                               {"op \"slice\"", "step", "(3,4)"});
  ExpectError<ShapeError>(
      [&] {
        nd::slice(x, {0, 0, 0}, {1, 1, 1});
      },
      {"op \"slice\"", "(3,4)"});
  ExpectError<ShapeError>(
      [&] {
        nd::slice(x, {0, 0}, {1});
      },
      {"op \"slice\"", "(3,4)"});
  ExpectError<ShapeError>(
      [&] {
        nd::slice(x, {0, 0}, {1, 1}, {1});
      },
      {"op \"slice\"", "(3,4)"});
  EXPECT_THROW(nd::Call("slice", {x}, {{"begin", "(0,)"}}), InvalidArgument);
}

// ---- slice_axis. ----

TEST(SliceAxis, MatchesSliceOnOneAxis) {
  const TShape in{4, 5, 6};
  NDArray x = RandomArray(in, DType::kInt32, -9, 9, 2);
  const std::vector<std::pair<int64_t, Index>> ranges = {
      {0, {}}, {1, 3}, {-2, {}}, {0, -1}, {-100, 100}, {3, 1}, {2, 2}};
  for (int axis = -3; axis < 3; ++axis) {
    const int a = axis < 0 ? axis + 3 : axis;
    for (const auto& [b, e] : ranges) {
      std::vector<Spec> specs(3);
      specs[a] = Spec{b, e, {}};
      TShape expected_shape;
      std::vector<double> expected =
          RefSlice(ToDouble(x), in, specs, &expected_shape);
      NDArray y = nd::slice_axis(x, axis, b, e);
      EXPECT_EQ(y.shape(), expected_shape) << axis << " " << b;
      EXPECT_EQ(ToDouble(y), expected) << axis << " " << b;
    }
  }
}

TEST(SliceAxis, BadAxisIsShapeError) {
  ExpectError<ShapeError>(
      [] {
        nd::slice_axis(RandomArray({2, 3}), 2, 0, 1);
      },
      {"op \"slice_axis\"", "(2,3)"});
}

// Large enough to be split into chunks when MX_CPU_KERNEL_NTHREADS > 1;
// chunks then start in the middle of rows.
TEST(StrideOps, LargeInputsMatchReference) {
  const TShape in{3, 150, 81};
  NDArray x = RandomArray(in, DType::kFloat32, -1, 1, 12);
  const std::vector<double> xv = ToDouble(x);
  TShape tshape;
  std::vector<double> texp = RefTranspose(xv, in, {2, 0, 1}, &tshape);
  EXPECT_EQ(ToDouble(nd::transpose(x, {2, 0, 1})), texp);
  const std::vector<Spec> specs = {{{}, {}, -1}, {140, 3, -1}, {1, {}, 1}};
  TShape sshape;
  std::vector<double> sexp = RefSlice(xv, in, specs, &sshape);
  NDArray y = nd::slice(x, {{}, 140, 1}, {{}, 3, {}}, {-1, -1, 1});
  EXPECT_EQ(y.shape(), sshape);
  EXPECT_EQ(ToDouble(y), sexp);
}

TEST(StrideOps, SwapAxisIsATransposeOfTwoAxes) {
  const NDArray x = RandomArray({2, 3, 4}, DType::kFloat32, -1, 1, 13);
  const NDArray y = nd::Call("SwapAxis", {x}, {{"dim1", "0"}, {"dim2", "2"}});
  EXPECT_EQ(y.shape(), TShape({4, 3, 2}));
  EXPECT_EQ(ToDouble(y), ToDouble(nd::transpose(x, {2, 1, 0})));
  const NDArray z = nd::Call("swapaxes", {x}, {{"dim1", "-1"}, {"dim2", "1"}});
  EXPECT_EQ(ToDouble(z), ToDouble(nd::transpose(x, {0, 2, 1})));
  // The defaults swap axis 0 with itself.
  EXPECT_EQ(ToDouble(nd::Call("SwapAxis", {x})), ToDouble(x));
  ExpectError<InvalidArgument>(
      [&] {
        nd::Call("SwapAxis", {x}, {{"dim1", "3"}});
      },
      {"SwapAxis", "3"});
}
}  // namespace
}  // namespace testing
}  // namespace mx
