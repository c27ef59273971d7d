// The zip container of NumPy's .npz files (npz_file.cc). Internal to //nn.
//
// Reading covers what NumPy's savez/savez_compressed and MXNet 2's
// npx.savez (miniz) write: stored or deflated entries, data descriptors
// (sizes taken from the central directory), ZIP64 sizes, offsets and end
// records. Encrypted entries, other methods and multi-disk archives raise
// NotImplemented; anything inconsistent raises InvalidArgument naming the
// file and the entry. Every size is checked against the file before
// anything is allocated, and every entry's CRC-32 is checked.
//
// Writing stores entries uncompressed (as both NumPy's savez and MXNet's
// writer do) with fixed timestamps, so equal contents give equal bytes,
// and switches to ZIP64 fields where a size, an offset or the entry count
// needs them.
//
//   internal::ZipReader zip("net.params", in);
//   for (const auto& entry : zip.entries()) use(zip.Read(entry));
#ifndef MXCORE_NN_ZIP_ARCHIVE_H_
#define MXCORE_NN_ZIP_ARCHIVE_H_

#include <cstdint>
#include <fstream>
#include <string>
#include <string_view>
#include <vector>

#include "nn/binary_io.h"

namespace mx {
namespace nn {
namespace internal {

// The first four bytes of a zip with entries, and of an empty one.
inline constexpr char kZipLocalMagic[4] = {'P', 'K', 3, 4};
inline constexpr char kZipEmptyMagic[4] = {'P', 'K', 5, 6};

struct ZipEntry {
  std::string name;
  uint16_t method = 0;  // 0 stored, 8 deflated
  uint32_t crc32 = 0;
  uint64_t compressed_size = 0;
  uint64_t size = 0;  // uncompressed
  uint64_t local_header_offset = 0;
};

class ZipReader {
 public:
  // Reads the central directory of `in` (open in binary mode); `file`
  // names the file in messages.
  ZipReader(const std::string& file, std::ifstream& in);

  const std::vector<ZipEntry>& entries() const { return entries_; }
  // The entry's uncompressed bytes, CRC-checked.
  std::vector<char> Read(const ZipEntry& entry);

 private:
  // Offset of the central directory and its entry count.
  struct Directory {
    uint64_t offset = 0, size = 0, count = 0;
  };
  Directory FindDirectory();
  ZipEntry ReadDirectoryEntry(uint64_t index);
  [[noreturn]] void Fail(const std::string& what) const { r_.Fail(what); }

  const std::string& file_;
  std::ifstream& in_;
  BinaryReader r_;
  std::vector<ZipEntry> entries_;
};

class ZipWriter {
 public:
  // Opens `file` for writing; RuntimeError naming it when it cannot be.
  // Fields switch to ZIP64 at `zip64_from` (the format's 0xFFFFFFFF; tests
  // lower it to exercise the ZIP64 records on small files).
  explicit ZipWriter(const std::string& file,
                     uint64_t zip64_from = 0xFFFFFFFFu);

  // Appends a stored entry made of `parts`, concatenated.
  void Add(const std::string& name, const std::vector<std::string_view>& parts);
  // Writes the central directory; RuntimeError when writing failed.
  void Finish();

 private:
  bool Needs64(uint64_t value) const { return value >= zip64_from_; }

  const std::string file_;
  const uint64_t zip64_from_;
  std::ofstream out_;
  std::vector<ZipEntry> entries_;
  uint64_t offset_ = 0;
};

}  // namespace internal
}  // namespace nn
}  // namespace mx

#endif  // MXCORE_NN_ZIP_ARCHIVE_H_
