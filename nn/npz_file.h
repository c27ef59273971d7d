// NumPy's .npz and .npy files: MXNet 2's parameter format. In NumPy mode
// MXNet 2 saves parameters with npx.savez (Gluon's save_parameters, keyed
// by structural names such as "0.weight", and HybridBlock.export, keyed
// "arg:NAME" / "aux:NAME"), a zip of one NAME.npy entry per array; npx.save
// writes one array as a bare .npy file.
//
// Loading reads what NumPy's savez, savez_compressed and MXNet 2 write
// (zip_archive.h: stored or deflated entries, ZIP64; npy_format.h: the
// dtypes mxcore has, C or Fortran order). Entries whose names do not end in
// ".npy" are skipped, as MXNet 2 does; sparse arrays (a NAME/format.npy
// entry, MXNet 2's csr and row_sparse layout) raise NotImplemented.
// Saving writes NumPy's layout (stored entries, version 1.0 headers with
// 64-byte aligned data), which numpy.load and mx.npx.load read.
//
//   nn::SaveNpzArrays("net-0000.params", {{"arg:fc_weight", w}});
//   for (auto& [name, array] : nn::LoadNpzArrays("net-0000.params")) ...
#ifndef MXCORE_NN_NPZ_FILE_H_
#define MXCORE_NN_NPZ_FILE_H_

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "ndarray/ndarray.h"

namespace mx {
namespace nn {

using NamedArrays = std::vector<std::pair<std::string, NDArray>>;

// Reads every NAME.npy entry into a new CPU array named NAME, in the
// archive's order. Throws NotFound when the file cannot be opened,
// InvalidArgument naming the file and the entry for a malformed archive or
// array (sizes are checked against the file before allocating; CRC-32s
// are checked) or a repeated name, NotImplemented for encryption,
// compression other than deflate, sparse arrays and dtypes mxcore lacks.
NamedArrays LoadNpzArrays(const std::string& file);

// The array of a .npy file (numpy.save, mx.npx.save); errors as above.
NDArray LoadNpyArray(const std::string& file);

// Waits for the arrays and writes them as NAME.npy entries; unnamed arrays
// (all must be named or none) become arr_0, arr_1, ... as in numpy.savez.
// InvalidArgument for a none array or a duplicate name, RuntimeError
// naming the file when it cannot be written.
void SaveNpzArrays(const std::string& file, const NamedArrays& arrays);

// Writes one array as a .npy file.
void SaveNpyArray(const std::string& file, const NDArray& array);

namespace internal {
// SaveNpzArrays with ZIP64 fields from `zip64_from` bytes on (tests).
void SaveNpzArrays(const std::string& file, const NamedArrays& arrays,
                   uint64_t zip64_from);
}  // namespace internal

}  // namespace nn
}  // namespace mx

#endif  // MXCORE_NN_NPZ_FILE_H_
