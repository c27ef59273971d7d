// The CTC recursions (ctc_math.h) on the host: log-space addition, the
// blank-extended states and a two-frame lattice worked out by hand.
#include "backends/common/ctc_math.h"

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "backends/common/ctc_labels.h"
#include "gtest/gtest.h"

namespace mx_math {
namespace {

TEST(LogAddExp, AddsProbabilitiesInLogSpace) {
  EXPECT_NEAR(LogAddExp(std::log(0.25), std::log(0.5)), std::log(0.75), 1e-15);
  EXPECT_EQ(LogAddExp(-INFINITY, -INFINITY), -INFINITY);
  EXPECT_EQ(LogAddExp(-INFINITY, 1.5), 1.5);
  EXPECT_NEAR(LogAddExp(1000, 1000), 1000 + std::log(2.0), 1e-12);
  EXPECT_TRUE(std::isnan(LogAddExp(NAN, 0)));
}

TEST(CtcStates, BlanksBetweenLabelsAndSkipsBetweenDifferentOnes) {
  const int64_t labels[] = {3, 3, 1};  // States: _ 3 _ 3 _ 1 _
  EXPECT_EQ(CtcSymbol(labels, 0, 0), 0);
  EXPECT_EQ(CtcSymbol(labels, 3, 0), 3);
  EXPECT_EQ(CtcSymbol(labels, 5, 0), 1);
  EXPECT_FALSE(CtcCanSkip(labels, 1));  // The first label.
  EXPECT_FALSE(CtcCanSkip(labels, 3));  // A repeat needs its blank.
  EXPECT_TRUE(CtcCanSkip(labels, 5));
  EXPECT_FALSE(CtcCanSkip(labels, 4));  // Blanks never skip.
}

TEST(CtcLattice, TwoFramesOneLabel) {
  // Classes (blank, a): frame probabilities (0.6, 0.4) then (0.3, 0.7).
  // Paths for "a": a a, a _, _ a: 0.28 + 0.12 + 0.42 = 0.82.
  const double lp0[2] = {std::log(0.6), std::log(0.4)};
  const double lp1[2] = {std::log(0.3), std::log(0.7)};
  const int64_t labels[] = {1};
  double a0[3], a1[3];
  for (int s = 0; s < 3; ++s) a0[s] = CtcAlphaStart(lp0, labels, s, 0);
  for (int s = 0; s < 3; ++s) a1[s] = CtcAlphaAt(a0, lp1, labels, s, 0);
  EXPECT_NEAR(std::exp(a0[0]), 0.6, 1e-15);
  EXPECT_NEAR(std::exp(a0[1]), 0.4, 1e-15);
  EXPECT_EQ(a0[2], -INFINITY);
  const double log_p = LogAddExp(a1[1], a1[2]);
  EXPECT_NEAR(std::exp(log_p), 0.82, 1e-15);
  double b1[3], b0[3];
  for (int s = 0; s < 3; ++s) b1[s] = CtcBetaEnd(lp1, labels, s, 3, 0);
  for (int s = 0; s < 3; ++s) b0[s] = CtcBetaAt(b1, lp0, labels, s, 3, 0);
  // Backward and forward agree on p.
  EXPECT_NEAR(std::exp(LogAddExp(b0[0], b0[1])), 0.82, 1e-15);
  // Frame 0, class a: softmax 0.4 minus the share of paths through a at
  // frame 0 (0.28 + 0.12) / 0.82.
  EXPECT_NEAR(CtcGradAt(a0, b0, lp0, labels, 3, 0, log_p, 1), 0.4 - 0.40 / 0.82,
              1e-15);
  EXPECT_NEAR(CtcGradAt(a0, b0, lp0, labels, 3, 0, log_p, 0), 0.6 - 0.42 / 0.82,
              1e-15);
}

TEST(PackCtcLabels, PaddingLengthsAndErrors) {
  // Blank first: 0 pads. Blank last (C - 1 = 3): -1 pads.
  const std::vector<double> labels = {2, 1, 0, 3, 1, 2};
  mx_ctc::CtcInput in;
  in.t_max = 4;
  in.n = 2;
  in.classes = 4;
  in.l_max = 3;
  in.labels = labels.data();
  mx_ctc::CtcSequences seqs;
  ASSERT_EQ(mx_ctc::PackCtcLabels(in, &seqs), "");
  EXPECT_EQ(seqs.labels, (std::vector<int64_t>{2, 1, 3, 1, 2}));
  EXPECT_EQ(seqs.label_offset, (std::vector<int64_t>{0, 2}));
  EXPECT_EQ(seqs.num_labels, (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(seqs.frames, (std::vector<int64_t>{4, 4}));
  EXPECT_EQ(seqs.max_states, 7);
  in.blank_first = false;  // 3 is now the blank.
  EXPECT_EQ(mx_ctc::PackCtcLabels(in, &seqs),
            "label[1, 0] is 3; labels must be in [0, 4) and not the blank 3");
  // Explicit lengths read past padding values; 2.7 frames truncate to 2.
  in.blank_first = true;
  const std::vector<double> label_lengths = {3, 1}, data_lengths = {2.7, 4};
  in.label_lengths = label_lengths.data();
  in.data_lengths = data_lengths.data();
  EXPECT_EQ(mx_ctc::PackCtcLabels(in, &seqs),
            "label[0, 2] is 0; labels must be in [0, 4) and not the blank 0");
  const std::vector<double> short_lengths = {2, 1};
  in.label_lengths = short_lengths.data();
  ASSERT_EQ(mx_ctc::PackCtcLabels(in, &seqs), "");
  EXPECT_EQ(seqs.labels, (std::vector<int64_t>{2, 1, 3}));
  EXPECT_EQ(seqs.frames, (std::vector<int64_t>{2, 4}));
  const std::vector<double> long_frames = {5, 4};
  in.data_lengths = long_frames.data();
  EXPECT_EQ(mx_ctc::PackCtcLabels(in, &seqs),
            "data_lengths[0] is 5; it must be in [0, 4]");
}

TEST(PackCtcLabels, BoundsTheLattice) {
  // 2^20 frames: 63 labels (127 states) fit in 2^27 states, 64 do not.
  const std::vector<double> labels(64, 1.0);
  mx_ctc::CtcInput in;
  in.t_max = int64_t{1} << 20;
  in.n = 1;
  in.classes = 2;
  in.l_max = 63;
  in.labels = labels.data();
  mx_ctc::CtcSequences seqs;
  EXPECT_EQ(mx_ctc::PackCtcLabels(in, &seqs), "");
  EXPECT_EQ(seqs.max_states, 127);
  in.l_max = 64;
  EXPECT_NE(mx_ctc::PackCtcLabels(in, &seqs).find("needs a lattice of"),
            std::string::npos);
}

}  // namespace
}  // namespace mx_math
