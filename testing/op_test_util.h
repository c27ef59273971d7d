// Test helpers shared by every package's tests (target //testing:op_test_util,
// test-only): arrays from values or from a seed, conversion of any dtype to
// double, closeness checks against references, and typed-error checks.
//
//   using ::mx::testing::ExpectError;
//   using ::mx::testing::ExpectNear;
//   NDArray x = RandomArray({2, 3}, DType::kFloat16, -1, 1, /*seed=*/5);
//   ExpectNear(nd::relu(x), ArrayOf({2, 3}, Relu(ToDouble(x))), 1e-3, 1e-3);
//   ExpectError<ShapeError>([&] { nd::dot(x, x); }, {"\"dot\"", "(2,3)"});
#ifndef MXCORE_TESTING_OP_TEST_UTIL_H_
#define MXCORE_TESTING_OP_TEST_UTIL_H_

#include <cstdint>
#include <string>
#include <type_traits>
#include <vector>

#include "base/error.h"
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
// One RandomArray per shape, all of `dtype`; input k uses seed `seed + k`.
std::vector<NDArray> RandomArrays(const std::vector<TShape>& shapes,
                                  DType dtype = DType::kFloat32, double lo = -1,
                                  double hi = 1, uint32_t seed = 7);
// Values of any dtype as doubles (blocks until computed).
std::vector<double> ToDouble(const NDArray& a);
// Multi-index of flat index `i` in `shape`, and back.
std::vector<int64_t> Unravel(int64_t i, const TShape& shape);
int64_t Ravel(const std::vector<int64_t>& idx, const TShape& shape);

// |a - e| <= atol + rtol * |e| elementwise, with the first mismatches shown.
::testing::AssertionResult AllClose(const std::vector<double>& actual,
                                    const std::vector<double>& expected,
                                    double rtol = 1e-5, double atol = 1e-6);

// Same shape and dtype as `expected`, and AllClose values. For an
// implementation checked against a reference (another kernel, a plugin).
::testing::AssertionResult NearArray(const NDArray& actual,
                                     const NDArray& expected,
                                     double rtol = 1e-5, double atol = 1e-6);
// EXPECT_TRUE(NearArray(...)).
inline void ExpectNear(const NDArray& actual, const NDArray& expected,
                       double rtol = 1e-5, double atol = 1e-6) {
  EXPECT_TRUE(NearArray(actual, expected, rtol, atol));
}

// Whether `part` occurs in `s`.
inline bool Contains(const std::string& s, const std::string& part) {
  return s.find(part) != std::string::npos;
}

// Runs `fn`; true (and the message in *msg) when it throws an E. No
// exception, or an exception of another type, fails the test.
template <typename E, typename F>
bool ThrowsError(F fn, std::string* msg) {
  try {
    fn();
  } catch (const E& e) {
    *msg = e.what();
    return true;
  } catch (const std::exception& e) {
    ADD_FAILURE() << "an exception of another type: " << e.what();
    return false;
  }
  ADD_FAILURE() << "no exception of the expected type";
  return false;
}

// Runs `fn` and returns the message of the E it throws ("" after a test
// failure when it throws nothing or something else).
template <typename E, typename F>
std::string ErrorOf(F fn) {
  std::string msg;
  ThrowsError<E>(fn, &msg);
  return msg;
}

// Runs `fn` and expects an mx::Error of type E (a subclass such as
// ShapeError) whose message contains every string in `parts`.
template <typename E, typename F>
void ExpectError(F fn, const std::vector<std::string>& parts) {
  static_assert(std::is_base_of<Error, E>::value,
                "ExpectError checks typed mx::Error subclasses");
  std::string msg;
  if (!ThrowsError<E>(fn, &msg)) return;
  for (const std::string& p : parts) {
    EXPECT_TRUE(Contains(msg, p)) << "\"" << p << "\" not in: " << msg;
  }
}

}  // namespace testing
}  // namespace mx

#endif  // MXCORE_TESTING_OP_TEST_UTIL_H_
