// The unary math family (tan ... degrees) against the C library in double.
#include <cmath>
#include <functional>
#include <string>
#include <vector>

#include "base/error.h"
#include "gtest/gtest.h"
#include "imperative/nd.h"
#include "testing/op_test_util.h"

namespace mx {
namespace testing {
namespace {

constexpr double kPi = 3.14159265358979323846;

struct UnaryCase {
  std::string op;
  std::function<NDArray(const NDArray&)> fn;  // The nd:: front end.
  std::function<double(double)> expected;
  double lo, hi;  // Domain to sample.
};

std::vector<UnaryCase> Cases() {
  return {
      {"tan", nd::tan, [](double x) { return std::tan(x); }, -1.2, 1.2},
      {"sinh", nd::sinh, [](double x) { return std::sinh(x); }, -3, 3},
      {"cosh", nd::cosh, [](double x) { return std::cosh(x); }, -3, 3},
      {"arcsin", nd::arcsin, [](double x) { return std::asin(x); }, -0.99,
       0.99},
      {"arccos", nd::arccos, [](double x) { return std::acos(x); }, -0.99,
       0.99},
      {"arctan", nd::arctan, [](double x) { return std::atan(x); }, -5, 5},
      {"arcsinh", nd::arcsinh, [](double x) { return std::asinh(x); }, -5, 5},
      {"arccosh", nd::arccosh, [](double x) { return std::acosh(x); }, 1, 5},
      {"arctanh", nd::arctanh, [](double x) { return std::atanh(x); }, -0.99,
       0.99},
      {"log2", nd::log2, [](double x) { return std::log(x) / std::log(2.0); },
       0.01, 10},
      {"log10", nd::log10,
       [](double x) { return std::log(x) / std::log(10.0); }, 0.01, 10},
      {"expm1", nd::expm1, [](double x) { return std::exp(x) - 1; }, -2, 2},
      {"log1p", nd::log1p, [](double x) { return std::log(1 + x); }, -0.9, 5},
      {"cbrt", nd::cbrt,
       [](double x) {
         return x < 0 ? -std::pow(-x, 1.0 / 3) : std::pow(x, 1.0 / 3);
       },
       -8, 8},
      {"rsqrt", nd::rsqrt, [](double x) { return 1 / std::sqrt(x); }, 0.01, 9},
      {"rcbrt", nd::rcbrt, [](double x) { return std::pow(x, -1.0 / 3); }, 0.01,
       9},
      {"radians", nd::radians, [](double x) { return x * kPi / 180; }, -360,
       360},
      {"degrees", nd::degrees, [](double x) { return x * 180 / kPi; }, -7, 7},
  };
}

std::vector<double> Map(const std::function<double(double)>& f,
                        std::vector<double> v) {
  for (double& x : v) x = f(x);
  return v;
}

TEST(UnaryMath, Float32MatchesFormula) {
  for (const UnaryCase& c : Cases()) {
    const NDArray x = RandomArray({4, 5}, DType::kFloat32, c.lo, c.hi, 3);
    const NDArray y = c.fn(x);
    EXPECT_EQ(y.dtype(), DType::kFloat32) << c.op;
    EXPECT_EQ(y.shape(), x.shape()) << c.op;
    EXPECT_TRUE(AllClose(ToDouble(y), Map(c.expected, ToDouble(x)), 1e-5, 1e-6))
        << c.op;
  }
}

TEST(UnaryMath, Float64MatchesFormula) {
  for (const UnaryCase& c : Cases()) {
    const NDArray x = RandomArray({7}, DType::kFloat64, c.lo, c.hi, 5);
    EXPECT_TRUE(
        AllClose(ToDouble(c.fn(x)), Map(c.expected, ToDouble(x)), 1e-12, 1e-14))
        << c.op;
  }
}

TEST(UnaryMath, Float16ComputesInFloat) {
  const NDArray x = ArrayOf({3}, {0.5, 1, 2}, DType::kFloat16);
  EXPECT_TRUE(AllClose(ToDouble(nd::log2(x)), {-1, 0, 1}, 1e-3, 1e-3));
  EXPECT_TRUE(
      AllClose(ToDouble(nd::rsqrt(ArrayOf({2}, {4, 0.25}, DType::kFloat16))),
               {0.5, 2}, 1e-3, 1e-3));
}

TEST(UnaryMath, KnownValues) {
  const double inf = INFINITY;
  EXPECT_TRUE(
      AllClose(ToDouble(nd::cbrt(ArrayOf({3}, {-27, 0, 8}))), {-3, 0, 2}));
  EXPECT_TRUE(AllClose(ToDouble(nd::degrees(ArrayOf({2}, {kPi, -kPi / 2}))),
                       {180, -90}, 1e-6));
  // expm1 and log1p keep precision near 0, where exp(x) - 1 in float would
  // lose it all.
  EXPECT_TRUE(
      AllClose(ToDouble(nd::expm1(ArrayOf({1}, {1e-10}))), {1e-10}, 1e-6, 0));
  EXPECT_TRUE(
      AllClose(ToDouble(nd::log1p(ArrayOf({1}, {1e-10}))), {1e-10}, 1e-6, 0));
  // Boundaries follow IEEE: arctanh(+-1) = +-inf, rsqrt(0) = inf.
  const std::vector<double> t = ToDouble(nd::arctanh(ArrayOf({2}, {1, -1})));
  EXPECT_EQ(t, (std::vector<double>{inf, -inf}));
  EXPECT_EQ(ToDouble(nd::rsqrt(ArrayOf({1}, {0}))), (std::vector<double>{inf}));
  EXPECT_TRUE(std::isnan(ToDouble(nd::arcsin(ArrayOf({1}, {2})))[0]));
}

TEST(UnaryMath, IntegerInputIsADTypeError) {
  for (const UnaryCase& c : Cases()) {
    ExpectError<DTypeError>(
        [&] {
          c.fn(ArrayOf({2}, {1, 2}, DType::kInt32));
        },
        {"\"" + c.op + "\"", "int32"});
  }
}

TEST(SpecialFunctions, GammaGammalnDigammaKnownValues) {
  const double sqrt_pi = std::sqrt(kPi), euler = 0.57721566490153286061;
  const NDArray x = ArrayOf({4}, {0.5, 1, 5, -0.5}, DType::kFloat64);
  EXPECT_TRUE(AllClose(ToDouble(nd::gamma(x)), {sqrt_pi, 1, 24, -2 * sqrt_pi},
                       1e-14, 0));
  EXPECT_TRUE(
      AllClose(ToDouble(nd::gammaln(x)),
               {std::log(sqrt_pi), 0, std::log(24.0), std::log(2 * sqrt_pi)},
               1e-14, 1e-15));
  // psi(1) = -gamma_E, psi(1/2) = -gamma_E - 2 ln 2, psi(5) = H_4 - gamma_E,
  // psi(-1/2) = psi(1/2) + 2.
  const double half = -euler - 2 * std::log(2.0);
  EXPECT_TRUE(AllClose(ToDouble(nd::digamma(x)),
                       {half, -euler, 25.0 / 12 - euler, half + 2}, 1e-14, 0));
  const std::vector<double> poles =
      ToDouble(nd::digamma(ArrayOf({2}, {0, -3}, DType::kFloat64)));
  EXPECT_TRUE(std::isnan(poles[0]) && std::isnan(poles[1]));
  // float32 and float16 compute in float.
  EXPECT_TRUE(AllClose(ToDouble(nd::gammaln(ArrayOf({2}, {0.5, 5}))),
                       {std::log(sqrt_pi), std::log(24.0)}, 1e-6, 1e-6));
  EXPECT_TRUE(
      AllClose(ToDouble(nd::gamma(ArrayOf({2}, {0.5, 5}, DType::kFloat16))),
               {sqrt_pi, 24}, 1e-3, 1e-3));
}

TEST(SpecialFunctions, Polygamma) {
  const NDArray x = ArrayOf({3}, {1, 0.5, -0.5}, DType::kFloat64);
  auto polygamma = [&](int n) {
    return ToDouble(nd::Call("polygamma", {x}, {{"n", std::to_string(n)}}));
  };
  EXPECT_EQ(polygamma(0), ToDouble(nd::digamma(x)));
  // psi1(1) = pi^2 / 6, psi1(1/2) = pi^2 / 2, psi1(-1/2) = psi1(1/2) + 4.
  EXPECT_TRUE(AllClose(polygamma(1),
                       {kPi * kPi / 6, kPi * kPi / 2, kPi * kPi / 2 + 4}, 1e-14,
                       0));
  // psi2(1) = -2 zeta(3).
  EXPECT_NEAR(polygamma(2)[0], -2 * 1.2020569031595942854, 1e-14);
  for (const char* n : {"-1", "1001"}) {
    ExpectError<InvalidArgument>(
        [&] {
          nd::Call("polygamma", {x}, {{"n", n}});
        },
        {"polygamma", n});
  }
}

TEST(SpecialFunctions, ErfinvInvertsErf) {
  const NDArray x = RandomArray({200}, DType::kFloat64, -0.9999, 0.9999, 8);
  const std::vector<double> y = ToDouble(nd::erfinv(x));
  std::vector<double> back;
  for (double v : y) back.push_back(std::erf(v));
  EXPECT_TRUE(AllClose(back, ToDouble(x), 1e-13, 1e-15));
  // Small |x|: erfinv(x) = sqrt(pi)/2 (x + pi x^3 / 12 + ...), full precision.
  EXPECT_TRUE(AllClose(
      ToDouble(nd::erfinv(ArrayOf({2}, {1e-10, -3e-5}, DType::kFloat64))),
      {0.5 * std::sqrt(kPi) * 1e-10,
       0.5 * std::sqrt(kPi) * (-3e-5 - kPi * 27e-15 / 12)},
      1e-14, 0));
  const std::vector<double> edges =
      ToDouble(nd::erfinv(ArrayOf({4}, {1, -1, 1.5, NAN})));
  EXPECT_EQ(edges[0], INFINITY);
  EXPECT_EQ(edges[1], -INFINITY);
  EXPECT_TRUE(std::isnan(edges[2]) && std::isnan(edges[3]));
  EXPECT_TRUE(AllClose(ToDouble(nd::erfinv(ArrayOf({1}, {0.5}))),
                       {0.47693627620446987}, 1e-6, 0));
}

TEST(SpecialFunctions, IntegerInputIsADTypeError) {
  for (const char* op : {"gamma", "gammaln", "digamma", "erfinv"}) {
    ExpectError<DTypeError>(
        [&] {
          nd::Call(op, {ArrayOf({2}, {1, 2}, DType::kInt32)});
        },
        {op, "int32"});
  }
}

TEST(UnaryMath, WritesInPlace) {
  NDArray x = ArrayOf({2}, {0, 90});
  nd::CallInto("radians", {x}, {}, x);
  EXPECT_TRUE(AllClose(ToDouble(x), {0, kPi / 2}));
}

}  // namespace
}  // namespace testing
}  // namespace mx
