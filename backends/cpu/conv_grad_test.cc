// Numerical checks of the gradients of Convolution and Pooling.
#include <string>
#include <vector>

#include "base/error.h"
#include "gtest/gtest.h"
#include "imperative/nd.h"
#include "testing/cpu_reference.h"
#include "testing/grad_check.h"
#include "testing/op_test_util.h"

namespace mx {
namespace testing {
namespace {

std::vector<NDArray> ConvInputs(const TShape& data, const TShape& weight,
                                bool bias) {
  std::vector<NDArray> in = {RandomArray(data, DType::kFloat32, -1, 1, 1),
                             RandomArray(weight, DType::kFloat32, -1, 1, 2)};
  if (bias) in.push_back(RandomArray({weight[0]}, DType::kFloat32, -1, 1, 3));
  return in;
}

TEST(ConvGradient, Plain) {
  EXPECT_TRUE(CheckGradient("Convolution",
                            {{"kernel", "(3,3)"}, {"num_filter", "3"}},
                            ConvInputs({2, 2, 5, 5}, {3, 2, 3, 3}, true)));
}

TEST(ConvGradient, StridePadDilateNoBias) {
  EXPECT_TRUE(CheckGradient("Convolution",
                            {{"kernel", "(3,2)"},
                             {"num_filter", "2"},
                             {"stride", "(2,1)"},
                             {"pad", "(1,2)"},
                             {"dilate", "(1,2)"},
                             {"no_bias", "True"}},
                            ConvInputs({2, 3, 6, 5}, {2, 3, 3, 2}, false)));
}

TEST(ConvGradient, Groups) {
  EXPECT_TRUE(CheckGradient("Convolution",
                            {{"kernel", "(2,2)"},
                             {"num_filter", "4"},
                             {"num_group", "2"},
                             {"pad", "(1,1)"}},
                            ConvInputs({2, 4, 4, 3}, {4, 2, 2, 2}, true)));
}

TEST(ConvGradient, OneD) {
  EXPECT_TRUE(CheckGradient("Convolution",
                            {{"kernel", "(3)"},
                             {"num_filter", "4"},
                             {"num_group", "2"},
                             {"stride", "(2)"},
                             {"pad", "(1)"},
                             {"dilate", "(2)"}},
                            ConvInputs({2, 2, 9}, {4, 1, 3}, true)));
}

TEST(ConvGradient, ThreeD) {
  EXPECT_TRUE(
      CheckGradient("Convolution",
                    {{"kernel", "(2,2,3)"},
                     {"num_filter", "2"},
                     {"stride", "(1,2,1)"},
                     {"pad", "(1,0,1)"}},
                    ConvInputs({1, 2, 3, 4, 4}, {2, 2, 2, 2, 3}, true)));
}

// _backward_Convolution accumulates into every output under kAddTo.
TEST(ConvGradient, BackwardAddsTo) {
  const AttrDict attrs = {{"kernel", "(2,2)"}, {"num_filter", "2"}};
  const std::vector<NDArray> in = ConvInputs({1, 2, 3, 3}, {2, 2, 2, 2}, true);
  const NDArray og = RandomArray({1, 2, 2, 2}, DType::kFloat32, -1, 1, 9);
  const std::vector<NDArray> args = {og, in[0], in[1]};
  EXPECT_TRUE(AddToAccumulates("_backward_Convolution", attrs, args));
}

// Distinct values so a max window's winner does not change under eps.
NDArray Distinct(const TShape& shape) {
  const int64_t n = shape.Size();
  std::vector<double> v(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) v[i] = static_cast<double>((i * 37) % n) / n;
  return ArrayOf(shape, v, DType::kFloat64);
}

TEST(PoolingGradient, EveryTypeAndConvention) {
  for (const char* type : {"max", "avg", "sum"}) {
    for (const char* conv : {"valid", "full"}) {
      EXPECT_TRUE(CheckGradient("Pooling",
                                {{"kernel", "(3,2)"},
                                 {"pool_type", type},
                                 {"stride", "(2,2)"},
                                 {"pad", "(1,0)"},
                                 {"pooling_convention", conv}},
                                {Distinct({2, 2, 6, 5})}))
          << type << " " << conv;
    }
  }
}

TEST(PoolingGradient, AvgWithoutPadInCount) {
  EXPECT_TRUE(CheckGradient("Pooling",
                            {{"kernel", "(2,2)"},
                             {"pool_type", "avg"},
                             {"pad", "(1,1)"},
                             {"count_include_pad", "False"}},
                            {Distinct({1, 2, 4, 4})}));
}

TEST(PoolingGradient, Global) {
  for (const char* type : {"max", "avg", "sum"}) {
    EXPECT_TRUE(CheckGradient("Pooling",
                              {{"global_pool", "True"}, {"pool_type", type}},
                              {Distinct({2, 3, 3, 4})}))
        << type;
  }
}

TEST(PoolingGradient, OneAndThreeD) {
  for (const char* type : {"max", "avg", "sum"}) {
    EXPECT_TRUE(CheckGradient("Pooling",
                              {{"kernel", "(3)"},
                               {"pool_type", type},
                               {"stride", "(2)"},
                               {"pad", "(1)"},
                               {"pooling_convention", "full"}},
                              {Distinct({2, 2, 8})}))
        << type;
    EXPECT_TRUE(CheckGradient("Pooling",
                              {{"kernel", "(2,2,2)"},
                               {"pool_type", type},
                               {"stride", "(1,2,2)"},
                               {"pad", "(0,1,0)"}},
                              {Distinct({1, 2, 3, 4, 4})}))
        << type;
    EXPECT_TRUE(CheckGradient("Pooling",
                              {{"global_pool", "True"}, {"pool_type", type}},
                              {Distinct({2, 1, 2, 2, 3})}))
        << type;
  }
}

// A direct call whose out_grad, data and weight are not one convolution is
// a ShapeError (the kernel would read past the arrays). The shapes are an
// op_attrs_fuzzer finding.
TEST(ConvGradient, BackwardWithMismatchedShapesIsAShapeError) {
  const AttrDict attrs = {
      {"kernel", "(3,3)"}, {"num_filter", "2"}, {"pad", "(1,1)"}};
  EXPECT_THROW(nd::CallMulti("_backward_Convolution",
                             {RandomArray({1, 1, 4, 4}),
                              RandomArray({2, 1, 3, 3}), RandomArray({2})},
                             attrs),
               ShapeError);
  // out_grad of the wrong spatial size for a valid (data, weight).
  EXPECT_THROW(
      nd::CallMulti("_backward_Convolution",
                    {RandomArray({1, 2, 3, 3}), RandomArray({1, 1, 4, 4}),
                     RandomArray({2, 1, 3, 3})},
                    attrs),
      ShapeError);
  // The matching call works.
  EXPECT_EQ(nd::CallMulti("_backward_Convolution",
                          {RandomArray({1, 2, 4, 4}), RandomArray({1, 1, 4, 4}),
                           RandomArray({2, 1, 3, 3})},
                          attrs)
                .size(),
            3u);
}

TEST(PoolingGradient, BackwardAddsTo) {
  const AttrDict attrs = {{"kernel", "(2,2)"}, {"pool_type", "max"}};
  const NDArray x = Distinct({1, 1, 3, 3});
  const NDArray og = RandomArray({1, 1, 2, 2}, DType::kFloat64, -1, 1, 9);
  EXPECT_TRUE(AddToAccumulates("_backward_Pooling", attrs, {og, x}));
}

}  // namespace
}  // namespace testing
}  // namespace mx
