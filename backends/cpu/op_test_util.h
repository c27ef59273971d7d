// Test helpers for operator tests: random inputs, conversion of any dtype to
// double, and closeness checks against naive references written in tests.
#ifndef MXCORE_BACKENDS_CPU_OP_TEST_UTIL_H_
#define MXCORE_BACKENDS_CPU_OP_TEST_UTIL_H_

#include <cstdint>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "ndarray/ndarray.h"

namespace mx {
namespace testing {

// Uniform values in [lo, hi) converted to `dtype` (integers are rounded).
NDArray RandomArray(const TShape& shape, DType dtype = DType::kFloat32,
                    double lo = -1, double hi = 1, uint32_t seed = 7);
// An array with exactly these values, converted to `dtype`.
NDArray ArrayOf(const TShape& shape, const std::vector<double>& values,
                DType dtype = DType::kFloat32);
// Values of any dtype as doubles (blocks until computed).
std::vector<double> ToDouble(const NDArray& a);
// Multi-index of flat index `i` in `shape`, and back.
std::vector<int64_t> Unravel(int64_t i, const TShape& shape);
int64_t Ravel(const std::vector<int64_t>& idx, const TShape& shape);

// |a - e| <= atol + rtol * |e| elementwise, with the first mismatches shown.
::testing::AssertionResult AllClose(const std::vector<double>& actual,
                                    const std::vector<double>& expected,
                                    double rtol = 1e-5, double atol = 1e-6);

// Whether `part` occurs in `s`.
inline bool Contains(const std::string& s, const std::string& part) {
  return s.find(part) != std::string::npos;
}

// Runs `fn` and returns the message of the E it throws; anything else
// (no exception, or another type escaping) fails the test.
template <typename E, typename F>
std::string ErrorOf(F fn) {
  try {
    fn();
  } catch (const E& e) {
    return e.what();
  }
  ADD_FAILURE() << "no exception of the expected type";
  return "";
}

// Runs `fn` and expects an exception of type E whose message contains
// every string in `parts`.
template <typename E, typename F>
void ExpectError(F fn, const std::vector<std::string>& parts) {
  try {
    fn();
    ADD_FAILURE() << "no exception";
  } catch (const E& e) {
    const std::string msg = e.what();
    for (const std::string& p : parts) {
      EXPECT_NE(msg.find(p), std::string::npos)
          << "\"" << p << "\" not in: " << msg;
    }
  }
}

}  // namespace testing
}  // namespace mx

#endif  // MXCORE_BACKENDS_CPU_OP_TEST_UTIL_H_
