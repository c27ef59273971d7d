// The vectorized 2x2 / stride-2 max pooling against a scalar reference
// (every row width up to 40, so every tail length of the 8-wide vectors,
// odd sizes, ties, NaNs and infinities), and the Pooling op using it
// against the general kernel (float64 runs the general one).
#include "backends/cpu/max_pool_2x2.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <utility>
#include <vector>

#include "gtest/gtest.h"
#include "imperative/imperative.h"
#include "testing/op_test_util.h"

namespace mx {
namespace cpu {
namespace {

// The first maximum of each window in row-major order; the first NaN wins.
void ReferencePool(const std::vector<float>& x, int64_t planes, int64_t h,
                   int64_t w, std::vector<float>* y,
                   std::vector<int32_t>* argmax) {
  const int64_t oh = h / 2, ow = w / 2;
  y->assign(planes * oh * ow, 0);
  argmax->assign(planes * oh * ow, -1);
  for (int64_t p = 0; p < planes; ++p) {
    for (int64_t i = 0; i < oh; ++i) {
      for (int64_t j = 0; j < ow; ++j) {
        float best = 0;
        int64_t at = -1;
        for (int64_t r = 2 * i; r < 2 * i + 2; ++r) {
          for (int64_t c = 2 * j; c < 2 * j + 2; ++c) {
            const float v = x[(p * h + r) * w + c];
            if (at < 0 || v > best || (std::isnan(v) && !std::isnan(best))) {
              best = v;
              at = r * w + c;
            }
          }
        }
        const int64_t o = (p * oh + i) * ow + j;
        (*y)[o] = best;
        (*argmax)[o] = static_cast<int32_t>(at);
      }
    }
  }
}

// Values from a small set, so that windows often hold ties, with NaNs
// and infinities in some places.
std::vector<float> TieRichValues(int64_t n, uint32_t seed) {
  std::mt19937 gen(seed);
  std::uniform_int_distribution<int> pick(0, 19);
  std::vector<float> x(n);
  for (float& v : x) {
    const int k = pick(gen);
    v = k == 0   ? std::numeric_limits<float>::quiet_NaN()
        : k == 1 ? std::numeric_limits<float>::infinity()
        : k == 2 ? -std::numeric_limits<float>::infinity()
        : k == 3 ? -0.0f
                 : static_cast<float>(k % 5);
  }
  return x;
}

bool SameFloat(float a, float b) {
  return (std::isnan(a) && std::isnan(b)) || std::memcmp(&a, &b, sizeof a) == 0;
}

// The kernel's own tests; skipped (saying why) where the CPU lacks AVX2.
class MaxPool2x2Kernel : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!HasMaxPool2x2Kernel()) {
      GTEST_SKIP() << "this CPU has no AVX2; the general kernel runs instead";
    }
  }
};

// Calls fn(h, w) for 3 planes of every h in 2..5 and w in 2..40: every
// tail length of the 8-wide vectors, odd rows and columns.
template <typename F>
void ForEachPlaneSize(F fn) {
  for (int64_t h : {2, 3, 4, 5}) {
    for (int64_t w = 2; w <= 40; ++w) {
      SCOPED_TRACE(::testing::Message() << "h " << h << " w " << w);
      fn(h, w);
    }
  }
}

constexpr int64_t kPlanes = 3;

TEST_F(MaxPool2x2Kernel, MatchesTheReferenceForEveryWidthAndTail) {
  ForEachPlaneSize([](int64_t h, int64_t w) {
    const std::vector<float> x =
        TieRichValues(kPlanes * h * w, static_cast<uint32_t>(h * 100 + w));
    std::vector<float> want_y;
    std::vector<int32_t> want_at;
    ReferencePool(x, kPlanes, h, w, &want_y, &want_at);
    // Guard elements after the outputs catch writes past the end.
    const float guard = 12345.f;
    std::vector<float> y(want_y.size() + 9, guard);
    std::vector<int32_t> at(want_at.size() + 9, -7);
    ASSERT_TRUE(
        MaxPool2x2Stride2(x.data(), kPlanes, h, w, y.data(), at.data()));
    for (size_t o = 0; o < want_y.size(); ++o) {
      ASSERT_TRUE(SameFloat(y[o], want_y[o]))
          << "output " << o << ": " << y[o] << " vs " << want_y[o];
      ASSERT_EQ(at[o], want_at[o]) << "output " << o;
    }
    for (size_t o = want_y.size(); o < y.size(); ++o) {
      ASSERT_EQ(y[o], guard) << "wrote past the outputs at " << o;
      ASSERT_EQ(at[o], -7) << "wrote past the argmax at " << o;
    }
    // Without argmax, the same values.
    std::vector<float> y_only(want_y.size());
    ASSERT_TRUE(
        MaxPool2x2Stride2(x.data(), kPlanes, h, w, y_only.data(), nullptr));
    for (size_t o = 0; o < want_y.size(); ++o) {
      ASSERT_TRUE(SameFloat(y_only[o], want_y[o])) << "output " << o;
    }
  });
}

