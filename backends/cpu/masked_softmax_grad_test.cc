// Gradients of masked_softmax and masked_log_softmax against central
// differences (the mask gets none), with broadcast masks, temperatures and
// a fully masked line.
#include <cmath>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "imperative/nd.h"
#include "testing/grad_check.h"
#include "testing/op_test_util.h"

namespace mx {
namespace testing {
namespace {

const NDArray& RowMask() {  // (2, 1, 4): the second line has nothing
  static const NDArray m =
      ArrayOf({2, 1, 4}, {1, 0, 1, 1, 0, 0, 0, 0}, DType::kBool);
  return m;
}
const NDArray& FullMask() {
  static const NDArray m = ArrayOf(
      {2, 3, 4},
      {1, 1, 0, 1, 0, 1, 1, 1, 1, 0, 1, 0, 1, 1, 1, 1, 0, 1, 0, 1, 1, 1, 0, 0},
      DType::kBool);
  return m;
}

TEST(MaskedSoftmaxGradient, SoftmaxAgainstCentralDifferences) {
  GradCheckOptions o;
  o.skip = {1};
  const NDArray x = RandomArray({2, 3, 4}, {}, -2, 2, 3);
  for (const NDArray* m : {&RowMask(), &FullMask()}) {
    for (const char* axis : {"-1", "1"}) {
      EXPECT_TRUE(CheckGradient("masked_softmax",
                                {{"axis", axis}, {"temperature", "0.7"}},
                                {x, *m}, o))
          << "axis=" << axis;
    }
  }
}

// masked_log_softmax is -inf where masked, so a loss over every output is
// not finite: the differences take sum(g * y) over the unmasked outputs
// only, against _backward_masked_log_softmax(g, mask, y) (the op its
// FGradient calls, as masked_softmax's above).
TEST(MaskedSoftmaxGradient, LogSoftmaxAgainstCentralDifferences) {
  const NDArray x = RandomArray({2, 3, 4}, DType::kFloat64, -2, 2, 4);
  const NDArray g = RandomArray({2, 3, 4}, DType::kFloat64, -1, 1, 5);
  const AttrDict attrs = {{"axis", "-1"}, {"temperature", "0.7"}};
  for (const NDArray* m : {&RowMask(), &FullMask()}) {
    const NDArray y = nd::Call("masked_log_softmax", {x, *m}, attrs);
    const std::vector<double> dx =
        ToDouble(nd::Call("_backward_masked_log_softmax", {g, *m, y}, attrs));
    const std::vector<double> xs = ToDouble(x), gs = ToDouble(g);
    auto loss = [&](const std::vector<double>& at) {
      const std::vector<double> out = ToDouble(
          nd::Call("masked_log_softmax",
                   {ArrayOf({2, 3, 4}, at, DType::kFloat64), *m}, attrs));
      double sum = 0;
      for (size_t i = 0; i < out.size(); ++i) {
        if (std::isfinite(out[i])) sum += gs[i] * out[i];
      }
      return sum;
    };
    const double eps = 1e-6;
    for (size_t k = 0; k < xs.size(); ++k) {
      std::vector<double> up = xs, down = xs;
      up[k] += eps;
      down[k] -= eps;
      EXPECT_NEAR(dx[k], (loss(up) - loss(down)) / (2 * eps), 1e-6)
          << "element " << k;
    }
  }
}

}  // namespace
}  // namespace testing
}  // namespace mx
