// RNN, LSTM and GRU: Gluon's fused recurrent layers over the RNN op.
#include "nn/rnn_layers.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "base/error.h"
#include "imperative/nd.h"

namespace mx {
namespace nn {
namespace {

int64_t GateCount(const std::string& mode) {
  return mode == "lstm" ? 4 : mode == "gru" ? 3 : 1;
}

}  // namespace

RecurrentLayer::RecurrentLayer(std::string layer, std::string mode,
                               int64_t hidden_size, Options options)
    : layer_(std::move(layer)),
      mode_(std::move(mode)),
      hidden_size_(hidden_size),
      options_(std::move(options)) {
  const Options& o = options_;
  if (hidden_size <= 0 || o.num_layers <= 0 || o.input_size < 0) {
    throw InvalidArgument(absl::StrCat(layer_, ": hidden_size (", hidden_size,
                                       ") and num_layers (", o.num_layers,
                                       ") must be positive, input_size (",
                                       o.input_size, ") at least 0"));
  }
  if (o.layout != "TNC" && o.layout != "NTC") {
    throw InvalidArgument(
        absl::StrCat(layer_, ": layout \"", o.layout, "\" is not TNC or NTC"));
  }
  if (!(o.dropout >= 0 && o.dropout <= 1)) {
    throw InvalidArgument(
        absl::StrCat(layer_, ": dropout ", o.dropout, " is not in [0, 1]"));
  }
  if (o.state_clip_min.has_value() != o.state_clip_max.has_value() ||
      (o.state_clip_min.has_value() && mode_ != "lstm")) {
    throw InvalidArgument(absl::StrCat(
        layer_, ": state_clip_min and state_clip_max go together, on LSTM"));
  }
  const int64_t rows = GateCount(mode_) * hidden_size;
  const int dirs = o.bidirectional ? 2 : 1;
  Parameter::Options w, u, b, c;
  w.dtype = u.dtype = b.dtype = c.dtype = o.dtype;
  w.init = o.i2h_weight_init;
  u.init = o.h2h_weight_init;
  b.init = o.i2h_bias_init ? o.i2h_bias_init : init::Zeros();
  c.init = o.h2h_bias_init ? o.h2h_bias_init : init::Zeros();
  // Registered in Gluon's order (by layer, direction: i2h and h2h weights,
  // then biases); packed weights first, then biases, as the op reads them.
  for (int64_t l = 0; l < o.num_layers; ++l) {
    const int64_t in = l == 0 ? o.input_size : dirs * hidden_size;
    for (int d = 0; d < dirs; ++d) {
      const std::string p = absl::StrCat(d == 0 ? "l" : "r", l, "_");
      weights_.push_back(
          RegisterParameter(p + "i2h_weight", TShape{rows, in}, w));
      weights_.push_back(
          RegisterParameter(p + "h2h_weight", TShape{rows, hidden_size}, u));
      biases_.push_back(RegisterParameter(p + "i2h_bias", TShape{rows}, b));
      biases_.push_back(RegisterParameter(p + "h2h_bias", TShape{rows}, c));
    }
  }
}

void RecurrentLayer::InferShape(const std::vector<NDArray>& inputs) {
  if (inputs.empty() || inputs[0].ndim() != 3) {
    throw ShapeError(absl::StrCat(layer_, ": input must have 3 axes (",
                                  options_.layout, ")"));
  }
  const int64_t in = inputs[0].shape()[2];
  const int dirs = options_.bidirectional ? 2 : 1;
  for (int d = 0; d < dirs; ++d) {
    weights_[2 * d]->SetShape({GateCount(mode_) * hidden_size_, in});
  }
}

std::vector<NDArray> RecurrentLayer::BeginState(int64_t batch_size,
                                                Context ctx) const {
  const int dirs = options_.bidirectional ? 2 : 1;
  const TShape shape{options_.num_layers * dirs, batch_size, hidden_size_};
  std::vector<NDArray> states;
  for (int i = 0; i < NumStates(); ++i) {
    states.push_back(nd::zeros(shape, ctx, options_.dtype));
  }
  return states;
}

std::vector<NDArray> RecurrentLayer::Forward(
    const std::vector<NDArray>& inputs) {
  const size_t lengths = options_.use_sequence_length ? 1 : 0;
  const size_t states = static_cast<size_t>(NumStates());
  if (inputs.size() != 1 + lengths && inputs.size() != 1 + states + lengths) {
    throw InvalidArgument(absl::StrCat(
        layer_, " takes x", states == 2 ? "[, h, c]" : "[, h]",
        lengths ? ", sequence_length" : "", " (", 1 + lengths, " or ",
        1 + states + lengths, " inputs), got ", inputs.size()));
  }
  NDArray x = inputs[0];
  if (x.ndim() != 3) {
    throw ShapeError(absl::StrCat(layer_, ": input has shape ",
                                  x.shape().ToString(), "; 3 axes (",
                                  options_.layout, ") needed"));
  }
  const bool ntc = options_.layout == "NTC";
  if (ntc) x = nd::transpose(x, {1, 0, 2});
  const bool given = inputs.size() > 1 + lengths;
  std::vector<NDArray> op_inputs = {x};
  std::vector<NDArray> packed;
  for (const ParameterPtr& p : weights_) {
    packed.push_back(nd::reshape(p->data(), {-1}));
  }
  for (const ParameterPtr& p : biases_) {
    packed.push_back(nd::reshape(p->data(), {-1}));
  }
  op_inputs.push_back(nd::concat(packed, 0));
  if (given) {
    op_inputs.insert(op_inputs.end(), inputs.begin() + 1,
                     inputs.begin() + 1 + states);
  } else {
    for (const NDArray& s : BeginState(x.shape()[1], x.ctx())) {
      op_inputs.push_back(s);
    }
  }
  if (lengths) op_inputs.push_back(inputs.back());
  AttrDict attrs = {
      {"mode", mode_},
      {"state_size", std::to_string(hidden_size_)},
      {"num_layers", std::to_string(options_.num_layers)},
      {"bidirectional", options_.bidirectional ? "True" : "False"},
      {"p", nd::Attr(options_.dropout)},
      {"state_outputs", given ? "True" : "False"},
      {"use_sequence_length", lengths ? "True" : "False"}};
  if (options_.state_clip_min.has_value()) {
    attrs["lstm_state_clip_min"] = nd::Attr(*options_.state_clip_min);
    attrs["lstm_state_clip_max"] = nd::Attr(*options_.state_clip_max);
    attrs["lstm_state_clip_nan"] = options_.state_clip_nan ? "True" : "False";
  }
  const std::vector<NDArray> out = nd::CallMulti("RNN", op_inputs, attrs);
  std::vector<NDArray> result = {ntc ? nd::transpose(out[0], {1, 0, 2})
                                     : out[0]};
  if (given)
    result.insert(result.end(), out.begin() + 1, out.begin() + 1 + states);
  return result;
}

RNN::RNN(int64_t hidden_size, std::string activation, Options options)
    : RecurrentLayer("RNN", "rnn_" + activation, hidden_size,
                     std::move(options)) {
  if (activation != "relu" && activation != "tanh") {
    throw InvalidArgument(absl::StrCat("RNN: activation \"", activation,
                                       "\" is not relu or tanh"));
  }
}

LSTM::LSTM(int64_t hidden_size, Options options)
    : RecurrentLayer("LSTM", "lstm", hidden_size, std::move(options)) {}

GRU::GRU(int64_t hidden_size, Options options)
    : RecurrentLayer("GRU", "gru", hidden_size, std::move(options)) {}

}  // namespace nn
}  // namespace mx
