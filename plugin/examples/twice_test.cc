// The README's minimal plugin builds, loads and works, gradient included.
#include "autograd/autograd.h"
#include "testing/op_test_util.h"
#include "gtest/gtest.h"
#include "imperative/imperative.h"
#include "plugin/plugin.h"

namespace mx {
namespace {

TEST(ReadmePlugin, TwiceAndNegative) {
  LoadPlugin(std::getenv("TWICE_PLUGIN"));
  NDArray x = testing::ArrayOf({3}, {1, -2, 3});
  EXPECT_EQ(testing::ToDouble(
                imperative::Invoke("twice", {x}, {{"factor", "3"}})[0]),
            (std::vector<double>{3, -6, 9}));
  EXPECT_EQ(testing::ToDouble(imperative::Invoke("negative", {x})[0]),
            (std::vector<double>{-1, 2, -3}));
  // float64 is declined: the built-in kernel it replaced runs.
  NDArray x64 = testing::ArrayOf({2}, {1.5, -2}, DType::kFloat64);
  EXPECT_EQ(testing::ToDouble(imperative::Invoke("negative", {x64})[0]),
            (std::vector<double>{-1.5, 2}));
  autograd::AttachGrad(&x);
  {
    autograd::RecordScope record;
    NDArray y = imperative::Invoke("twice", {x}, {{"factor", "3"}})[0];
    autograd::Backward({y});
  }
  EXPECT_EQ(testing::ToDouble(x.grad()), (std::vector<double>{3, 3, 3}));
}

}  // namespace
}  // namespace mx
