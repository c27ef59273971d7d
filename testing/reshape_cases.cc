#include "testing/reshape_cases.h"

namespace mx {
namespace testing {

const std::vector<ReshapeCase>& DocumentedReshapeCases() {
  static const auto* cases = new std::vector<ReshapeCase>{
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
      {{2, 3, 4}, {-3, -2}, false, {6, 4}},
      {{2, 3, 4}, {-4, 1, 2, -2}, false, {1, 2, 3, 4}},
      {{2, 3, 4}, {2, -4, -1, 3, -2}, false, {2, 1, 3, 4}},
      {{10, 5, 4}, {-1, 0}, false, {40, 5}},
      {{10, 5, 4}, {-1, 0}, true, {50, 4}},
      {{2, 3, 4}, {0, -1}, false, {2, 12}},
      {{2, 3, 4}, {0, -1}, true, {3, 8}},
      {{2, 3, 4}, {-2, -4, 2, -1}, true, {2, 3, 2, 2}},
      {{6, 4}, {-4, 2, 3, 4}, true, {2, 3, 4}},
      {{6, 4}, {-4, -1, 3, 0}, true, {2, 3, 4}},
      {{2, 3, 4, 5}, {-3, -3}, true, {6, 20}},
      {{2, 3, 4}, {-3, 0}, true, {6, 4}},
      {{2, 3, 4}, {-1, -2}, false, {2, 3, 4}},
      {{2, 3, 4}, {-1, -2}, true, {1, 2, 3, 4}},
      {TShape::Scalar(), {1, 1}, false, {1, 1}},
      {{1, 1}, TShape::Scalar(), false, TShape::Scalar()},
      {{0, 3}, {-1, 3}, false, {0, 3}},
      {{0, 3}, {3, 0, 0}, true, {3, 0, 3}},
  };
  return *cases;
}

}  // namespace testing
}  // namespace mx