TEST_F(MaxPool2x2Kernel, ReadsOnlyTheRowsAndColumnsOfItsWindows) {
  // One plane that ends its allocation (ASan reports a read past it): with
  // h = 2 and an even w the last window ends the allocation; an odd last
  // row or column is in no window.
  for (const auto& [h, w] : std::vector<std::pair<int64_t, int64_t>>{
           {2, 6}, {2, 16}, {2, 5}, {3, 5}, {3, 17}}) {
    SCOPED_TRACE(::testing::Message() << "h " << h << " w " << w);
    std::vector<float> x(h * w);
    for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>(i);
    std::vector<float> y(w / 2);
    std::vector<int32_t> at(w / 2);
    ASSERT_TRUE(MaxPool2x2Stride2(x.data(), 1, h, w, y.data(), at.data()));
    for (int64_t j = 0; j < w / 2; ++j) {
      EXPECT_EQ(y[j], static_cast<float>(w + 2 * j + 1));
      EXPECT_EQ(at[j], w + 2 * j + 1);
    }
    std::vector<float> dx(h * w, 5.f);
    ASSERT_EQ(MaxPool2x2Stride2Backward(y.data(), at.data(), 1, h, w, dx.data(),
                                        /*add_to=*/true),
              1);
  }
}

// The general kernel's gradient: 0 + g at each argmax position (written),
// or x + g there (added); other positions 0 or untouched.
void ReferenceUnpool(const std::vector<float>& og,
                     const std::vector<int32_t>& argmax, int64_t planes,
                     int64_t h, int64_t w, bool add_to,
                     std::vector<float>* dx) {
  const int64_t vout = (h / 2) * (w / 2);
  for (int64_t p = 0; p < planes; ++p) {
    float* d = dx->data() + p * h * w;
    if (!add_to) std::fill(d, d + h * w, 0.f);
    for (int64_t o = p * vout; o < (p + 1) * vout; ++o) {
      d[argmax[o]] = d[argmax[o]] + og[o];
    }
  }
}

TEST_F(MaxPool2x2Kernel, GradientMatchesTheReferenceWrittenAndAdded) {
  ForEachPlaneSize([](int64_t h, int64_t w) {
    const int64_t n_in = kPlanes * h * w, n_out = kPlanes * (h / 2) * (w / 2);
    const std::vector<float> x =
        TieRichValues(n_in, static_cast<uint32_t>(h * 100 + w));
    std::vector<float> y(n_out);
    std::vector<int32_t> at(n_out);
    ASSERT_TRUE(
        MaxPool2x2Stride2(x.data(), kPlanes, h, w, y.data(), at.data()));
    // Gradients with NaN, infinities and -0; the added-to gradient
    // starts from such values too.
    const std::vector<float> og = TieRichValues(n_out, 11);
    const std::vector<float> start = TieRichValues(n_in + 9, 12);
    for (bool add_to : {false, true}) {
      SCOPED_TRACE(add_to ? "added" : "written");
      std::vector<float> want = start;
      ReferenceUnpool(og, at, kPlanes, h, w, add_to, &want);
      std::vector<float> got = start;
      ASSERT_EQ(MaxPool2x2Stride2Backward(og.data(), at.data(), kPlanes, h, w,
                                          got.data(), add_to),
                kPlanes);
      for (size_t i = 0; i < got.size(); ++i) {
        ASSERT_TRUE(SameFloat(got[i], want[i]))
            << "element " << i << ": " << got[i] << " vs " << want[i];
      }
    }
  });
}

TEST_F(MaxPool2x2Kernel,
       GradientLeavesPlanesWithForeignPositionsToTheGeneralKernel) {
  // Three 4x4 planes; plane 2's last window names a position of another
  // window (valid in the plane, but not from this forward).
  std::vector<int32_t> at = {0, 2, 8, 10, 0, 2, 8, 10, 0, 2, 8, 0};
  const std::vector<float> og(12, 1.f);
  std::vector<float> dx(48, 5.f);
  EXPECT_EQ(MaxPool2x2Stride2Backward(og.data(), at.data(), 3, 4, 4, dx.data(),
                                      false),
            2);
  // Planes 0 and 1 done, plane 2 untouched.
  EXPECT_EQ(dx[0], 1.f);
  EXPECT_EQ(dx[1], 0.f);
  EXPECT_EQ(dx[16], 1.f);
  EXPECT_EQ(dx[32], 5.f);
  // Plane 1's last window (top-left 10): below its top-left is its own.
  at[7] = 10 + 4;
  EXPECT_EQ(MaxPool2x2Stride2Backward(og.data(), at.data(), 3, 4, 4, dx.data(),
                                      false),
            2);
  at[7] = 10 + 2;  // Right of it: the next window's.
  EXPECT_EQ(MaxPool2x2Stride2Backward(og.data(), at.data(), 3, 4, 4, dx.data(),
                                      false),
            1);
}

