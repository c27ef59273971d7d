#include "nn/mxnet_params_file.h"

#include <cstring>
#include <fstream>
#include <set>

#include "absl/strings/str_cat.h"
#include "base/error.h"
#include "nn/binary_io.h"

namespace mx {
namespace nn {
namespace {

using internal::BinaryReader;
using internal::Put;

constexpr uint32_t kV1Magic = 0xF993FAC8;
constexpr uint32_t kV2Magic = 0xF993FAC9;
constexpr uint32_t kV3Magic = 0xF993FACA;
// A pre-V1 record starts with its rank; anything larger is not a record.
constexpr uint32_t kMaxNdim = 32;
// A name longer than this is a corrupt length, not a parameter name.
constexpr uint64_t kMaxNameLen = 1 << 16;
// The smallest record (a pre-V1 empty slot) is its 4-byte rank.
constexpr uint64_t kMinRecordBytes = 4;
constexpr int32_t kCPUDeviceType = 1;

// MXNet's storage types beyond dense (include/mxnet/ndarray.h).
const char* StorageName(int32_t stype) {
  switch (stype) {
    case 1:
      return "row_sparse";
    case 2:
      return "csr";
    default:
      return nullptr;
  }
}

// MXNet type flags 8-12 (mshadow's kInt16 ... kBfloat16), which mxcore
// does not have.
const char* MissingTypeName(int32_t flag) {
  static const char* const kNames[] = {"int16", "uint16", "uint32", "uint64",
                                       "bfloat16"};
  return flag >= 8 && flag <= 12 ? kNames[flag - 8] : nullptr;
}

class RecordReader {
 public:
  RecordReader(const std::string& file, BinaryReader& r) : file_(file), r_(r) {}

  // One array record; a none NDArray for an empty slot.
  NDArray Read(const std::string& label) {
    const uint32_t magic = r_.Get<uint32_t>(label + "'s magic");
    TShape shape;
    bool empty_slot = false;
    if (magic == kV2Magic || magic == kV3Magic) {
      const int32_t stype = r_.Get<int32_t>(label + "'s storage type");
      if (stype != 0) {
        if (const char* sparse = StorageName(stype)) {
          throw NotImplemented(absl::StrCat(
              "parameter file \"", file_, "\": ", label, " has ", sparse,
              " storage; only dense arrays can be loaded"));
        }
        r_.Fail(absl::StrCat(label, " has unknown storage type ", stype));
      }
      const int32_t ndim = r_.Get<int32_t>(label + "'s rank");
      if (magic == kV2Magic) {
        empty_slot = ndim == 0;
      } else {
        empty_slot = ndim == -1;
      }
      if (!empty_slot) shape = ReadInt64Dims(ndim, label);
    } else if (magic == kV1Magic) {
      const int32_t ndim = r_.Get<int32_t>(label + "'s rank");
      empty_slot = ndim == 0;
      if (!empty_slot) shape = ReadInt64Dims(ndim, label);
    } else if (magic <= kMaxNdim) {
      empty_slot = magic == 0;
      std::vector<int64_t> dims(magic);
      for (auto& d : dims) d = r_.Get<uint32_t>(label + "'s shape");
      shape = TShape(dims);
    } else {
      r_.Fail(absl::StrCat(label, " starts with 0x", absl::Hex(magic),
                           ", which is neither an NDArray magic (0xF993FAC8 "
                           "to 0xF993FACA) nor a legacy rank (0 to ",
                           kMaxNdim, ")"));
    }
    if (empty_slot) return NDArray();
    r_.Get<int32_t>(label + "'s device type");
    r_.Get<int32_t>(label + "'s device id");
    const DType dtype = ReadType(label);
    return internal::ReadArrayData(r_, shape, dtype, label);
  }

 private:
  TShape ReadInt64Dims(int32_t ndim, const std::string& label) {
    if (ndim < 0 || ndim > static_cast<int32_t>(kMaxNdim)) {
      r_.Fail(absl::StrCat(label, " has rank ", ndim));
    }
    std::vector<int64_t> dims(static_cast<size_t>(ndim));
    for (auto& d : dims) {
      d = r_.Get<int64_t>(label + "'s shape");
      if (d < 0) r_.Fail(absl::StrCat(label, " has dimension ", d));
    }
    return TShape(dims);
  }

  DType ReadType(const std::string& label) {
    const int32_t flag = r_.Get<int32_t>(label + "'s type flag");
    if (const char* missing = MissingTypeName(flag)) {
      throw NotImplemented(absl::StrCat(
          "parameter file \"", file_, "\": ", label, " has MXNet type ",
          missing, ", which mxcore does not support"));
    }
    if (flag < 0 || flag > static_cast<int32_t>(DType::kBool)) {
      r_.Fail(absl::StrCat(label, " has unknown type flag ", flag));
    }
    return static_cast<DType>(flag);
  }

