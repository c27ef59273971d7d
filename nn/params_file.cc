#include "nn/params_file.h"

#include <algorithm>
#include <cstring>
#include <fstream>
#include <optional>
#include <set>

#include "absl/strings/str_cat.h"
#include "base/error.h"
#include "nn/binary_io.h"
#include "nn/mxnet_params_file.h"
#include "nn/npy_format.h"
#include "nn/npz_file.h"
#include "nn/zip_archive.h"

namespace mx {
namespace nn {
namespace {

using internal::BinaryReader;
using internal::Put;

constexpr char kMagic[8] = {'M', 'X', 'N', 'N', 'P', 'R', 'M', '1'};
// A guard against absurd sizes in corrupt files, before allocating.
constexpr uint32_t kMaxNameLen = 1 << 16;
constexpr uint32_t kMaxNdim = 32;

// What a file's first bytes announce; loading tells .npy from .npz.
enum class Detected { kMxcore, kMXNet, kNpz, kNpy };

// Which format the file's first 8 bytes announce; nullopt for none.
std::optional<Detected> DetectFormat(std::ifstream& in) {
  char magic[sizeof(kMagic)] = {};
  in.read(magic, sizeof(magic));
  const bool full = in.gcount() == sizeof(magic);
  in.clear();
  in.seekg(0, std::ios::beg);
  if (!full) return std::nullopt;
  if (std::memcmp(magic, kMagic, sizeof(kMagic)) == 0) return Detected::kMxcore;
  uint64_t header;
  std::memcpy(&header, magic, sizeof(header));
  if (header == kMXNetArrayListMagic) return Detected::kMXNet;
  if (std::memcmp(magic, internal::kZipLocalMagic, 4) == 0 ||
      std::memcmp(magic, internal::kZipEmptyMagic, 4) == 0) {
    return Detected::kNpz;
  }
  if (std::memcmp(magic, internal::kNpyMagic, sizeof(internal::kNpyMagic)) ==
      0) {
    return Detected::kNpy;
  }
  return std::nullopt;
}

}  // namespace

void SaveArrays(const std::string& file, const NamedArrays& arrays,
                ParamsFormat format) {
  internal::CheckLittleEndianHost(file);
  std::set<std::string> seen;
  for (const auto& [name, array] : arrays) {
    if (name.empty()) {
      throw InvalidArgument(
          absl::StrCat("SaveArrays(\"", file, "\"): an array has no name"));
    }
    if (!seen.insert(name).second) {
      throw InvalidArgument(absl::StrCat("SaveArrays(\"", file,
                                         "\"): duplicate name \"", name, "\""));
    }
    if (array.is_none()) {
      throw InvalidArgument(absl::StrCat("SaveArrays(\"", file, "\"): array \"",
                                         name, "\" is none"));
    }
  }
  if (format == ParamsFormat::kMXNet) {
    SaveMXNetArrays(file, arrays);
    return;
  }
  if (format == ParamsFormat::kNpz) {
    SaveNpzArrays(file, arrays);
    return;
  }
  std::ofstream out(file, std::ios::binary | std::ios::trunc);
  if (!out) {
    throw RuntimeError(absl::StrCat("SaveArrays: cannot open \"", file,
                                    "\" for writing: ", std::strerror(errno)));
  }
  out.write(kMagic, sizeof(kMagic));
  Put<uint64_t>(out, arrays.size());
  std::vector<char> buffer;
  for (const auto& [name, array] : arrays) {
    Put<uint32_t>(out, static_cast<uint32_t>(name.size()));
    out.write(name.data(), static_cast<std::streamsize>(name.size()));
    Put<int32_t>(out, static_cast<int32_t>(array.dtype()));
    const TShape& shape = array.shape();
    Put<uint32_t>(out, static_cast<uint32_t>(shape.ndim()));
    for (int64_t d : shape) Put<int64_t>(out, d);
    const size_t nbytes =
        static_cast<size_t>(array.size()) * DTypeSize(array.dtype());
    Put<uint64_t>(out, nbytes);
    buffer.resize(nbytes);
    array.SyncCopyToCPU(buffer.data(), static_cast<size_t>(array.size()));
    out.write(buffer.data(), static_cast<std::streamsize>(nbytes));
  }
  out.close();
  if (!out) {
    throw RuntimeError(
        absl::StrCat("SaveArrays: writing \"", file, "\" failed"));
  }
}

NamedArrays LoadArrays(const std::string& file) {
  internal::CheckLittleEndianHost(file);
  std::ifstream in(file, std::ios::binary);
  if (!in) {
    throw NotFound(absl::StrCat("parameter file \"", file,
                                "\" cannot be opened: ", std::strerror(errno)));
  }
  BinaryReader r(file, in);
  const std::optional<Detected> format = DetectFormat(in);
  if (format == Detected::kMXNet || format == Detected::kNpz ||
      format == Detected::kNpy) {
    in.close();
    if (format == Detected::kMXNet) return LoadMXNetArrays(file);
    if (format == Detected::kNpz) return LoadNpzArrays(file);
    return {{std::string(), LoadNpyArray(file)}};
  }
  if (format != Detected::kMxcore) {
    r.Fail(
        "not an mxcore parameter file (bad magic; expected \"MXNNPRM1\"), an "
        "MXNet NDArray file (header 0x112), an .npz (zip) nor an .npy file");
  }
  r.Get<uint64_t>("the magic");
  const uint64_t count = r.Get<uint64_t>("the entry count");
  NamedArrays arrays;
  std::set<std::string> seen;
  for (uint64_t i = 0; i < count; ++i) {
    const std::string entry = absl::StrCat("entry ", i);
    const uint32_t name_len = r.Get<uint32_t>(entry + "'s name length");
    if (name_len == 0 || name_len > kMaxNameLen) {
      r.Fail(absl::StrCat(entry, " has a bad name length ", name_len));
    }
    std::string name(name_len, '\0');
    r.Bytes(name.data(), name_len, entry + "'s name");
    const std::string label = absl::StrCat(entry, " (\"", name, "\")");
    if (!seen.insert(name).second) r.Fail(label + " repeats a name");
    const int32_t code = r.Get<int32_t>(label + "'s dtype");
    const DType dtype = static_cast<DType>(code);
    if (code < 0 || code > static_cast<int32_t>(DType::kBool)) {
      r.Fail(absl::StrCat(label, " has unknown dtype code ", code));
    }
    const uint32_t ndim = r.Get<uint32_t>(label + "'s rank");
    if (ndim > kMaxNdim) r.Fail(absl::StrCat(label, " has rank ", ndim));
    std::vector<int64_t> dims(ndim);
    for (uint32_t d = 0; d < ndim; ++d) {
      dims[d] = r.Get<int64_t>(label + "'s shape");
      if (dims[d] < 0) {
        r.Fail(absl::StrCat(label, " has negative dimension ", dims[d]));
      }
    }
    const TShape shape(dims);
    const std::optional<int64_t> needed =
        CheckedProduct(dims, static_cast<int64_t>(DTypeSize(dtype)));
    if (!needed) {
      r.Fail(absl::StrCat(label, " has shape ", shape.ToString(), " of ",
                          DTypeName(dtype),
                          ", whose byte count does not fit in int64"));
    }
    const uint64_t nbytes = r.Get<uint64_t>(label + "'s byte count");
    if (nbytes != static_cast<uint64_t>(*needed)) {
      r.Fail(absl::StrCat(label, " holds ", nbytes, " bytes but shape ",
                          shape.ToString(), " of ", DTypeName(dtype), " needs ",
                          *needed));
    }
    arrays.emplace_back(name, internal::ReadArrayData(r, shape, dtype, label));
  }
  if (!r.at_end()) {
    r.Fail(
        absl::StrCat("trailing bytes after the last of ", count, " entries"));
  }
  return arrays;
}

}  // namespace nn
}  // namespace mx
