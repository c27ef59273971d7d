// _contrib_MultiBoxTarget against MXNet's matching worked out by hand:
// bipartite matches, threshold matches, negative mining, encoding.
#include <cmath>
#include <vector>

#include "base/error.h"
#include "gtest/gtest.h"
#include "imperative/nd.h"
#include "testing/op_test_util.h"

namespace mx {
namespace testing {
namespace {

// A0 equals ground truth 0, A1 overlaps ground truth 1 (IoU 0.64), A2
// overlaps ground truth 0 (IoU 0.818); A3..A5 overlap nothing.
const std::vector<double> kAnchors = {0,    0, 0.5,  0.5, 0.5, 0.5, 1,   1,
                                      0.05, 0, 0.55, 0.5, 0,   0.5, 0.5, 1,
                                      0.7,  0, 0.9,  0.2, 0.2, 0.7, 0.3, 0.8};
// Image 0: class 2 at A0's box, class 0 at (0.6, 0.6, 1, 1), then padding;
// image 1: no ground truth.
const std::vector<double> kLabels = {
    2,  0,  0,  0.5, 0.5, 0,  0.6, 0.6, 1,  1,  -1, -1, -1, -1, -1,
    -1, -1, -1, -1,  -1,  -1, -1,  -1,  -1, -1, -1, -1, -1, -1, -1};
// Background scores 0, 0, 0, 2, -1, 0.5 against class scores 0.
std::vector<double> ClsPred() {
  std::vector<double> v = {0, 0, 0, 2, -1, 0.5, 0, 0, 0, 0, 0, 0};
  v.insert(v.end(), v.begin(), v.end());
  return v;
}

std::vector<std::vector<double>> Targets(AttrDict attrs) {
  const std::vector<NDArray> out =
      nd::CallMulti("_contrib_MultiBoxTarget",
                    {ArrayOf({1, 6, 4}, kAnchors), ArrayOf({2, 3, 5}, kLabels),
                     ArrayOf({2, 2, 6}, ClsPred())},
                    attrs);
  std::vector<std::vector<double>> v;
  for (const NDArray& o : out) v.push_back(ToDouble(o));
  return v;
}

std::vector<double> Slice(const std::vector<double>& v, size_t begin,
                          size_t n) {
  return std::vector<double>(v.begin() + begin, v.begin() + begin + n);
}

TEST(MultiBoxTarget, MatchesEncodesAndTakesAllNegatives) {
  const std::vector<std::vector<double>> t = Targets({});
  ASSERT_EQ(t.size(), 3u);
  ASSERT_EQ(t[0].size(), 48u);
  // Classes + 1 for positives (A0, A1 bipartite; A2 by threshold), 0 for
  // the rest; image 1 has no ground truth: everything ignored.
  EXPECT_EQ(Slice(t[2], 0, 6), (std::vector<double>{3, 1, 3, 0, 0, 0}));
  EXPECT_EQ(Slice(t[2], 6, 6), std::vector<double>(6, -1));
  const double dw = std::log(0.8) / 0.2;  // Ground truth 1 is 0.4 wide.
  EXPECT_TRUE(AllClose(Slice(t[0], 0, 12),
                       {0, 0, 0, 0, 1, 1, dw, dw, -1, 0, 0, 0}, 1e-5, 1e-5));
  EXPECT_EQ(Slice(t[0], 12, 36), std::vector<double>(36, 0));
  std::vector<double> mask(12, 1);
  mask.resize(48, 0);
  EXPECT_EQ(t[1], mask);
}

TEST(MultiBoxTarget, ThresholdDecidesExtraPositives) {
  const std::vector<std::vector<double>> t =
      Targets({{"overlap_threshold", "0.9"}});
  EXPECT_EQ(Slice(t[2], 0, 6), (std::vector<double>{3, 1, 0, 0, 0, 0}));
  EXPECT_EQ(Slice(t[1], 8, 4), std::vector<double>(4, 0));  // A2 unmasked.
}

TEST(MultiBoxTarget, NegativeMiningPicksTheLeastBackgroundLike) {
  // 3 positives x 0.5 = 1 negative among the candidates A3..A5: A4, whose
  // background probability is lowest. The others are ignored.
  std::vector<std::vector<double>> t =
      Targets({{"negative_mining_ratio", "0.5"}});
  EXPECT_EQ(Slice(t[2], 0, 6), (std::vector<double>{3, 1, 3, -1, 0, -1}));
  // Ratio 3 wants 9 but only 3 candidates exist: all of them (MXNet asserts).
  t = Targets({{"negative_mining_ratio", "3"}, {"ignore_label", "-2"}});
  EXPECT_EQ(Slice(t[2], 0, 6), (std::vector<double>{3, 1, 3, 0, 0, 0}));
  EXPECT_EQ(Slice(t[2], 6, 6), std::vector<double>(6, -2));
}

TEST(MultiBoxTarget, BipartiteTiesTakeTheFirstAnchor) {
  // Two anchors equal to the one ground truth; threshold matching off.
  const std::vector<NDArray> out = nd::CallMulti(
      "_contrib_MultiBoxTarget",
      {ArrayOf({1, 2, 4}, {0, 0, 1, 1, 0, 0, 1, 1}),
       ArrayOf({1, 1, 5}, {4, 0, 0, 1, 1}), ArrayOf({1, 2, 2}, {0, 0, 0, 0})},
      {{"overlap_threshold", "0"}});
  EXPECT_EQ(ToDouble(out[2]), (std::vector<double>{5, 0}));
}

TEST(MultiBoxTarget, BadInputsAreTypedErrors) {
  std::vector<double> labels = kLabels;
  labels[11] = 0.3;  // Image 0's -1 row with a coordinate that is not -1.
  ExpectError<InvalidArgument>(
      [&] {
        nd::CallMulti("_contrib_MultiBoxTarget",
                      {ArrayOf({1, 6, 4}, kAnchors), ArrayOf({2, 3, 5}, labels),
                       ArrayOf({2, 2, 6}, ClsPred())},
                      {})[0]
            .WaitToRead();
      },
      {"_contrib_MultiBoxTarget", "label[0, 2]"});
  ExpectError<InvalidArgument>(
      [] {
        Targets({{"variances", "(1, 1)"}});
      },
      {"variances"});
  ExpectError<ShapeError>(
      [] {
        nd::CallMulti(
            "_contrib_MultiBoxTarget",
            {ArrayOf({1, 6, 4}, kAnchors), ArrayOf({2, 3, 5}, kLabels),
             ArrayOf({2, 2, 5}, std::vector<double>(20, 0))},
            {});
      },
      {"(B, classes, A)"});
  // 2^15 anchors x 2^14 rows: 2^29 overlaps from 3 MB of inputs.
  ExpectError<InvalidArgument>(
      [] {
        nd::CallMulti("_contrib_MultiBoxTarget",
                      {nd::zeros({1, 1 << 15, 4}), nd::zeros({1, 1 << 14, 5}),
                       nd::zeros({1, 2, 1 << 15})},
                      {});
      },
      {"overlaps allowed per image"});
}

}  // namespace
}  // namespace testing
}  // namespace mx
