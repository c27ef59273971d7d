// Little-endian binary reading and writing for the parameter file formats
// (params_file.cc, mxnet_params_file.cc). Internal to //nn.
//
// The reader knows the file size so that every size read from the file can
// be checked against the bytes that remain before anything is allocated.
#ifndef MXCORE_NN_BINARY_IO_H_
#define MXCORE_NN_BINARY_IO_H_

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "base/error.h"
#include "ndarray/ndarray.h"

namespace mx {
namespace nn {
namespace internal {

// Throws NotImplemented on big-endian hosts: both formats are little-endian
// and the data is copied as is.
inline void CheckLittleEndianHost(const std::string& file) {
  const uint16_t probe = 1;
  uint8_t first;
  std::memcpy(&first, &probe, 1);
  if (first != 1) {
    throw NotImplemented(
        absl::StrCat("parameter file \"", file,
                     "\": only little-endian hosts are supported"));
  }
}

template <typename T>
void Put(std::ofstream& out, T value) {
  out.write(reinterpret_cast<const char*>(&value), sizeof(T));
}

class BinaryReader {
 public:
  // `file` names the file in messages; `in` must be open in binary mode.
  BinaryReader(const std::string& file, std::ifstream& in)
      : file_(file), in_(in) {
    in_.seekg(0, std::ios::end);
    size_ = static_cast<uint64_t>(std::max<std::streamoff>(in_.tellg(), 0));
    in_.seekg(0, std::ios::beg);
  }

  uint64_t size() const { return size_; }
  // Bytes not yet read.
  uint64_t remaining() {
    const std::streamoff at = in_.tellg();
    return at < 0 || static_cast<uint64_t>(at) > size_
               ? 0
               : size_ - static_cast<uint64_t>(at);
  }
  bool at_end() { return in_.peek() == std::char_traits<char>::eof(); }
  // Moves to `offset` or throws naming `what` when it is past the end.
  void Seek(uint64_t offset, const std::string& what) {
    if (offset > size_) {
      Fail(absl::StrCat(what, " at offset ", offset, " is past the end (",
                        size_, " bytes)"));
    }
    in_.clear();
    in_.seekg(static_cast<std::streamoff>(offset), std::ios::beg);
  }

  // Reads `n` bytes or throws naming `what`.
  void Bytes(void* dst, size_t n, const std::string& what) {
    in_.read(static_cast<char*>(dst), static_cast<std::streamsize>(n));
    if (static_cast<size_t>(in_.gcount()) != n) {
      Fail(absl::StrCat("truncated while reading ", what));
    }
  }
  template <typename T>
  T Get(const std::string& what) {
    T value;
    Bytes(&value, sizeof(T), what);
    return value;
  }
  // Throws unless `n` bytes remain; call before allocating for them.
  void Require(uint64_t n, const std::string& what) {
    if (n > remaining()) {
      Fail(absl::StrCat("truncated while reading ", what, ": ", n,
                        " bytes promised, ", remaining(), " left in the file"));
    }
  }
  [[noreturn]] void Fail(const std::string& what) const {
    throw InvalidArgument(
        absl::StrCat("parameter file \"", file_, "\": ", what));
  }

 private:
  const std::string& file_;
  std::ifstream& in_;
  uint64_t size_ = 0;
};

// Reads the C-order data of an array of `shape` and `dtype` into a new CPU
// array. The byte count is checked against the file before allocating; bool
// data must be 0 or 1 (any other byte is not a bool). `label` names the
// array in messages.
inline NDArray ReadArrayData(BinaryReader& r, const TShape& shape, DType dtype,
                             const std::string& label) {
  const std::optional<int64_t> nbytes =
      CheckedProduct(absl::Span<const int64_t>(shape.begin(), shape.ndim()),
                     static_cast<int64_t>(DTypeSize(dtype)));
  if (!nbytes) {
    r.Fail(absl::StrCat(label, " has shape ", shape.ToString(), " of ",
                        DTypeName(dtype),
                        ", whose byte count does not fit in int64"));
  }
  r.Require(static_cast<uint64_t>(*nbytes), label + "'s data");
  std::vector<char> buffer(static_cast<size_t>(*nbytes));
  r.Bytes(buffer.data(), buffer.size(), label + "'s data");
  if (dtype == DType::kBool) {
    for (size_t i = 0; i < buffer.size(); ++i) {
      const auto b = static_cast<unsigned char>(buffer[i]);
      if (b > 1) {
        r.Fail(absl::StrCat(label, " is bool but element ", i, " is byte ", b,
                            " (bool data must be 0 or 1)"));
      }
    }
  }
  NDArray array(shape, Context::CPU(), dtype);
  array.SyncCopyFromCPU(buffer.data(), static_cast<size_t>(shape.Size()));
  return array;
}

}  // namespace internal
}  // namespace nn
}  // namespace mx

#endif  // MXCORE_NN_BINARY_IO_H_
