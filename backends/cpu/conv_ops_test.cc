#include <algorithm>
#include <string>
#include <vector>

#include "base/error.h"
#include "gtest/gtest.h"
#include "imperative/imperative.h"
#include "imperative/nd.h"
#include "testing/conv_reference.h"
#include "testing/op_test_util.h"

namespace mx {
namespace testing {
namespace {

struct ConvCase {
  int64_t n, c, h, w, f, kh, kw, sh, sw, ph, pw, dh, dw, groups;
  bool no_bias;
};

ConvND ToND(const ConvCase& p) {
  return {{p.n, p.c, p.h, p.w}, {p.kh, p.kw}, {p.sh, p.sw}, {p.ph, p.pw},
          {p.dh, p.dw},         p.f,          p.groups};
}

NDArray RunConv(const ConvCase& p, const NDArray& x, const NDArray& w,
                const NDArray& b) {
  return nd::Convolution(x, w, b, TShape{p.kh, p.kw}, p.f, {p.sh, p.sw},
                         {p.ph, p.pw}, {p.dh, p.dw}, p.groups, p.no_bias);
}

TEST(Convolution, MatchesDirectReference) {
  const std::vector<ConvCase> cases = {
      // n, c, h, w, f, kh, kw, sh, sw, ph, pw, dh, dw, groups, no_bias
      {1, 1, 5, 5, 1, 3, 3, 1, 1, 0, 0, 1, 1, 1, false},
      {2, 3, 7, 6, 4, 3, 3, 1, 1, 1, 1, 1, 1, 1, false},
      {2, 3, 9, 8, 5, 3, 2, 2, 3, 1, 0, 1, 1, 1, true},
      {1, 2, 9, 9, 3, 3, 3, 1, 1, 2, 2, 2, 2, 1, false},
      {2, 4, 6, 7, 6, 3, 3, 2, 1, 1, 1, 1, 2, 2, false},
      {3, 6, 5, 5, 6, 1, 1, 1, 1, 0, 0, 1, 1, 3, false},
      {1, 4, 8, 8, 4, 3, 3, 2, 2, 1, 1, 1, 1, 4, true},
      {2, 3, 4, 4, 2, 4, 4, 1, 1, 0, 0, 1, 1, 1, false},
  };
  for (const ConvCase& p : cases) {
    for (DType dt : {DType::kFloat64, DType::kFloat32, DType::kFloat16}) {
      NDArray x = RandomArray({p.n, p.c, p.h, p.w}, dt, -1, 1, 1);
      NDArray w = RandomArray({p.f, p.c / p.groups, p.kh, p.kw}, dt, -1, 1, 2);
      NDArray b = p.no_bias ? NDArray() : RandomArray({p.f}, dt, -1, 1, 3);
      NDArray y = RunConv(p, x, w, b);
      const int64_t oh = (p.h + 2 * p.ph - p.dh * (p.kh - 1) - 1) / p.sh + 1;
      const int64_t ow = (p.w + 2 * p.pw - p.dw * (p.kw - 1) - 1) / p.sw + 1;
      ASSERT_EQ(y.shape(), (TShape{p.n, p.f, oh, ow}));
      EXPECT_EQ(y.dtype(), dt);
      const double tol = dt == DType::kFloat16 ? 2e-2 : 1e-5;
      EXPECT_TRUE(
          AllClose(ToDouble(y),
                   RefConv(ToND(p), ToDouble(x), ToDouble(w),
                           p.no_bias ? std::vector<double>{} : ToDouble(b)),
                   tol, tol))
          << "case c=" << p.c << " h=" << p.h << " groups=" << p.groups << " "
          << DTypeName(dt);
    }
  }
}

TEST(Convolution, AddToRequestAccumulates) {
  const ConvCase p{2, 4, 5, 5, 4, 3, 3, 1, 1, 1, 1, 1, 1, 2, false};
  for (DType dt : {DType::kFloat64, DType::kFloat16}) {
    NDArray x = RandomArray({p.n, p.c, p.h, p.w}, dt, -1, 1, 5);
    NDArray w = RandomArray({p.f, p.c / p.groups, p.kh, p.kw}, dt, -1, 1, 6);
    NDArray b = RandomArray({p.f}, dt, -1, 1, 7);
    NDArray y = RandomArray({p.n, p.f, 5, 5}, dt, -1, 1, 8);
    std::vector<double> expected =
        RefConv(ToND(p), ToDouble(x), ToDouble(w), ToDouble(b));
    const std::vector<double> before = ToDouble(y);
    for (size_t i = 0; i < expected.size(); ++i) expected[i] += before[i];
    std::vector<NDArray> outputs{y};
    imperative::InvokeOptions options;
    options.req = {OpReqType::kAddTo};
    imperative::Invoke(MakeAttrs(OpRegistry::Get()->Lookup("Convolution"),
                                 {{"kernel", "(3,3)"},
                                  {"pad", "(1,1)"},
                                  {"num_filter", "4"},
                                  {"num_group", "2"}}),
                       {x, w, b}, &outputs, options);
    const double tol = dt == DType::kFloat16 ? 2e-2 : 1e-6;
    EXPECT_TRUE(AllClose(ToDouble(y), expected, tol, tol)) << DTypeName(dt);
  }
}

TEST(Convolution, EmptyBatchGivesEmptyOutput) {
  NDArray y =
      nd::Convolution(RandomArray({0, 2, 5, 5}), RandomArray({3, 2, 3, 3}),
                      RandomArray({3}), {3, 3}, 3);
  EXPECT_EQ(y.shape(), (TShape{0, 3, 3, 3}));
  EXPECT_TRUE(ToDouble(y).empty());
}

TEST(Convolution, ShapeInferenceFillsWeightAndBiasFromData) {
  const Op& op = OpRegistry::Get()->Lookup("Convolution");
  NodeAttrs attrs = MakeAttrs(op, {{"kernel", "(3,3)"},
                                   {"num_filter", "4"},
                                   {"num_group", "2"},
                                   {"pad", "(1,1)"}});
  std::vector<TShape> in{{2, 6, 9, 9}, TShape(), TShape()}, out{TShape()};
  op.infer_shape()(attrs, &in, &out);
  EXPECT_EQ(in[1], (TShape{4, 3, 3, 3}));
  EXPECT_EQ(in[2], TShape{4});
  EXPECT_EQ(out[0], (TShape{2, 4, 9, 9}));
  // Back from the weight to the data's channels.
  std::vector<TShape> in2{TShape(), {4, 3, 3, 3}, TShape()}, out2{TShape()};
  op.infer_shape()(attrs, &in2, &out2);
  EXPECT_EQ(in2[0], (TShape{-1, 6, -1, -1}));
}

TEST(Convolution, ChannelMismatchNamesTheWeight) {
  try {
    nd::Convolution(RandomArray({2, 3, 5, 5}), RandomArray({4, 2, 3, 3}),
                    RandomArray({4}), {3, 3}, 4);
    FAIL();
  } catch (const ShapeError& e) {
    EXPECT_TRUE(Contains(e.what(), "op \"Convolution\"")) << e.what();
    EXPECT_TRUE(Contains(e.what(), "weight")) << e.what();
    EXPECT_TRUE(Contains(e.what(), "(4,2,3,3)")) << e.what();
    EXPECT_TRUE(Contains(e.what(), "(4,3,3,3)")) << e.what();
  }
}

TEST(Convolution, BadShapesAreShapeErrors) {
  NDArray w = RandomArray({4, 3, 3, 3}), b = RandomArray({4});
  // Channels not divisible by the groups.
  try {
    nd::Convolution(RandomArray({1, 5, 5, 5}), RandomArray({4, 2, 3, 3}), b,
                    {3, 3}, 4, {}, {}, {}, 2);
    FAIL();
  } catch (const ShapeError& e) {
    EXPECT_TRUE(Contains(e.what(), "num_group=2")) << e.what();
    EXPECT_TRUE(Contains(e.what(), "(1,5,5,5)")) << e.what();
  }
  // The kernel does not fit: the output would be empty.
  EXPECT_THROW(nd::Convolution(RandomArray({1, 3, 2, 2}), w, b, {3, 3}, 4),
               ShapeError);
  EXPECT_THROW(nd::Convolution(RandomArray({1, 3, 5, 5}), w, b, {3, 3}, 4, {},
                               {}, {3, 3}),
               ShapeError);
  // Wrong data rank.
  try {
    nd::Convolution(RandomArray({3, 5, 5}), w, b, {3, 3}, 4);
    FAIL();
  } catch (const Error& e) {
    EXPECT_TRUE(Contains(e.what(), "(3,5,5)")) << e.what();
    EXPECT_TRUE(Contains(e.what(), "4-D")) << e.what();
  }
  EXPECT_THROW(nd::Convolution(RandomArray({3, 5}), w, b, {3, 3}, 4),
               ShapeError);
}

TEST(Convolution, BadAttributes) {
  NDArray x = RandomArray({1, 4, 5, 5}), w = RandomArray({4, 4, 3, 3});
  NDArray b = RandomArray({4});
  EXPECT_THROW(nd::Convolution(x, w, b, {3, 3}, 4, {1, 1, 1}), InvalidArgument);
  EXPECT_THROW(nd::Convolution(x, w, b, {3, 3}, 4, {0, 1}), InvalidArgument);
  EXPECT_THROW(nd::Convolution(x, RandomArray({3, 2, 3, 3}), RandomArray({3}),
                               {3, 3}, 3, {}, {}, {}, 2),
               InvalidArgument);  // num_filter=3 with 2 groups.
  EXPECT_THROW(nd::Call("Convolution", {x, w, b}, {{"kernel", "(3,3)"}}),
               InvalidArgument);  // num_filter missing.
  EXPECT_THROW(
      nd::Call("Convolution", {x, w, b},
               {{"kernel", "(3,3)"}, {"num_filter", "4"}, {"layout", "NHWC"}}),
      NotImplemented);
  EXPECT_THROW(nd::Convolution(RandomArray({1, 4, 5, 5}, DType::kInt32),
                               RandomArray({4, 4, 3, 3}, DType::kInt32),
                               RandomArray({4}, DType::kInt32), {3, 3}, 4),
               DTypeError);
}

struct PoolCase {
  int64_t n, c, h, w, kh, kw, sh, sw, ph, pw;
  bool full;
};

PoolND ToND(const PoolCase& p) {
  return {
      {p.n, p.c, p.h, p.w}, {p.kh, p.kw}, {p.sh, p.sw}, {p.ph, p.pw}, p.full};
}

TEST(Pooling, MatchesDirectReference) {
  const std::vector<PoolCase> cases = {
      // n, c, h, w, kh, kw, sh, sw, ph, pw, full
      {1, 1, 4, 4, 2, 2, 2, 2, 0, 0, false},
      {2, 3, 7, 6, 3, 3, 2, 2, 1, 1, false},
      {2, 2, 7, 6, 3, 3, 2, 2, 1, 1, true},
      {1, 2, 5, 8, 2, 3, 1, 2, 0, 1, false},
      {1, 1, 6, 6, 3, 2, 3, 3, 0, 0, true},
      {2, 1, 5, 5, 2, 2, 1, 1, 1, 1, true},
  };
  for (const PoolCase& p : cases) {
    for (std::string type : {"max", "avg", "sum"}) {
      for (bool include_pad : {true, false}) {
        for (DType dt : {DType::kFloat64, DType::kFloat32, DType::kFloat16}) {
          NDArray x = RandomArray({p.n, p.c, p.h, p.w}, dt, -1, 1, 4);
          NDArray y =
              nd::Pooling(x, {p.kh, p.kw}, type, {p.sh, p.sw}, {p.ph, p.pw},
                          false, p.full ? "full" : "valid", include_pad);
          const int64_t ext_h = p.h + 2 * p.ph - p.kh,
                        ext_w = p.w + 2 * p.pw - p.kw;
          const int64_t oh = (p.full ? (ext_h + p.sh - 1) : ext_h) / p.sh + 1;
          const int64_t ow = (p.full ? (ext_w + p.sw - 1) : ext_w) / p.sw + 1;
          ASSERT_EQ(y.shape(), (TShape{p.n, p.c, oh, ow}));
          const double tol = dt == DType::kFloat16 ? 1e-2 : 1e-6;
          EXPECT_TRUE(AllClose(ToDouble(y),
                               RefPool(ToND(p), type, include_pad, ToDouble(x)),
                               tol, tol))
              << type << " h=" << p.h << " full=" << p.full
              << " include_pad=" << include_pad << " " << DTypeName(dt);
        }
      }
    }
  }
}

TEST(Pooling, GlobalPoolIgnoresKernelStrideAndPad) {
  NDArray x = RandomArray({2, 3, 4, 5}, DType::kFloat64, -1, 1, 5);
  const std::vector<double> vx = ToDouble(x);
  std::vector<double> mx, avg;
  for (int plane = 0; plane < 6; ++plane) {
    double best = -1e300, sum = 0;
    for (int i = 0; i < 20; ++i) {
      best = std::max(best, vx[plane * 20 + i]);
      sum += vx[plane * 20 + i];
    }
    mx.push_back(best);
    avg.push_back(sum / 20);
  }
  NDArray ymax = nd::Pooling(x, {2, 2}, "max", {2, 2}, {1, 1}, true);
  EXPECT_EQ(ymax.shape(), (TShape{2, 3, 1, 1}));
  EXPECT_TRUE(AllClose(ToDouble(ymax), mx));
  NDArray yavg =
      nd::Call("Pooling", {x}, {{"pool_type", "avg"}, {"global_pool", "True"}});
  EXPECT_TRUE(AllClose(ToDouble(yavg), avg));
}

TEST(Pooling, EmptyBatchAndKnownValues) {
  EXPECT_EQ(nd::Pooling(RandomArray({0, 2, 4, 4}), {2, 2}).shape(),
            (TShape{0, 2, 3, 3}));
  NDArray x = ArrayOf({1, 1, 2, 2}, {1, -2, 3, 5});
  EXPECT_TRUE(AllClose(ToDouble(nd::Pooling(x, {2, 2})), {5}));
  EXPECT_TRUE(AllClose(ToDouble(nd::Pooling(x, {2, 2}, "avg")), {1.75}));
  EXPECT_TRUE(AllClose(ToDouble(nd::Pooling(x, {2, 2}, "sum")), {7}));
}

TEST(Pooling, BadInputsAreTypedErrors) {
  NDArray x = RandomArray({1, 2, 4, 4});
  EXPECT_THROW(nd::Call("Pooling", {x}, {}), InvalidArgument);  // No kernel.
  EXPECT_THROW(nd::Pooling(x, {5, 5}), ShapeError);
  EXPECT_THROW(nd::Pooling(x, {2, 2}, "median"), InvalidArgument);
  EXPECT_THROW(nd::Pooling(x, {2, 2}, "max", {1, 1, 1}), InvalidArgument);
  EXPECT_THROW(nd::Pooling(x, {2, 2}, "lp"), NotImplemented);
  try {
    nd::Pooling(RandomArray({4, 4}), {2, 2});
    FAIL();
  } catch (const ShapeError& e) {
    EXPECT_TRUE(Contains(e.what(), "op \"Pooling\"")) << e.what();
    EXPECT_TRUE(Contains(e.what(), "(4,4)")) << e.what();
  }
  EXPECT_THROW(nd::Pooling(RandomArray({1, 2, 4, 4}, DType::kInt32), {2, 2}),
               DTypeError);
}

// The kernel indexes (N,C,H,W); shape inference must refuse other ranks
// (issue 16 F9: rank-0 inputs reached the kernel).
TEST(PoolingBackward, InputsThatAreNot4DAreShapeErrors) {
  NDArray scalar = ArrayOf(TShape::Scalar(), {1});
  EXPECT_THROW(imperative::Invoke("_backward_Pooling", {scalar, scalar}),
               InvalidArgument);
  const AttrDict attrs{{"kernel", "(2,2)"}};
  EXPECT_THROW(imperative::Invoke("_backward_Pooling", {scalar, scalar}, attrs),
               ShapeError);
  // out_grad must have Pooling's output shape for data (stride 1: 3x3).
  EXPECT_THROW(
      imperative::Invoke("_backward_Pooling",
                         {RandomArray({1, 1, 2, 2}), RandomArray({1, 1, 4, 4})},
                         attrs),
      ShapeError);
  const auto dx = imperative::Invoke(
      "_backward_Pooling",
      {RandomArray({1, 1, 3, 3}), RandomArray({1, 1, 4, 4})}, attrs);
  EXPECT_EQ(dx[0].shape(), TShape({1, 1, 4, 4}));
}

}  // namespace
}  // namespace testing
}  // namespace mx
