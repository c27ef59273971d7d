// UpSampling's gradient (first and second order) against central
// differences, with one and several inputs.
#include "gtest/gtest.h"
#include "testing/grad_check.h"
#include "testing/op_test_util.h"

namespace mx {
namespace testing {
namespace {

TEST(UpSamplingGradient, OneInput) {
  const AttrDict attrs = {{"scale", "2"}, {"sample_type", "nearest"}};
  EXPECT_TRUE(CheckGradient("UpSampling", attrs, {RandomArray({2, 3, 2, 3})}));
  CheckSecondOrder("UpSampling", attrs, {RandomArray({1, 2, 2, 2})},
                   RandomArray({1, 2, 4, 4}));
}

TEST(UpSamplingGradient, SeveralInputs) {
  const AttrDict concat = {
      {"scale", "2"}, {"sample_type", "nearest"}, {"num_args", "3"}};
  EXPECT_TRUE(
      CheckGradient("UpSampling", concat,
                    RandomArrays({{2, 2, 2, 2}, {2, 1, 1, 1}, {2, 3, 4, 4}})));
  const AttrDict sum = {{"scale", "3"},
                        {"sample_type", "nearest"},
                        {"num_args", "2"},
                        {"multi_input_mode", "sum"}};
  EXPECT_TRUE(CheckGradient("UpSampling", sum,
                            RandomArrays({{1, 2, 2, 2}, {1, 2, 1, 1}})));
  CheckSecondOrder("UpSampling", sum,
                   RandomArrays({{1, 2, 2, 2}, {1, 2, 1, 1}}),
                   RandomArray({1, 2, 6, 6}), 1);
}

}  // namespace
}  // namespace testing
}  // namespace mx
