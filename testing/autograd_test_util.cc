#include "testing/autograd_test_util.h"

#include "testing/op_test_util.h"

namespace mx {
namespace testing {

NDArray GradVariable(const TShape& shape, const std::vector<double>& values,
                     OpReqType req) {
  NDArray x = ArrayOf(shape, values, DType::kFloat64);
  autograd::AttachGrad(&x, req);
  return x;
}

}  // namespace testing
}  // namespace mx
