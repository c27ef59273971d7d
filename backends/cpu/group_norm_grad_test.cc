// Numerical checks of GroupNorm's and InstanceNorm's gradients (data,
// gamma and beta) and of the backward ops' input checks.
#include <vector>

#include "base/error.h"
#include "gtest/gtest.h"
#include "imperative/nd.h"
#include "testing/grad_check.h"
#include "testing/op_test_util.h"

namespace mx {
namespace testing {
namespace {

TEST(GroupNormGradient, DataGammaAndBeta) {
  for (const char* groups : {"1", "2", "4"}) {
    EXPECT_TRUE(CheckGradient(
        "GroupNorm", {{"num_groups", groups}, {"eps", "1e-3"}},
        {RandomArray({3, 4, 2, 3}), RandomArray({4}, DType::kFloat32, 0.5, 2),
         RandomArray({4})}))
        << groups;
  }
  // (N, C) data: each group spans channels only.
  EXPECT_TRUE(
      CheckGradient("GroupNorm", {{"num_groups", "2"}},
                    {RandomArray({5, 6}), RandomArray({6}), RandomArray({6})}));
  // The mean and std outputs get no gradient (as MXNet's): only output 0's
  // head is checked here, with them visible.
  EXPECT_TRUE(CheckGradient(
      "InstanceNorm", {},
      {RandomArray({2, 3, 5}), RandomArray({3}, DType::kFloat32, 0.5, 2),
       RandomArray({3})}));
  EXPECT_TRUE(CheckGradient(
      "InstanceNorm", {{"eps", "0.1"}},
      {RandomArray({1, 2, 2, 2, 2}), RandomArray({2}), RandomArray({2})}));
}

TEST(GroupNormGradient, BackwardChecksItsInputs) {
  const NDArray x = RandomArray({2, 4, 3});
  ExpectError<ShapeError>(
      [&] {
        nd::Call("_backward_GroupNorm", {x, x, RandomArray({3})},
                 {{"num_groups", "2"}});
      },
      {"_backward_GroupNorm", "gamma"});
  ExpectError<ShapeError>(
      [&] {
        nd::Call("_backward_GroupNorm", {x, x, RandomArray({4})},
                 {{"num_groups", "3"}});
      },
      {"num_groups=3"});
}

}  // namespace
}  // namespace testing
}  // namespace mx
