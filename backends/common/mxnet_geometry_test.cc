// The shared MXNet geometry rules (mxnet_geometry.h) on the host: values
// worked out by hand from MXNet's formulas, edge cases, and the properties
// the CPU and CUDA kernels rely on. The CUDA kernels compile the same code
// for the device.
#include "backends/common/mxnet_geometry.h"

#include <algorithm>
#include <cmath>
#include <cstdint>

#include "gtest/gtest.h"

namespace mx_math {
namespace {

TEST(BilinearTap, AlignCornersMapsCornerToCorner) {
  // in 4, out 8: scale 3/7.
  const BilinearTap first = BilinearTapOf(4, 8, true, 0);
  EXPECT_EQ(first.lo, 0);
  EXPECT_EQ(first.step, 1);
  EXPECT_EQ(first.frac, 0);
  const BilinearTap mid = BilinearTapOf(4, 8, true, 3);  // src 9/7
  EXPECT_EQ(mid.lo, 1);
  EXPECT_EQ(mid.step, 1);
  EXPECT_NEAR(mid.frac, 2.0 / 7, 1e-15);
  const BilinearTap last = BilinearTapOf(4, 8, true, 7);  // src 3
  EXPECT_EQ(last.lo, 3);
  EXPECT_EQ(last.step, 0);
  EXPECT_NEAR(last.frac, 0, 1e-15);
  // Downscaling 8 -> 3: scale 3.5, sources 0, 3.5, 7.
  const BilinearTap down = BilinearTapOf(8, 3, true, 1);
  EXPECT_EQ(down.lo, 3);
  EXPECT_EQ(down.frac, 0.5);
  EXPECT_EQ(BilinearTapOf(8, 3, true, 2).lo, 7);
}

TEST(BilinearTap, HalfPixelCentresClampAtBothEdges) {
  // in 4, out 8: scale 0.5, src = 0.5 (o + 0.5) - 0.5.
  const BilinearTap first = BilinearTapOf(4, 8, false, 0);  // -0.25 -> 0
  EXPECT_EQ(first.lo, 0);
  EXPECT_EQ(first.frac, 0);
  const BilinearTap second = BilinearTapOf(4, 8, false, 1);  // 0.25
  EXPECT_EQ(second.lo, 0);
  EXPECT_EQ(second.step, 1);
  EXPECT_EQ(second.frac, 0.25);
  const BilinearTap last = BilinearTapOf(4, 8, false, 7);  // 3.25
  EXPECT_EQ(last.lo, 3);
  EXPECT_EQ(last.step, 0);  // Both weights land on the last pixel.
}

TEST(BilinearTap, SingleOutputPixelReadsTheFirstInputPixel) {
  for (bool align : {true, false}) {
    const BilinearTap t = BilinearTapOf(9, 1, align, 0);
    EXPECT_EQ(t.lo, 0) << align;
    EXPECT_EQ(t.frac, 0) << align;
  }
  const BilinearTap one = BilinearTapOf(1, 5, false, 4);  // One input pixel.
  EXPECT_EQ(one.lo, 0);
  EXPECT_EQ(one.step, 0);
}

TEST(BilinearTap, TapsStayInsideTheInput) {
  for (int64_t in = 1; in <= 9; ++in) {
    for (int64_t out = 1; out <= 17; ++out) {
      for (bool align : {true, false}) {
        for (int64_t o = 0; o < out; ++o) {
          const BilinearTap t = BilinearTapOf(in, out, align, o);
          EXPECT_GE(t.lo, 0);
          EXPECT_LT(t.lo + t.step, in);
          EXPECT_GE(t.frac, 0);
          EXPECT_LT(t.frac, 1);
          EXPECT_TRUE(t.step == 0 || t.step == 1);
        }
      }
    }
  }
}

RoiRow RegionOf(double b, double x1, double y1, double x2, double y2,
                double scale, RoiPoolRegion* r, int64_t ph = 2,
                int64_t pw = 2) {
  const double row[5] = {b, x1, y1, x2, y2};
  return RoiPoolRegionOf(row, scale, /*num_images=*/2, ph, pw, r);
}

TEST(RoiPool, RegionSplitsIntoBins) {
  RoiPoolRegion r;
  ASSERT_EQ(RegionOf(1, 0, 0, 7, 7, 1.0, &r), RoiRow::kRegion);
  EXPECT_EQ(r.image, 1);
  EXPECT_EQ(r.bin_h, 4);
  EXPECT_EQ(r.bin_w, 4);
  const PixelWindow w = RoiPoolBinOf(r, 1, 0, 8, 8);
  EXPECT_EQ(w.h0, 4);
  EXPECT_EQ(w.h1, 8);
  EXPECT_EQ(w.w0, 0);
  EXPECT_EQ(w.w1, 4);
}

TEST(RoiPool, CornersRoundHalfAwayFromZeroAfterScaling) {
  RoiPoolRegion r;
  // 5 * 0.5 = 2.5 -> 3 and 9 * 0.5 = 4.5 -> 5: 3 pixels per side.
  ASSERT_EQ(RegionOf(0, 5, 5, 9, 9, 0.5, &r, 3, 3), RoiRow::kRegion);
  EXPECT_EQ(r.x0, 3);
  EXPECT_EQ(r.y0, 3);
  EXPECT_EQ(r.bin_h, 1);
  EXPECT_EQ(r.bin_w, 1);
  // Overlapping bins: 3 pixels in 2 bins give [3, 5) and [4, 6).
  ASSERT_EQ(RegionOf(0, 5, 5, 9, 9, 0.5, &r), RoiRow::kRegion);
  EXPECT_EQ(RoiPoolBinOf(r, 0, 0, 10, 10).h1, 5);
  EXPECT_EQ(RoiPoolBinOf(r, 1, 0, 10, 10).h0, 4);
}

TEST(RoiPool, InvertedRegionIsOnePixel) {
  RoiPoolRegion r;
  ASSERT_EQ(RegionOf(0, 6, 6, 2, 2, 1.0, &r, 1, 1), RoiRow::kRegion);
  const PixelWindow w = RoiPoolBinOf(r, 0, 0, 8, 8);
  EXPECT_EQ(w.h0, 6);
  EXPECT_EQ(w.h1, 7);
  EXPECT_EQ(w.w1 - w.w0, 1);
}

TEST(RoiPool, BinsOutsideThePlaneAreEmpty) {
  RoiPoolRegion r;
  ASSERT_EQ(RegionOf(0, 20, -30, 27, -23, 1.0, &r), RoiRow::kRegion);
  const PixelWindow below = RoiPoolBinOf(r, 0, 0, 8, 8);
  EXPECT_EQ(below.h0, below.h1);  // Rows -30..-23 clamp to 0.
  EXPECT_EQ(below.w0, 8);         // Columns 20.. clamp to the width.
  EXPECT_EQ(below.w1, 8);
}

TEST(RoiPool, PaddingAndInvalidRows) {
  RoiPoolRegion r;
  EXPECT_EQ(RegionOf(-1, 0, 0, 1, 1, 1.0, &r), RoiRow::kPadding);
  EXPECT_EQ(RegionOf(NAN, 0, 0, 1, 1, 1.0, &r), RoiRow::kInvalid);
  EXPECT_EQ(RegionOf(2, 0, 0, 1, 1, 1.0, &r), RoiRow::kInvalid);  // 2 images.
  EXPECT_EQ(RegionOf(0, 0, INFINITY, 1, 1, 1.0, &r), RoiRow::kInvalid);
  EXPECT_EQ(RegionOf(0, 0, 0, NAN, 1, 1.0, &r), RoiRow::kInvalid);
  EXPECT_EQ(RegionOf(0, -1e300, 0, 1e300, 1, 1.0, &r), RoiRow::kInvalid);
  EXPECT_EQ(RegionOf(1.5, 0, 0, 1, 1, 1.0, &r), RoiRow::kRegion);
  EXPECT_EQ(r.image, 1);  // A fractional index truncates, as MXNet's cast.
}

TEST(RoiPool, BinsCoverTheRegionInOrder) {
  for (int64_t ph = 1; ph <= 7; ++ph) {
    for (double y2 : {0.0, 3.0, 6.0, 12.0, 30.0}) {
      RoiPoolRegion r;
      ASSERT_EQ(RegionOf(0, 0, 1, 4, y2, 1.0, &r, ph, 1), RoiRow::kRegion);
      const int64_t top = 1, bottom = std::max<int64_t>(y2, 1) + 1;
      int64_t covered_to = top;
      for (int64_t i = 0; i < ph; ++i) {
        const PixelWindow w = RoiPoolBinOf(r, i, 0, 100, 100);
        EXPECT_LE(w.h0, covered_to) << ph << " " << y2 << " " << i;
        EXPECT_GE(w.h1, w.h0 + 1) << ph << " " << y2 << " " << i;
        covered_to = std::max(covered_to, w.h1);
      }
      EXPECT_EQ(covered_to, bottom) << ph << " " << y2;
    }
  }
}

TEST(AnchorHalfExtent, SizesWithFirstRatioThenFirstSizeWithOthers) {
  const double sizes[] = {0.5, 0.25};
  const double ratios[] = {1, 4};
  const AnchorHalfExtent a0 = AnchorHalfExtentOf(sizes, 2, ratios, 0, 2, 2);
  EXPECT_EQ(a0.w, 0.25);
  EXPECT_EQ(a0.h, 0.25);
  const AnchorHalfExtent a1 = AnchorHalfExtentOf(sizes, 2, ratios, 1, 2, 2);
  EXPECT_EQ(a1.w, 0.125);
  EXPECT_EQ(a1.h, 0.125);
  const AnchorHalfExtent a2 = AnchorHalfExtentOf(sizes, 2, ratios, 2, 2, 2);
  EXPECT_EQ(a2.w, 0.5);    // sqrt(4) = 2 times wider ...
  EXPECT_EQ(a2.h, 0.125);  // ... and half as high.
  // A map twice as high as wide: widths scale by H / W.
  const AnchorHalfExtent tall = AnchorHalfExtentOf(sizes, 2, ratios, 0, 4, 2);
  EXPECT_EQ(tall.w, 0.5);
  EXPECT_EQ(tall.h, 0.25);
}

TEST(DecodeSsdBox, MovesAndScalesTheAnchor) {
  const double anchor[4] = {0.1, 0.1, 0.5, 0.5};  // Centre 0.3, size 0.4.
  const double variances[4] = {0.1, 0.1, 0.2, 0.2};
  const double loc[4] = {1, -1, 0, std::log(2.0) / 0.2};
  double box[4];
  DecodeSsdBox(anchor, loc, variances, false, box);
  EXPECT_NEAR(box[0], 0.34 - 0.2, 1e-15);  // Centre x 0.3 + 0.1 * 0.4.
  EXPECT_NEAR(box[1], 0.26 - 0.4, 1e-15);  // Height doubled to 0.8.
  EXPECT_NEAR(box[2], 0.34 + 0.2, 1e-15);
  EXPECT_NEAR(box[3], 0.26 + 0.4, 1e-15);
  DecodeSsdBox(anchor, loc, variances, true, box);
  EXPECT_EQ(box[1], 0);
  // std::min(1, NaN) is 1 and std::max(0, 1) is 1: MXNet's clip of NaN.
  const float nan_loc[4] = {NAN, 0, 0, 0},
              fanchor[4] = {0.1f, 0.1f, 0.5f, 0.5f};
  const float fvar[4] = {0.1f, 0.1f, 0.2f, 0.2f};
  float fbox[4];
  DecodeSsdBox(fanchor, nan_loc, fvar, true, fbox);
  EXPECT_EQ(fbox[0], 1.0f);
  EXPECT_EQ(fbox[2], 1.0f);
  DecodeSsdBox(fanchor, nan_loc, fvar, false, fbox);
  EXPECT_TRUE(std::isnan(fbox[0]));
}

TEST(SsdOverlap, IntersectionOverUnion) {
  const double a[4] = {0, 0, 2, 2}, b[4] = {1, 1, 3, 3};
  EXPECT_DOUBLE_EQ(SsdOverlap(a, b), 1.0 / 7);
  EXPECT_DOUBLE_EQ(SsdOverlap(a, a), 1);
  const double apart[4] = {5, 5, 6, 6};
  EXPECT_EQ(SsdOverlap(a, apart), 0);
  const double point[4] = {1, 1, 1, 1};  // Union 0: overlap 0, not NaN.
  EXPECT_EQ(SsdOverlap(point, point), 0);
}

TEST(SsdTargetOverlap, UnguardedIntersectionOverUnion) {
  const double anchor[4] = {0, 0, 2, 2}, gt[4] = {1, 1, 3, 3};
  EXPECT_DOUBLE_EQ(SsdTargetOverlap(anchor, gt), 1.0 / 7);
  const double apart[4] = {5, 5, 6, 6};
  EXPECT_EQ(SsdTargetOverlap(anchor, apart), 0);
  const double point[4] = {1, 1, 1, 1};  // 0 / 0, as MXNet's.
  EXPECT_TRUE(std::isnan(SsdTargetOverlap(point, point)));
}

TEST(EncodeSsdBox, InvertsDecodeSsdBox) {
  const float anchor[4] = {0.1f, 0.2f, 0.5f, 0.4f};
  const float gt[4] = {0.15f, 0.1f, 0.6f, 0.5f};
  const float variances[4] = {0.1f, 0.1f, 0.2f, 0.2f};
  float loc[4], back[4];
  EncodeSsdBox(anchor, gt, variances, loc);
  // Centre x 0.375 vs 0.3 over width 0.4 and variance 0.1.
  EXPECT_NEAR(loc[0], 0.075 / 0.4 / 0.1, 1e-5);
  EXPECT_NEAR(loc[2], std::log(0.45 / 0.4) / 0.2, 1e-5);
  DecodeSsdBox(anchor, loc, variances, false, back);
  for (int k = 0; k < 4; ++k) EXPECT_NEAR(back[k], gt[k], 1e-6) << k;
}

TEST(SsdBackgroundProb, SoftmaxOfClassZero) {
  const double scores[3] = {1, 2, 3};
  const double p =
      SsdBackgroundProb<double>(3, [&](int64_t k) { return scores[k]; });
  EXPECT_NEAR(p,
              std::exp(1.0) / (std::exp(1.0) + std::exp(2.0) + std::exp(3.0)),
              1e-15);
  const double huge[2] = {1000, 1000};  // The maximum is taken out first.
  EXPECT_DOUBLE_EQ(
      SsdBackgroundProb<double>(2, [&](int64_t k) { return huge[k]; }), 0.5);
}

}  // namespace
}  // namespace mx_math
