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

// MXNet 2's npx.reshape: -2 copy, -3 drop a 1, -4 copy the rest, -5 merge,
// -6 split, -1 infer; a value >= 0 (0 too) is that dim.
TEST(InferNumpyXReshape, CodesGiveMxnet2Shapes) {
  struct Case {
    TShape in, codes;
    bool reverse;
    TShape expected;
  };
  const std::vector<Case> cases = {
      {{2, 1, 12}, {-2, -3, -6, 3, -1}, false, {2, 3, 4}},
      {{2, 3, 4}, {-4}, false, {2, 3, 4}},
      {{2, 3, 4}, {-5, -2}, false, {6, 4}},
      {{2, 3, 4}, {-2, -1}, false, {2, 12}},
      {{2, 3, 4}, {-1}, false, {24}},
      {{2, 3, 4}, {3, 2, -4}, false, {3, 2, 4}},  // 3, 2 use up two dims.
      {{2, 3, 4}, {-1, -2}, true, {6, 4}},        // From the right.
      {{2, 3, 4}, {-6, 1, -1, -4}, false, {1, 2, 3, 4}},
      {{2, 3, 4}, {-4, -6, 2, -1}, true, {2, 3, 2, 2}},
      {{0, 3}, {0, 5}, false, {0, 5}},  // 0 is a length here.
  };
  for (const Case& c : cases) {
    EXPECT_EQ(InferNumpyXReshape(c.in, c.codes, c.reverse, "t"), c.expected)
        << c.in << " to " << c.codes << " reverse " << c.reverse;
  }
  const std::vector<std::pair<TShape, std::string>> bad = {
      {{-3, -4}, "-3 drops input dim 2, not 1"},
      {{-7, 3}, "unknown code -7"},
      {{-6, 2}, "-6 must be followed by two values"},
      {{-6, 4, -1, -2}, "-4 cannot split dim 2"},
      {{-1, -1}, "more than one -1"},
      {{-5, -5}, "no input dim left"},
  };
  for (const auto& [codes, why] : bad) {
    try {
      InferNumpyXReshape({2, 3}, codes, false, "caller");
      ADD_FAILURE() << "no error for " << codes;
    } catch (const ShapeError& e) {
      const std::string msg = e.what();
      EXPECT_NE(msg.find("caller: cannot reshape (2,3) to newshape=" +
                         codes.ToString()),
                std::string::npos)
          << msg;
      EXPECT_NE(msg.find(why), std::string::npos) << why << " in " << msg;
    }
  }
}

TEST(InferNumpyReshape, PlainShapesWithOneInferred) {
  EXPECT_EQ(InferNumpyReshape({2, 3, 4}, {4, -1}, "t"), TShape({4, 6}));
  EXPECT_EQ(InferNumpyReshape({2, 3, 4}, {24}, "t"), TShape({24}));
  EXPECT_EQ(InferNumpyReshape({0, 3}, {3, 0}, "t"), TShape({3, 0}));
  const TShape scalar(std::vector<int64_t>{});
  EXPECT_EQ(InferNumpyReshape({1}, scalar, "t"), scalar);
  EXPECT_THROW(InferNumpyReshape({2, 3}, {-2}, "t"), ShapeError);
  EXPECT_THROW(InferNumpyReshape({2, 3}, {4, -1}, "t"), ShapeError);
  EXPECT_THROW(InferNumpyReshape({2, 3}, {7}, "t"), ShapeError);
  // The legacy codes stay the legacy ones.
  EXPECT_THROW(InferReshape({2, 3}, {-6, 2, 3}, false, "t"), ShapeError);
}

}  // namespace
}  // namespace mx
