// Numerical checks of the gradients of Activation, LeakyReLU, BatchNorm,
// Dropout, softmax, log_softmax, softmin and softmax_cross_entropy.
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "imperative/imperative.h"
#include "testing/cpu_reference.h"
#include "testing/grad_check.h"
#include "testing/op_test_util.h"

namespace mx {
namespace testing {
namespace {

// Values away from 0, where relu-like slopes jump.
NDArray AwayFromZero(const TShape& shape, uint32_t seed = 7) {
  std::vector<double> v =
      ToDouble(RandomArray(shape, DType::kFloat64, 0.1, 2, seed));
  for (size_t i = 0; i < v.size(); i += 2) v[i] = -v[i];
  return ArrayOf(shape, v, DType::kFloat64);
}

TEST(NNGradient, EveryActivation) {
  for (const char* act : {"relu", "sigmoid", "tanh", "softrelu", "softsign",
                          "log_sigmoid", "mish"}) {
    EXPECT_TRUE(CheckGradient("Activation", {{"act_type", act}},
                              {AwayFromZero({3, 4})}))
        << act;
  }
}

TEST(NNGradient, EveryLeakyReLU) {
  for (const char* act : {"leaky", "elu", "selu", "gelu"}) {
    EXPECT_TRUE(CheckGradient("LeakyReLU",
                              {{"act_type", act}, {"slope", "0.3"}},
                              {AwayFromZero({3, 4})}))
        << act;
  }
}

std::vector<NDArray> BatchNormInputs(const TShape& data, int64_t channels) {
  return {RandomArray(data, DType::kFloat32, -1, 1, 1),
          RandomArray({channels}, DType::kFloat32, 0.5, 1.5, 2),
          RandomArray({channels}, DType::kFloat32, -1, 1, 3),
          RandomArray({channels}, DType::kFloat32, -0.5, 0.5, 4),
          RandomArray({channels}, DType::kFloat32, 0.5, 1.5, 5)};
}

TEST(NNGradient, BatchNormTrainingUsesBatchStatistics) {
  GradCheckOptions o;
  o.is_train = true;
  for (const char* fix : {"False", "True"}) {
    EXPECT_TRUE(CheckGradient("BatchNorm", {{"fix_gamma", fix}},
                              BatchNormInputs({3, 2, 2, 2}, 2), o))
        << fix;
  }
  // Channels last.
  EXPECT_TRUE(CheckGradient("BatchNorm",
                            {{"fix_gamma", "False"}, {"axis", "-1"}},
                            BatchNormInputs({4, 3}, 3), o));
}

TEST(NNGradient, BatchNormInferenceUsesMovingStatistics) {
  for (const char* fix : {"False", "True"}) {
    EXPECT_TRUE(CheckGradient("BatchNorm", {{"fix_gamma", fix}},
                              BatchNormInputs({3, 2, 2, 2}, 2)))
        << fix;
  }
  // use_global_stats in training is the same.
  GradCheckOptions o;
  o.is_train = true;
  EXPECT_TRUE(CheckGradient(
      "BatchNorm", {{"fix_gamma", "False"}, {"use_global_stats", "True"}},
      BatchNormInputs({3, 2, 2}, 2), o));
}

TEST(NNGradient, BackwardBatchNormAddsTo) {
  const std::vector<NDArray> in = BatchNormInputs({3, 2, 2}, 2);
  const NDArray og = RandomArray({3, 2, 2}, DType::kFloat32, -1, 1, 9);
  std::vector<NDArray> args = {og, in[0], in[1], in[3], in[4]};
  EXPECT_TRUE(
      AddToAccumulates("_backward_BatchNorm", {{"fix_gamma", "False"}}, args));
}

TEST(NNGradient, DropoutTrainingReusesTheMask) {
  GradCheckOptions o;
  o.is_train = true;
  o.seed = 42;
  EXPECT_TRUE(
      CheckGradient("Dropout", {{"p", "0.4"}}, {RandomArray({4, 5})}, o));
  EXPECT_TRUE(CheckGradient("Dropout", {{"p", "0.4"}, {"axes", "(1,)"}},
                            {RandomArray({4, 5})}, o));
}

TEST(NNGradient, DropoutInferenceIsIdentity) {
  EXPECT_TRUE(CheckGradient("Dropout", {{"p", "0.4"}}, {RandomArray({4, 5})}));
}

TEST(NNGradient, SoftmaxAndLogSoftmax) {
  for (const char* op : {"softmax", "log_softmax"}) {
    EXPECT_TRUE(CheckGradient(op, {}, {RandomArray({3, 4})})) << op;
    EXPECT_TRUE(CheckGradient(op, {{"axis", "0"}}, {RandomArray({3, 4})}))
        << op;
    EXPECT_TRUE(CheckGradient(op, {{"axis", "1"}, {"temperature", "2.5"}},
                              {RandomArray({2, 3, 2})}))
        << op;
  }
}

// With use_length, the gradient reaches only each line's first `length`
// elements (the rest of the output is 0 whatever the data); softmin too.
TEST(NNGradient, SoftmaxWithLengthAndSoftmin) {
  const AttrDict with_length = {{"use_length", "True"}};
  const NDArray length = ArrayOf({3}, {2, 4, 0}, DType::kInt32);
  for (const char* op : {"softmax", "log_softmax", "softmin"}) {
    EXPECT_TRUE(CheckGradient(op, with_length, {RandomArray({3, 4}), length}))
        << op;
    EXPECT_TRUE(CheckGradient(op, {{"use_length", "True"}, {"axis", "0"}},
                              {RandomArray({4, 3}), length}))
        << op;
    EXPECT_TRUE(
        CheckGradient(op, {{"temperature", "0.7"}}, {RandomArray({2, 5})}))
        << op;
  }
}

TEST(NNGradient, SoftmaxCrossEntropyIgnoresTheLabel) {
  const NDArray data = RandomArray({3, 4}, DType::kFloat32, -2, 2);
  for (DType t : {DType::kInt32, DType::kFloat32}) {
    GradCheckOptions o;
    o.skip = {1};  // A float label gets no gradient either.
    EXPECT_TRUE(CheckGradient("softmax_cross_entropy", {},
                              {data, ArrayOf({3}, {2, 0, 3}, t)}, o));
  }
}

TEST(NNGradient, BackwardSoftmaxAddsTo) {
  const NDArray og = RandomArray({2, 3}, DType::kFloat32, -1, 1, 1);
  const NDArray y = imperative::Invoke("softmax", {RandomArray({2, 3})})[0];
  EXPECT_TRUE(AddToAccumulates("_backward_softmax", {}, {og, y}));
}

}  // namespace
}  // namespace testing
}  // namespace mx
