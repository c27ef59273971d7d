// A CachedOp call under autograd is one recorded node whose gradient equals
// that of the same computation recorded op by op.
#include "autograd/autograd.h"
#include "base/error.h"
#include "graph/symbol.h"
#include "gtest/gtest.h"
#include "imperative/cached_op.h"
#include "imperative/nd.h"
#include "testing/op_test_util.h"

namespace mx {
namespace {

using testing::AllClose;
using testing::ExpectError;
using testing::RandomArray;
using testing::ToDouble;

// f(x, w) = (tanh(x * w) + exp(x), sin(w))
Symbol Net() {
  Symbol x = Symbol::Variable("x"), w = Symbol::Variable("w");
  Symbol t = Symbol::Create("tanh", {Symbol::Create("elemwise_mul", {x, w})});
  Symbol y = Symbol::Create("elemwise_add", {t, Symbol::Create("exp", {x})});
  return Symbol::Group({y, Symbol::Create("sin", {w})});
}

std::vector<NDArray> Imperative(const NDArray& x, const NDArray& w) {
  auto op = [](const std::string& name, std::vector<NDArray> in) {
    return imperative::Invoke(name, in)[0];
  };
  NDArray t = op("tanh", {op("elemwise_mul", {x, w})});
  return {op("elemwise_add", {t, op("exp", {x})}), op("sin", {w})};
}

struct Grads {
  std::vector<double> x, w;
};

// Gradients of sum(2 * out0 + out1) with both inputs marked, computed with
// `f` called twice on different inputs inside one recorded graph.
Grads Differentiate(
    const std::function<std::vector<NDArray>(NDArray, NDArray)>& f) {
  NDArray x = RandomArray({3, 4}, DType::kFloat64, -1, 1, 1);
  NDArray w = RandomArray({3, 4}, DType::kFloat64, -1, 1, 2);
  autograd::AttachGrad(&x);
  autograd::AttachGrad(&w);
  NDArray loss;
  {
    autograd::RecordScope record;
    std::vector<NDArray> a = f(x, w);
    std::vector<NDArray> b = f(imperative::Invoke("square", {x})[0], w);
    loss = imperative::Invoke(
        "elemwise_add",
        {imperative::Invoke("_mul_scalar", {a[0]}, {{"scalar", "2"}})[0],
         imperative::Invoke("elemwise_add", {a[1], b[0]})[0]})[0];
  }
  autograd::Backward({loss});
  return {ToDouble(x.grad()), ToDouble(w.grad())};
}

TEST(CachedOpAutograd, GradientsMatchImperative) {
  CachedOp op(Net());
  const Grads expected = Differentiate(Imperative);
  const Grads actual = Differentiate([&](NDArray x, NDArray w) {
    return op.Forward({x, w});
  });
  EXPECT_TRUE(AllClose(actual.x, expected.x));
  EXPECT_TRUE(AllClose(actual.w, expected.w));
}

// One call: the call's gradient ops write x.grad and w.grad themselves
// (GraphRunner::BindOutput) under each variable's request, including a sum
// of two paths (x feeds two ops) added to the array.
TEST(CachedOpAutograd, GradientsLandUnderTheVariablesRequests) {
  CachedOp op(Net());
  auto gradients = [&](bool cached, int backwards) {
    NDArray x = RandomArray({3, 4}, DType::kFloat64, -1, 1, 1);
    NDArray w = RandomArray({3, 4}, DType::kFloat64, -1, 1, 2);
    autograd::AttachGrad(&x, OpReqType::kAddTo);
    autograd::AttachGrad(&w, OpReqType::kWriteTo);
    for (int i = 0; i < backwards; ++i) {
      NDArray loss;
      {
        autograd::RecordScope record;
        std::vector<NDArray> y = cached ? op.Forward({x, w}) : Imperative(x, w);
        loss = imperative::Invoke(
            "elemwise_add",
            {imperative::Invoke("_mul_scalar", {y[0]}, {{"scalar", "2"}})[0],
             y[1]})[0];
      }
      autograd::Backward({loss});
    }
    return Grads{ToDouble(x.grad()), ToDouble(w.grad())};
  };
  const Grads once = gradients(false, 1);
  const Grads cached = gradients(true, 3);
  std::vector<double> thrice = once.x;
  for (double& v : thrice) v *= 3;
  EXPECT_TRUE(AllClose(cached.x, thrice));  // kAddTo: three gradients
  EXPECT_TRUE(AllClose(cached.w, once.w));  // kWriteTo: the last one
}

// A retained call differentiated again: Grad returns a new array and
// leaves x.grad (bound by the first Backward) alone.
TEST(CachedOpAutograd, RetainedCallThenGradLeavesTheBufferAlone) {
  CachedOp op(Net());
  NDArray x = RandomArray({3, 4}, DType::kFloat64, -1, 1, 1);
  NDArray w = RandomArray({3, 4}, DType::kFloat64, -1, 1, 2);
  autograd::AttachGrad(&x, OpReqType::kAddTo);
  autograd::AttachGrad(&w);
  NDArray loss;
  {
    autograd::RecordScope record;
    std::vector<NDArray> y = op.Forward({x, w});
    loss = imperative::Invoke("elemwise_add", {y[0], y[1]})[0];
  }
  autograd::BackwardOptions retain;
  retain.retain_graph = true;
  autograd::Backward({loss}, {}, retain);
  const std::vector<double> once = ToDouble(x.grad());
  const NDArray g = autograd::Grad({loss}, {x})[0];
  EXPECT_FALSE(g.SharesChunkWith(x.grad()));
  EXPECT_TRUE(AllClose(ToDouble(g), once));
  EXPECT_TRUE(AllClose(ToDouble(x.grad()), once));
}

TEST(CachedOpAutograd, OnlyRecordedInputsGetGradients) {
  CachedOp op(Net());
  NDArray x = RandomArray({2}, DType::kFloat64, -1, 1, 1);
  NDArray w = RandomArray({2}, DType::kFloat64, -1, 1, 2);
  autograd::AttachGrad(&w);
  std::vector<NDArray> y;
  {
    autograd::RecordScope record;
    y = op.Forward({x, w});
  }
  EXPECT_FALSE(y[0].autograd_entry().empty());
  EXPECT_EQ(y[0].autograd_entry().node->op()->name(), "_CachedOp");
  autograd::Backward({y[0]});
  // d/dw tanh(x w) = x (1 - tanh^2(x w))
  std::vector<double> xv = ToDouble(x), wv = ToDouble(w), expected;
  for (size_t i = 0; i < xv.size(); ++i) {
    const double t = std::tanh(xv[i] * wv[i]);
    expected.push_back(xv[i] * (1 - t * t));
  }
  EXPECT_TRUE(AllClose(ToDouble(w.grad()), expected));
  // Unrecorded calls are not recorded.
  EXPECT_TRUE(op.Forward({x, w})[0].autograd_entry().empty());
}

TEST(CachedOpAutograd, HigherOrderIsAClearError) {
  CachedOp op(Net());
  NDArray x = RandomArray({2}, DType::kFloat64);
  NDArray w = RandomArray({2}, DType::kFloat64);
  autograd::AttachGrad(&x);
  autograd::RecordScope record;
  std::vector<NDArray> y = op.Forward({x, w});
  autograd::GradOptions create;
  create.create_graph = true;
  ExpectError<NotImplemented>(
      [&] { autograd::Grad({y[0]}, {x}, {}, create); },
      {"create_graph", "_CachedOp_backward", "has no gradient"});
}

// (boolean_mask(x * w, m), m * 2, flatnonzero(m)): dynamic shapes, so the
// CachedOp runs op by op.
Symbol DynamicNet() {
  Symbol x = Symbol::Variable("x"), w = Symbol::Variable("w"),
         m = Symbol::Variable("m");
  return Symbol::Group(
      {Symbol::Create("boolean_mask",
                      {Symbol::Create("elemwise_mul", {x, w}), m}),
       Symbol::Create("_mul_scalar", {m}, {{"scalar", "2"}}),
       Symbol::Create("flatnonzero", {m})});
}

TEST(CachedOpAutograd, OpByOpRecordsEveryOutput) {
  CachedOp op(DynamicNet());
  const NDArray x =
      testing::ArrayOf({3, 2}, {1, 2, 3, 4, 5, 6}, DType::kFloat64);
  const NDArray m = testing::ArrayOf({3}, {1, 0, 1}, DType::kFloat64);
  NDArray w = RandomArray({3, 2}, DType::kFloat64, -1, 1, 2);
  autograd::AttachGrad(&w);
  std::vector<NDArray> y;
  {
    autograd::RecordScope record;
    y = op.Forward({x, w, m});
  }
  ASSERT_EQ(y.size(), 3u);
  for (const NDArray& out : y) EXPECT_FALSE(out.autograd_entry().empty());
  EXPECT_EQ(y[0].shape(), TShape({2, 2}));
  autograd::BackwardOptions retain;
  retain.retain_graph = true;
  // d sum(h * boolean_mask(x w, m)) / dw: h's rows times x on kept rows.
  const NDArray h = testing::ArrayOf({2, 2}, {1, 2, 3, 4}, DType::kFloat64);
  autograd::Backward({y[0]}, {h}, retain);
  EXPECT_TRUE(AllClose(ToDouble(w.grad()), {1, 4, 0, 0, 15, 24}));
  // Outputs that w does not feed (one of them int64) give it zeros, as
  // from a call recorded as one node.
  autograd::Backward({y[1]}, {}, retain);
  EXPECT_TRUE(AllClose(ToDouble(w.grad()), std::vector<double>(6, 0.0)));
  autograd::Backward({y[0]}, {h}, retain);
  autograd::Backward({y[2]});
  EXPECT_TRUE(AllClose(ToDouble(w.grad()), std::vector<double>(6, 0.0)));
}

// MXNet 2's x[idx] (_npi_advanced_indexing, dynamic shape) in a graph:
// rows picked twice get their gradients added.
TEST(CachedOpAutograd, AdvancedIndexingGradient) {
  Symbol x = Symbol::Variable("x"), w = Symbol::Variable("w"),
         idx = Symbol::Variable("idx");
  CachedOp op(Symbol::Create("_npi_advanced_indexing",
                             {Symbol::Create("elemwise_mul", {x, w}), idx}));
  const NDArray xv =
      testing::ArrayOf({3, 2}, {1, 2, 3, 4, 5, 6}, DType::kFloat64);
  const NDArray iv = testing::ArrayOf({3}, {2, 0, 2}, DType::kInt32);
  NDArray wv = RandomArray({3, 2}, DType::kFloat64, -1, 1, 3);
  autograd::AttachGrad(&wv);
  std::vector<NDArray> y;
  {
    autograd::RecordScope record;
    y = op.Forward({xv, wv, iv});
  }
  EXPECT_EQ(y[0].shape(), TShape({3, 2}));
  const NDArray h =
      testing::ArrayOf({3, 2}, {1, 2, 3, 4, 5, 6}, DType::kFloat64);
  autograd::Backward({y[0]}, {h});
  // Row 0 gets h's row 1 (3, 4) times x's row 0; row 2 gets h's rows 0
  // and 2 ((1, 2) + (5, 6)) times x's row 2; row 1 nothing.
  EXPECT_TRUE(AllClose(ToDouble(wv.grad()), {3, 8, 0, 0, 30, 48}));
}

}  // namespace
}  // namespace mx
