#include "ndarray/reshape.h"

#include <string>
#include <vector>

#include "base/error.h"
#include "gtest/gtest.h"

namespace mx {
namespace {

struct Case {
  TShape in, codes;
  bool reverse;
  TShape expected;
};

// MXNet's documented examples for each code, and the reverse variants.
TEST(InferReshape, SpecialCodesGiveDocumentedShapes) {
  const std::vector<Case> cases = {
      {{2, 3, 4}, {4, 0, 2}, false, {4, 3, 2}},
      {{2, 3, 4}, {2, 0, 0}, false, {2, 3, 4}},
      {{2, 3, 4}, {6, 1, -1}, false, {6, 1, 4}},
      {{2, 3, 4}, {3, -1, 8}, false, {3, 1, 8}},
      {{2, 3, 4}, {-1}, false, {24}},
      {{2, 3, 4}, {-2}, false, {2, 3, 4}},
      {{2, 3, 4}, {2, -2}, false, {2, 3, 4}},
      {{2, 3, 4}, {-2, 1, 1}, false, {2, 3, 4, 1, 1}},
      {{2, 3, 4}, {-3, 4}, false, {6, 4}},
      {{2, 3, 4, 5}, {-3, -3}, false, {6, 20}},
      {{2, 3, 4}, {0, -3}, false, {2, 12}},
      {{2, 3, 4}, {-4, 1, 2, -2}, false, {1, 2, 3, 4}},
      {{2, 3, 4}, {2, -4, -1, 3, -2}, false, {2, 1, 3, 4}},
      {{10, 5, 4}, {-1, 0}, false, {40, 5}},
      {{10, 5, 4}, {-1, 0}, true, {50, 4}},
      {{2, 3, 4}, {0, -1}, true, {3, 8}},
      {{2, 3, 4}, {-2, -4, 2, -1}, true, {2, 3, 2, 2}},
      {{6, 4}, {-4, -1, 3, 0}, true, {2, 3, 4}},
      {{2, 3, 4}, {-1, -2}, true, {1, 2, 3, 4}},
      {TShape::Scalar(), {1, 1}, false, {1, 1}},
      {{1, 1}, TShape::Scalar(), false, TShape::Scalar()},
      {{0, 3}, {-1, 3}, false, {0, 3}},
  };
  for (const Case& c : cases) {
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
