// masked_softmax and masked_log_softmax against their definition: every
// axis, temperatures, broadcast masks, fully masked lines, float16, and
// the errors MXNet 2 gives for bad masks.
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "base/error.h"
#include "gtest/gtest.h"
#include "imperative/nd.h"
#include "testing/op_test_util.h"

namespace mx {
namespace testing {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

// softmax(x / t) (or its log) along `axis` over the elements whose mask
// (broadcast from `ms`) is set; 0 (log: -inf) elsewhere.
std::vector<double> RefMasked(const std::vector<double>& x, const TShape& s,
                              const std::vector<double>& mask, const TShape& ms,
                              int axis, double t, bool log) {
  auto masked_in = [&](std::vector<int64_t> idx) {
    for (int d = 0; d < s.ndim(); ++d) {
      if (ms[d] == 1) idx[d] = 0;
    }
    return mask[Ravel(idx, ms)] != 0;
  };
  std::vector<double> y(x.size());
  for (int64_t i = 0; i < static_cast<int64_t>(x.size()); ++i) {
    const std::vector<int64_t> idx = Unravel(i, s);
    if (!masked_in(idx)) {
      y[i] = log ? -kInf : 0;
      continue;
    }
    double sum = 0;
    for (int64_t k = 0; k < s[axis]; ++k) {
      std::vector<int64_t> j = idx;
      j[axis] = k;
      if (masked_in(j)) sum += std::exp(x[Ravel(j, s)] / t);
    }
    const double p = std::exp(x[i] / t) / sum;
    y[i] = log ? std::log(p) : p;
  }
  return y;
}

NDArray Masked(bool log, const NDArray& x, const NDArray& mask, int axis,
               double t, const std::string& normalize = "True") {
  return nd::Call(log ? "masked_log_softmax" : "masked_softmax", {x, mask},
                  {{"axis", std::to_string(axis)},
                   {"temperature", nd::Attr(t)},
                   {"normalize", normalize}});
}

TEST(MaskedSoftmax, MatchesTheDefinition) {
  const TShape shape{2, 3, 4};
  // A (2, 1, 4) mask broadcast over axis 1, and a full one.
  const TShape ms_row{2, 1, 4};
  const std::vector<double> row = {1, 0, 1, 1, 0, 1, 1, 0};
  std::vector<double> full(24);
  for (size_t i = 0; i < full.size(); ++i) full[i] = (i * 7 % 5) != 0;
  for (DType dt : {DType::kFloat64, DType::kFloat32, DType::kFloat16}) {
    const double tol = dt == DType::kFloat16 ? 3e-3 : 1e-6;
    const NDArray x = RandomArray(shape, dt, -3, 3, 1);
    for (const auto& [mask, ms] :
         std::vector<std::pair<std::vector<double>, TShape>>{{row, ms_row},
                                                             {full, shape}}) {
      const NDArray m = ArrayOf(ms, mask, DType::kBool);
      for (int axis : {0, 1, 2, -1}) {
        for (double t : {1.0, 0.5}) {
          for (bool log : {false, true}) {
            const int ax = axis < 0 ? axis + 3 : axis;
            const NDArray y = Masked(log, x, m, axis, t);
            EXPECT_EQ(y.dtype(), dt);
            const std::vector<double> want =
                RefMasked(ToDouble(x), shape, mask, ms, ax, t, log);
            const std::vector<double> got = ToDouble(y);
            for (size_t i = 0; i < got.size(); ++i) {
              if (std::isinf(want[i])) {
                EXPECT_EQ(got[i], want[i]) << i;
              } else {
                EXPECT_NEAR(got[i], want[i], tol * (1 + std::abs(want[i])))
                    << (log ? "log " : "") << "axis=" << axis << " t=" << t
                    << " " << DTypeName(dt) << " element " << i;
              }
            }
          }
        }
      }
    }
  }
}

// MXNet's kernels give a line with nothing unmasked all 0 (log: -inf),
// not NaN; normalize=False (no maximum subtracted) gives the same values
// where exp does not overflow.
TEST(MaskedSoftmax, FullyMaskedLinesAndNormalize) {
  const NDArray x = ArrayOf({2, 3}, {1, 2, 3, 4, 5, 6});
  const NDArray m = ArrayOf({2, 3}, {0, 0, 0, 1, 0, 1}, DType::kBool);
  const std::vector<double> y = ToDouble(Masked(false, x, m, -1, 1));
  const double e = 1 / (1 + std::exp(2.0));
  EXPECT_EQ(std::vector<double>(y.begin(), y.begin() + 3),
            (std::vector<double>{0, 0, 0}));
  EXPECT_NEAR(y[3], e, 1e-7);
  EXPECT_EQ(y[4], 0);
  EXPECT_NEAR(y[5], 1 - e, 1e-7);
  const std::vector<double> ly = ToDouble(Masked(true, x, m, -1, 1));
  EXPECT_EQ(ly[0], -kInf);
  EXPECT_EQ(ly[2], -kInf);
  EXPECT_NEAR(ly[3], std::log(e), 1e-6);
  EXPECT_TRUE(AllClose(ToDouble(Masked(false, x, m, -1, 1, "False")), y));
  // Alias and default attributes (MXNet 2 writes normalize=None too).
  EXPECT_TRUE(AllClose(ToDouble(nd::Call("_npx_masked_softmax", {x, m},
                                         {{"normalize", "None"}})),
                       y));
}

TEST(MaskedSoftmax, BadMasksAreTypedErrors) {
  const NDArray x = RandomArray({2, 3});
  EXPECT_THROW(
      nd::Call("masked_softmax", {x, ArrayOf({2, 3}, {1, 0, 1, 0, 1, 0})}),
      DTypeError);  // float mask
  EXPECT_THROW(
      nd::Call("masked_softmax", {x, ArrayOf({3}, {1, 0, 1}, DType::kBool)}),
      ShapeError);  // another rank
  EXPECT_THROW(nd::Call("masked_softmax",
                        {x, ArrayOf({2, 2}, {1, 0, 1, 0}, DType::kBool)}),
               ShapeError);
  EXPECT_THROW(nd::Call("masked_softmax", {ArrayOf({2}, {1, 2}, DType::kInt32),
                                           ArrayOf({2}, {1, 0}, DType::kBool)}),
               DTypeError);
  EXPECT_THROW(nd::Call("masked_softmax",
                        {x, ArrayOf({2, 3}, {1, 0, 1, 0, 1, 0}, DType::kBool)},
                        {{"temperature", "0"}}),
               InvalidArgument);
}

}  // namespace
}  // namespace testing
}  // namespace mx
