// Gradients of mod, hypot and smooth_l1 (first and second order) against
// central differences, and MXNet's mod gradient where mod jumps.
#include <cmath>
#include <vector>

#include "gtest/gtest.h"
#include "testing/grad_check.h"
#include "testing/op_test_util.h"

namespace mx {
namespace testing {
namespace {

TEST(BinaryMathGradient, Mod) {
  // Dividends and divisors apart from the multiples where mod jumps.
  const NDArray a = ArrayOf({2, 3}, {4.3, -3.1, 5.9, -7.3, 2.2, -0.4});
  const NDArray b = ArrayOf({1, 3}, {1.7, -1.3, 2.4});
  EXPECT_TRUE(CheckGradient("broadcast_mod", {}, {a, b}));
  const NDArray b_full = ArrayOf({2, 3}, {1.7, -1.3, 2.4, 1.6, 0.9, -2.1});
  EXPECT_TRUE(CheckGradient("_mod", {}, {a, b_full}));
  EXPECT_TRUE(CheckGradient("_mod_scalar", {{"scalar", "1.6"}}, {a}));
  EXPECT_TRUE(CheckGradient("_rmod_scalar", {{"scalar", "7.3"}},
                            {ArrayOf({4}, {1.6, -2.1, 3.1, 0.9})}));
  CheckSecondOrder("_mod", {}, {a, b_full}, RandomArray({2, 3}));
}

TEST(BinaryMathGradient, ModByZeroIsMxnetsRule) {
  // MXNet: d/da = 1 and d/db = -floor(a / b), also at b = 0 (the forward
  // gives 0 there).
  const auto g =
      Gradients("_mod", {}, {ArrayOf({2}, {3, -3}), ArrayOf({2}, {0, 0})},
                {ArrayOf({2}, {1, 1})});
  EXPECT_EQ(g[0], (std::vector<double>{1, 1}));
  EXPECT_EQ(g[1], (std::vector<double>{-INFINITY, INFINITY}));
}

TEST(BinaryMathGradient, Hypot) {
  const NDArray a = RandomArray({2, 3}, DType::kFloat32, 0.5, 2, 3);
  const NDArray b = RandomArray({2, 1}, DType::kFloat32, -2, -0.5, 4);
  EXPECT_TRUE(CheckGradient("broadcast_hypot", {}, {a, b}));
  const NDArray c = RandomArray({2, 3}, DType::kFloat32, -2, 2, 5);
  EXPECT_TRUE(CheckGradient("_hypot", {}, {a, c}));
  EXPECT_TRUE(CheckGradient("_hypot_scalar", {{"scalar", "-1.5"}}, {c}));
  CheckSecondOrder("_hypot", {}, {a, c}, RandomArray({2, 3}));
  CheckSecondOrder("_hypot", {}, {a, c}, RandomArray({2, 3}), 1);
  CheckSecondOrder("_hypot_scalar", {{"scalar", "0.7"}}, {c},
                   RandomArray({2, 3}));
}

TEST(BinaryMathGradient, SmoothL1) {
  // sigma 1.5: quadratic for |x| < 0.444, linear outside.
  const NDArray x = ArrayOf({8}, {-2, -0.9, -0.3, -0.05, 0.1, 0.4, 0.6, 1.7});
  EXPECT_TRUE(CheckGradient("smooth_l1", {{"scalar", "1.5"}}, {x}));
  CheckSecondOrder("smooth_l1", {{"scalar", "1.5"}}, {x}, RandomArray({8}));
  const auto g = Gradients("smooth_l1", {{"scalar", "1"}},
                           {ArrayOf({4}, {-3, -0.5, 0.25, 2})},
                           {ArrayOf({4}, {1, 1, 1, 2})});
  EXPECT_TRUE(AllClose(g[0], {-1, -0.5, 0.25, 2}));
}

}  // namespace
}  // namespace testing
}  // namespace mx
