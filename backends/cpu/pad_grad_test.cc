// Gradients of Pad: the scatter-add of the gather, in every mode.
#include <vector>

#include "gtest/gtest.h"
#include "testing/grad_check.h"
#include "testing/op_test_util.h"

namespace mx {
namespace testing {
namespace {

TEST(PadGradient, EveryMode) {
  for (const char* mode : {"constant", "edge", "reflect"}) {
    EXPECT_TRUE(CheckGradient("Pad",
                              {{"mode", mode},
                               {"pad_width", "(0,0,1,2,2,1)"},
                               {"constant_value", "0.5"}},
                              {RandomArray({2, 3, 4})}))
        << mode;
  }
}

// Edge padding repeats the border, so the border collects every copy.
TEST(PadGradient, EdgeBorderCollectsItsCopies) {
  const std::vector<std::vector<double>> g =
      Gradients("Pad", {{"mode", "edge"}, {"pad_width", "(2,1)"}},
                {RandomArray({3})}, {ArrayOf({6}, {1, 1, 1, 1, 1, 1})});
  EXPECT_EQ(g[0], (std::vector<double>{3, 1, 2}));
}

TEST(PadGradient, SecondOrder) {
  for (const char* mode : {"constant", "reflect"}) {
    SCOPED_TRACE(mode);
    CheckSecondOrder("Pad", {{"mode", mode}, {"pad_width", "(1,1,1,0)"}},
                     {RandomArray({2, 3})},
                     RandomArray({4, 4}, DType::kFloat32, -1, 1, 3));
  }
}

}  // namespace
}  // namespace testing
}  // namespace mx
