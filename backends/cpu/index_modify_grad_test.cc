// Gradients of npx.index_add and npx.index_update against central
// differences: repeated positions, val broadcast along positions and tail
// axes, several index axes (ind gets none).
#include <vector>

#include "gtest/gtest.h"
#include "testing/grad_check.h"
#include "testing/op_test_util.h"

namespace mx {
namespace testing {
namespace {

struct Case {
  TShape a;
  NDArray ind;
  TShape val;
};

std::vector<Case> Cases() {
  return {
      {{4, 3}, ArrayOf({5}, {0, 2, 0, 3, 2}, DType::kInt32), {5, 3}},
      {{4, 3}, ArrayOf({3}, {1, 1, 3}, DType::kInt64), {1, 3}},
      {{4, 3}, ArrayOf({2}, {2, 0}, DType::kInt32), {2, 1}},
      {{3, 2, 2}, ArrayOf({2, 3}, {0, 2, 0, 1, 0, 1}, DType::kInt64), {2}},
      {{3, 4}, ArrayOf(TShape::Scalar(), {1}, DType::kInt32), TShape::Scalar()},
  };
}

TEST(IndexModifyGradient, AgainstCentralDifferences) {
  GradCheckOptions o;
  o.skip = {1};
  int seed = 0;
  for (const Case& c : Cases()) {
    const NDArray a = RandomArray(c.a, {}, -1, 1, ++seed);
    const NDArray val = RandomArray(c.val, {}, -1, 1, ++seed);
    for (const char* op : {"_npx_index_add", "_npx_index_update"}) {
      EXPECT_TRUE(CheckGradient(op, {}, {a, c.ind, val}, o))
          << op << " a " << c.a.ToString() << " val " << c.val.ToString();
    }
  }
}

}  // namespace
}  // namespace testing
}  // namespace mx
