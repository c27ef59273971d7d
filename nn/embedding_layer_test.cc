// nn::Embedding: lookups, the weight gradient, hybridization and errors.
#include <vector>

#include "gtest/gtest.h"
#include "nn/layers.h"
#include "nn/nn_test_util.h"

namespace mx {
namespace nn {
namespace testing {
namespace {

TEST(Embedding, LooksUpWeightRows) {
  Embedding embed(4, 3);
  embed.Initialize(init::Uniform(1));
  EXPECT_EQ(embed.weight()->shape(), (TShape{4, 3}));
  const NDArray ids = ArrayOf({2, 2}, {3, 0, 3, 1}, DType::kInt32);
  const NDArray y = embed(ids);
  EXPECT_EQ(y.shape(), (TShape{2, 2, 3}));
  const std::vector<double> w = ToDouble(embed.weight()->data());
  std::vector<double> expected;
  for (int row : {3, 0, 3, 1}) {
    for (int c = 0; c < 3; ++c) expected.push_back(w[row * 3 + c]);
  }
  EXPECT_EQ(ToDouble(y), expected);
}

TEST(Embedding, WeightGradientSumsTheRowsThatReadIt) {
  Embedding embed(3, 2);
  embed.Initialize(init::Uniform(1));
  const RunResult r = RunWithGrad(embed, ArrayOf({3}, {2, 0, 2}),
                                  ArrayOf({3, 2}, {1, 2, 10, 20, 100, 200}));
  EXPECT_EQ(r.grads.at("weight"),
            (std::vector<double>{10, 20, 0, 0, 101, 202}));
  EXPECT_EQ(r.input_grad, (std::vector<double>{0, 0, 0}));
}

TEST(Embedding, HybridizedMatchesImperative) {
  Embedding embed(5, 2);
  embed.Initialize(init::Uniform(1));
  const NDArray ids = ArrayOf({4}, {4, 1, 1, 0});
  const NDArray head = RandomArray({4, 2});
  const RunResult imperative = RunWithGrad(embed, ids, head);
  embed.Hybridize();
  const RunResult hybrid = RunWithGrad(embed, ids, head);
  EXPECT_EQ(hybrid.output, imperative.output);
  EXPECT_EQ(hybrid.grads.at("weight"), imperative.grads.at("weight"));
}

TEST(Embedding, Float64Weights) {
  Embedding::Options o;
  o.dtype = DType::kFloat64;
  Embedding embed(2, 2, o);
  embed.Initialize(init::Uniform(1));
  const NDArray y = embed(ArrayOf({1}, {1}));
  EXPECT_EQ(y.dtype(), DType::kFloat64);
}

TEST(Embedding, NonPositiveDimsAreInvalid) {
  EXPECT_NE(ErrorOf<InvalidArgument>([] {
              Embedding(0, 3);
            }).find("Embedding: input_dim (0)"),
            std::string::npos);
}

}  // namespace
}  // namespace testing
}  // namespace nn
}  // namespace mx
