#include "backends/common/ctc_labels.h"

#include <cmath>
#include <sstream>

namespace mx_ctc {
namespace {

// Length b of `values` (truncated), or -1 when outside [0, limit].
int64_t LengthAt(const double* values, int64_t b, int64_t limit) {
  const double v = std::trunc(values[b]);
  return v >= 0 && v <= static_cast<double>(limit) ? static_cast<int64_t>(v)
                                                   : -1;
}

template <typename... Parts>
std::string Message(const Parts&... parts) {
  std::ostringstream os;
  (os << ... << parts);
  return os.str();
}

}  // namespace

std::string PackCtcLabels(const CtcInput& in, CtcSequences* out) {
  *out = CtcSequences();
  out->blank = in.blank_first ? 0 : in.classes - 1;
  const double padding = in.blank_first ? 0 : -1;
  for (int64_t b = 0; b < in.n; ++b) {
    int64_t frames = in.t_max;
    if (in.data_lengths != nullptr) {
      frames = LengthAt(in.data_lengths, b, in.t_max);
      if (frames < 0) {
        return Message("data_lengths[", b, "] is ", in.data_lengths[b],
                       "; it must be in [0, ", in.t_max, "]");
      }
    }
    int64_t len = in.l_max;
    if (in.label_lengths != nullptr) {
      len = LengthAt(in.label_lengths, b, in.l_max);
      if (len < 0) {
        return Message("label_lengths[", b, "] is ", in.label_lengths[b],
                       "; it must be in [0, ", in.l_max, "]");
      }
    }
    const int64_t offset = static_cast<int64_t>(out->labels.size());
    for (int64_t j = 0; j < len; ++j) {
      const double v = std::trunc(in.labels[b * in.l_max + j]);
      if (in.label_lengths == nullptr && v == padding) break;
      if (!(v >= 0 && v < static_cast<double>(in.classes)) ||
          static_cast<int64_t>(v) == out->blank) {
        return Message("label[", b, ", ", j, "] is ", v,
                       "; labels must be in [0, ", in.classes,
                       ") and not the blank ", out->blank);
      }
      out->labels.push_back(static_cast<int64_t>(v));
    }
    const int64_t count = static_cast<int64_t>(out->labels.size()) - offset;
    const int64_t states = 2 * count + 1;
    if (frames > 0 && states > kMaxLatticeStates / frames) {
      return Message("sequence ", b, " needs a lattice of ", frames, " x ",
                     states, " states, more than the ", kMaxLatticeStates,
                     " allowed");
    }
    out->frames.push_back(frames);
    out->label_offset.push_back(offset);
    out->num_labels.push_back(count);
    if (states > out->max_states) out->max_states = states;
  }
  return "";
}

}  // namespace mx_ctc
