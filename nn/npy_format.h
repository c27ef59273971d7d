// NumPy's .npy array format (numpy.lib.format), the entries of .npz files.
// Internal to //nn (npz_file.cc).
//
// A file is the magic "\x93NUMPY", a version (1.0: uint16 header length;
// 2.0 and 3.0: uint32), a Python dict literal such as
//   {'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }
// padded with spaces and a newline, then the data. descr is one of mxcore's
// dtypes: '<f2' '<f4' '<f8' '|i1' '<i4' '<i8' '|u1' '|b1' ('<' or '=' for
// the multi-byte ones, '|' or '<' for the single-byte ones). Parsing follows
// numpy's reader: version 1-3, minor 0; C or Fortran order; a header of at
// most 64 KiB.
#ifndef MXCORE_NN_NPY_FORMAT_H_
#define MXCORE_NN_NPY_FORMAT_H_

#include <cstddef>
#include <string>
#include <vector>

#include "ndarray/ndarray.h"

namespace mx {
namespace nn {
namespace internal {

inline constexpr char kNpyMagic[6] = {'\x93', 'N', 'U', 'M', 'P', 'Y'};

// The array that `bytes` (a whole .npy file or .npz entry) holds, as a new
// CPU array. `where` names the file and entry in messages: InvalidArgument
// for a malformed header, a data size that differs from the shape's, or
// bool bytes other than 0 and 1; NotImplemented for big-endian data, object
// or structured dtypes and the NumPy dtypes mxcore lacks (int16, uint16,
// uint32, uint64, bfloat16, complex, strings ...).
NDArray ParseNpy(const std::vector<char>& bytes, const std::string& where);

// The .npy header (magic to newline) that numpy's format writes for an
// array of `shape` and `dtype`, in C order: version 1.0, padded so the
// data starts at a multiple of 64 bytes.
std::string NpyHeader(const TShape& shape, DType dtype);

}  // namespace internal
}  // namespace nn
}  // namespace mx

#endif  // MXCORE_NN_NPY_FORMAT_H_
