// MXNet's documented examples for each Reshape code (0, -1, -2, -3, -4 and
// reverse), as one table for every test of Reshape: the shape inference
// (ndarray/reshape.h), the op and the NDArray view. Test-only.
//
//   for (const ReshapeCase& c : DocumentedReshapeCases()) {
//     EXPECT_EQ(InferReshape(c.in, c.codes, c.reverse, "test"), c.expected);
//   }
#ifndef MXCORE_TESTING_RESHAPE_CASES_H_
#define MXCORE_TESTING_RESHAPE_CASES_H_

#include <vector>

#include "ndarray/shape.h"

namespace mx {
namespace testing {

struct ReshapeCase {
  TShape in, codes;
  bool reverse;
  TShape expected;
};

const std::vector<ReshapeCase>& DocumentedReshapeCases();

}  // namespace testing
}  // namespace mx

#endif  // MXCORE_TESTING_RESHAPE_CASES_H_
