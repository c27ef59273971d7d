// Gluon's fused recurrent layers (rnn.RNN, rnn.LSTM, rnn.GRU): num_layers
// of one cell type, optionally bidirectional, run by the RNN op in one
// call. Parameters are Gluon's: for layer k, "l<k>_i2h_weight" (G*H, in),
// "l<k>_h2h_weight" (G*H, H), "l<k>_i2h_bias", "l<k>_h2h_bias" (G*H),
// and "r<k>_..." for the reverse direction (G = 1, 4, 3 for RNN, LSTM,
// GRU); they are packed into the op's parameter vector in Gluon's order
// at every call. The first layer's input size is inferred unless given.
//
//   nn::LSTM::Options opt;
//   opt.num_layers = 2;
//   opt.layout = "NTC";
//   auto lstm = std::make_shared<nn::LSTM>(/*hidden_size=*/64, opt);
//   lstm->Initialize(nn::init::Xavier());
//   NDArray out = (*lstm)(x);                     // (N, T, 64)
//   std::vector<NDArray> s = lstm->BeginState(batch);
//   auto o = lstm->Call({x, s[0], s[1]});         // out, h, c
//
// Inputs: {x}, or {x, states...} (h, and c for LSTM, each (L*D, N, H)),
// followed by sequence_length (N,) when Options::use_sequence_length. The
// output is {out} without states given (they start at zero), else {out,
// new states...}, as Gluon returns out or (out, states).
#ifndef MXCORE_NN_RNN_LAYERS_H_
#define MXCORE_NN_RNN_LAYERS_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "nn/hybrid_block.h"
#include "nn/initializer.h"

namespace mx {
namespace nn {

class RecurrentLayer : public HybridBlock {
 public:
  struct Options {
    int64_t num_layers = 1;
    std::string layout = "TNC";  // or "NTC"
    double dropout = 0;          // between layers, in training
    bool bidirectional = false;
    int64_t input_size = 0;  // 0: inferred from the first input
    bool use_sequence_length = false;
    // LSTM only: cell states clipped to [min, max] (both or neither); NaN
    // to min with state_clip_nan.
    std::optional<double> state_clip_min, state_clip_max;
    bool state_clip_nan = false;
    DType dtype = DType::kFloat32;
    InitializerPtr i2h_weight_init, h2h_weight_init;  // null: Initialize()'s
    InitializerPtr i2h_bias_init, h2h_bias_init;      // null: zeros
  };

  void InferShape(const std::vector<NDArray>& inputs) override;
  std::vector<NDArray> Forward(const std::vector<NDArray>& inputs) override;

  // Zero states for `batch_size` sequences: {h} or {h, c}, (L*D, N, H).
  std::vector<NDArray> BeginState(int64_t batch_size,
                                  Context ctx = Context::CPU()) const;
  int NumStates() const { return mode_ == "lstm" ? 2 : 1; }

 protected:
  // mode: the RNN op's (rnn_relu, rnn_tanh, lstm, gru); `layer` names the
  // block in errors.
  RecurrentLayer(std::string layer, std::string mode, int64_t hidden_size,
                 Options options);

 private:
  std::string layer_, mode_;
  int64_t hidden_size_;
  Options options_;
  std::vector<ParameterPtr> weights_, biases_;  // In the op's order.
};

// Vanilla recurrent layer: h = activation(W x + b + U h' + c), activation
// "relu" (Gluon's default) or "tanh".
class RNN : public RecurrentLayer {
 public:
  RNN(int64_t hidden_size, std::string activation, Options options);
  explicit RNN(int64_t hidden_size, std::string activation = "relu")
      : RNN(hidden_size, std::move(activation), Options()) {}
  std::string TypeName() const override { return "RNN"; }
};

class LSTM : public RecurrentLayer {
 public:
  LSTM(int64_t hidden_size, Options options);
  explicit LSTM(int64_t hidden_size) : LSTM(hidden_size, Options()) {}
  std::string TypeName() const override { return "LSTM"; }
};

class GRU : public RecurrentLayer {
 public:
  GRU(int64_t hidden_size, Options options);
  explicit GRU(int64_t hidden_size) : GRU(hidden_size, Options()) {}
  std::string TypeName() const override { return "GRU"; }
};

}  // namespace nn
}  // namespace mx

#endif  // MXCORE_NN_RNN_LAYERS_H_
