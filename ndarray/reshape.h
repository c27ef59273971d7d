// MXNet's reshape codes: the one computation of the shape a Reshape gives,
// shared by the Reshape op and NDArray::Reshape (the view).
//
// Each code of the target says where an output dim comes from: a positive
// value is that dim, 0 copies the next input dim, -1 is inferred from the
// element count (at most once), -2 copies all remaining input dims, -3
// merges the next two input dims, and -4 a b splits the next input dim into
// (a, b) (one of them may be -1). With `reverse` the codes are applied from
// the right.
//
//   InferReshape({2, 3, 4}, {0, -1}, false, "x");  // (2,12)
//   InferReshape({2, 3, 4}, {0, -1}, true, "x");   // (3,8)
//   InferReshape({2, 3, 4}, {-4, 1, 2, -2}, false, "x");  // (1,2,3,4)
#ifndef MXCORE_NDARRAY_RESHAPE_H_
#define MXCORE_NDARRAY_RESHAPE_H_

#include <string>

#include "ndarray/shape.h"

namespace mx {

// The shape `codes` give an array of shape `in`. REQUIRES: `in` is known.
// Throws ShapeError "<who>: cannot reshape (2,3) to shape=(4,-1): <why>"
// when the codes do not fit `in` (or `in` is not known).
TShape InferReshape(const TShape& in, const TShape& codes, bool reverse,
                    const std::string& who);

}  // namespace mx

#endif  // MXCORE_NDARRAY_RESHAPE_H_
