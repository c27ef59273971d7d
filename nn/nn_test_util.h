// Helpers shared by the nn tests. The tests live in namespace
// mx::nn::testing, where these and the //testing helpers re-exported below
// are visible unqualified, next to everything in mx::nn.
#ifndef MXCORE_NN_NN_TEST_UTIL_H_
#define MXCORE_NN_NN_TEST_UTIL_H_

#include <cstdlib>
#include <map>
#include <string>
#include <vector>

#include "autograd/autograd.h"
#include "imperative/nd.h"
#include "nn/nn.h"
#include "testing/op_test_util.h"

namespace mx {
namespace nn {
namespace testing {

using ::mx::testing::AllClose;
using ::mx::testing::ArrayOf;
using ::mx::testing::Contains;
using ::mx::testing::ErrorOf;
using ::mx::testing::RandomArray;
using ::mx::testing::ToDouble;

// A path under the test's scratch directory.
inline std::string TempPath(const std::string& name) {
  const char* dir = std::getenv("TEST_TMPDIR");
  return std::string(dir ? dir : "/tmp") + "/" + name;
}

// Outputs and gradients of one recorded call.
struct RunResult {
  std::vector<double> output;
  std::map<std::string, std::vector<double>> grads;  // by structured name
  std::vector<double> input_grad;
};

// Calls `block` on a copy of `x` (with a gradient attached) under
// autograd recording in training mode, back-propagates `head_grad` and
// returns the output and every gradient.
inline RunResult RunWithGrad(Block& block, const NDArray& x,
                             const NDArray& head_grad) {
  NDArray input = x.Copy(x.ctx());
  autograd::AttachGrad(&input);
  NDArray y;
  {
    autograd::RecordScope record;
    y = block(input);
  }
  autograd::Backward({y}, {head_grad});
  RunResult r;
  r.output = ToDouble(y);
  for (const auto& [name, p] : block.CollectParams()) {
    if (p->grad_req() != GradReq::kNull) r.grads[name] = ToDouble(p->grad());
  }
  r.input_grad = ToDouble(input.grad());
  return r;
}

}  // namespace testing
}  // namespace nn
}  // namespace mx

#endif  // MXCORE_NN_NN_TEST_UTIL_H_
