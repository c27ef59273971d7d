// CTCLoss's label and length conventions (MXNet's), shared by the CPU
// kernel and the CUDA plugin, which read the inputs back to the host as
// MXNet does: each sequence's frame count and its labels packed together,
// checked. Plain C++ on doubles (no mxcore or plugin types).
//
//   mx_ctc::CtcInput in{t_max, n, classes, l_max, true, labels};
//   mx_ctc::CtcSequences seqs;
//   std::string error = mx_ctc::PackCtcLabels(in, &seqs);  // "" when valid
#ifndef MXCORE_BACKENDS_COMMON_CTC_LABELS_H_
#define MXCORE_BACKENDS_COMMON_CTC_LABELS_H_

#include <cstdint>
#include <string>
#include <vector>

namespace mx_ctc {

// A sequence's lattice of T x (2L + 1) states is bounded so that a small
// input cannot ask for a huge allocation (2^27 states: 1 GiB of doubles
// each for alpha and beta; 2000 frames of 500 labels need 2^21).
constexpr int64_t kMaxLatticeStates = int64_t{1} << 27;

struct CtcInput {
  int64_t t_max = 0, n = 0, classes = 0, l_max = 0;
  bool blank_first = true;         // Blank 0, padding 0; else C - 1 and -1.
  const double* labels = nullptr;  // (n, l_max)
  const double* data_lengths = nullptr;   // (n), or null: t_max each
  const double* label_lengths = nullptr;  // (n), or null: up to padding
};

struct CtcSequences {
  int64_t blank = 0;
  std::vector<int64_t> frames;        // Per sequence.
  std::vector<int64_t> label_offset;  // Per sequence, into labels.
  std::vector<int64_t> num_labels;    // Per sequence.
  std::vector<int64_t> labels;        // All sequences' labels, packed.
  int64_t max_states = 1;             // The largest 2L + 1.
};

// Values are truncated toward zero (MXNet's casts). A length outside
// [0, t_max] or [0, l_max], a label outside [0, classes) or equal to the
// blank, or a lattice over kMaxLatticeStates gives an error message naming
// the input and position; "" otherwise.
std::string PackCtcLabels(const CtcInput& in, CtcSequences* out);

}  // namespace mx_ctc

#endif  // MXCORE_BACKENDS_COMMON_CTC_LABELS_H_
