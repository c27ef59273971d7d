// Every registered op has a gradient (FGradient), has no inputs, or is
// listed below as having none; and the Gradient pass names an op without
// one when backward reaches it. The test links every library that
// registers ops (CPU kernels, autograd, CachedOp, deferred compute, the
// default subgraph op), so the audit covers them all.
#include <algorithm>
#include <iterator>
#include <string>
#include <vector>

#include "base/error.h"
#include "graph/node.h"
#include "graph/symbol.h"
#include "gtest/gtest.h"
#include "imperative/executor.h"
#include "imperative/nd.h"  // Links the CPU operator library.
#include "testing/op_test_util.h"

namespace mx {
namespace {

// Ops with no mathematical gradient.
constexpr const char* kNonDifferentiable[] = {
    // Optimizer steps: they consume gradients; training does not
    // differentiate through them.
    "sgd_update",
    "sgd_mom_update",
    "_multi_sgd_mom_update",
    "adam_update",
    // The backward of a recorded CachedOp call or autograd::Function call:
    // first order only; differentiating through it again is a clear
    // NotImplemented (autograd's create_graph check).
    "_CachedOp_backward",
    "_autograd_function_backward",
};

// Backward kernels of ops like Convolution compute first-order gradients
// only; differentiating through them again is a clear NotImplemented
// (tested below). Backward helpers that are linear (_backward_slice, ...)
// have gradients and are checked like any op.
bool IsFirstOrderKernel(const std::string& name) {
  return name.rfind("_backward_", 0) == 0;
}

template <size_t N>
bool Listed(const char* const (&list)[N], const std::string& name) {
  return std::find(std::begin(list), std::end(list), name) != std::end(list);
}

bool HasNoInputs(const Op& op) {
  NodeAttrs attrs;
  attrs.op = &op;
  try {
    return op.NumInputs(attrs) == 0;
  } catch (...) {  // The count depends on attributes: it has inputs.
    return false;
  }
}

TEST(GradientCoverage, EveryOpHasAGradientOrIsListed) {
  int with_gradient = 0;
  for (const std::string& name : OpRegistry::Get()->ListNames()) {
    if (name.rfind("_test", 0) == 0) continue;  // Other tests' stand-ins.
    const Op& op = OpRegistry::Get()->Lookup(name);
    const bool has = op.GetAttr<FGradient>("FGradient") != nullptr;
    with_gradient += has;
    const bool listed = Listed(kNonDifferentiable, name);
    EXPECT_TRUE(has || listed || IsFirstOrderKernel(name) || HasNoInputs(op))
        << "op " << name
        << " has inputs but no FGradient; give it one or list it in "
           "kNonDifferentiable with the reason";
    EXPECT_FALSE(has && listed)
        << "op " << name << " has a gradient; drop it from the list";
  }
  EXPECT_GE(with_gradient, 80);
  std::vector<const char*> all(std::begin(kNonDifferentiable),
                               std::end(kNonDifferentiable));
  for (const char* name : all) {
    EXPECT_NE(OpRegistry::Get()->Find(name), nullptr)
        << "listed op " << name << " is not registered";
  }
}

// MXNet math and layer ops that models and MXNet's higher-order gradient
// tests lean on: registered, and differentiable (the sweep above only sees
// ops that exist).
TEST(GradientCoverage, MXNetMathAndLayerOpsHaveGradients) {
  for (const char* name :
       {"tan",    "sinh",          "cosh",      "arcsin",      "arccos",
        "arctan", "arcsinh",       "arccosh",   "arctanh",     "log2",
        "log10",  "expm1",         "log1p",     "cbrt",        "rsqrt",
        "rcbrt",  "radians",       "degrees",   "tril",        "triu",
        "Pad",    "_backward_Pad", "Embedding", "Convolution", "Pooling"}) {
    const Op* op = OpRegistry::Get()->Find(name);
    ASSERT_NE(op, nullptr) << name;
    EXPECT_NE(op->GetAttr<FGradient>("FGradient"), nullptr) << name;
  }
}

TEST(GradientCoverage, BackwardThroughAnOpWithoutGradientNamesIt) {
  Symbol w = Symbol::Variable("w"), g = Symbol::Variable("g");
  Symbol step = Symbol::Create("sgd_update", {w, g}, {{"lr", "0.1"}}, "step");
  try {
    Executor::SimpleBind(step, Context::CPU(), {{"w", {2}}, {"g", {2}}});
    FAIL() << "no exception";
  } catch (const NotImplemented& e) {
    EXPECT_STREQ(e.what(),
                 "Gradient: op \"sgd_update\" (node \"step\") has no gradient");
  }
}

TEST(GradientCoverage, OpsNoArgumentFeedsNeedNoGradient) {
  // y = x * sgd_update(a, b): only x's gradient is asked for, so the
  // update (fed by a and b alone) is not differentiated.
  Symbol x = Symbol::Variable("x"), a = Symbol::Variable("a"),
         b = Symbol::Variable("b");
  Symbol step = Symbol::Create("sgd_update", {a, b}, {{"lr", "1"}}, "step");
  Symbol y = Symbol::Create("elemwise_mul", {x, step}, {}, "y");
  const NDArray xv = testing::ArrayOf({2}, {1, 2});
  const NDArray av = testing::ArrayOf({2}, {3, 4});
  const NDArray bv = testing::ArrayOf({2}, {1, 1});
  NDArray gx(TShape{2}, Context::CPU(), DType::kFloat32);
  auto exec = Executor::Bind(
      y, Context::CPU(), {xv, av, bv}, {gx, NDArray(), NDArray()},
      {OpReqType::kWriteTo, OpReqType::kNullOp, OpReqType::kNullOp}, {});
  exec->Forward();
  exec->Backward();
  EXPECT_EQ(testing::ToDouble(gx), (std::vector<double>{2, 3}));
}

TEST(GradientCoverage, IndicesGetNoGradient) {
  // Backward through take and one_hot to a float index input gives zeros.
  Symbol a = Symbol::Variable("a"), i = Symbol::Variable("i");
  Symbol t = Symbol::Create("take", {a, i}, {}, "t");
  Symbol h = Symbol::Create("one_hot", {i}, {{"depth", "3"}}, "h");
  Symbol y = Symbol::Create("elemwise_add",
                            {Symbol::Create("sum", {t}, {}, "s1"),
                             Symbol::Create("sum", {h}, {}, "s2")},
                            {}, "y");
  auto exec = Executor::SimpleBind(y, Context::CPU(), {{"a", {3}}, {"i", {2}}});
  exec->Forward();
  exec->Backward();
  EXPECT_EQ(testing::ToDouble(exec->grad_dict().at("i")),
            (std::vector<double>{0, 0}));
}

}  // namespace
}  // namespace mx
