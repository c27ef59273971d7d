// The recurrent layers: Gluon's parameter names and packing, layouts,
// states, hybridization, gradients and training.
#include "nn/rnn_layers.h"

#include <memory>
#include <random>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "nn/nn_test_util.h"

namespace mx {
namespace nn {
namespace testing {
namespace {

RecurrentLayer::Options TwoLayersBothWays() {
  RecurrentLayer::Options o;
  o.num_layers = 2;
  o.bidirectional = true;
  return o;
}

TEST(RecurrentLayers, ParametersAreNamedAndShapedAsGluons) {
  LSTM lstm(5, TwoLayersBothWays());
  lstm.Initialize(init::Uniform(0.3));
  lstm(RandomArray({4, 2, 3}));  // Infers l0's input size 3.
  std::vector<std::string> names;
  std::vector<TShape> shapes;
  for (const auto& [name, p] : lstm.CollectParams()) {
    names.push_back(name);
    shapes.push_back(p->shape());
  }
  const std::vector<std::string> want = {
      "l0_i2h_weight", "l0_h2h_weight", "l0_i2h_bias", "l0_h2h_bias",
      "r0_i2h_weight", "r0_h2h_weight", "r0_i2h_bias", "r0_h2h_bias",
      "l1_i2h_weight", "l1_h2h_weight", "l1_i2h_bias", "l1_h2h_bias",
      "r1_i2h_weight", "r1_h2h_weight", "r1_i2h_bias", "r1_h2h_bias"};
  EXPECT_EQ(names, want);
  EXPECT_EQ(shapes[0], TShape({20, 3}));
  EXPECT_EQ(shapes[1], TShape({20, 5}));
  EXPECT_EQ(shapes[2], TShape({20}));
  EXPECT_EQ(shapes[8], TShape({20, 10}));  // Both directions of layer 0.
  GRU gru(4);
  RNN rnn(6, "tanh");
  EXPECT_EQ(gru.CollectParams()[1].second->shape(), TShape({12, 4}));
  EXPECT_EQ(rnn.CollectParams()[1].second->shape(), TShape({6, 6}));
}

// Gluon's packing: all weights (by layer, direction: i2h, h2h), then all
// biases in the same order.
NDArray GluonPacking(const Block& block) {
  std::vector<NDArray> weights, biases;
  for (const auto& [name, p] : block.CollectParams()) {
    const bool bias = name.find("bias") != std::string::npos;
    (bias ? biases : weights).push_back(nd::reshape(p->data(), {-1}));
  }
  weights.insert(weights.end(), biases.begin(), biases.end());
  return nd::concat(weights, 0);
}

TEST(RecurrentLayers, RunTheOpOnGluonsPacking) {
  for (const std::string& kind : {"lstm", "gru", "rnn_relu"}) {
    SCOPED_TRACE(kind);
    std::shared_ptr<RecurrentLayer> layer;
    if (kind == "lstm") layer = std::make_shared<LSTM>(3, TwoLayersBothWays());
    if (kind == "gru") layer = std::make_shared<GRU>(3, TwoLayersBothWays());
    if (kind == "rnn_relu") {
      layer = std::make_shared<RNN>(3, "relu", TwoLayersBothWays());
    }
    layer->Initialize(init::Uniform(0.5));
    const NDArray x = RandomArray({5, 2, 4}, DType::kFloat32, -1, 1, 3);
    std::vector<NDArray> states = layer->BeginState(2);
    for (NDArray& s : states)
      s = RandomArray(s.shape(), DType::kFloat32, -1, 1, 5);
    std::vector<NDArray> in = {x};
    in.insert(in.end(), states.begin(), states.end());
    const std::vector<NDArray> got = layer->Call(in);
    ASSERT_EQ(got.size(), 1 + states.size());
    std::vector<NDArray> op_in = {x, GluonPacking(*layer)};
    op_in.insert(op_in.end(), states.begin(), states.end());
    const std::vector<NDArray> want =
        nd::CallMulti("RNN", op_in,
                      {{"mode", kind},
                       {"state_size", "3"},
                       {"num_layers", "2"},
                       {"bidirectional", "True"},
                       {"state_outputs", "True"}});
    for (size_t i = 0; i < got.size(); ++i) {
      EXPECT_TRUE(AllClose(ToDouble(got[i]), ToDouble(want[i]), 0, 0)) << i;
    }
  }
}

TEST(RecurrentLayers, ZeroStatesWhenNoneGivenAndNtcLayout) {
  LSTM tnc(4, TwoLayersBothWays());
  tnc.Initialize(init::Uniform(0.5));
  const NDArray x = RandomArray({6, 3, 2}, DType::kFloat32, -1, 1, 8);
  const NDArray out = tnc(x);
  EXPECT_EQ(out.shape(), TShape({6, 3, 8}));
  std::vector<NDArray> in = {x};
  for (const NDArray& s : tnc.BeginState(3)) in.push_back(s);
  EXPECT_TRUE(AllClose(ToDouble(out), ToDouble(tnc.Call(in)[0]), 0, 0));
  // The same parameters in an NTC layer see the batch axis first.
  RecurrentLayer::Options o = TwoLayersBothWays();
  o.layout = "NTC";
  LSTM ntc(4, o);
  ntc.Initialize(init::Uniform(0.5));
  ntc(nd::transpose(x, {1, 0, 2}));
  const ParameterList from = tnc.CollectParams(), to = ntc.CollectParams();
  for (size_t i = 0; i < from.size(); ++i) {
    to[i].second->SetData(from[i].second->data());
  }
  const NDArray batch_first = ntc(nd::transpose(x, {1, 0, 2}));
  EXPECT_TRUE(AllClose(ToDouble(nd::transpose(batch_first, {1, 0, 2})),
                       ToDouble(out), 0, 0));
}

TEST(RecurrentLayers, SequenceLengthsComeLast) {
  RecurrentLayer::Options o;
  o.use_sequence_length = true;
  GRU gru(3, o);
  gru.Initialize(init::Uniform(0.5));
  const NDArray x = RandomArray({4, 2, 2}, DType::kFloat32, -1, 1, 9);
  const NDArray lengths = ArrayOf({2}, {4, 2}, DType::kInt32);
  const std::vector<double> out = ToDouble(gru.Call({x, lengths})[0]);
  // Sequence 1 stops after two steps: its outputs are 0 from step 2 on.
  for (int64_t t = 2; t < 4; ++t) {
    for (int64_t j = 0; j < 3; ++j) EXPECT_EQ(out[(t * 2 + 1) * 3 + j], 0);
  }
  EXPECT_NE(out[(3 * 2 + 0) * 3], 0);
  EXPECT_TRUE(Contains(ErrorOf<InvalidArgument>([&] { gru.Call({x}); }),
                       "sequence_length"));
}

TEST(RecurrentLayers, HybridizedMatchesImperativeWithGradients) {
  for (const std::string& kind : {"lstm", "gru"}) {
    SCOPED_TRACE(kind);
    const auto make = [&]() -> std::shared_ptr<RecurrentLayer> {
      RecurrentLayer::Options o = TwoLayersBothWays();
      o.layout = "NTC";
      o.input_size = 3;  // Initialized in Initialize, from the same seed.
      if (kind == "lstm") return std::make_shared<LSTM>(3, o);
      return std::make_shared<GRU>(3, o);
    };
    auto imperative = make();
    auto hybrid = make();
    random::Seed(2);
    imperative->Initialize(init::Uniform(0.5));
    random::Seed(2);
    hybrid->Initialize(init::Uniform(0.5));
    hybrid->Hybridize();
    const NDArray x = RandomArray({2, 5, 3}, DType::kFloat32, -1, 1, 4);
    const NDArray head = RandomArray({2, 5, 6}, DType::kFloat32, -1, 1, 6);
    const RunResult a = RunWithGrad(*imperative, x, head);
    const RunResult b = RunWithGrad(*hybrid, x, head);
    EXPECT_EQ(hybrid->num_traces(), 1);
    EXPECT_TRUE(AllClose(b.output, a.output, 1e-6, 1e-6));
    EXPECT_TRUE(AllClose(b.input_grad, a.input_grad, 1e-6, 1e-6));
    ASSERT_EQ(a.grads.size(), 16u);
    for (const auto& [name, g] : a.grads) {
      EXPECT_TRUE(AllClose(b.grads.at(name), g, 1e-6, 1e-6)) << name;
      double norm = 0;
      for (double v : g) norm += v * v;
      EXPECT_GT(norm, 0) << name << " got no gradient";
    }
  }
}

// Sequences of +-1 with noise; the class is whether their sum is positive,
// which needs the whole sequence: the last step of a GRU reads it.
TEST(RecurrentLayers, GruLearnsTheSignOfASum) {
  random::Seed(5);
  const int64_t n = 64, t = 9;
  std::mt19937 gen(11);
  std::bernoulli_distribution coin(0.5);
  std::normal_distribution<float> noise(0, 0.1f);
  std::vector<float> xs(t * n), labels(n);
  for (int64_t i = 0; i < n; ++i) {
    int sum = 0;
    for (int64_t s = 0; s < t; ++s) {
      const int v = coin(gen) ? 1 : -1;
      sum += v;
      xs[s * n + i] = static_cast<float>(v) + noise(gen);  // TNC
    }
    labels[i] = sum > 0 ? 1.0f : 0.0f;
  }
  const NDArray x = NDArray::FromVector<float>({t, n, 1}, xs);
  const NDArray y = NDArray::FromVector<float>({n}, labels);
  auto gru = std::make_shared<GRU>(8);
  auto head = std::make_shared<Dense>(2);
  gru->Initialize(init::Xavier());
  head->Initialize(init::Xavier());
  gru->Hybridize();
  ParameterList params = gru->CollectParams();
  for (const auto& p : head->CollectParams()) params.push_back(p);
  AdamOptions o;
  o.learning_rate = 0.03;
  Trainer trainer(params, MakeAdam(o));
  SoftmaxCrossEntropyLoss loss_fn;
  const auto logits = [&] {
    const NDArray out = (*gru)(x);  // (T, N, 8): the last step's state.
    return (*head)(nd::reshape(nd::slice_axis(out, 0, t - 1, t), {n, 8}));
  };
  double first = 0, last = 0;
  for (int step = 0; step < 150; ++step) {
    NDArray loss;
    {
      autograd::RecordScope record;
      loss = loss_fn({logits(), y})[0];
    }
    autograd::Backward({loss});
    trainer.Step(n);
    last = ToDouble(nd::mean(loss))[0];
    if (step == 0) first = last;
  }
  EXPECT_LT(last, first * 0.3) << first << " -> " << last;
  const std::vector<double> predicted = ToDouble(nd::argmax(logits(), 1));
  int correct = 0;
  for (int64_t i = 0; i < n; ++i) correct += predicted[i] == labels[i];
  EXPECT_GE(correct, 60) << "of " << n;
}

TEST(RecurrentLayers, BadOptionsAreTypedErrors) {
  RecurrentLayer::Options layout;
  layout.layout = "NCT";
  EXPECT_TRUE(
      Contains(ErrorOf<InvalidArgument>([&] { LSTM(4, layout); }), "layout"));
  EXPECT_TRUE(Contains(ErrorOf<InvalidArgument>([] { RNN(4, "sigmoid"); }),
                       "activation"));
  RecurrentLayer::Options clip;
  clip.state_clip_min = -1;
  clip.state_clip_max = 1;
  EXPECT_TRUE(
      Contains(ErrorOf<InvalidArgument>([&] { GRU(4, clip); }), "state_clip"));
  LSTM lstm(4);
  lstm.Initialize();
  EXPECT_TRUE(Contains(ErrorOf<ShapeError>([&] {
                         lstm(RandomArray({4, 3}));
                       }),
                       "3 axes"));
}

}  // namespace
}  // namespace testing
}  // namespace nn
}  // namespace mx
