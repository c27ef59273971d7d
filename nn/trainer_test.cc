// Optimizer steps against hand-computed updates, and end-to-end training.
#include "nn/trainer.h"

#include <cmath>
#include <random>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "nn/nn_test_util.h"

namespace mx {
namespace nn {
namespace testing {
namespace {

// One parameter w; the loss sum(w * c) gives the gradient c.
struct Fixture {
  Fixture() : params{{"w", std::make_shared<Parameter>("w", TShape{3})}} {
    params[0].second->SetData(NDArray::FromVector<float>({3}, {1, -2, 0.5f}));
  }
  void Backward() {
    NDArray loss;
    {
      autograd::RecordScope record;
      loss = nd::sum(params[0].second->data() * c);
    }
    autograd::Backward({loss});
  }
  std::vector<double> w() const { return ToDouble(params[0].second->data()); }

  ParameterList params;
  NDArray c = NDArray::FromVector<float>({3}, {4, 2, -6});
  std::vector<double> g = {4, 2, -6};
};

TEST(Trainer, SGDWithWeightDecayRescalesByBatchSize) {
  Fixture f;
  SGDOptions o;
  o.learning_rate = 0.1;
  o.wd = 0.01;
  Trainer trainer(f.params, MakeSGD(o));
  std::vector<double> w = f.w();
  f.Backward();
  trainer.Step(2);
  for (int i = 0; i < 3; ++i) w[i] -= 0.1 * (f.g[i] / 2 + 0.01 * w[i]);
  EXPECT_TRUE(AllClose(f.w(), w));
}

TEST(Trainer, SGDMomentumKeepsVelocity) {
  Fixture f;
  SGDOptions o;
  o.learning_rate = 0.1;
  o.momentum = 0.9;
  Trainer trainer(f.params, MakeSGD(o));
  std::vector<double> w = f.w(), mom(3, 0);
  for (int step = 0; step < 3; ++step) {
    f.Backward();
    trainer.Step(4);
    for (int i = 0; i < 3; ++i) {
      mom[i] = 0.9 * mom[i] - 0.1 * (f.g[i] / 4);
      w[i] += mom[i];
    }
    EXPECT_TRUE(AllClose(f.w(), w)) << "step " << step;
  }
}

// Several parameters with momentum go through _multi_sgd_mom_update in
// runs (split where the dtype changes); the weights equal per-parameter
// sgd_mom_update steps.
TEST(Trainer, SGDMomentumOverManyParametersEqualsOneUpdateEach) {
  ParameterList params;
  std::vector<NDArray> ref_w, ref_m, grads;
  for (int k = 0; k < 30; ++k) {
    const DType dtype = k == 7 ? DType::kFloat64 : DType::kFloat32;
    Parameter::Options options;
    options.dtype = dtype;
    auto p = std::make_shared<Parameter>(absl::StrCat("p", k), TShape{k + 1},
                                         options);
    p->SetData(RandomArray({k + 1}, dtype, -1, 1, k));
    params.push_back({absl::StrCat("p", k), p});
    ref_w.push_back(p->data().Copy(Context::CPU()));
    ref_m.push_back(nd::zeros({k + 1}, Context::CPU(), dtype));
  }
  SGDOptions o;
  o.learning_rate = 0.1;
  o.momentum = 0.9;
  o.wd = 0.01;
  Trainer trainer(params, MakeSGD(o));
  for (int step = 0; step < 3; ++step) {
    for (int k = 0; k < 30; ++k) {
      const auto& p = params[k].second;
      CopyFromTo(RandomArray({k + 1}, p->data().dtype(), -1, 1, 100 * step + k),
                 p->grad());
      NDArray w = p->data();
      autograd::SetGradFresh(&w, true);  // Filled by hand, not by Backward.
      nd::sgd_mom_update(ref_w[k], p->grad(), ref_m[k], 0.1, 0.9, 0.01, 0.25);
    }
    trainer.Step(4);
  }
  for (int k = 0; k < 30; ++k) {
    EXPECT_EQ(ToDouble(params[k].second->data()), ToDouble(ref_w[k]))
        << "parameter " << k;
  }
}

TEST(Trainer, AdamAppliesBiasCorrection) {
  Fixture f;
  AdamOptions o;
  o.learning_rate = 0.01;
  Trainer trainer(f.params, MakeAdam(o));
  std::vector<double> w = f.w(), m(3, 0), v(3, 0);
  for (int t = 1; t <= 3; ++t) {
    f.Backward();
    trainer.Step(2);
    const double lr =
        0.01 * std::sqrt(1 - std::pow(0.999, t)) / (1 - std::pow(0.9, t));
    for (int i = 0; i < 3; ++i) {
      const double g = f.g[i] / 2;
      m[i] = 0.9 * m[i] + 0.1 * g;
      v[i] = 0.999 * v[i] + 0.001 * g * g;
      w[i] -= lr * m[i] / (std::sqrt(v[i]) + 1e-8);
    }
    EXPECT_TRUE(AllClose(f.w(), w, 1e-5, 1e-6)) << "step " << t;
  }
}

// Two parameters; the loss sum(a * c) + sum(b * c) uses b only when asked.
struct TwoParameters {
  TwoParameters() {
    for (const char* name : {"a", "b"}) {
      auto p = std::make_shared<Parameter>(name, TShape{2});
      p->SetData(NDArray::FromVector<float>({2}, {1, 2}));
      params.push_back({name, p});
    }
  }
  void Backward(bool use_b) {
    NDArray loss;
    {
      autograd::RecordScope record;
      loss = nd::sum(params[0].second->data() * c);
      if (use_b) loss = loss + nd::sum(params[1].second->data() * c);
    }
    autograd::Backward({loss});
  }
  std::vector<double> w(int i) const {
    return ToDouble(params[i].second->data());
  }
  ParameterList params;
  NDArray c = NDArray::FromVector<float>({2}, {1, -1});
};

TEST(Trainer, StaleGradientIsRefusedAndNothingMoves) {
  TwoParameters t;
  SGDOptions o;
  o.learning_rate = 0.5;
  Trainer trainer(t.params, MakeSGD(o));
  t.Backward(/*use_b=*/true);
  trainer.Step(1);
  EXPECT_EQ(t.w(0), (std::vector<double>{0.5, 2.5}));
  EXPECT_EQ(t.w(1), (std::vector<double>{0.5, 2.5}));
  // b's gradient buffer still holds the last one; MXNet refuses to apply it
  // again.
  t.Backward(/*use_b=*/false);
  try {
    trainer.Step(1);
    FAIL() << "no error";
  } catch (const StateError& e) {
    EXPECT_TRUE(testing::Contains(e.what(), "\"b\"")) << e.what();
    EXPECT_TRUE(testing::Contains(e.what(), "ignore_stale_grad")) << e.what();
  }
  EXPECT_EQ(t.w(0), (std::vector<double>{0.5, 2.5}));  // Nothing moved.
  EXPECT_EQ(t.w(1), (std::vector<double>{0.5, 2.5}));
  // A second Step without a backward is refused too.
  t.Backward(/*use_b=*/true);
  trainer.Step(1);
  EXPECT_THROW(trainer.Step(1), StateError);
}

TEST(Trainer, IgnoreStaleGradSkipsThoseParameters) {
  TwoParameters t;
  SGDOptions o;
  o.learning_rate = 0.5;
  o.momentum = 0.9;
  o.wd = 0.1;
  Trainer trainer(t.params, MakeSGD(o));
  t.Backward(/*use_b=*/true);
  trainer.Step(1);
  const std::vector<double> a = t.w(0), b = t.w(1);
  t.Backward(/*use_b=*/false);
  trainer.Step(1, /*ignore_stale_grad=*/true);
  EXPECT_NE(t.w(0), a);
  // Neither its old gradient, nor weight decay, nor momentum moved b.
  EXPECT_EQ(t.w(1), b);
  // b resumes with its momentum where it stopped: the same result as one
  // step of b alone after the first.
  t.Backward(/*use_b=*/true);
  trainer.Step(1);
  TwoParameters ref;
  Trainer ref_trainer(ref.params, MakeSGD(o));
  for (int step = 0; step < 2; ++step) {
    ref.Backward(/*use_b=*/true);
    ref_trainer.Step(1);
  }
  EXPECT_TRUE(AllClose(t.w(1), ref.w(1)));
}

TEST(Trainer, GradientFreshness) {
  TwoParameters t;
  NDArray a = t.params[0].second->data(), b = t.params[1].second->data();
  EXPECT_FALSE(autograd::IsGradFresh(a));
  t.Backward(/*use_b=*/false);
  EXPECT_TRUE(autograd::IsGradFresh(a));
  EXPECT_FALSE(autograd::IsGradFresh(b));
  autograd::SetGradFresh(&a, false);
  EXPECT_FALSE(autograd::IsGradFresh(a));
  NDArray plain = NDArray::FromVector<float>({1}, {1});
  EXPECT_FALSE(autograd::IsGradFresh(plain));
  EXPECT_THROW(autograd::SetGradFresh(&plain, true), StateError);
}

TEST(Trainer, SkipsParametersWithoutGradient) {
  Parameter::Options aux;
  aux.grad_req = GradReq::kNull;
  auto stats = std::make_shared<Parameter>("running_mean", TShape{2}, aux);
  stats->Initialize(init::Ones());
  Trainer trainer({{"running_mean", stats}}, MakeSGD(SGDOptions()));
  trainer.Step(1);
  EXPECT_EQ(ToDouble(stats->data()), (std::vector<double>{1, 1}));
  EXPECT_THROW(trainer.Step(0), InvalidArgument);
}

TEST(Trainer, UninitializedParameterIsNamed) {
  auto w = std::make_shared<Parameter>("weight", TShape{2, 0});
  Trainer trainer({{"0.weight", w}}, MakeSGD(SGDOptions()));
  try {
    trainer.Step(1);
    FAIL() << "no error";
  } catch (const StateError& e) {
    EXPECT_TRUE(testing::Contains(e.what(), "\"0.weight\"")) << e.what();
  }
}

// Two Gaussian blobs on either side of the line x0 + x1 = 0.
void MakeData(NDArray* x, NDArray* y) {
  const int n = 128;
  std::vector<float> xs, ys;
  uint32_t state = 12345;
  auto uniform = [&] {
    state = state * 1664525u + 1013904223u;
    return (state >> 8) / static_cast<float>(1 << 24) * 2 - 1;
  };
  for (int i = 0; i < n; ++i) {
    const float label = i % 2;
    const float shift = label == 1 ? 1.0f : -1.0f;
    xs.push_back(shift + 0.5f * uniform());
    xs.push_back(shift + 0.5f * uniform());
    ys.push_back(label);
  }
  *x = NDArray::FromVector<float>({n, 2}, xs);
  *y = NDArray::FromVector<float>({n}, ys);
}

double TrainMlp(bool hybridize) {
  random::Seed(3);
  auto net = std::make_shared<HybridSequential>();
  net->Add(std::make_shared<Dense>(16, "relu")).Add(std::make_shared<Dense>(2));
  net->Initialize(init::Xavier());
  if (hybridize) net->Hybridize();
  SoftmaxCrossEntropyLoss loss_fn;
  SGDOptions o;
  o.learning_rate = 0.2;
  o.momentum = 0.9;
  Trainer trainer(net->CollectParams(), MakeSGD(o));
  NDArray x, y;
  MakeData(&x, &y);
  double first_loss = 0, last_loss = 0;
  for (int epoch = 0; epoch < 40; ++epoch) {
    NDArray loss;
    {
      autograd::RecordScope record;
      loss = loss_fn({(*net)(x), y})[0];
    }
    autograd::Backward({loss});
    trainer.Step(128);
    const double mean = ToDouble(nd::mean(loss))[0];
    if (epoch == 0) first_loss = mean;
    last_loss = mean;
  }
  EXPECT_LT(last_loss, first_loss * 0.2);
  const std::vector<double> predicted = ToDouble(nd::argmax((*net)(x), 1));
  const std::vector<double> labels = ToDouble(y);
  int correct = 0;
  for (size_t i = 0; i < labels.size(); ++i)
    correct += predicted[i] == labels[i];
  if (hybridize) {
    EXPECT_EQ(net->num_traces(), 1);
  }
  return correct / static_cast<double>(labels.size());
}

TEST(Training, MlpConvergesImperatively) { EXPECT_GE(TrainMlp(false), 0.97); }

TEST(Training, MlpConvergesHybridized) { EXPECT_GE(TrainMlp(true), 0.97); }

// Sequences of 8 frames, each frame a noisy one-hot of a symbol in
// {0, 1, 2, blank = 3}; the labels are the paths collapsed as CTC does.
// A per-frame Dense layer trained with CTCLoss must learn to read them.
TEST(Training, CtcLossTrainsAFrameClassifier) {
  random::Seed(4);
  const int64_t n = 32, t = 8, classes = 4;
  std::mt19937 gen(7);
  std::uniform_int_distribution<int> symbol(0, 3);
  std::normal_distribution<float> noise(0, 0.2f);
  std::vector<float> xs, labels(n * t, -1);
  std::vector<std::vector<int>> collapsed(n);
  for (int64_t i = 0; i < n; ++i) {
    int prev = -1;
    for (int64_t f = 0; f < t; ++f) {
      const int s = symbol(gen);
      for (int c = 0; c < classes; ++c) xs.push_back((c == s) + noise(gen));
      if (s != 3 && s != prev) collapsed[i].push_back(s);
      prev = s;
    }
    for (size_t j = 0; j < collapsed[i].size(); ++j) {
      labels[i * t + j] = static_cast<float>(collapsed[i][j]);
    }
  }
  const NDArray x = NDArray::FromVector<float>({n, t, classes}, xs);
  const NDArray y = NDArray::FromVector<float>({n, t}, labels);
  Dense::Options dense;
  dense.flatten = false;
  auto net = std::make_shared<Dense>(classes, dense);
  net->Initialize(init::Xavier());
  net->Hybridize();
  CTCLoss ctc;
  AdamOptions o;
  o.learning_rate = 0.05;
  Trainer trainer(net->CollectParams(), MakeAdam(o));
  double first = 0, last = 0;
  for (int step = 0; step < 60; ++step) {
    NDArray loss;
    {
      autograd::RecordScope record;
      loss = ctc({(*net)(x), y})[0];
    }
    autograd::Backward({loss});
    trainer.Step(n);
    last = ToDouble(nd::mean(loss))[0];
    if (step == 0) first = last;
  }
  EXPECT_LT(last, first * 0.2) << first << " -> " << last;
  // Greedy decoding (best class per frame, collapsed) reads the labels.
  const std::vector<double> best = ToDouble(nd::argmax((*net)(x), 2));
  int correct = 0;
  for (int64_t i = 0; i < n; ++i) {
    std::vector<int> decoded;
    int prev = -1;
    for (int64_t f = 0; f < t; ++f) {
      const int s = static_cast<int>(best[i * t + f]);
      if (s != 3 && s != prev) decoded.push_back(s);
      prev = s;
    }
    correct += decoded == collapsed[i];
  }
  EXPECT_GE(correct, 30) << "of " << n;
}

}  // namespace
}  // namespace testing
}  // namespace nn
}  // namespace mx
