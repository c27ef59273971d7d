// The op table's cases for the fused RNN op and its gradient (see
// op_cases.h): every mode, layers, both directions, state outputs,
// sequence lengths and LSTM clipping. Dropout stays 0: a plugin's random
// masks need not match the host's.
#include <string>
#include <vector>

#include "tests/plugin_conformance/op_cases.h"

namespace mx {
namespace conformance {
namespace cases {
namespace {

struct RnnShape {
  std::string mode;
  int64_t layers, dirs, hidden;
};

int64_t Gates(const std::string& mode) {
  return mode == "lstm" ? 4 : mode == "gru" ? 3 : 1;
}

// MXNet's packed parameter count for input size `input`.
int64_t ParamCount(const RnnShape& r, int64_t input) {
  int64_t total = 0;
  for (int64_t l = 0; l < r.layers; ++l) {
    const int64_t in = l == 0 ? input : r.dirs * r.hidden;
    total += r.dirs * Gates(r.mode) * r.hidden * (in + r.hidden + 2);
  }
  return total;
}

// data, parameters, state[, state_cell][, sequence_length] of (T, N, I).
Shapes ForwardShapes(const RnnShape& r, int64_t t, int64_t n, int64_t input,
                     bool lengths) {
  const TShape state{r.layers * r.dirs, n, r.hidden};
  Shapes s = {{t, n, input}, {ParamCount(r, input)}, state};
  if (r.mode == "lstm") s.push_back(state);
  if (lengths) s.push_back({n});
  return s;
}

AttrDict AttrsOf(const RnnShape& r, bool state_outputs) {
  return {{"mode", r.mode},
          {"num_layers", std::to_string(r.layers)},
          {"bidirectional", r.dirs == 2 ? "True" : "False"},
          {"state_size", std::to_string(r.hidden)},
          {"state_outputs", state_outputs ? "True" : "False"}};
}

// The reserve's element count (backends/common/rnn_driver.h's layout:
// saved gates, h and c per layer and direction, then the outputs of all
// layers but the last).
int64_t ReserveCount(const RnnShape& r, int64_t t, int64_t n) {
  const int64_t per_unit = r.mode == "lstm" ? 6 : r.mode == "gru" ? 5 : 1;
  return r.layers * r.dirs * t * n * r.hidden * per_unit +
         (r.layers - 1) * t * n * r.dirs * r.hidden;
}

}  // namespace

void AddRnnCases(std::vector<OpCase>* t) {
  // Two data shapes per case: (T 4, N 2, I 3) and (3, 1, 5).
  const int64_t dims[2][3] = {{4, 2, 3}, {3, 1, 5}};
  for (const RnnShape& r :
       {RnnShape{"lstm", 2, 2, 3}, RnnShape{"gru", 1, 1, 4},
        RnnShape{"rnn_tanh", 2, 2, 2}, RnnShape{"rnn_relu", 1, 1, 3}}) {
    for (bool state_outputs : {true, false}) {
      std::vector<Shapes> variants;
      for (const auto& d : dims) {
        variants.push_back(ForwardShapes(r, d[0], d[1], d[2], false));
      }
      t->push_back(Shaped("RNN", variants, {AttrsOf(r, state_outputs)}));
    }
    // The gradient op alone: (dy, dhy[, dcy], forward inputs, reserve)
    // with random values in place of a forward pass's.
    std::vector<Shapes> back;
    for (const auto& d : dims) {
      const TShape state{r.layers * r.dirs, d[1], r.hidden};
      Shapes s = {{d[0], d[1], r.dirs * r.hidden}, state};
      if (r.mode == "lstm") s.push_back(state);
      for (const TShape& f : ForwardShapes(r, d[0], d[1], d[2], false)) {
        s.push_back(f);
      }
      s.push_back({ReserveCount(r, d[0], d[1])});
      back.push_back(s);
    }
    OpCase backward = Shaped("_backward_RNN", back, {AttrsOf(r, true)});
    // The reserve is float32 for float16 data (RNN's arithmetic type).
    backward.float32_in_float16 = {static_cast<int>(back[0].size()) - 1};
    t->push_back(backward);
  }
  // Sequence lengths in [0, T] (int32) and LSTM clipping.
  const RnnShape lstm{"lstm", 2, 2, 3};
  OpCase lengths = Shaped(
      "RNN",
      {ForwardShapes(lstm, 4, 3, 2, true), ForwardShapes(lstm, 5, 2, 3, true)},
      {[&] {
        AttrDict a = AttrsOf(lstm, true);
        a["use_sequence_length"] = "True";
        a["lstm_state_clip_min"] = "-0.4";
        a["lstm_state_clip_max"] = "0.5";
        return a;
      }()});
  lengths.ranges = {{-1, 1}, {-1, 1}, {-1, 1}, {-1, 1}, {0, 4}};
  lengths.int32_inputs = {4};
  lengths.no_grad = {4};
  t->push_back(lengths);
  const RnnShape gru{"gru", 1, 2, 2};
  OpCase gru_lengths = Shaped("RNN", {ForwardShapes(gru, 4, 3, 2, true)}, {[&] {
                                AttrDict a = AttrsOf(gru, true);
                                a["use_sequence_length"] = "True";
                                return a;
                              }()});
  gru_lengths.ranges = {{-1, 1}, {-1, 1}, {-1, 1}, {0, 5}};
  gru_lengths.int32_inputs = {3};
  gru_lengths.no_grad = {3};
  t->push_back(gru_lengths);
}

}  // namespace cases
}  // namespace conformance
}  // namespace mx
