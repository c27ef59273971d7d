// Losses: HybridBlocks from (prediction, label) to one loss per sample.
//
// The result has shape (batch,); Backward on it sums over the batch, and
// Trainer::Step(batch_size) turns the sum into a mean.
//
//   nn::SoftmaxCrossEntropyLoss loss_fn;
//   NDArray loss = loss_fn({net(x), labels})[0];      // (N,)
#ifndef MXCORE_NN_LOSS_H_
#define MXCORE_NN_LOSS_H_

#include <string>
#include <vector>

#include "nn/hybrid_block.h"

namespace mx {
namespace nn {

// -sum_c label_c * log_softmax(pred)_c along `axis`. With `sparse_label`
// the label holds class indices (one per position of pred without the
// class axis, e.g. (N,) or (N, 1); any numeric dtype), picked as Gluon
// does (`pick`, out-of-range labels clipped to the first or last class);
// otherwise it is a distribution shaped like pred. With
// `from_logits` pred already holds log probabilities.
class SoftmaxCrossEntropyLoss : public HybridBlock {
 public:
  struct Options {
    int axis = -1;
    bool sparse_label = true;
    bool from_logits = false;
  };
  explicit SoftmaxCrossEntropyLoss(Options options) : options_(options) {}
  SoftmaxCrossEntropyLoss() : SoftmaxCrossEntropyLoss(Options()) {}

  // inputs: {pred, label}.
  std::vector<NDArray> Forward(const std::vector<NDArray>& inputs) override;
  std::string TypeName() const override { return "SoftmaxCrossEntropyLoss"; }

 private:
  Options options_;
};

// Gluon's CTCLoss: the CTC loss (the CTCLoss op) of activations pred
// against label sequences, with the blank as the last class (labels in
// [0, C - 1), padded with -1), as Gluon sets it. pred is (N, T, C) for
// layout "NTC" or (T, N, C) for "TNC"; label (N, L) for "NT" or (L, N) for
// "TN". Inputs {pred, label}, {pred, label, pred_lengths} or {pred, label,
// pred_lengths, label_lengths} (each (N,)); the loss is scaled by `weight`.
//
//   nn::CTCLoss ctc;
//   NDArray loss = ctc({logits, labels})[0];  // (N,)
class CTCLoss : public HybridBlock {
 public:
  struct Options {
    std::string layout = "NTC";
    std::string label_layout = "NT";
    double weight = 1.0;
  };
  explicit CTCLoss(Options options);
  CTCLoss() : CTCLoss(Options()) {}

  std::vector<NDArray> Forward(const std::vector<NDArray>& inputs) override;
  std::string TypeName() const override { return "CTCLoss"; }

 private:
  Options options_;
};

}  // namespace nn
}  // namespace mx

#endif  // MXCORE_NN_LOSS_H_
