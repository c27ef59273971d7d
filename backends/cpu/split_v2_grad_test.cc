// _split_v2's gradient against central differences: pieces from 0, a
// first piece that starts later (zeros before it), sections, squeeze_axis.
#include <vector>

#include "gtest/gtest.h"
#include "testing/grad_check.h"
#include "testing/op_test_util.h"

namespace mx {
namespace testing {
namespace {

TEST(SplitV2, GradientAgainstCentralDifferences) {
  const NDArray x = RandomArray({5, 3}, {}, -1, 1, 7);
  for (const AttrDict& attrs :
       std::vector<AttrDict>{{{"indices", "(0, 2, 3)"}, {"axis", "0"}},
                             {{"indices", "(1, 3)"}, {"axis", "0"}},
                             {{"sections", "3"}, {"axis", "1"}},
                             {{"indices", "(0, 1, 2)"},
                              {"axis", "-1"},
                              {"squeeze_axis", "True"}}}) {
    EXPECT_TRUE(CheckGradient("_split_v2", attrs, {x}));
  }
}

}  // namespace
}  // namespace testing
}  // namespace mx
