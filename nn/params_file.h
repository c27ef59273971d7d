// The parameter file format: named arrays, saved and loaded exactly.
//
// Layout (all integers little-endian):
//   magic    8 bytes   "MXNNPRM1"  (format version 1)
//   count    uint64    number of entries
//   count entries, each:
//     name_len uint32, name (UTF-8, name_len bytes, no terminator)
//     dtype    int32   mx::DType code (0 float32, 1 float64, ... 7 bool)
//     ndim     uint32, then ndim x int64 dimensions
//     nbytes   uint64  = product(dims) * DTypeSize(dtype)
//     data     nbytes raw bytes, C order
// The file ends right after the last entry. Names are unique. Blocks store
// their parameters under their structured names (Block::CollectParams).
//
// LoadArrays also reads MXNet's NDArray-list files (mxnet_params_file.h)
// and MXNet 2's .npz and .npy files (npz_file.h), told apart by their
// first bytes; SaveArrays writes either on request.
//
//   nn::SaveArrays("net.params", {{"0.weight", w}, {"0.bias", b}});
//   for (auto& [name, array] : nn::LoadArrays("net.params")) ...
#ifndef MXCORE_NN_PARAMS_FILE_H_
#define MXCORE_NN_PARAMS_FILE_H_

#include <string>
#include <utility>
#include <vector>

#include "ndarray/ndarray.h"
#include "nn/mxnet_params_file.h"

namespace mx {
namespace nn {

using NamedArrays = std::vector<std::pair<std::string, NDArray>>;

// The two file formats parameters can be saved in.
enum class ParamsFormat {
  kMxcore,  // the layout above
  kMXNet,   // MXNet's NDArray list (mxnet_params_file.h), for mx.nd.load
  kNpz,     // MXNet 2's .npz (npz_file.h), for mx.npx.load and numpy.load
};

// Waits for the arrays and writes them in `format`. Throws InvalidArgument
// for a duplicate or empty name or a none array, RuntimeError naming the
// file when it cannot be written.
void SaveArrays(const std::string& file, const NamedArrays& arrays,
                ParamsFormat format = ParamsFormat::kMxcore);

// Reads every entry into new CPU arrays, in file order, from any of the
// formats (detected by magic; MXNet names are returned as stored, "arg:"
// prefixes included; a bare .npy gives one unnamed array). Throws NotFound when
// the file cannot be opened and InvalidArgument naming the file and what is
// wrong (bad magic, truncated entry, unknown dtype, size mismatch, duplicate
// name, trailing bytes); LoadMXNetArrays and LoadNpzArrays list their formats'
// cases.
NamedArrays LoadArrays(const std::string& file);

}  // namespace nn
}  // namespace mx

#endif  // MXCORE_NN_PARAMS_FILE_H_
