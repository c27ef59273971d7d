// The loss heads' forward passes and shape rules.
#include <cmath>
#include <vector>

#include "base/error.h"
#include "gtest/gtest.h"
#include "imperative/nd.h"
#include "testing/op_test_util.h"

namespace mx {
namespace testing {
namespace {

TEST(LossHeads, ForwardIsTheDataOrItsSigmoid) {
  const NDArray x = ArrayOf({2, 2}, {-1, 0, 2, 0.5});
  const NDArray label = ArrayOf({2, 2}, {0, 1, 1, 0});
  for (const char* op : {"LinearRegressionOutput", "MAERegressionOutput"}) {
    EXPECT_EQ(ToDouble(nd::Call(op, {x, label})), ToDouble(x)) << op;
  }
  std::vector<double> sigmoid;
  for (double v : ToDouble(x)) sigmoid.push_back(1 / (1 + std::exp(-v)));
  EXPECT_TRUE(AllClose(
      ToDouble(nd::Call("LogisticRegressionOutput", {x, label})), sigmoid));
  EXPECT_EQ(ToDouble(nd::Call("MakeLoss", {x})), ToDouble(x));
  EXPECT_EQ(ToDouble(nd::Call("make_loss", {x}, {{"grad_scale", "2"}})),
            ToDouble(x));
}

TEST(LossHeads, LabelShapes) {
  // A (n,) label for (n, 1) data, and any label with the data's batch size
  // and element count.
  const NDArray column = RandomArray({4, 1});
  EXPECT_EQ(
      nd::Call("LinearRegressionOutput", {column, RandomArray({4})}).shape(),
      TShape({4, 1}));
  EXPECT_EQ(nd::Call("LinearRegressionOutput",
                     {RandomArray({2, 3, 1}), RandomArray({2, 3})})
                .shape(),
            TShape({2, 3, 1}));
  ExpectError<ShapeError>(
      [] {
        nd::Call("LinearRegressionOutput",
                 {RandomArray({2, 3}), RandomArray({3, 2})});
      },
      {"LinearRegressionOutput", "label", "(3,2)", "(2,3)"});
  ExpectError<DTypeError>(
      [] {
        nd::Call("MAERegressionOutput", {ArrayOf({2}, {1, 2}, DType::kInt32),
                                         ArrayOf({2}, {1, 2}, DType::kInt32)});
      },
      {"MAERegressionOutput", "int32"});
}

}  // namespace
}  // namespace testing
}  // namespace mx
