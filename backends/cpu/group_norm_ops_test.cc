#include <cmath>
#include <vector>

#include "base/error.h"
#include "gtest/gtest.h"
#include "imperative/nd.h"
#include "testing/op_test_util.h"

namespace mx {
namespace testing {
namespace {

// GroupNorm by plain loops over x (N, C, S) flattened.
std::vector<double> RefGroupNorm(const std::vector<double>& x, int64_t n,
                                 int64_t c, int64_t s, int64_t groups,
                                 const std::vector<double>& gamma,
                                 const std::vector<double>& beta, double eps,
                                 std::vector<double>* means = nullptr,
                                 std::vector<double>* stds = nullptr) {
  std::vector<double> y(x.size());
  const int64_t per = c / groups;
  for (int64_t i = 0; i < n; ++i) {
    for (int64_t g = 0; g < groups; ++g) {
      double sum = 0, sq = 0;
      const int64_t count = per * s;
      for (int64_t ch = g * per; ch < (g + 1) * per; ++ch) {
        for (int64_t p = 0; p < s; ++p) sum += x[(i * c + ch) * s + p];
      }
      const double mean = sum / count;
      for (int64_t ch = g * per; ch < (g + 1) * per; ++ch) {
        for (int64_t p = 0; p < s; ++p) {
          const double d = x[(i * c + ch) * s + p] - mean;
          sq += d * d;
        }
      }
      const double sd = std::sqrt(sq / count + eps);
      if (means) means->push_back(mean);
      if (stds) stds->push_back(sd);
      for (int64_t ch = g * per; ch < (g + 1) * per; ++ch) {
        for (int64_t p = 0; p < s; ++p) {
          const int64_t k = (i * c + ch) * s + p;
          y[k] = (x[k] - mean) / sd * gamma[ch] + beta[ch];
        }
      }
    }
  }
  return y;
}

TEST(GroupNorm, MatchesLoopsWithMeanAndStd) {
  const NDArray x = RandomArray({3, 6, 2, 5}, DType::kFloat64, -2, 3, 1);
  const NDArray gamma = RandomArray({6}, DType::kFloat64, 0.5, 2, 2);
  const NDArray beta = RandomArray({6}, DType::kFloat64, -1, 1, 3);
  for (int groups : {1, 2, 3, 6}) {
    std::vector<NDArray> outs = nd::CallMulti(
        "GroupNorm", {x, gamma, beta},
        {{"num_groups", nd::Attr(groups)}, {"output_mean_var", "True"}});
    ASSERT_EQ(outs.size(), 3u);
    std::vector<double> means, stds;
    const std::vector<double> want =
        RefGroupNorm(ToDouble(x), 3, 6, 10, groups, ToDouble(gamma),
                     ToDouble(beta), 1e-5, &means, &stds);
    EXPECT_TRUE(AllClose(ToDouble(outs[0]), want, 1e-12, 1e-12)) << groups;
    EXPECT_EQ(outs[1].shape(), TShape({3, groups}));
    EXPECT_TRUE(AllClose(ToDouble(outs[1]), means, 1e-12, 1e-12));
    EXPECT_TRUE(AllClose(ToDouble(outs[2]), stds, 1e-12, 1e-12));
  }
  // Without output_mean_var one output; float32 and float16 too.
  for (DType dt : {DType::kFloat32, DType::kFloat16}) {
    const NDArray xf = RandomArray({2, 4, 3}, dt, -1, 1, 4);
    const NDArray y = nd::Call("GroupNorm",
                               {xf, nd::ones_like(RandomArray({4}, dt)),
                                nd::zeros_like(RandomArray({4}, dt))},
                               {{"num_groups", "2"}, {"eps", "0.01"}});
    EXPECT_EQ(y.dtype(), dt);
    const double tol = dt == DType::kFloat16 ? 5e-3 : 1e-5;
    EXPECT_TRUE(AllClose(ToDouble(y),
                         RefGroupNorm(ToDouble(xf), 2, 4, 3, 2, {1, 1, 1, 1},
                                      {0, 0, 0, 0}, 0.01),
                         tol, tol));
  }
}

TEST(InstanceNorm, IsGroupNormWithOneGroupPerChannel) {
  const NDArray x = RandomArray({2, 3, 4, 2}, DType::kFloat64, -1, 2, 5);
  const NDArray gamma = RandomArray({3}, DType::kFloat64, 0.5, 2, 6);
  const NDArray beta = RandomArray({3}, DType::kFloat64, -1, 1, 7);
  const NDArray y = nd::Call("InstanceNorm", {x, gamma, beta}, {});
  EXPECT_TRUE(AllClose(ToDouble(y),
                       RefGroupNorm(ToDouble(x), 2, 3, 8, 3, ToDouble(gamma),
                                    ToDouble(beta), 1e-3),
                       1e-12, 1e-12));
  // A constant plane normalizes to beta.
  const NDArray flat = ArrayOf({1, 1, 2, 2}, {5, 5, 5, 5}, DType::kFloat64);
  EXPECT_EQ(ToDouble(nd::Call("InstanceNorm",
                              {flat, ArrayOf({1}, {3}, DType::kFloat64),
                               ArrayOf({1}, {0.5}, DType::kFloat64)},
                              {})),
            (std::vector<double>{0.5, 0.5, 0.5, 0.5}));
}

TEST(GroupNorm, BadGroupsShapesAndDtypesAreTypedErrors) {
  const NDArray x = RandomArray({2, 6, 3});
  const NDArray g6 = RandomArray({6});
  ExpectError<ShapeError>(
      [&] {
        nd::Call("GroupNorm", {x, g6, g6}, {{"num_groups", "4"}});
      },
      {"op \"GroupNorm\"", "num_groups=4", "6 channels"});
  ExpectError<ShapeError>(
      [&] {
        nd::Call("GroupNorm", {x, g6, g6}, {{"num_groups", "0"}});
      },
      {"num_groups=0"});
  // gamma is per channel, (C,), not per group.
  EXPECT_THROW(nd::Call("GroupNorm", {x, RandomArray({2}), RandomArray({2})},
                        {{"num_groups", "2"}}),
               ShapeError);
  ExpectError<ShapeError>(
      [&] {
        nd::Call("InstanceNorm", {RandomArray({2, 6}), g6, g6}, {});
      },
      {"op \"InstanceNorm\"", "spatial"});
  EXPECT_THROW(nd::Call("InstanceNorm", {x, g6, g6}, {{"eps", "-1"}}),
               InvalidArgument);
  const NDArray xi = RandomArray({2, 6, 3}, DType::kInt32, 0, 5);
  const NDArray gi = RandomArray({6}, DType::kInt32, 0, 5);
  EXPECT_THROW(nd::Call("InstanceNorm", {xi, gi, gi}, {}), DTypeError);
}

}  // namespace
}  // namespace testing
}  // namespace mx
