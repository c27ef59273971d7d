// Gradient graphs are made of differentiable ops: the gradient of a
// gradient, checked against central differences of the first gradient.
#include <string>
#include <vector>

#include "graph/graph.h"
#include "graph/pass.h"
#include "gtest/gtest.h"
#include "imperative/executor.h"
#include "testing/grad_check.h"
#include "testing/op_test_util.h"

namespace mx {
namespace testing {
namespace {

TEST(HigherOrderGradient, BroadcastArithmetic) {
  const NDArray head = RandomArray({2, 3}, DType::kFloat32, -1, 1, 5);
  for (const char* op : {"broadcast_mul", "broadcast_div", "broadcast_power",
                         "broadcast_add", "broadcast_maximum"}) {
    CheckSecondOrder(op, {},
                     {RandomArray({2, 3}, DType::kFloat32, 0.5, 2, 1),
                      RandomArray({3}, DType::kFloat32, 0.5, 2, 2)},
                     head);
  }
}

TEST(HigherOrderGradient, ReductionsAndShapes) {
  const NDArray x = RandomArray({2, 3, 4}, DType::kFloat32, 0.5, 2, 1);
  // The first gradients of these are linear in the head (and constant or
  // piecewise constant in x), so this checks the helper ops' gradients.
  CheckSecondOrder("mean", {{"axis", "1"}}, {x},
                   RandomArray({2, 4}, DType::kFloat32, -1, 1, 2));
  CheckSecondOrder("max", {{"axis", "(0,2)"}, {"keepdims", "1"}}, {x},
                   RandomArray({1, 3, 1}, DType::kFloat32, -1, 1, 2));
  CheckSecondOrder(
      "slice",
      {{"begin", "(1,None,3)"}, {"end", "(2,2,0)"}, {"step", "(1,1,-2)"}}, {x},
      RandomArray({1, 2, 2}, DType::kFloat32, -1, 1, 2));
  CheckSecondOrder("take", {{"axis", "2"}},
                   {x, ArrayOf({2}, {3, 3}, DType::kInt64)},
                   RandomArray({2, 3, 2}, DType::kFloat32, -1, 1, 2));
  CheckSecondOrder("Concat", {{"num_args", "2"}, {"dim", "1"}},
                   {x, RandomArray({2, 1, 4})},
                   RandomArray({2, 4, 4}, DType::kFloat32, -1, 1, 2));
  CheckSecondOrder("broadcast_to", {{"shape", "(2,2,3,4)"}}, {x},
                   RandomArray({2, 2, 3, 4}, DType::kFloat32, -1, 1, 2));
  CheckSecondOrder("Cast", {{"dtype", "float64"}}, {x},
                   RandomArray({2, 3, 4}, DType::kFloat32, -1, 1, 2));
}

}  // namespace
}  // namespace testing
}  // namespace mx
