// Deconvolution: forward against a direct scatter computed here (every
// input pixel adds weight * value at stride*i - pad + dilate*k), output
// extents with adj and target_shape, numerical gradients, and attribute
// errors.
#include <string>
#include <vector>

#include "base/error.h"
#include "gtest/gtest.h"
#include "imperative/nd.h"
#include "testing/grad_check.h"
#include "testing/op_test_util.h"

namespace mx {
namespace testing {
namespace {

struct Geometry {
  int64_t sy = 1, sx = 1, py = 0, px = 0, dy = 1, dx = 1;
  int64_t groups = 1;
};

// NCHW data (n, c, h, w), weight (c, f/groups, kh, kw), output (n, f, oh,
// ow) given; bias may be empty.
std::vector<double> DeconvRef(const NDArray& data, const NDArray& weight,
                              const std::vector<double>& bias,
                              const TShape& out, const Geometry& g) {
  const TShape& d = data.shape();
  const TShape& ws = weight.shape();
  const std::vector<double> x = ToDouble(data), w = ToDouble(weight);
  const int64_t cg = d[1] / g.groups, fg = ws[1];
  std::vector<double> y(static_cast<size_t>(out.Size()), 0.0);
  for (int64_t n = 0; n < d[0]; ++n) {
    for (int64_t c = 0; c < d[1]; ++c) {
      const int64_t grp = c / cg;
      for (int64_t iy = 0; iy < d[2]; ++iy) {
        for (int64_t ix = 0; ix < d[3]; ++ix) {
          const double v = x[Ravel({n, c, iy, ix}, d)];
          for (int64_t fo = 0; fo < fg; ++fo) {
            for (int64_t ky = 0; ky < ws[2]; ++ky) {
              for (int64_t kx = 0; kx < ws[3]; ++kx) {
                const int64_t oy = iy * g.sy - g.py + ky * g.dy;
                const int64_t ox = ix * g.sx - g.px + kx * g.dx;
                if (oy < 0 || oy >= out[2] || ox < 0 || ox >= out[3]) continue;
                y[Ravel({n, grp * fg + fo, oy, ox}, out)] +=
                    v * w[Ravel({c, fo, ky, kx}, ws)];
              }
            }
          }
        }
      }
    }
  }
  if (!bias.empty()) {
    for (int64_t i = 0; i < out.Size(); ++i) {
      y[i] += bias[Unravel(i, out)[1]];
    }
  }
  return y;
}

TEST(Deconvolution, StridePadBiasMatchesDirectScatter) {
  const NDArray x = RandomArray({2, 3, 4, 3}, DType::kFloat32, -1, 1, 1);
  const NDArray w = RandomArray({3, 2, 3, 2}, DType::kFloat32, -1, 1, 2);
  const NDArray b = RandomArray({2}, DType::kFloat32, -1, 1, 3);
  const NDArray y = nd::Call("Deconvolution", {x, w, b},
                             {{"kernel", "(3,2)"},
                              {"num_filter", "2"},
                              {"stride", "(2,3)"},
                              {"pad", "(1,0)"},
                              {"no_bias", "False"}});
  // 2*(4-1)+3-2 = 7 rows, 3*(3-1)+2 = 8 columns.
  ASSERT_EQ(y.shape(), TShape({2, 2, 7, 8}));
  Geometry g;
  g.sy = 2, g.sx = 3, g.py = 1;
  EXPECT_TRUE(
      AllClose(ToDouble(y), DeconvRef(x, w, ToDouble(b), y.shape(), g), 1e-5));
}

TEST(Deconvolution, GroupsDilateAndAdj) {
  const NDArray x = RandomArray({1, 4, 3, 3}, DType::kFloat64, -1, 1, 4);
  const NDArray w = RandomArray({4, 3, 2, 2}, DType::kFloat64, -1, 1, 5);
  const NDArray y = nd::Call("Deconvolution", {x, w},
                             {{"kernel", "(2,2)"},
                              {"num_filter", "6"},
                              {"num_group", "2"},
                              {"stride", "(2,2)"},
                              {"dilate", "(2,1)"},
                              {"adj", "(1,1)"}});
  // 2*2+2*1+1 + adj 1 = 8; 2*2+1+1 + 1 = 7.
  ASSERT_EQ(y.shape(), TShape({1, 6, 8, 7}));
  Geometry g;
  g.sy = g.sx = 2, g.dy = 2, g.groups = 2;
  EXPECT_TRUE(AllClose(ToDouble(y), DeconvRef(x, w, {}, y.shape(), g)));
}

TEST(Deconvolution, TargetShapeSetsPadAndAdj) {
  const NDArray x = RandomArray({1, 2, 4, 4}, DType::kFloat64, -1, 1, 6);
  const NDArray w = RandomArray({2, 1, 4, 4}, DType::kFloat64, -1, 1, 7);
  // Full extent 2*3+4 = 10; target 9 removes 1: pad 1, adj 1.
  const NDArray y = nd::Call("Deconvolution", {x, w},
                             {{"kernel", "(4,4)"},
                              {"num_filter", "1"},
                              {"stride", "(2,2)"},
                              {"pad", "(3,3)"},
                              {"target_shape", "(9,9)"}});
  ASSERT_EQ(y.shape(), TShape({1, 1, 9, 9}));
  Geometry g;
  g.sy = g.sx = 2, g.py = g.px = 1;
  EXPECT_TRUE(AllClose(ToDouble(y), DeconvRef(x, w, {}, y.shape(), g)));
}

TEST(Deconvolution, OneDIsTwoDWithUnitHeight) {
  const NDArray x = RandomArray({2, 2, 5}, DType::kFloat64, -1, 1, 8);
  const NDArray w = RandomArray({2, 3, 3}, DType::kFloat64, -1, 1, 9);
  const NDArray y = nd::Call("Deconvolution", {x, w},
                             {{"kernel", "(3)"},
                              {"num_filter", "3"},
                              {"stride", "(2)"},
                              {"pad", "(1)"}});
  ASSERT_EQ(y.shape(), TShape({2, 3, 9}));
  Geometry g;
  g.sx = 2, g.px = 1;
  const NDArray x4 = ArrayOf({2, 2, 1, 5}, ToDouble(x), DType::kFloat64);
  const NDArray w4 = ArrayOf({2, 3, 1, 3}, ToDouble(w), DType::kFloat64);
  EXPECT_TRUE(AllClose(ToDouble(y), DeconvRef(x4, w4, {}, {2, 3, 1, 9}, g)));
}

TEST(Deconvolution, GradientsOfDataWeightAndBias) {
  EXPECT_TRUE(
      CheckGradient("Deconvolution",
                    {{"kernel", "(3,2)"},
                     {"num_filter", "4"},
                     {"num_group", "2"},
                     {"stride", "(2,1)"},
                     {"pad", "(1,1)"},
                     {"adj", "(1,0)"},
                     {"no_bias", "False"}},
                    {RandomArray({2, 2, 3, 3}, DType::kFloat64, -1, 1, 10),
                     RandomArray({2, 2, 3, 2}, DType::kFloat64, -1, 1, 11),
                     RandomArray({4}, DType::kFloat64, -1, 1, 12)}));
  EXPECT_TRUE(
      CheckGradient("Deconvolution",
                    {{"kernel", "(3)"},
                     {"num_filter", "2"},
                     {"stride", "(3)"},
                     {"dilate", "(2)"}},
                    {RandomArray({1, 3, 4}, DType::kFloat64, -1, 1, 13),
                     RandomArray({3, 2, 3}, DType::kFloat64, -1, 1, 14)}));
}

TEST(Deconvolution, Float16) {
  const NDArray x = RandomArray({1, 2, 3, 3}, DType::kFloat16, -1, 1, 15);
  const NDArray w = RandomArray({2, 2, 2, 2}, DType::kFloat16, -1, 1, 16);
  const NDArray y = nd::Call("Deconvolution", {x, w},
                             {{"kernel", "(2,2)"}, {"num_filter", "2"}});
  EXPECT_EQ(y.dtype(), DType::kFloat16);
  EXPECT_TRUE(AllClose(ToDouble(y), DeconvRef(x, w, {}, y.shape(), Geometry{}),
                       1e-2, 1e-2));
}

TEST(Deconvolution, BadAttributesAreTypedErrors) {
  const NDArray x = RandomArray({1, 2, 3, 3});
  const NDArray w = RandomArray({2, 1, 2, 2});
  const AttrDict base{{"kernel", "(2,2)"}, {"num_filter", "1"}};
  auto with = [&](const std::string& k, const std::string& v) {
    AttrDict a = base;
    a[k] = v;
    return a;
  };
  ExpectError<InvalidArgument>(
      [&] {
        nd::Call("Deconvolution", {x, w}, with("adj", "(1,1)"));
      },
      {"Deconvolution", "adj", "stride"});
  ExpectError<InvalidArgument>(
      [&] {
        nd::Call("Deconvolution", {x, w}, with("target_shape", "(9,9)"));
      },
      {"Deconvolution", "target_shape"});
  ExpectError<InvalidArgument>(
      [&] {
        nd::Call("Deconvolution", {x, w}, with("num_group", "2"));
      },
      {"Deconvolution", "num_group"});
  ExpectError<NotImplemented>(
      [&] {
        nd::Call("Deconvolution", {x, w}, with("layout", "NHWC"));
      },
      {"Deconvolution", "layout"});
  ExpectError<InvalidArgument>(
      [&] {
        nd::Call("Deconvolution", {x, w}, with("kernal", "(2,2)"));
      },
      {"Deconvolution", "kernal"});
  ExpectError<ShapeError>(
      [&] {
        nd::Call("Deconvolution", {x, RandomArray({3, 1, 2, 2})}, base);
      },
      {"Deconvolution", "weight"});
  ExpectError<ShapeError>(
      [&] {
        nd::Call("Deconvolution", {x, w},
                 with("stride", "(4611686018427387904,1)"));
      },
      {"Deconvolution", "stride"});
}

TEST(DeconvGradient, UpSamplingBilinear) {
  for (const char* scale : {"2", "3"}) {
    const int64_t k = std::string(scale) == "2" ? 4 : 5;
    EXPECT_TRUE(CheckGradient(
        "UpSampling",
        {{"scale", scale}, {"sample_type", "bilinear"}, {"num_filter", "2"}},
        {RandomArray({1, 2, 3, 2}), RandomArray({2, 1, k, k})}))
        << scale;
  }
}

}  // namespace
}  // namespace testing
}  // namespace mx
