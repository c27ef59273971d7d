// LRN against a reference written from MXNet's formula (lrn-inl.h:
// tmp_norm = chpool_sum(x^2, nsize) * alpha / nsize + knorm, out = x *
// tmp_norm^-beta), numerical gradients, dtypes and typed errors.
#include <cmath>
#include <string>
#include <vector>

#include "base/error.h"
#include "graph/symbol.h"
#include "gtest/gtest.h"
#include "imperative/nd.h"
#include "testing/grad_check.h"
#include "testing/op_test_util.h"

namespace mx {
namespace testing {
namespace {

std::vector<double> Reference(const std::vector<double>& x, const TShape& s,
                              int nsize, double alpha, double beta,
                              double knorm) {
  const int64_t c_count = s[1], plane = s[2] * s[3];
  std::vector<double> y(x.size());
  for (size_t i = 0; i < x.size(); ++i) {
    const int64_t c = (static_cast<int64_t>(i) / plane) % c_count;
    double sum = 0;
    for (int64_t k = c - nsize / 2; k <= c + nsize / 2; ++k) {
      if (k < 0 || k >= c_count) continue;
      const double v = x[i + (k - c) * plane];
      sum += v * v;
    }
    y[i] = x[i] * std::pow(knorm + alpha / nsize * sum, -beta);
  }
  return y;
}

TEST(LRN, MatchesMXNetsFormula) {
  const TShape shape{2, 7, 3, 2};
  const NDArray x = RandomArray(shape, DType::kFloat64, -3, 3, 5);
  struct Case {
    int nsize;
    double alpha, beta, knorm;
  };
  // MXNet's defaults, AlexNet's (alpha 1e-4 with knorm 1 ...), an even
  // window (nsize/2 either side: 5 channels for nsize 4), one channel.
  for (const Case& c : {Case{5, 1e-4, 0.75, 2}, Case{3, 0.5, 0.75, 1},
                        Case{4, 2.0, 0.5, 1.5}, Case{1, 1.0, 1.0, 1}}) {
    SCOPED_TRACE(c.nsize);
    const AttrDict attrs = {{"nsize", std::to_string(c.nsize)},
                            {"alpha", std::to_string(c.alpha)},
                            {"beta", std::to_string(c.beta)},
                            {"knorm", std::to_string(c.knorm)}};
    const std::vector<NDArray> out = nd::CallMulti("LRN", {x}, attrs);
    EXPECT_TRUE(AllClose(
        ToDouble(out[0]),
        Reference(ToDouble(x), shape, c.nsize, c.alpha, c.beta, c.knorm), 1e-13,
        1e-13));
  }
}

TEST(LRN, OnlyTheOutputIsVisible) {
  const Symbol y = Symbol::Create("LRN", {Symbol::Variable("data")},
                                  {{"nsize", "3"}}, "lrn");
  EXPECT_EQ(y.ListOutputNames(), std::vector<std::string>{"lrn_output"});
}

TEST(LRNGradient, MatchesNumericalGradients) {
  for (const char* nsize : {"1", "3", "4", "5"}) {
    SCOPED_TRACE(nsize);
    EXPECT_TRUE(CheckGradient(
        "LRN", {{"nsize", nsize}, {"alpha", "0.8"}, {"beta", "0.75"}},
        {RandomArray({2, 5, 2, 3}, DType::kFloat64, -2, 2, 7)}));
  }
}

TEST(LRN, Float32AndFloat16FollowFloat64) {
  const NDArray x = RandomArray({2, 6, 4, 3}, DType::kFloat64, -2, 2, 9);
  const AttrDict attrs = {{"nsize", "5"}, {"alpha", "0.5"}};
  const std::vector<double> want = ToDouble(nd::Call("LRN", {x}, attrs));
  for (DType dt : {DType::kFloat32, DType::kFloat16}) {
    const NDArray y = nd::Call(
        "LRN", {nd::Call("Cast", {x}, {{"dtype", DTypeName(dt)}})}, attrs);
    EXPECT_EQ(y.dtype(), dt);
    const double tol = dt == DType::kFloat32 ? 1e-5 : 3e-3;
    EXPECT_TRUE(AllClose(ToDouble(y), want, tol, tol)) << DTypeName(dt);
  }
}

TEST(LRN, BadInputsAreTypedErrors) {
  const NDArray x = RandomArray({2, 3, 2, 2});
  ExpectError<InvalidArgument>([&] { nd::Call("LRN", {x}, {}); },
                               {"LRN", "nsize"});
  ExpectError<InvalidArgument>(
      [&] {
        nd::Call("LRN", {x}, {{"nsize", "0"}});
      },
      {"LRN", "nsize=0"});
  ExpectError<ShapeError>(
      [&] {
        nd::Call("LRN", {RandomArray({2, 3, 4})}, {{"nsize", "3"}});
      },
      {"LRN", "4-D"});
  ExpectError<InvalidArgument>(
      [&] {
        nd::Call("LRN", {ArrayOf({1, 2, 1, 1}, {1, 2}, DType::kInt32)},
                 {{"nsize", "3"}});
      },
      {"LRN"});
}

}  // namespace
}  // namespace testing
}  // namespace mx
