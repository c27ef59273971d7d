// _npi_matmul's gradient (_backward_npi_matmul) against central
// differences: 1-D operands and batches broadcast either way, where an
// operand's gradient sums several products.
#include <vector>

#include "gtest/gtest.h"
#include "testing/grad_check.h"
#include "testing/op_test_util.h"

namespace mx {
namespace testing {
namespace {

TEST(NumpyMatmulGradient, AgainstCentralDifferences) {
  const std::vector<std::pair<TShape, TShape>> cases = {
      {{3, 4}, {4, 2}},
      {{4}, {4, 2}},
      {{3, 4}, {4}},
      {{4}, {4}},
      {{2, 3, 4}, {4, 2}},
      {{3, 4}, {2, 4, 2}},
      {{2, 1, 3, 2}, {3, 2, 2}},
      {{1, 3, 2}, {2, 2, 1}},
  };
  for (const auto& [as, bs] : cases) {
    EXPECT_TRUE(CheckGradient(
        "_npi_matmul", {},
        {RandomArray(as, {}, -1, 1, 3), RandomArray(bs, {}, -1, 1, 4)}))
        << as.ToString() << " x " << bs.ToString();
  }
}

}  // namespace
}  // namespace testing
}  // namespace mx
