// Executor: bound symbols give the same results as imperative calls.
#include "imperative/executor.h"

#include "backends/cpu/op_test_util.h"
#include "base/error.h"
#include "gtest/gtest.h"
#include "imperative/nd.h"

namespace mx {
namespace {

using testing::AllClose;
using testing::RandomArray;
using testing::ToDouble;

// y = exp(x) * w + sin(x), then a few more elementwise steps.
Symbol SmallNet() {
  Symbol x = Symbol::Variable("x"), w = Symbol::Variable("w");
  Symbol e = Symbol::Create("exp", {x}, {}, "e");
  Symbol m = Symbol::Create("elemwise_mul", {e, w}, {}, "m");
  Symbol s = Symbol::Create("sin", {x}, {}, "s");
  Symbol a = Symbol::Create("elemwise_add", {m, s}, {}, "a");
  Symbol t = Symbol::Create("tanh", {a}, {}, "t");
  return Symbol::Create("_mul_scalar", {t}, {{"scalar", "3"}}, "out");
}

NDArray Imperative(const NDArray& x, const NDArray& w) {
  return nd::tanh(nd::exp(x) * w + nd::sin(x)) * 3.0;
}

TEST(Executor, BindMatchesImperative) {
  NDArray x = RandomArray({4, 5}, DType::kFloat32, -1, 1, 1);
  NDArray w = RandomArray({4, 5}, DType::kFloat32, -1, 1, 2);
  Symbol net = SmallNet();
  ASSERT_EQ(net.ListArguments(), (std::vector<std::string>{"x", "w"}));
  auto exec = Executor::Bind(net, Context::CPU(), {x, w}, {}, {}, {});
  exec->Forward();
  ASSERT_EQ(exec->outputs().size(), 1u);
  EXPECT_EQ(exec->outputs()[0].shape(), TShape({4, 5}));
  EXPECT_TRUE(
      AllClose(ToDouble(exec->outputs()[0]), ToDouble(Imperative(x, w))));
  // New inputs, same executor.
  NDArray x2 = RandomArray({4, 5}, DType::kFloat32, -1, 1, 3);
  CopyFromTo(x2, exec->arg_dict()["x"]);
  exec->Forward();
  EXPECT_TRUE(
      AllClose(ToDouble(exec->outputs()[0]), ToDouble(Imperative(x2, w))));
}

TEST(Executor, MemoryPlanReusesBuffers) {
  auto exec = Executor::SimpleBind(SmallNet(), Context::CPU(),
                                   {{"x", {100}}, {"w", {100}}});
  // Six ops of 400 bytes; the plan needs far fewer distinct blocks.
  EXPECT_EQ(exec->bytes_without_reuse(), 6u * 400);
  EXPECT_LT(exec->planned_bytes(), exec->bytes_without_reuse());
  exec->Forward();
  const NDArray x = exec->arg_dict()["x"], w = exec->arg_dict()["w"];
  EXPECT_TRUE(
      AllClose(ToDouble(exec->outputs()[0]), ToDouble(Imperative(x, w))));
}

TEST(Executor, SimpleBindAllocatesArgumentsAndGradients) {
  auto exec = Executor::SimpleBind(SmallNet(), Context::CPU(), {{"x", {2, 3}}});
  EXPECT_EQ(exec->arg_dict().at("w").shape(), TShape({2, 3}));  // Inferred.
  EXPECT_EQ(exec->grad_dict().size(), 2u);
  EXPECT_TRUE(
      AllClose(ToDouble(exec->arg_dict().at("x")), std::vector<double>(6, 0)));
}

TEST(Executor, BadBindingsAreClearErrors) {
  NDArray x = RandomArray({2});
  try {
    Executor::Bind(SmallNet(), Context::CPU(), {x}, {}, {}, {});
    FAIL();
  } catch (const InvalidArgument& e) {
    EXPECT_STREQ(e.what(), "Executor::Bind: 1 arguments given for 2 (x, w)");
  }
  EXPECT_THROW(Executor::Bind(SmallNet(), Context::CPU(), {x, RandomArray({3})},
                              {}, {}, {}),
               ShapeError);
  EXPECT_THROW(Executor::SimpleBind(SmallNet(), Context::CPU(), {}),
               ShapeError);
}

TEST(Executor, BackwardSaysItIsNotImplementedYet) {
  auto exec = Executor::SimpleBind(SmallNet(), Context::CPU(), {{"x", {2}}});
  exec->Forward(true);
  EXPECT_THROW(exec->Backward(), NotImplemented);
}

}  // namespace
}  // namespace mx
