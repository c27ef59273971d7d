// MXNet's parameter files: the NDArray-list format that mx.nd.save,
// Gluon's export and Module checkpoints write (`model-0000.params`).
//
// Layout (all integers little-endian):
//   header   uint64  0x112 (the NDArray-list magic), reserved uint64
//   count    uint64, then count arrays, each one of:
//     V2  uint32 0xF993FAC9, int32 storage type (0 dense; 1 row_sparse and
//         2 csr are refused), shape, context, type flag, data
//     V3  uint32 0xF993FACA, as V2 (NumPy shape semantics: ndim 0 is a
//         scalar, ndim -1 an empty slot)
//     V1  uint32 0xF993FAC8, shape, context, type flag, data (no storage)
//     pre-V1: the uint32 is the rank, then rank x uint32 dims, context,
//         type flag, data
//   shape    int32 ndim, then ndim x int64 dims (V1-V3)
//   context  int32 device type, int32 device id (ignored: arrays load on
//            the CPU)
//   type     int32 MXNet type flag; 0-7 are mx::DType's codes (float32 ...
//            bool); int16/uint16/uint32/uint64/bfloat16 are NotImplemented
//   data     C order, product(dims) x the type's size bytes
//   names    uint64 count (0: unnamed, else one per array), each a uint64
//            length and the bytes
// An empty slot (V2 ndim 0, V3 ndim -1, pre-V1 rank 0) loads as a none
// NDArray. Module and Gluon export name arrays "arg:NAME" / "aux:NAME";
// Block::LoadParameters strips those prefixes as Gluon does.
//
//   nn::SaveMXNetArrays("model-0000.params", {{"arg:fc_weight", w}});
//   for (auto& [name, array] : nn::LoadMXNetArrays("model-0000.params")) ...
#ifndef MXCORE_NN_MXNET_PARAMS_FILE_H_
#define MXCORE_NN_MXNET_PARAMS_FILE_H_

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "ndarray/ndarray.h"

namespace mx {
namespace nn {

using NamedArrays = std::vector<std::pair<std::string, NDArray>>;

// The first 8 bytes of an MXNet NDArray-list file, as a little-endian uint64.
inline constexpr uint64_t kMXNetArrayListMagic = 0x112;

// Reads every array into new CPU arrays, in file order; names are empty
// when the file has none. Throws NotFound when the file cannot be opened,
// InvalidArgument naming the file, the array and what is wrong (bad magic,
// truncation, sizes the file cannot hold, unknown type flag, duplicate or
// empty names, trailing bytes) and NotImplemented for sparse storage and
// the MXNet types mxcore lacks. Sizes are checked against the file before
// anything is allocated.
NamedArrays LoadMXNetArrays(const std::string& file);

// Writes `arrays` in MXNet's format: V2 records (what MXNet 1.x reads by
// default), V3 for 0-d and zero-size arrays (V2 cannot hold them), a V2
// empty slot for a none array. Names must be all empty (an unnamed list)
// or all non-empty and unique, else InvalidArgument; RuntimeError naming
// the file when it cannot be written.
void SaveMXNetArrays(const std::string& file, const NamedArrays& arrays);

}  // namespace nn
}  // namespace mx

#endif  // MXCORE_NN_MXNET_PARAMS_FILE_H_
