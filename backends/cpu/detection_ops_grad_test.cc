// Ops of MXNet's detection and classification models: _contrib_box_nms,
// _contrib_ROIAlign, ROIPooling (gradient), L2Normalization and
// _contrib_AdaptiveAvgPooling2D.
// Forward against values worked out here, gradients, attribute errors.
#include <cmath>
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

// Rows (id, score, x0, y0, x1, y1).
const std::vector<double> kBoxes = {
    0, 0.5,  0,  0,  10, 10,  // overlaps the best box of class 0: IoU 0.81
    0, 0.9,  1,  1,  10, 10,  // best
    1, 0.8,  0,  0,  10, 10,  // other class
    0, 0.01, 20, 20, 30, 30,  // below valid_thresh
    0, 0.6,  20, 20, 30, 30,  // disjoint
};

TEST(BoxNMS, SuppressesWithinAClassAndSortsByScore) {
  const NDArray x = ArrayOf({1, 5, 6}, kBoxes);
  const NDArray y = nd::Call("_contrib_box_nms", {x},
                             {{"overlap_thresh", "0.5"},
                              {"valid_thresh", "0.05"},
                              {"id_index", "0"},
                              {"score_index", "1"},
                              {"coord_start", "2"}});
  std::vector<double> want = {0, 0.9, 1,  1, 10,  10, 1,  0.8, 0,
                              0, 10,  10, 0, 0.6, 20, 20, 30,  30};
  want.resize(30, -1.0);
  EXPECT_TRUE(AllClose(ToDouble(y), want, 1e-6));
}

TEST(BoxNMS, ForceSuppressAndTopk) {
  const NDArray x = ArrayOf({5, 6}, kBoxes);
  const AttrDict base{{"id_index", "0"}, {"force_suppress", "True"}};
  const std::vector<double> forced =
      ToDouble(nd::Call("_contrib_box_nms", {x}, base));
  // Class 1's box now falls to the best box too; the 0.01 box stays
  // (valid_thresh 0) but falls to the 0.6 box.
  std::vector<double> want = {0, 0.9, 1, 1, 10, 10, 0, 0.6, 20, 20, 30, 30};
  want.resize(30, -1.0);
  EXPECT_TRUE(AllClose(forced, want, 1e-6));
  AttrDict top = base;
  top["topk"] = "1";
  std::vector<double> one = {0, 0.9, 1, 1, 10, 10};
  one.resize(30, -1.0);
  EXPECT_TRUE(
      AllClose(ToDouble(nd::Call("_contrib_box_nms", {x}, top)), one, 1e-6));
}

// MXNet's rules: topk=0 gives the boxes as they are (unsorted, unfiltered,
// unconverted, each row its own source); class ids compare as integers.
TEST(BoxNMS, TopkZeroLeavesTheBoxesAndIdsCompareAsIntegers) {
  const NDArray x = ArrayOf({5, 6}, kBoxes, DType::kFloat64);
  const AttrDict zero{
      {"topk", "0"}, {"valid_thresh", "0.05"}, {"out_format", "center"}};
  EXPECT_TRUE(
      AllClose(ToDouble(nd::Call("_contrib_box_nms", {x}, zero)), kBoxes));
  std::vector<double> head(30);
  for (size_t i = 0; i < head.size(); ++i) head[i] = static_cast<double>(i);
  EXPECT_TRUE(AllClose(Gradients("_contrib_box_nms", zero, {x},
                                 {ArrayOf({5, 6}, head, DType::kFloat64)})[0],
                       head));
  // Class ids 0.2 and 0.7 are both class 0: the overlapped box falls.
  const NDArray two = ArrayOf({2, 6}, {0.2, 0.9, 0, 0, 10, 10,  //
                                       0.7, 0.8, 0, 0, 10, 10});
  std::vector<double> want = {0.2, 0.9, 0, 0, 10, 10};
  want.resize(12, -1.0);
  EXPECT_TRUE(AllClose(
      ToDouble(nd::Call("_contrib_box_nms", {two}, {{"id_index", "0"}})), want,
      1e-6));
}

