// Helpers for tests that record and differentiate
// (//testing:autograd_test_util, test-only).
//
//   NDArray x = GradVariable({3}, {0.5, -1, 2});  // float64, gradient attached
//   NDArray z;
//   {
//     autograd::RecordScope record;
//     z = nd::sum(x * x);
//   }
//   autograd::Backward({z});
#ifndef MXCORE_TESTING_AUTOGRAD_TEST_UTIL_H_
#define MXCORE_TESTING_AUTOGRAD_TEST_UTIL_H_

#include <vector>

#include "autograd/autograd.h"
#include "ndarray/ndarray.h"

namespace mx {
namespace testing {

// A float64 array with exactly these values and a gradient attached (the
// usual leaf of a gradient test).
NDArray GradVariable(const TShape& shape, const std::vector<double>& values,
                     OpReqType req = OpReqType::kWriteTo);

}  // namespace testing
}  // namespace mx

#endif  // MXCORE_TESTING_AUTOGRAD_TEST_UTIL_H_
