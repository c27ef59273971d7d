// Embedding's weight gradient: a scatter-add of the output gradient rows.
#include <vector>

#include "gtest/gtest.h"
#include "testing/grad_check.h"
#include "testing/op_test_util.h"

namespace mx {
namespace testing {
namespace {

// The checks run in float64, so the weight's dtype attribute says so.
const AttrDict kAttrs = {
    {"input_dim", "4"}, {"output_dim", "3"}, {"dtype", "float64"}};

TEST(EmbeddingGradient, MatchesFiniteDifferences) {
  EXPECT_TRUE(CheckGradient("Embedding", kAttrs,
                            {ArrayOf({2, 3}, {3, 0, 3, 1, 3, 9}, DType::kInt32),
                             RandomArray({4, 3})}));
}

// Float indices are not differentiated (their gradient is zero).
TEST(EmbeddingGradient, RepeatedIndicesAddUpAndIndicesGetZero) {
  const std::vector<std::vector<double>> g =
      Gradients("Embedding", {{"input_dim", "3"}, {"output_dim", "1"}},
                {ArrayOf({4}, {2, 0, 2, 2}), RandomArray({3, 1})},
                {ArrayOf({4, 1}, {1, 10, 100, 1000})});
  EXPECT_EQ(g[0], (std::vector<double>{0, 0, 0, 0}));
  EXPECT_EQ(g[1], (std::vector<double>{10, 0, 1101}));
}

// The weight gradient is linear in the head; its own gradient (w.r.t. the
// head) is the lookup again.
TEST(EmbeddingGradient, SecondOrder) {
  CheckSecondOrder(
      "Embedding", kAttrs,
      {ArrayOf({3}, {1, 3, 1}, DType::kInt64), RandomArray({4, 3})},
      RandomArray({3, 3}, DType::kFloat32, -1, 1, 5), /*wrt=*/1);
}

}  // namespace
}  // namespace testing
}  // namespace mx
