// _contrib_MultiBoxDetection against MXNet's rules worked out by hand:
// decoding, the score threshold, sorting, suppression, nms_topk's layout.
#include <algorithm>
#include <cmath>
#include <vector>

#include "base/error.h"
#include "gtest/gtest.h"
#include "imperative/nd.h"
#include "testing/op_test_util.h"

namespace mx {
namespace testing {
namespace {

// Anchors 0 and 1 overlap (IoU 0.905), anchor 2 stands apart.
const std::vector<double> kAnchors = {0.1,  0.1, 0.5, 0.5, 0.12, 0.1,
                                      0.52, 0.5, 0.6, 0.6, 0.9,  0.9};

NDArray Detect(const std::vector<double>& cls, int64_t classes,
               const std::vector<double>& loc, AttrDict attrs,
               DType dtype = DType::kFloat32) {
  const int64_t anchors = 3;
  const int64_t batches = static_cast<int64_t>(loc.size()) / (anchors * 4);
  return nd::Call("_contrib_MultiBoxDetection",
                  {ArrayOf({batches, classes, anchors}, cls, dtype),
                   ArrayOf({batches, anchors * 4}, loc, dtype),
                   ArrayOf({1, anchors, 4}, kAnchors, dtype)},
                  attrs);
}

std::vector<double> Row(double id, double score, int anchor) {
  std::vector<double> row = {id, score};
  row.insert(row.end(), kAnchors.begin() + anchor * 4,
             kAnchors.begin() + anchor * 4 + 4);
  return row;
}

std::vector<double> Rows(const std::vector<std::vector<double>>& rows) {
  std::vector<double> all;
  for (const auto& r : rows) all.insert(all.end(), r.begin(), r.end());
  return all;
}

const std::vector<double> kZeroLoc(12, 0.0);  // Boxes = anchors.
// Background, then class 0's scores 0.6, 0.9, 0.8.
const std::vector<double> kOneClass = {0.1, 0.1, 0.1, 0.6, 0.9, 0.8};
const std::vector<double> kNoRow(6, -1.0);

TEST(MultiBoxDetection, DecodesOffsetsWithVariancesAndClips) {
  // Anchor 0 (centre (0.3, 0.3), 0.4 wide and high) moved by (1, -1) * 0.1 *
  // 0.4 and its height doubled (exp(dh * 0.2) = 2); batch item 1 unmoved.
  std::vector<double> loc = kZeroLoc;
  loc[0] = 1;
  loc[1] = -1;
  loc[3] = std::log(2.0) / 0.2;
  loc.insert(loc.end(), kZeroLoc.begin(), kZeroLoc.end());
  std::vector<double> cls = {0.9, 0.9, 0.9, 0.5, 0, 0};
  cls.insert(cls.end(), cls.begin(), cls.end());
  NDArray y = Detect(cls, 2, loc, {});
  ASSERT_EQ(y.shape(), TShape({2, 3, 6}));
  std::vector<double> expected =
      Rows({{0, 0.5, 0.14, 0, 0.54, 0.66}, kNoRow, kNoRow});
  const std::vector<double> second = Rows({Row(0, 0.5, 0), kNoRow, kNoRow});
  expected.insert(expected.end(), second.begin(), second.end());
  EXPECT_TRUE(AllClose(ToDouble(y), expected, 1e-5, 1e-6));
  y = Detect(cls, 2, loc, {{"clip", "False"}});
  EXPECT_NEAR(ToDouble(y)[3], 0.26 - 0.4, 1e-6);  // y0 below 0.
}

TEST(MultiBoxDetection, SortsSuppressesAndKeepsSuppressedRowsInPlace) {
  for (DType dtype : {DType::kFloat32, DType::kFloat64}) {
    const NDArray y =
        Detect(kOneClass, 2, kZeroLoc, {{"clip", "False"}}, dtype);
    EXPECT_TRUE(AllClose(
        ToDouble(y), Rows({Row(0, 0.9, 1), Row(0, 0.8, 2), Row(-1, 0.6, 0)}),
        1e-5, 1e-6))
        << static_cast<int>(dtype);
  }
  // A looser threshold keeps both overlapping boxes.
  const NDArray loose =
      Detect(kOneClass, 2, kZeroLoc, {{"nms_threshold", "0.95"}});
  EXPECT_TRUE(AllClose(ToDouble(loose),
                       Rows({Row(0, 0.9, 1), Row(0, 0.8, 2), Row(0, 0.6, 0)}),
                       1e-5, 1e-6));
}

TEST(MultiBoxDetection, ClassesSuppressOnlyTheirOwnUnlessForced) {
  // Anchor 0 is class 1's (0.7), anchor 1 class 0's (0.9), anchor 2 none.
  const std::vector<double> cls = {0.1,   0.1, 0.9, 0.2,  0.9,
                                   0.005, 0.7, 0.0, 0.005};
  NDArray y = Detect(cls, 3, kZeroLoc, {});
  EXPECT_TRUE(AllClose(
      ToDouble(y), Rows({Row(0, 0.9, 1), Row(1, 0.7, 0), kNoRow}), 1e-5, 1e-6));
  y = Detect(cls, 3, kZeroLoc, {{"force_suppress", "True"}});
  EXPECT_TRUE(AllClose(ToDouble(y),
                       Rows({Row(0, 0.9, 1), Row(-1, 0.7, 0), kNoRow}), 1e-5,
                       1e-6));
}

TEST(MultiBoxDetection, ThresholdDropsWeakAnchors) {
  const std::vector<double> cls = {0.1, 0.1, 0.1, 0.6, 0.005, 0.8};
  const NDArray y = Detect(cls, 2, kZeroLoc, {});
  EXPECT_TRUE(AllClose(
      ToDouble(y), Rows({Row(0, 0.8, 2), Row(0, 0.6, 0), kNoRow}), 1e-5, 1e-6));
  // Only the background class: no detections at all.
  EXPECT_EQ(ToDouble(Detect({0.9, 0.9, 0.9}, 1, kZeroLoc, {})),
            Rows({kNoRow, kNoRow, kNoRow}));
}

TEST(MultiBoxDetection, TopkRowsAndNoNmsLayoutsAsMxnet) {
  // nms_topk=1: the best row, then the unsorted detections with class -1.
  NDArray y = Detect(kOneClass, 2, kZeroLoc, {{"nms_topk", "1"}});
  EXPECT_TRUE(AllClose(ToDouble(y),
                       Rows({Row(0, 0.9, 1), Row(-1, 0.9, 1), Row(-1, 0.8, 2)}),
                       1e-5, 1e-6));
  // nms_threshold outside (0, 1]: detections in anchor order, unsorted.
  y = Detect(kOneClass, 2, kZeroLoc, {{"nms_threshold", "0"}});
  EXPECT_TRUE(AllClose(ToDouble(y),
                       Rows({Row(0, 0.6, 0), Row(0, 0.9, 1), Row(0, 0.8, 2)}),
                       1e-5, 1e-6));
}

TEST(MultiBoxDetection, DecodesMultiBoxTargetsBackToTheGroundTruth) {
  // SSD's three ops together: anchors of a 4 x 4 map, the targets of two
  // ground-truth boxes, and those targets fed back as predictions.
  const NDArray anchors =
      nd::Call("_contrib_MultiBoxPrior", {RandomArray({1, 1, 4, 4})},
               {{"sizes", "(0.3, 0.5)"}, {"ratios", "(1, 2)"}});
  const int64_t a = anchors.shape()[1];                         // 4 * 4 * 3
  const std::vector<double> boxes = {0, 0.1, 0.15, 0.45, 0.5,   // class 0
                                     2, 0.5, 0.4,  0.95, 0.9};  // class 2
  const std::vector<NDArray> targets = nd::CallMulti(
      "_contrib_MultiBoxTarget",
      {anchors, ArrayOf({1, 2, 5}, boxes), RandomArray({1, 4, a})}, {});
  const std::vector<double> cls_target = ToDouble(targets[2]);
  // Probability 1 for each anchor's target class (background elsewhere).
  std::vector<double> prob(4 * a, 0.0);
  for (int64_t j = 0; j < a; ++j) {
    prob[static_cast<int64_t>(std::max(0.0, cls_target[j])) * a + j] = 1;
  }
  const NDArray y = nd::Call(
      "_contrib_MultiBoxDetection",
      {ArrayOf({1, 4, a}, prob), targets[0].Reshape({1, a * 4}), anchors},
      {{"clip", "False"}, {"nms_threshold", "0"}});
  const std::vector<double> rows = ToDouble(y);
  int64_t detections = 0;
  for (int64_t r = 0; r < a && rows[r * 6] >= 0; ++r, ++detections) {
    const int64_t id = static_cast<int64_t>(rows[r * 6]);
    ASSERT_TRUE(id == 0 || id == 2) << r;
    const double* want = &boxes[(id == 0 ? 0 : 5) + 1];
    EXPECT_TRUE(
        AllClose(std::vector<double>(&rows[r * 6 + 2], &rows[r * 6 + 6]),
                 std::vector<double>(want, want + 4), 1e-4, 1e-5))
        << "row " << r;
  }
  int64_t positives = 0;
  for (double c : cls_target) positives += c > 0;
  EXPECT_EQ(detections, positives);
  EXPECT_GE(positives, 2);
}

TEST(MultiBoxDetection, BadInputsAreTypedErrors) {
  ExpectError<InvalidArgument>(
      [] {
        Detect(kOneClass, 2, kZeroLoc, {{"variances", "(0.1, 0.1, 0.2)"}});
      },
      {"_contrib_MultiBoxDetection", "variances"});
  ExpectError<NotImplemented>(
      [] {
        Detect(kOneClass, 2, kZeroLoc, {{"background_id", "1"}});
      },
      {"background_id=1"});
  ExpectError<ShapeError>(
      [] {
        nd::Call("_contrib_MultiBoxDetection",
                 {RandomArray({1, 2, 3}), RandomArray({1, 8}),
                  RandomArray({1, 3, 4})},
                 {});
      },
      {"loc_pred", "(1,8)"});
  EXPECT_THROW(nd::Call("_contrib_MultiBoxDetection",
                        {RandomArray({1, 2, 3}), RandomArray({2, 12}),
                         RandomArray({1, 3, 4})},
                        {}),
               ShapeError);
  EXPECT_THROW(nd::Call("_contrib_MultiBoxDetection",
                        {RandomArray({1, 2, 3}), RandomArray({1, 12}),
                         RandomArray({3, 4})},
                        {}),
               ShapeError);
}

}  // namespace
}  // namespace testing
}  // namespace mx
