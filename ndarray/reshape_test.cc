#include "ndarray/reshape.h"

#include <string>
#include <vector>

#include "base/error.h"
#include "gtest/gtest.h"
#include "testing/reshape_cases.h"

namespace mx {
namespace {

using testing::DocumentedReshapeCases;
using testing::ReshapeCase;

// MXNet's documented examples for each code, and the reverse variants.
TEST(InferReshape, SpecialCodesGiveDocumentedShapes) {
  for (const ReshapeCase& c : DocumentedReshapeCases()) {
    EXPECT_EQ(InferReshape(c.in, c.codes, c.reverse, "test"), c.expected)
        << c.in << " to " << c.codes << " reverse " << c.reverse;
  }
}

TEST(InferReshape, BadCodesAreShapeErrorsNamingCallerInputAndTarget) {
  const std::vector<std::pair<TShape, std::string>> bad = {
      {{4, -1}, "cannot infer -1"},
      {{5}, "the sizes differ (6 vs 5)"},
      {{-1, -1}, "more than one -1"},
      {{0, 0, 0}, "no input dim left"},
      {{-4, 4, -1}, "-4 cannot split dim 2"},
      {{-4, 2}, "-4 must be followed by two values"},
      {{-5, 6}, "unknown code -5"},
  };
  for (const auto& [codes, why] : bad) {
    try {
      InferReshape({2, 3}, codes, false, "caller x");
      ADD_FAILURE() << "no error for " << codes;
    } catch (const ShapeError& e) {
      const std::string msg = e.what();
      for (const std::string& part :
           {std::string("caller x: cannot reshape (2,3)"),
            "to shape=" + codes.ToString(), why}) {
        EXPECT_NE(msg.find(part), std::string::npos) << part << " in " << msg;
      }
    }
  }
  EXPECT_THROW(InferReshape(TShape{-1, 3}, {3, -1}, false, "x"), ShapeError);
  EXPECT_THROW(InferReshape(TShape(), {3}, false, "x"), ShapeError);
}

}  // namespace
}  // namespace mx
