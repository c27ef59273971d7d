#include "nn/npz_file.h"

#include <cstring>
#include <fstream>
#include <set>
#include <string_view>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "base/error.h"
#include "nn/binary_io.h"
#include "nn/npy_format.h"
#include "nn/zip_archive.h"

namespace mx {
namespace nn {
namespace {

constexpr absl::string_view kNpySuffix = ".npy";
// MXNet 2 stores a sparse array NAME as NAME/data.npy, ..., NAME/format.npy.
constexpr absl::string_view kSparseMarker = "/format.npy";

std::ifstream OpenForReading(const std::string& file) {
  internal::CheckLittleEndianHost(file);
  std::ifstream in(file, std::ios::binary);
  if (!in) {
    throw NotFound(absl::StrCat("parameter file \"", file,
                                "\" cannot be opened: ", std::strerror(errno)));
  }
  return in;
}

// The array's C-order bytes on the CPU (waits for pending writes).
std::string BytesOf(const NDArray& array) {
  std::string data(static_cast<size_t>(array.size()) * DTypeSize(array.dtype()),
                   '\0');
  if (!data.empty()) {
    array.SyncCopyToCPU(data.data(), static_cast<size_t>(array.size()));
  }
  return data;
}

}  // namespace

NamedArrays LoadNpzArrays(const std::string& file) {
  std::ifstream in = OpenForReading(file);
  internal::ZipReader zip(file, in);
  for (const internal::ZipEntry& e : zip.entries()) {
    if (absl::EndsWith(e.name, kSparseMarker)) {
      throw NotImplemented(absl::StrCat(
          "parameter file \"", file, "\": array \"",
          e.name.substr(0, e.name.size() - kSparseMarker.size()),
          "\" is sparse (MXNet's csr or row_sparse layout); only dense arrays "
          "can be loaded"));
    }
  }
  NamedArrays out;
  std::set<std::string> seen;
  for (const internal::ZipEntry& e : zip.entries()) {
    if (!absl::EndsWith(e.name, kNpySuffix)) continue;
    std::string name = e.name.substr(0, e.name.size() - kNpySuffix.size());
    const std::string where =
        absl::StrCat("parameter file \"", file, "\": entry \"", e.name, "\"");
    if (!seen.insert(name).second) {
      throw InvalidArgument(
          absl::StrCat(where, " repeats the name \"", name, "\""));
    }
    NDArray array = internal::ParseNpy(zip.Read(e), where);
    out.emplace_back(std::move(name), std::move(array));
  }
  return out;
}

NDArray LoadNpyArray(const std::string& file) {
  std::ifstream in = OpenForReading(file);
  internal::BinaryReader r(file, in);
  std::vector<char> bytes(static_cast<size_t>(r.size()));
  r.Bytes(bytes.data(), bytes.size(), "the array");
  return internal::ParseNpy(bytes,
                            absl::StrCat("parameter file \"", file, "\""));
}

void SaveNpzArrays(const std::string& file, const NamedArrays& arrays) {
  internal::SaveNpzArrays(file, arrays, 0xFFFFFFFFu);
}

void SaveNpyArray(const std::string& file, const NDArray& array) {
  internal::CheckLittleEndianHost(file);
  if (array.is_none()) {
    throw InvalidArgument(
        absl::StrCat("SaveNpyArray(\"", file, "\"): the array is none"));
  }
  const std::string header = internal::NpyHeader(array.shape(), array.dtype());
  const std::string data = BytesOf(array);
  std::ofstream out(file, std::ios::binary | std::ios::trunc);
  out.write(header.data(), static_cast<std::streamsize>(header.size()));
  out.write(data.data(), static_cast<std::streamsize>(data.size()));
  out.close();
  if (!out) {
    throw RuntimeError(absl::StrCat("SaveNpyArray: writing \"", file,
                                    "\" failed: ", std::strerror(errno)));
  }
}

namespace internal {

void SaveNpzArrays(const std::string& file, const NamedArrays& arrays,
                   uint64_t zip64_from) {
  CheckLittleEndianHost(file);
  size_t named = 0;
  std::set<std::string> seen;
  for (const auto& [name, array] : arrays) {
    const std::string label = name.empty()
                                  ? "an unnamed array"
                                  : absl::StrCat("array \"", name, "\"");
    if (array.is_none()) {
      throw InvalidArgument(
          absl::StrCat("SaveNpzArrays(\"", file, "\"): ", label, " is none"));
    }
    if (name.empty()) continue;
    ++named;
    if (!seen.insert(name).second) {
      throw InvalidArgument(absl::StrCat("SaveNpzArrays(\"", file,
                                         "\"): duplicate name \"", name, "\""));
    }
  }
  if (named != 0 && named != arrays.size()) {
    throw InvalidArgument(absl::StrCat(
        "SaveNpzArrays(\"", file, "\"): ", arrays.size() - named, " of ",
        arrays.size(), " arrays have no name; name all of them or none"));
  }
  ZipWriter zip(file, zip64_from);
  for (size_t i = 0; i < arrays.size(); ++i) {
    const auto& [name, array] = arrays[i];
    const std::string header = NpyHeader(array.shape(), array.dtype());
    const std::string data = BytesOf(array);
    zip.Add(
        absl::StrCat(name.empty() ? absl::StrCat("arr_", i) : name, kNpySuffix),
        {header, data});
  }
  zip.Finish();
}

}  // namespace internal
}  // namespace nn
}  // namespace mx