// Pooling's (value, argmax) outputs.
std::vector<NDArray> Pool(const NDArray& x, const AttrDict& attrs) {
  return imperative::Invoke("Pooling", {x}, attrs);
}

TEST(MaxPool2x2, PoolingOpAgreesWithTheGeneralKernel) {
  // float32 takes the vectorized kernel (on AVX2), float64 the general one.
  const AttrDict attrs = {{"kernel", "(2,2)"}, {"stride", "(2,2)"}};
  for (const TShape& shape :
       {TShape{2, 3, 8, 8}, TShape{1, 2, 7, 29}, TShape{64, 4, 14, 14}}) {
    SCOPED_TRACE(shape.ToString());
    const std::vector<float> values = TieRichValues(shape.Size(), 3);
    const std::vector<double> as_double(values.begin(), values.end());
    const std::vector<NDArray> f32 =
        Pool(testing::ArrayOf(shape, as_double, DType::kFloat32), attrs);
    const std::vector<NDArray> f64 =
        Pool(testing::ArrayOf(shape, as_double, DType::kFloat64), attrs);
    ASSERT_EQ(f32.size(), 2u);
    ASSERT_EQ(f64.size(), 2u);
    EXPECT_EQ(testing::ToDouble(f32[1]), testing::ToDouble(f64[1]));
    const std::vector<double> v32 = testing::ToDouble(f32[0]);
    const std::vector<double> v64 = testing::ToDouble(f64[0]);
    ASSERT_EQ(v32.size(), v64.size());
    for (size_t o = 0; o < v32.size(); ++o) {
      EXPECT_TRUE((std::isnan(v32[o]) && std::isnan(v64[o])) ||
                  v32[o] == v64[o])
          << "output " << o << ": " << v32[o] << " vs " << v64[o];
    }
  }
}

TEST(MaxPool2x2, PaddedDepthWindowsStayWithTheGeneralKernel) {
  // 3-D pooling over a depth of 1 whose only depth window is all padding
  // (kernel 1, pad 1, stride 3): every window gives 0 and argmax -1, not
  // the plane's 2x2 maxima.
  const AttrDict attrs = {
      {"kernel", "(1,2,2)"}, {"stride", "(3,2,2)"}, {"pad", "(1,0,0)"}};
  const NDArray x =
      testing::RandomArray({1, 2, 1, 4, 4}, DType::kFloat32, 1, 2);
  const std::vector<NDArray> y = Pool(x, attrs);
  ASSERT_EQ(y[0].shape(), TShape({1, 2, 1, 2, 2}));
  EXPECT_EQ(testing::ToDouble(y[0]), std::vector<double>(8, 0.0));
  EXPECT_EQ(testing::ToDouble(y[1]), std::vector<double>(8, -1.0));
}

TEST(MaxPool2x2, PoolingGradientAgreesWithTheGeneralKernel) {
  const AttrDict attrs = {{"kernel", "(2,2)"}, {"stride", "(2,2)"}};
  const TShape shape{2, 3, 7, 10};
  const std::vector<float> values = TieRichValues(shape.Size(), 5);
  const std::vector<double> as_double(values.begin(), values.end());
  for (bool foreign : {false, true}) {
    SCOPED_TRACE(foreign ? "an argmax outside its window" : "own argmax");
    std::vector<NDArray> grads;
    for (DType dtype : {DType::kFloat32, DType::kFloat64}) {
      const NDArray x = testing::ArrayOf(shape, as_double, dtype);
      const std::vector<NDArray> y = Pool(x, attrs);
      std::vector<double> at = testing::ToDouble(y[1]);
      if (foreign) at[20] = 0;  // Plane 1's window (1, 0) takes position 0.
      const NDArray og =
          testing::RandomArray(y[0].shape(), dtype, -1, 1, /*seed=*/9);
      grads.push_back(imperative::Invoke(
          "_backward_Pooling_max",
          {og, testing::ArrayOf(y[1].shape(), at, DType::kInt32), x},
          attrs)[0]);
    }
    const std::vector<double> g32 = testing::ToDouble(grads[0]);
    const std::vector<double> g64 = testing::ToDouble(grads[1]);
    ASSERT_EQ(g32.size(), g64.size());
    for (size_t i = 0; i < g32.size(); ++i) {
      EXPECT_NEAR(g32[i], g64[i], 1e-7) << "element " << i;
    }
  }
}

}  // namespace
}  // namespace cpu
}  // namespace mx