TEST(BoxNMS, CenterFormatIsConverted) {
  const NDArray x = ArrayOf({1, 6}, {0, 0.9, 5, 5, 4, 2});
  const NDArray y =
      nd::Call("_contrib_box_nms", {x},
               {{"in_format", "center"}, {"out_format", "corner"}});
  EXPECT_TRUE(AllClose(ToDouble(y), {0, 0.9, 3, 4, 7, 6}, 1e-6));
}

TEST(BoxNMS, GradientGoesBackToTheSourceRows) {
  const NDArray x = ArrayOf({5, 6}, kBoxes, DType::kFloat64);
  std::vector<double> head(30);
  for (size_t i = 0; i < head.size(); ++i) head[i] = static_cast<double>(i);
  const auto g = Gradients("_contrib_box_nms", {{"id_index", "0"}}, {x},
                           {ArrayOf({5, 6}, head, DType::kFloat64)});
  // Output rows come from rows 1, 2 and 4; rows 0 and 3 are suppressed
  // by rows 1 and 4, so they get nothing.
  std::vector<double> want(30, 0.0);
  const int src[] = {1, 2, 4};
  for (int r = 0; r < 3; ++r) {
    for (int j = 0; j < 6; ++j) want[src[r] * 6 + j] = head[r * 6 + j];
  }
  EXPECT_TRUE(AllClose(g[0], want));
}

TEST(BoxNMS, BadAttributesAreTypedErrors) {
  const NDArray x = ArrayOf({1, 6}, {0, 0.9, 5, 5, 4, 2});
  ExpectError<InvalidArgument>(
      [&] {
        nd::Call("_contrib_box_nms", {x}, {{"coord_start", "3"}});
      },
      {"_contrib_box_nms", "coord_start"});
  ExpectError<InvalidArgument>(
      [&] {
        nd::Call("_contrib_box_nms", {x}, {{"in_format", "xywh"}});
      },
      {"_contrib_box_nms", "in_format", "xywh"});
}

// The backward op's kernel indexes data as (..., boxes, values) and reads
// source_row as int32 (..., boxes); direct calls with other inputs are
// typed errors (a fuzz finding: a rank-0 data reached the kernel).
TEST(BoxNMS, BackwardChecksItsInputs) {
  const NDArray g = RandomArray({2, 6}), data = RandomArray({2, 6});
  const NDArray rows = ArrayOf({2}, {1, 0}, DType::kInt32);
  const NDArray scalar = ArrayOf(TShape::Scalar(), {1});
  ExpectError<ShapeError>(
      [&] {
        nd::Call("_backward_contrib_box_nms", {scalar, scalar, scalar});
      },
      {"_backward_contrib_box_nms", "data"});
  ExpectError<ShapeError>(
      [&] {
        nd::Call("_backward_contrib_box_nms",
                 {g, ArrayOf({3}, {0, 1, 2}, DType::kInt32), data});
      },
      {"_backward_contrib_box_nms", "source_row"});
  ExpectError<DTypeError>(
      [&] {
        nd::Call("_backward_contrib_box_nms", {g, ArrayOf({2}, {1, 0}), data});
      },
      {"_backward_contrib_box_nms", "source_row"});
  // Rows swapped: data_grad row s is out_grad row r where source_row[r]=s.
  const std::vector<double> dg =
      ToDouble(nd::Call("_backward_contrib_box_nms", {g, rows, data}));
  const std::vector<double> gv = ToDouble(g);
  for (int j = 0; j < 6; ++j) {
    EXPECT_EQ(dg[j], gv[6 + j]);
    EXPECT_EQ(dg[6 + j], gv[j]);
  }
}

TEST(ROIAlign, AveragesBilinearSamples) {
  // A 1x1x4x4 ramp x + 4y is linear, so every bilinear sample inside is
  // exact and a bin's average is the ramp at the bin's centre.
  std::vector<double> ramp(16);
  for (int i = 0; i < 16; ++i) ramp[i] = (i % 4) + 4 * (i / 4);
  const NDArray x = ArrayOf({1, 1, 4, 4}, ramp);
  const NDArray rois = ArrayOf({1, 5}, {0, 0, 0, 2, 2});
  const NDArray y = nd::Call("_contrib_ROIAlign", {x, rois},
                             {{"pooled_size", "(2,2)"},
                              {"spatial_scale", "1"},
                              {"sample_ratio", "2"}});
  ASSERT_EQ(y.shape(), TShape({1, 1, 2, 2}));
  // Bin centres at (0.5, 0.5), (1.5, 0.5), (0.5, 1.5), (1.5, 1.5).
  EXPECT_TRUE(AllClose(ToDouble(y), {2.5, 3.5, 6.5, 7.5}, 1e-5));
}

