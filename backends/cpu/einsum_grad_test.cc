// np.einsum's gradient against central differences: products, a
// diagonal, a trace, outer products, broadcast batches through '...',
// an operand broadcast along a length-1 axis, three operands.
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "testing/grad_check.h"
#include "testing/op_test_util.h"

namespace mx {
namespace testing {
namespace {

TEST(EinsumGradient, AgainstCentralDifferences) {
  struct Case {
    std::string subscripts;
    std::vector<TShape> shapes;
  };
  const std::vector<Case> cases = {
      {"ij,jk->ik", {{3, 4}, {4, 2}}},
      {"ii->i", {{3, 3}}},
      {"ii", {{3, 3}}},
      {"iij,j->ji", {{2, 2, 3}, {3}}},
      {"i,j->ij", {{3}, {2}}},
      {"...ij,...jk->...ik", {{2, 1, 3, 2}, {4, 2, 3}}},
      {"ij,ij->ij", {{1, 3}, {2, 3}}},
      {"ijk->", {{2, 3, 2}}},
      {"ij,jk,kl->li", {{2, 3}, {3, 2}, {2, 2}}},
  };
  int seed = 0;
  for (const Case& c : cases) {
    std::vector<NDArray> x;
    for (const TShape& s : c.shapes) {
      x.push_back(RandomArray(s, {}, -1, 1, ++seed));
    }
    EXPECT_TRUE(CheckGradient("_npi_einsum",
                              {{"subscripts", c.subscripts},
                               {"num_args", std::to_string(c.shapes.size())}},
                              x))
        << c.subscripts;
  }
}

}  // namespace
}  // namespace testing
}  // namespace mx
