// MXNet's reshape codes: the one computation of the shape a Reshape gives,
// shared by the Reshape op and NDArray::Reshape (the view); and MXNet 2's
// NumPy-interface dialects of it (_npx_reshape, _np_reshape).
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

// MXNet 2's npx.reshape codes (_npx_reshape): a value >= 0 is that dim,
// -1 is inferred (each uses up one input dim), -2 copies the next input
// dim, -3 drops the next input dim (which must be 1), -4 copies all
// remaining ones, -5 merges the next two, and -6 a b splits the next one
// into (a, b) (one of them may be -1). Throws as InferReshape.
//   InferNumpyXReshape({2, 1, 12}, {-2, -3, -6, 3, -1}, false, "x");  //
//   (2,3,4)
TShape InferNumpyXReshape(const TShape& in, const TShape& codes, bool reverse,
                          const std::string& who);

// NumPy's reshape (_np_reshape): the dims of `newshape`, one of which may
// be -1 (inferred). Throws as InferReshape.
TShape InferNumpyReshape(const TShape& in, const TShape& newshape,
                         const std::string& who);

}  // namespace mx

#endif  // MXCORE_NDARRAY_RESHAPE_H_
