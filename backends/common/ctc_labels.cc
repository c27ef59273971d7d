#include "backends/common/ctc_labels.h"

#include <cmath>
#include <sstream>

namespace mx_ctc {
namespace {

template <typename... Parts>
std::string Message(const Parts&... parts) {
  std::ostringstream os;
  (os << ... << parts);
  return os.str();
}

// Length b of `values` (truncated; `limit` without values) into *out; an
// error message when outside [0, limit].
std::string LengthAt(const double* values, const char* name, int64_t b,
                     int64_t limit, int64_t* out) {
  *out = limit;
  if (values == nullptr) return "";
  const double v = std::trunc(values[b]);
  if (!(v >= 0 && v <= static_cast<double>(limit))) {
    return Message(name, "[", b, "] is ", values[b], "; it must be in [0, ",
                   limit, "]");
  }
  *out = static_cast<int64_t>(v);
  return "";
}

}  // namespace

std::string PackCtcLabels(const CtcInput& in, CtcSequences* out) {
  *out = CtcSequences();
  out->blank = in.blank_first ? 0 : in.classes - 1;
  const double padding = in.blank_first ? 0 : -1;
  for (int64_t b = 0; b < in.n; ++b) {
    int64_t frames = 0, len = 0;
    std::string error =
        LengthAt(in.data_lengths, "data_lengths", b, in.t_max, &frames);
    if (error.empty()) {
      error = LengthAt(in.label_lengths, "label_lengths", b, in.l_max, &len);
    }
    if (!error.empty()) return error;
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
