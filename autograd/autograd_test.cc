#include "autograd/autograd.h"

#include <cmath>
#include <thread>

#include "backends/cpu/op_test_util.h"
#include "base/error.h"
#include "gtest/gtest.h"
#include "imperative/nd.h"

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

}  // namespace
}  // namespace autograd
}  // namespace mx