TEST(ROIAlign, NegativeBatchIndexGivesZerosAndGradientChecks) {
  const NDArray x = RandomArray({2, 2, 5, 5}, DType::kFloat64, -1, 1, 1);
  const NDArray rois =
      ArrayOf({2, 5}, {1, 0.3, 0.6, 3.7, 3.1, -1, 0, 0, 2, 2}, DType::kFloat64);
  const AttrDict attrs{{"pooled_size", "(2,3)"}, {"spatial_scale", "0.9"}};
  const std::vector<double> y =
      ToDouble(nd::Call("_contrib_ROIAlign", {x, rois}, attrs));
  for (size_t i = 12; i < 24; ++i) EXPECT_EQ(y[i], 0.0);
  GradCheckOptions data_only;
  data_only.skip = {1};
  EXPECT_TRUE(CheckGradient("_contrib_ROIAlign", attrs, {x, rois}, data_only));
}

TEST(ROIAlign, BadAttributesAreTypedErrors) {
  const NDArray x = RandomArray({1, 1, 4, 4});
  const NDArray rois = ArrayOf({1, 5}, {0, 0, 0, 2, 2});
  ExpectError<InvalidArgument>(
      [&] {
        nd::Call("_contrib_ROIAlign", {x, rois},
                 {{"pooled_size", "(2,)"}, {"spatial_scale", "1"}});
      },
      {"_contrib_ROIAlign", "pooled_size"});
  ExpectError<InvalidArgument>(
      [&] {
        nd::Call("_contrib_ROIAlign", {x, rois}, {{"pooled_size", "(2,2)"}});
      },
      {"_contrib_ROIAlign", "spatial_scale"});
  ExpectError<InvalidArgument>(
      [&] {
        ToDouble(nd::Call("_contrib_ROIAlign",
                          {x, ArrayOf({1, 5}, {3, 0, 0, 2, 2})},
                          {{"pooled_size", "(2,2)"}, {"spatial_scale", "1"}}));
      },
      {"_contrib_ROIAlign", "batch index"});
}

TEST(ROIAlign, HostileRegionsAreErrorsNotEndlessLoops) {
  const NDArray x = RandomArray({1, 1, 4, 4});
  for (const std::vector<double>& roi : {std::vector<double>{0, 0, 0, 1e30, 2},
                                         {0, NAN, 0, 2, 2},
                                         {0, 0, 0, INFINITY, 2}}) {
    ExpectError<InvalidArgument>(
        [&] {
          ToDouble(
              nd::Call("_contrib_ROIAlign", {x, ArrayOf({1, 5}, roi)},
                       {{"pooled_size", "(2,2)"}, {"spatial_scale", "1"}}));
        },
        {"_contrib_ROIAlign", "rois"});
  }
  ExpectError<InvalidArgument>(
      [&] {
        ToDouble(nd::Call("_contrib_ROIAlign",
                          {x, ArrayOf({1, 5}, {0, 0, 0, 2, 2})},
                          {{"pooled_size", "(2,2)"},
                           {"spatial_scale", "1"},
                           {"sample_ratio", "4611686018427387904"}}));
      },
      {"_contrib_ROIAlign", "sample_ratio"});
}

