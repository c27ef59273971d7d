#include "testing/op_test_util.h"

#include <cmath>
#include <random>
#include <sstream>

namespace mx {
namespace testing {

NDArray ArrayOf(const TShape& shape, const std::vector<double>& values,
                DType dtype) {
  NDArray src = NDArray::FromVector<double>(shape, values);
  if (dtype == DType::kFloat64) return src;
  NDArray out(shape, Context::CPU(), dtype);
  CopyFromTo(src, out);
  return out;
}

NDArray RandomArray(const TShape& shape, DType dtype, double lo, double hi,
                    uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> dist(lo, hi);
  std::vector<double> values(static_cast<size_t>(shape.Size()));
  const bool integral = !IsFloat(dtype);
  for (double& v : values) {
    v = dist(rng);
    if (integral) v = std::round(v);
  }
  return ArrayOf(shape, values, dtype);
}

std::vector<NDArray> RandomArrays(const std::vector<TShape>& shapes,
                                  DType dtype, double lo, double hi,
                                  uint32_t seed) {
  std::vector<NDArray> out;
  for (size_t k = 0; k < shapes.size(); ++k) {
    out.push_back(
        RandomArray(shapes[k], dtype, lo, hi, seed + static_cast<uint32_t>(k)));
  }
  return out;
}

std::vector<double> ToDouble(const NDArray& a) {
  NDArray d(a.shape(), Context::CPU(), DType::kFloat64);
  CopyFromTo(a, d);
  return d.ToVector<double>();
}

std::vector<int64_t> Unravel(int64_t i, const TShape& shape) {
  std::vector<int64_t> idx(shape.ndim());
  for (int d = shape.ndim() - 1; d >= 0; --d) {
    idx[d] = i % shape[d];
    i /= shape[d];
  }
  return idx;
}

int64_t Ravel(const std::vector<int64_t>& idx, const TShape& shape) {
  int64_t i = 0;
  for (int d = 0; d < shape.ndim(); ++d) i = i * shape[d] + idx[d];
  return i;
}

::testing::AssertionResult AllClose(const std::vector<double>& actual,
                                    const std::vector<double>& expected,
                                    double rtol, double atol) {
  if (actual.size() != expected.size()) {
    return ::testing::AssertionFailure()
           << "size " << actual.size() << " != expected " << expected.size();
  }
  std::ostringstream bad;
  int mismatches = 0;
  for (size_t i = 0; i < actual.size(); ++i) {
    const double a = actual[i], e = expected[i];
    const bool both_nan = std::isnan(a) && std::isnan(e);
    const bool same_inf = std::isinf(a) && std::isinf(e) && (a > 0) == (e > 0);
    if (both_nan || same_inf) continue;
    if (!(std::fabs(a - e) <= atol + rtol * std::fabs(e))) {
      if (mismatches++ < 5) {
        bad << "\n  [" << i << "] actual " << a << " expected " << e;
      }
    }
  }
  if (mismatches == 0) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << mismatches << " of " << actual.size()
                                       << " elements differ:" << bad.str();
}

::testing::AssertionResult NearArray(const NDArray& actual,
                                     const NDArray& expected, double rtol,
                                     double atol) {
  if (actual.shape() != expected.shape()) {
    return ::testing::AssertionFailure()
           << "shape " << actual.shape() << " != expected " << expected.shape();
  }
  if (actual.dtype() != expected.dtype()) {
    return ::testing::AssertionFailure()
           << "dtype " << DTypeName(actual.dtype()) << " != expected "
           << DTypeName(expected.dtype());
  }
  return AllClose(ToDouble(actual), ToDouble(expected), rtol, atol);
}

}  // namespace testing
}  // namespace mx