  const std::string& file_;
  BinaryReader& r_;
};

std::vector<std::string> ReadNames(BinaryReader& r, uint64_t arrays) {
  const uint64_t count = r.Get<uint64_t>("the name count");
  if (count != 0 && count != arrays) {
    r.Fail(absl::StrCat("has ", count, " names for ", arrays, " arrays"));
  }
  std::vector<std::string> names;
  std::set<std::string> seen;
  for (uint64_t i = 0; i < count; ++i) {
    const std::string what = absl::StrCat("name ", i);
    const uint64_t len = r.Get<uint64_t>(what + "'s length");
    if (len == 0 || len > kMaxNameLen) {
      r.Fail(absl::StrCat(what, " has bad length ", len));
    }
    r.Require(len, what);
    std::string name(static_cast<size_t>(len), '\0');
    r.Bytes(name.data(), name.size(), what);
    if (!seen.insert(name).second) {
      r.Fail(absl::StrCat(what, " (\"", name, "\") repeats a name"));
    }
    names.push_back(std::move(name));
  }
  return names;
}

void CheckNames(const std::string& file, const NamedArrays& arrays) {
  size_t named = 0;
  std::set<std::string> seen;
  for (const auto& [name, array] : arrays) {
    if (name.empty()) continue;
    ++named;
    if (!seen.insert(name).second) {
      throw InvalidArgument(absl::StrCat("SaveMXNetArrays(\"", file,
                                         "\"): duplicate name \"", name, "\""));
    }
  }
  if (named != 0 && named != arrays.size()) {
    throw InvalidArgument(absl::StrCat(
        "SaveMXNetArrays(\"", file, "\"): ", arrays.size() - named, " of ",
        arrays.size(),
        " arrays have no name; MXNet's format names all arrays or none"));
  }
}

void WriteRecord(std::ofstream& out, const NDArray& array,
                 std::vector<char>& buffer) {
  if (array.is_none()) {
    Put<uint32_t>(out, kV2Magic);
    Put<int32_t>(out, 0);  // dense
    Put<int32_t>(out, 0);  // ndim 0: an empty slot in V2
    return;
  }
  const TShape& shape = array.shape();
  // V2 readers take ndim 0 and zero dimensions for "unknown"; V3 keeps
  // them (MXNet reads V3 in NumPy shape mode).
  const bool needs_v3 = shape.ndim() == 0 || shape.Size() == 0;
  Put<uint32_t>(out, needs_v3 ? kV3Magic : kV2Magic);
  Put<int32_t>(out, 0);
  Put<int32_t>(out, shape.ndim());
  for (int64_t d : shape) Put<int64_t>(out, d);
  Put<int32_t>(out, kCPUDeviceType);
  Put<int32_t>(out, 0);
  Put<int32_t>(out, static_cast<int32_t>(array.dtype()));
  const size_t nbytes =
      static_cast<size_t>(array.size()) * DTypeSize(array.dtype());
  if (nbytes == 0) return;  // nothing to read (nor ever written)
  buffer.resize(nbytes);
  array.SyncCopyToCPU(buffer.data(), static_cast<size_t>(array.size()));
  out.write(buffer.data(), static_cast<std::streamsize>(nbytes));
}

}  // namespace

NamedArrays LoadMXNetArrays(const std::string& file) {
  internal::CheckLittleEndianHost(file);
  std::ifstream in(file, std::ios::binary);
  if (!in) {
    throw NotFound(absl::StrCat("parameter file \"", file,
                                "\" cannot be opened: ", std::strerror(errno)));
  }
  BinaryReader r(file, in);
  const uint64_t magic = r.Get<uint64_t>("the header");
  if (magic != kMXNetArrayListMagic) {
    r.Fail(absl::StrCat("not an MXNet NDArray file (header 0x",
                        absl::Hex(magic), "; expected 0x112)"));
  }
  r.Get<uint64_t>("the reserved field");
  const uint64_t count = r.Get<uint64_t>("the array count");
  if (count > r.remaining() / kMinRecordBytes) {
    r.Fail(absl::StrCat("declares ", count, " arrays but only ", r.remaining(),
                        " bytes follow"));
  }
  RecordReader records(file, r);
  std::vector<NDArray> arrays;
  arrays.reserve(static_cast<size_t>(count));
  for (uint64_t i = 0; i < count; ++i) {
    arrays.push_back(records.Read(absl::StrCat("array ", i)));
  }
  const std::vector<std::string> names = ReadNames(r, count);
  if (!r.at_end()) {
    r.Fail(
        absl::StrCat("trailing bytes after the names of ", count, " arrays"));
  }
  NamedArrays out;
  out.reserve(arrays.size());
  for (size_t i = 0; i < arrays.size(); ++i) {
    out.emplace_back(names.empty() ? std::string() : names[i], arrays[i]);
  }
  return out;
}

void SaveMXNetArrays(const std::string& file, const NamedArrays& arrays) {
  internal::CheckLittleEndianHost(file);
  CheckNames(file, arrays);
  std::ofstream out(file, std::ios::binary | std::ios::trunc);
  if (!out) {
    throw RuntimeError(absl::StrCat("SaveMXNetArrays: cannot open \"", file,
                                    "\" for writing: ", std::strerror(errno)));
  }
  Put<uint64_t>(out, kMXNetArrayListMagic);
  Put<uint64_t>(out, 0);
  Put<uint64_t>(out, arrays.size());
  std::vector<char> buffer;
  for (const auto& entry : arrays) WriteRecord(out, entry.second, buffer);
  const bool named = !arrays.empty() && !arrays.front().first.empty();
  Put<uint64_t>(out, named ? arrays.size() : 0);
  if (named) {
    for (const auto& entry : arrays) {
      Put<uint64_t>(out, entry.first.size());
      out.write(entry.first.data(),
                static_cast<std::streamsize>(entry.first.size()));
    }
  }
  out.close();
  if (!out) {
    throw RuntimeError(
        absl::StrCat("SaveMXNetArrays: writing \"", file, "\" failed"));
  }
}

}  // namespace nn
}  // namespace mx
