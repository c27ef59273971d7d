// Gradients of tril / triu, first and second order.
#include "gtest/gtest.h"
#include "testing/grad_check.h"
#include "testing/op_test_util.h"

namespace mx {
namespace testing {
namespace {

TEST(TriangleGradient, MatrixAndBatch) {
  for (const char* op : {"tril", "triu"}) {
    for (const char* k : {"0", "1", "-2"}) {
      EXPECT_TRUE(CheckGradient(op, {{"k", k}}, {RandomArray({3, 4})}))
          << op << " k=" << k;
      EXPECT_TRUE(CheckGradient(op, {{"k", k}}, {RandomArray({2, 3, 3})}))
          << op << " k=" << k;
    }
  }
}

// A 1-D input feeds every row, so its gradient sums the kept column
// entries.
TEST(TriangleGradient, VectorInputSumsRows) {
  EXPECT_TRUE(CheckGradient("tril", {{"k", "0"}}, {RandomArray({4})}));
  EXPECT_TRUE(CheckGradient("triu", {{"k", "-1"}}, {RandomArray({3})}));
  // d/dx_j sum(tril(x)) = number of rows i with j <= i = n - j.
  const std::vector<std::vector<double>> g =
      Gradients("tril", {}, {RandomArray({3})},
                {ArrayOf({3, 3}, {1, 1, 1, 1, 1, 1, 1, 1, 1})});
  EXPECT_EQ(g[0], (std::vector<double>{3, 2, 1}));
}

TEST(TriangleGradient, SecondOrder) {
  CheckSecondOrder("tril", {{"k", "1"}}, {RandomArray({3, 3})},
                   RandomArray({3, 3}, DType::kFloat32, -1, 1, 4));
  CheckSecondOrder("triu", {}, {RandomArray({3})},
                   RandomArray({3, 3}, DType::kFloat32, -1, 1, 4));
}

}  // namespace
}  // namespace testing
}  // namespace mx