TEST(L2Normalization, EveryMode) {
  const NDArray x = RandomArray({2, 3, 2}, DType::kFloat64, -1, 1, 2);
  const std::vector<double> v = ToDouble(x);
  // instance: one norm per sample.
  std::vector<double> want(v.size());
  for (int n = 0; n < 2; ++n) {
    double s = 0;
    for (int i = 0; i < 6; ++i) s += v[n * 6 + i] * v[n * 6 + i];
    for (int i = 0; i < 6; ++i)
      want[n * 6 + i] = v[n * 6 + i] / std::sqrt(s + 1e-10);
  }
  EXPECT_TRUE(AllClose(ToDouble(nd::Call("L2Normalization", {x})), want));
  // channel: one norm per (n, position) over the 3 channels.
  for (int n = 0; n < 2; ++n) {
    for (int p = 0; p < 2; ++p) {
      double s = 0;
      for (int c = 0; c < 3; ++c) s += std::pow(v[(n * 3 + c) * 2 + p], 2);
      for (int c = 0; c < 3; ++c) {
        want[(n * 3 + c) * 2 + p] =
            v[(n * 3 + c) * 2 + p] / std::sqrt(s + 1e-3);
      }
    }
  }
  EXPECT_TRUE(
      AllClose(ToDouble(nd::Call("L2Normalization", {x},
                                 {{"mode", "channel"}, {"eps", "0.001"}})),
               want));
  for (const char* mode : {"instance", "channel", "spatial"}) {
    EXPECT_TRUE(CheckGradient("L2Normalization", {{"mode", mode}}, {x}))
        << mode;
  }
  ExpectError<InvalidArgument>(
      [&] {
        nd::Call("L2Normalization", {x}, {{"mode", "batch"}});
      },
      {"L2Normalization", "mode", "batch"});
}

TEST(AdaptiveAvgPooling2D, UnevenCellsOverlap) {
  const NDArray x = ArrayOf({1, 1, 3, 1}, {1, 2, 4});
  // 3 rows into 2 cells: [0, 2) and [1, 3).
  const NDArray y = nd::Call("_contrib_AdaptiveAvgPooling2D", {x},
                             {{"output_size", "(2,1)"}});
  EXPECT_TRUE(AllClose(ToDouble(y), {1.5, 3}));
  const NDArray g =
      nd::Call("_contrib_AdaptiveAvgPooling2D", {RandomArray({2, 3, 4, 5})},
               {{"output_size", "1"}});
  EXPECT_EQ(g.shape(), TShape({2, 3, 1, 1}));
  EXPECT_TRUE(CheckGradient("_contrib_AdaptiveAvgPooling2D",
                            {{"output_size", "(2,3)"}},
                            {RandomArray({1, 2, 5, 4}, DType::kFloat64)}));
  ExpectError<InvalidArgument>(
      [&] {
        nd::Call("_contrib_AdaptiveAvgPooling2D", {x},
                 {{"output_size", "(0,1)"}});
      },
      {"_contrib_AdaptiveAvgPooling2D", "output_size"});
  ExpectError<ShapeError>(
      [&] {
        nd::Call("_contrib_AdaptiveAvgPooling2D", {RandomArray({2, 3})});
      },
      {"_contrib_AdaptiveAvgPooling2D", "NCHW"});
}

TEST(ROIPooling, GradientGoesToEachBinsMaximum) {
  // Distinct values: every maximum is unique.
  const NDArray x = RandomArray({2, 2, 6, 5}, DType::kFloat32, -1, 1, 9);
  const NDArray rois =
      ArrayOf({3, 5}, {0, 0, 0, 4, 5, 1, 1, 2, 3, 5, 1, 0, 0, 1, 1});
  GradCheckOptions o;
  o.skip = {1};  // rois get no gradient.
  EXPECT_TRUE(CheckGradient("ROIPooling",
                            {{"pooled_size", "(2, 3)"}, {"spatial_scale", "1"}},
                            {x, rois}, o));
  // Overlapping regions add up at a shared maximum.
  const NDArray peak = ArrayOf({1, 1, 2, 2}, {0, 9, 0, 0});
  auto g = Gradients("ROIPooling",
                     {{"pooled_size", "(1, 1)"}, {"spatial_scale", "1"}},
                     {peak, ArrayOf({2, 5}, {0, 0, 0, 1, 1, 0, 1, 0, 1, 1})},
                     {ArrayOf({2, 1, 1, 1}, {2, 3})});
  EXPECT_EQ(g[0], (std::vector<double>{0, 5, 0, 0}));
  EXPECT_EQ(g[1], std::vector<double>(10, 0));
}

}  // namespace
}  // namespace testing
}  // namespace mx
