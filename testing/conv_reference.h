// Direct (naive, float64) references for Convolution and Pooling with any
// number of spatial axes (NCW, NCHW, NCDHW), written from the definitions
// rather than from the kernels. Test-only (//testing:conv_reference).
//
//   const ConvND p{{2, 3, 9}, {3}, {1}, {0}, {1}, /*filters=*/4, /*groups=*/1};
//   EXPECT_TRUE(AllClose(ToDouble(y), RefConv(p, ToDouble(x), ToDouble(w),
//                                             ToDouble(b))));
#ifndef MXCORE_TESTING_CONV_REFERENCE_H_
#define MXCORE_TESTING_CONV_REFERENCE_H_

#include <cstdint>
#include <string>
#include <vector>

#include "ndarray/shape.h"
#include "testing/op_test_util.h"

namespace mx {
namespace testing {

using Dims = std::vector<int64_t>;

// Calls fn(index) for every multi-index of `extent`, row-major.
template <typename F>
void ForEachIndex(const Dims& extent, F fn) {
  int64_t total = 1;
  for (int64_t e : extent) total *= e;
  for (int64_t i = 0; i < total; ++i) {
    fn(Unravel(i, TShape(extent)));
  }
}

// One convolution: data (N, C, spatial...) and per-axis attributes.
struct ConvND {
  Dims data, kernel, stride, pad, dilate;  // data: (N, C, spatial...)
  int64_t filters, groups;
};

// Output spatial extents of a convolution.
Dims ConvOut(const ConvND& p);

// Every output element: bias (none when `b` is empty) plus its window
// summed over its group's input channels. `x` is (N, C, spatial...), `w`
// (filters, C / groups, kernel...), the result (N, filters, ConvOut...).
std::vector<double> RefConv(const ConvND& p, const std::vector<double>& x,
                            const std::vector<double>& w,
                            const std::vector<double>& b);

// One pooling: data (N, C, spatial...) and per-axis attributes.
struct PoolND {
  Dims data, kernel, stride, pad;
  bool full;
};

// Output spatial extents of a pooling ("full" rounds up, "valid" down).
Dims PoolOut(const PoolND& p);

// `type` "max", "avg" or "sum" over each window of the padded input;
// padded positions count toward avg's divisor only when include_pad (and
// not past the padded extent), never for max.
std::vector<double> RefPool(const PoolND& p, const std::string& type,
                            bool include_pad, const std::vector<double>& x);

}  // namespace testing
}  // namespace mx

#endif  // MXCORE_TESTING_CONV_REFERENCE_H_
