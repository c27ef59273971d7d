#include "autograd/autograd.h"

#include <cmath>
#include <iostream>
#include <random>
#include <thread>

#include "base/error.h"
#include "gtest/gtest.h"
#include "imperative/nd.h"
#include "testing/op_test_util.h"

namespace mx {
namespace autograd {
namespace {

using testing::AllClose;
using testing::ExpectError;
using testing::RandomArray;
using testing::ToDouble;

NDArray Op(const std::string& op, const std::vector<NDArray>& in,
           const AttrDict& attrs = {}) {
  return imperative::Invoke(op, in, attrs)[0];
}
NDArray Add(const NDArray& a, const NDArray& b) {
  return Op("elemwise_add", {a, b});
}
NDArray Mul(const NDArray& a, const NDArray& b) {
  return Op("elemwise_mul", {a, b});
}

std::vector<double> Map(const NDArray& a, double (*f)(double)) {
  std::vector<double> v = ToDouble(a);
  for (double& x : v) x = f(x);
  return v;
}

// The seed's unary cases: f(x) and the expected df/dx.
TEST(Autograd, UnaryFunctions) {
  struct Case {
    const char* name;
    std::function<NDArray(const NDArray&)> f;
    double (*grad)(double);
  };
  const std::vector<Case> cases = {
      {"exp", [](const NDArray& x) { return Op("exp", {x}); },
       [](double x) { return std::exp(x); }},
      {"half", [](const NDArray& x) { return x / 2; },
       [](double) { return 0.5; }},
      {"square", [](const NDArray& x) { return Mul(x, x); },
       [](double x) { return 2 * x; }},
  };
  for (const Case& c : cases) {
    NDArray x = RandomArray({3, 4}, DType::kFloat64);
    AttachGrad(&x);
    NDArray y;
    {
      RecordScope record;
      y = c.f(x);
    }
    Backward({y});
    EXPECT_TRUE(AllClose(ToDouble(x.grad()), Map(x, c.grad))) << c.name;
  }
}

// x + y, x * y and x + x * y with respect to both inputs.
TEST(Autograd, BinaryFunctions) {
  NDArray x = RandomArray({5}, DType::kFloat64, -1, 1, 1);
  NDArray y = RandomArray({5}, DType::kFloat64, -1, 1, 2);
  const std::vector<double> xv = ToDouble(x), yv = ToDouble(y);
  AttachGrad(&x);
  AttachGrad(&y);
  auto check = [&](std::function<NDArray()> f, std::vector<double> gx,
                   std::vector<double> gy) {
    NDArray z;
    {
      RecordScope record;
      z = f();
    }
    Backward({z});
    EXPECT_TRUE(AllClose(ToDouble(x.grad()), gx));
    EXPECT_TRUE(AllClose(ToDouble(y.grad()), gy));
  };
  std::vector<double> ones(5, 1.0), gx(5), gy(5);
  check([&] { return Add(x, y); }, ones, ones);
  check([&] { return Mul(x, y); }, yv, xv);
  for (int i = 0; i < 5; ++i) gx[i] = 1 + yv[i];
  check([&] { return Add(x, Mul(x, y)); }, gx, xv);
}

TEST(Autograd, HeadGradientsWeightTheResult) {
  NDArray x = RandomArray({4}, DType::kFloat64);
  AttachGrad(&x);
  NDArray y;
  {
    RecordScope record;
    y = Op("sin", {x});
  }
  NDArray head = RandomArray({4}, DType::kFloat64, -1, 1, 9);
  Backward({y}, {head});
  std::vector<double> expected = Map(x, [](double v) { return std::cos(v); });
  const std::vector<double> h = ToDouble(head);
  for (size_t i = 0; i < h.size(); ++i) expected[i] *= h[i];
  EXPECT_TRUE(AllClose(ToDouble(x.grad()), expected));
}

TEST(Autograd, AddRequestAccumulatesAcrossBackwards) {
  NDArray x = RandomArray({3}, DType::kFloat64);
  AttachGrad(&x, OpReqType::kAddTo);
  for (int i = 0; i < 3; ++i) {
    NDArray y;
    {
      RecordScope record;
      y = x * 3;
    }
    Backward({y});
  }
  EXPECT_TRUE(AllClose(ToDouble(x.grad()), {9, 9, 9}));
  // kWriteTo overwrites.
  NDArray w = RandomArray({3}, DType::kFloat64);
  AttachGrad(&w);
  for (int i = 0; i < 2; ++i) {
    NDArray y;
    {
      RecordScope record;
      y = w * 3;
    }
    Backward({y});
  }
  EXPECT_TRUE(AllClose(ToDouble(w.grad()), {3, 3, 3}));
}

// A gradient buffer read as a constant by the recorded computation keeps
// its old value for the gradient ops that read it, although Backward
// writes that buffer (gradient ops write straight into buffers otherwise).
TEST(Autograd, GradientBufferReadAsAConstantIsReadBeforeItIsWritten) {
  NDArray a = RandomArray({3}, DType::kFloat64, -1, 1, 1);
  NDArray b = RandomArray({3}, DType::kFloat64, -1, 1, 2);
  AttachGrad(&a);
  AttachGrad(&b);
  {
    NDArray y;
    {
      RecordScope record;
      y = Mul(b, b);
    }
    Backward({y});  // b.grad = 2b
  }
  const std::vector<double> old = ToDouble(b.grad());
  NDArray y;
  {
    RecordScope record;
    y = Add(Op("sin", {b}), Mul(a, b.grad()));
  }
  Backward({y});
  EXPECT_TRUE(AllClose(ToDouble(a.grad()), old));
  EXPECT_TRUE(AllClose(ToDouble(b.grad()),
                       Map(b, [](double v) { return std::cos(v); })));
}

TEST(Autograd, NullRequestSkipsTheVariable) {
  NDArray x = RandomArray({3}, DType::kFloat64, -1, 1, 1);
  NDArray y = RandomArray({3}, DType::kFloat64, -1, 1, 2);
  AttachGrad(&x);
  MarkVariables({&y}, {NDArray()}, {OpReqType::kNullOp});
  NDArray z;
  {
    RecordScope record;
    z = Mul(x, y);
  }
  Backward({z});
  EXPECT_TRUE(AllClose(ToDouble(x.grad()), ToDouble(y)));
  EXPECT_TRUE(y.grad().is_none());
}

TEST(Autograd, GradientsSumOverSeveralUses) {
  NDArray x = RandomArray({4}, DType::kFloat64);
  AttachGrad(&x);
  NDArray y;
  {
    RecordScope record;
    NDArray e = Op("exp", {x});
    y = Add(Mul(e, x), e);  // (x + 1) e^x: derivative (x + 2) e^x
  }
  Backward({y});
  EXPECT_TRUE(AllClose(ToDouble(x.grad()),
                       Map(x, [](double v) { return (v + 2) * std::exp(v); })));
}

TEST(Autograd, RetainGraphAllowsASecondBackward) {
  NDArray x = RandomArray({3}, DType::kFloat64);
  AttachGrad(&x, OpReqType::kAddTo);
  NDArray y;
  {
    RecordScope record;
    y = Op("exp", {x});
  }
  BackwardOptions retain;
  retain.retain_graph = true;
  Backward({y}, {}, retain);
  Backward({y});
  std::vector<double> twice = Map(x, [](double v) { return 2 * std::exp(v); });
  EXPECT_TRUE(AllClose(ToDouble(x.grad()), twice));
  ExpectError<StateError>([&] { Backward({y}); },
                          {"Backward", "freed", "retain_graph"});
}

TEST(Autograd, ClearErrors) {
  NDArray x = RandomArray({3});
  NDArray plain = RandomArray({3});
  ExpectError<StateError>([&] { Backward({plain}); },
                          {"Backward: head 0", "not part of a recorded graph"});
  AttachGrad(&x);
  NDArray y;
  {
    RecordScope record;
    y = Op("exp", {x});
  }
  ExpectError<InvalidArgument>([&] { Grad({y}, {plain}); },
                               {"Grad: variable 0", "not marked"});
  {
    RecordScope record;
    // In-place writes into recorded arrays.
    ExpectError<StateError>(
        [&] {
          std::vector<NDArray> out = {y};
          imperative::Invoke(MakeAttrs(OpRegistry::Get()->Lookup("exp"), {}),
                             {x}, &out);
        },
        {"op \"exp\"", "in place", "output 0", "recorded graph"});
    ExpectError<StateError>(
        [&] {
          std::vector<NDArray> out = {x};
          imperative::Invoke(MakeAttrs(OpRegistry::Get()->Lookup("exp"), {}),
                             {plain}, &out);
        },
        {"in place", "recorded graph"});
  }
  // Outside recording, updating a variable (an optimizer step) is fine.
  std::vector<NDArray> out = {x};
  imperative::Invoke(MakeAttrs(OpRegistry::Get()->Lookup("_copy"), {}), {plain},
                     &out);
  EXPECT_TRUE(AllClose(ToDouble(x), ToDouble(plain)));
  ExpectError<ShapeError>([&] { Backward({y}, {RandomArray({4})}); },
                          {"head gradient 0", "(4,)", "(3,)"});
  // An op without a gradient, reached by backward.
  NDArray z;
  {
    RecordScope record;
    z = Op("sgd_update", {x, y}, {{"lr", "0.1"}});
  }
  ExpectError<NotImplemented>([&] { Backward({z}); },
                              {"sgd_update", "has no gradient"});
}

TEST(Autograd, NothingIsRecordedOutsideTheScopeOrWithoutVariables) {
  NDArray x = RandomArray({3});
  AttachGrad(&x);
  NDArray y = Op("exp", {x});
  EXPECT_TRUE(y.autograd_entry().empty());
  NDArray c = RandomArray({3});
  {
    RecordScope record;
    EXPECT_TRUE(Op("exp", {c}).autograd_entry().empty());
    {
      PauseScope pause;
      EXPECT_FALSE(IsRecording());
      EXPECT_FALSE(IsTraining());
      EXPECT_TRUE(Op("exp", {x}).autograd_entry().empty());
    }
    EXPECT_TRUE(IsRecording());
    EXPECT_TRUE(IsTraining());
    EXPECT_FALSE(Op("exp", {x}).autograd_entry().empty());
    EXPECT_TRUE(Op("exp", {x}).Detach().autograd_entry().empty());
  }
  {
    RecordScope record(/*train_mode=*/false);
    EXPECT_FALSE(IsTraining());
    PredictModeScope predict;
    EXPECT_FALSE(IsTraining());
    {
      TrainModeScope train;
      EXPECT_TRUE(IsTraining());
    }
  }
  EXPECT_FALSE(IsRecording());
}

TEST(Autograd, RecordingIsPerThread) {
  NDArray x = RandomArray({3});
  AttachGrad(&x);
  RecordScope record;
  bool other_thread_records = true;
  NDArray from_thread;
  std::thread t([&] {
    other_thread_records = IsRecording();
    from_thread = Op("exp", {x});
  });
  t.join();
  EXPECT_FALSE(other_thread_records);
  EXPECT_TRUE(from_thread.autograd_entry().empty());
}

// d/dx and d2/dx2 of tanh, sin and x^3 through create_graph.
TEST(Autograd, SecondDerivatives) {
  struct Case {
    const char* name;
    std::function<NDArray(const NDArray&)> f;
    double (*second)(double);
  };
  const std::vector<Case> cases = {
      {"tanh", [](const NDArray& x) { return Op("tanh", {x}); },
       [](double x) {
         const double t = std::tanh(x);
         return -2 * t * (1 - t * t);
       }},
      {"sin", [](const NDArray& x) { return Op("sin", {x}); },
       [](double x) { return -std::sin(x); }},
      {"cube", [](const NDArray& x) { return Mul(x, Mul(x, x)); },
       [](double x) { return 6 * x; }},
  };
  for (const Case& c : cases) {
    NDArray x = RandomArray({6}, DType::kFloat64, -1, 1, 3);
    AttachGrad(&x);
    NDArray dx;
    {
      RecordScope record;
      NDArray y = c.f(x);
      GradOptions create;
      create.create_graph = true;
      dx = Grad({y}, {x}, {}, create)[0];
    }
    EXPECT_FALSE(dx.autograd_entry().empty()) << c.name;
    Backward({dx});
    EXPECT_TRUE(AllClose(ToDouble(x.grad()), Map(x, c.second))) << c.name;
  }
}

TEST(Autograd, GradLeavesAttachedBuffersAlone) {
  NDArray x = RandomArray({3}, DType::kFloat64);
  AttachGrad(&x);
  NDArray y;
  {
    RecordScope record;
    y = Op("exp", {x});
  }
  std::vector<NDArray> g = Grad({y}, {x});
  EXPECT_TRUE(
      AllClose(ToDouble(g[0]), Map(x, [](double v) { return std::exp(v); })));
  EXPECT_TRUE(AllClose(ToDouble(x.grad()), {0, 0, 0}));
  EXPECT_TRUE(g[0].autograd_entry().empty());
}

// f(x) = x^2 with a deliberately scaled backward, to see it is used.
class ScaledSquare : public Function {
 public:
  std::vector<NDArray> Forward(const std::vector<NDArray>& in) override {
    x_ = in[0];
    return {Mul(in[0], in[0])};
  }
  std::vector<NDArray> Backward(const std::vector<NDArray>& g) override {
    ++backward_calls;
    return {Mul(g[0], x_) * 20, NDArray()};  // 10x the true gradient.
  }
  int backward_calls = 0;

 private:
  NDArray x_;
};

TEST(Autograd, UserDefinedFunction) {
  NDArray x = RandomArray({4}, DType::kFloat64, -1, 1, 1);
  NDArray unused = RandomArray({2}, DType::kFloat64, -1, 1, 2);
  AttachGrad(&x);
  AttachGrad(&unused);
  auto f = std::make_shared<ScaledSquare>();
  NDArray y;
  {
    RecordScope record;
    y = Op("exp", {(*f)({x, unused})[0]});
  }
  Backward({y});
  EXPECT_EQ(f->backward_calls, 1);
  std::vector<double> expected = ToDouble(x);
  for (double& v : expected) v = 20 * v * std::exp(v * v);
  EXPECT_TRUE(AllClose(ToDouble(x.grad()), expected));
  EXPECT_TRUE(AllClose(ToDouble(unused.grad()), {0, 0}));
  // Unrecorded calls just run Forward.
  EXPECT_TRUE((*f)({x, unused})[0].autograd_entry().empty());
}

// The seed's operator-with-state case: FullyConnected(a * b, W, bias),
// checked against the closed form (head gradient ones).
TEST(Autograd, FullyConnectedOfAProduct) {
  NDArray a = RandomArray({8, 5}, DType::kFloat64, 0, 1, 1);
  NDArray b = RandomArray({8, 5}, DType::kFloat64, 0, 1, 2);
  NDArray w = RandomArray({3, 5}, DType::kFloat64, 0, 1, 3);
  NDArray bias = RandomArray({3}, DType::kFloat64, 0, 1, 4);
  for (NDArray* x : {&a, &b, &w, &bias}) AttachGrad(x);
  NDArray fc;
  {
    RecordScope record;
    fc = nd::FullyConnected(a * b, w, bias, 3);
  }
  Backward({fc});
  const std::vector<double> av = ToDouble(a), bv = ToDouble(b),
                            wv = ToDouble(w);
  // d/dx_ij sum_k (x W^T)_ik = sum_k W_kj; x = a * b.
  std::vector<double> wsum(5, 0), ga(40), gb(40), gw(15, 0);
  for (int k = 0; k < 3; ++k)
    for (int j = 0; j < 5; ++j) wsum[j] += wv[k * 5 + j];
  for (int i = 0; i < 8; ++i) {
    for (int j = 0; j < 5; ++j) {
      ga[i * 5 + j] = wsum[j] * bv[i * 5 + j];
      gb[i * 5 + j] = wsum[j] * av[i * 5 + j];
      for (int k = 0; k < 3; ++k)
        gw[k * 5 + j] += av[i * 5 + j] * bv[i * 5 + j];
    }
  }
  EXPECT_TRUE(AllClose(ToDouble(a.grad()), ga));
  EXPECT_TRUE(AllClose(ToDouble(b.grad()), gb));
  EXPECT_TRUE(AllClose(ToDouble(w.grad()), gw));
  EXPECT_TRUE(AllClose(ToDouble(bias.grad()), {8, 8, 8}));
}

TEST(Autograd, HigherOrderThroughAFirstOrderKernelIsAClearError) {
  NDArray x = RandomArray({1, 1, 4, 4}, DType::kFloat64);
  NDArray w = RandomArray({1, 1, 3, 3}, DType::kFloat64);
  AttachGrad(&x);
  RecordScope record;
  NDArray y = nd::sum(nd::Convolution(x, w, NDArray(), {3, 3}, 1, {}, {}, {}, 1,
                                      /*no_bias=*/true));
  GradOptions create;
  create.create_graph = true;
  NDArray g = Grad({y}, {x}, {}, create)[0];
  ExpectError<NotImplemented>([&] { Backward({nd::sum(g)}); },
                              {"_backward_Convolution", "no gradient"});
}

// Two Gaussian blobs per class in 2-D, separable by the MLP below; plain
// SGD through autograd reaches (near) perfect accuracy.
TEST(Autograd, TrainsAnMLP) {
  random::Seed(3);
  const int64_t n = 256;
  std::vector<float> xs, ys;
  std::mt19937 gen(5);
  std::normal_distribution<float> noise(0, 0.3f);
  for (int64_t i = 0; i < n; ++i) {
    const int label = static_cast<int>(i % 2),
              blob = static_cast<int>(i / 2 % 2);
    // XOR layout: class 0 at (1,1), (-1,-1); class 1 at (1,-1), (-1,1).
    const float cx = blob == 0 ? 1.f : -1.f;
    const float cy = label == 0 ? cx : -cx;
    xs.push_back(cx + noise(gen));
    xs.push_back(cy + noise(gen));
    ys.push_back(static_cast<float>(label));
  }
  NDArray x = NDArray::FromVector<float>({n, 2}, xs);
  NDArray y = NDArray::FromVector<float>({n}, ys);
  std::vector<NDArray> params = {
      nd::random_normal(0, 0.5, {16, 2}), nd::zeros({16}),
      nd::random_normal(0, 0.5, {2, 16}), nd::zeros({2})};
  for (NDArray& p : params) AttachGrad(&p);
  auto forward = [&] {
    NDArray h = nd::tanh(nd::FullyConnected(x, params[0], params[1], 16));
    return nd::FullyConnected(h, params[2], params[3], 2);
  };
  double first_loss = 0, last_loss = 0;
  for (int step = 0; step < 300; ++step) {
    NDArray loss;
    {
      RecordScope record;
      loss = nd::softmax_cross_entropy(forward(), y) / static_cast<double>(n);
    }
    Backward({loss});
    for (NDArray& p : params) nd::sgd_update(p, p.grad(), 0.5);
    const double l = ToDouble(loss)[0];
    if (step == 0) first_loss = l;
    last_loss = l;
  }
  const std::vector<double> pred = ToDouble(nd::argmax(forward(), 1));
  int correct = 0;
  for (int64_t i = 0; i < n; ++i) correct += pred[i] == ys[i];
  std::cout << "loss " << first_loss << " -> " << last_loss << ", accuracy "
            << correct / static_cast<double>(n) << "\n";
  EXPECT_LT(last_loss, first_loss / 5);
  EXPECT_GE(correct, n * 98 / 100);
}

}  // namespace
}  // namespace autograd
}  // namespace mx
