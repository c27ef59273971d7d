#include "nn/zip_archive.h"

#include <zlib.h>

#include <algorithm>
#include <cstring>
#include <limits>

#include "absl/strings/str_cat.h"
#include "base/error.h"

namespace mx {
namespace nn {
namespace internal {
namespace {

// Record signatures (APPNOTE.TXT 4.3).
constexpr uint32_t kLocalSig = 0x04034b50;
constexpr uint32_t kCentralSig = 0x02014b50;
constexpr uint32_t kEndSig = 0x06054b50;
constexpr uint32_t kEnd64Sig = 0x06064b50;
constexpr uint32_t kEnd64LocatorSig = 0x07064b50;
constexpr uint16_t kZip64ExtraId = 0x0001;
constexpr uint64_t kEndBytes = 22;  // the end record without its comment
constexpr uint64_t kEnd64LocatorBytes = 20;
constexpr uint64_t kEnd64Bytes = 56;  // the ZIP64 end record's fixed part
constexpr uint64_t kCentralBytes = 46;
constexpr uint64_t kLocalBytes = 30;
constexpr uint16_t kMaxComment = 0xFFFF;
constexpr uint32_t kSentinel32 = 0xFFFFFFFF;
constexpr uint16_t kSentinel16 = 0xFFFF;
// Deflate expands at most 1032:1 (zlib's FAQ); a larger claim is corrupt.
constexpr uint64_t kMaxDeflateRatio = 1032;
// 1980-01-01 00:00, the earliest DOS date: fixed so output is reproducible.
constexpr uint16_t kDosDate = (0 << 9) | (1 << 5) | 1;
constexpr uint16_t kFlagEncrypted = 1 << 0;
constexpr uint16_t kFlagStrongEncryption = 1 << 6;
constexpr uint16_t kFlagUtf8 = 1 << 11;
constexpr uint16_t kVersionDefault = 20;
constexpr uint16_t kVersionZip64 = 45;

uint16_t U16(const unsigned char* p) {
  return static_cast<uint16_t>(p[0] | (p[1] << 8));
}
uint32_t U32(const unsigned char* p) {
  return static_cast<uint32_t>(U16(p)) |
         (static_cast<uint32_t>(U16(p + 2)) << 16);
}
uint64_t U64(const unsigned char* p) {
  return static_cast<uint64_t>(U32(p)) |
         (static_cast<uint64_t>(U32(p + 4)) << 32);
}

uint32_t Crc32(uint32_t crc, const void* data, size_t n) {
  return static_cast<uint32_t>(
      crc32_z(crc, static_cast<const Bytef*>(data), static_cast<z_size_t>(n)));
}

// Raw deflate data (no zlib header) that must inflate to exactly `size`
// bytes, into *out. The buffer grows with the output that arrives (from
// 1 MiB, doubling, up to `size`), so a corrupt size claim costs nothing
// until the data backs it; more output than claimed fails.
bool Inflate(const std::vector<char>& in, uint64_t size,
             std::vector<char>* out) {
  z_stream z{};
  if (inflateInit2(&z, -MAX_WBITS) != Z_OK) return false;
  constexpr size_t kStep = std::numeric_limits<uInt>::max();
  constexpr size_t kFirst = size_t{1} << 20;
  size_t in_at = 0, filled = 0;
  char beyond = 0;  // where output past `size` would go
  out->clear();
  int rc = Z_OK;
  while (rc == Z_OK) {
    if (filled == out->size() && filled < size) {
      out->resize(static_cast<size_t>(
          std::min<uint64_t>(size, std::max(2 * filled, kFirst))));
    }
    const bool full = filled == out->size();
    z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(in.data() + in_at));
    z.avail_in = static_cast<uInt>(std::min(kStep, in.size() - in_at));
    z.next_out =
        reinterpret_cast<Bytef*>(full ? &beyond : out->data() + filled);
    z.avail_out =
        static_cast<uInt>(full ? 1 : std::min(kStep, out->size() - filled));
    const uInt in_before = z.avail_in, out_before = z.avail_out;
    rc = inflate(&z, Z_NO_FLUSH);
    in_at += in_before - z.avail_in;
    const size_t wrote = out_before - z.avail_out;
    if (full && wrote > 0) rc = Z_DATA_ERROR;  // more than claimed
    if (!full) filled += wrote;
    // No progress with room on both sides: the stream is stuck.
    if (rc == Z_OK && in_before == z.avail_in && wrote == 0) rc = Z_DATA_ERROR;
  }
  inflateEnd(&z);
  return rc == Z_STREAM_END && filled == size;
}

template <typename T>
void Append(std::string& s, T value) {
  for (size_t i = 0; i < sizeof(T); ++i) {
    s.push_back(
        static_cast<char>((static_cast<uint64_t>(value) >> (8 * i)) & 0xFF));
  }
}

}  // namespace

ZipReader::ZipReader(const std::string& file, std::ifstream& in)
    : file_(file), in_(in), r_(file, in) {
  const Directory dir = FindDirectory();
  r_.Seek(dir.offset, "the central directory");
  entries_.reserve(static_cast<size_t>(dir.count));
  for (uint64_t i = 0; i < dir.count; ++i) {
    entries_.push_back(ReadDirectoryEntry(i));
    const std::streamoff at = in_.tellg();
    if (at < 0 || static_cast<uint64_t>(at) > dir.offset + dir.size) {
      Fail(absl::StrCat("zip entry ", i, " runs past the central directory"));
    }
  }
}

ZipReader::Directory ZipReader::FindDirectory() {
  const uint64_t size = r_.size();
  if (size < kEndBytes) {
    Fail(absl::StrCat("is not a zip archive: ", size,
                      " bytes, fewer than an end record"));
  }
  // The end record is the last 22 bytes plus a comment of up to 64 KiB;
  // a ZIP64 locator may sit right before it.
  const uint64_t tail_size =
      std::min<uint64_t>(size, kEnd64LocatorBytes + kEndBytes + kMaxComment);
  std::vector<unsigned char> tail(static_cast<size_t>(tail_size));
  r_.Seek(size - tail_size, "the zip end record");
  r_.Bytes(tail.data(), tail.size(), "the zip end record");
  int64_t at = static_cast<int64_t>(tail_size - kEndBytes);
  for (; at >= 0; --at) {
    const unsigned char* p = tail.data() + at;
    // The comment length must reach exactly to the end of the file, so a
    // signature inside a comment is not taken for the record.
    if (U32(p) == kEndSig &&
        U16(p + 20) == tail_size - static_cast<uint64_t>(at) - kEndBytes) {
      break;
    }
  }
  if (at < 0) Fail("is not a zip archive: no end of central directory record");
  const unsigned char* end = tail.data() + at;
  const uint64_t end_offset = size - tail_size + static_cast<uint64_t>(at);
  const uint16_t disk = U16(end + 4), dir_disk = U16(end + 6);
  const uint16_t disk_count = U16(end + 8), count16 = U16(end + 10);
  Directory dir{U32(end + 16), U32(end + 12), count16};
  uint64_t limit = end_offset;  // where the directory must end by
  const bool has_locator = at >= static_cast<int64_t>(kEnd64LocatorBytes) &&
                           U32(end - kEnd64LocatorBytes) == kEnd64LocatorSig;
  if (has_locator) {
    const unsigned char* loc = end - kEnd64LocatorBytes;
    const uint64_t record = U64(loc + 8);
    if (U32(loc + 4) != 0 || U32(loc + 16) > 1) {
      throw NotImplemented(absl::StrCat("parameter file \"", file_,
                                        "\": multi-disk zip archives are not "
                                        "supported"));
    }
    if (record > end_offset - kEnd64LocatorBytes ||
        end_offset - kEnd64LocatorBytes - record < kEnd64Bytes) {
      Fail(absl::StrCat("the ZIP64 end record's offset ", record,
                        " is not before its locator"));
    }
    unsigned char rec[kEnd64Bytes];
    r_.Seek(record, "the ZIP64 end record");
    r_.Bytes(rec, sizeof(rec), "the ZIP64 end record");
    if (U32(rec) != kEnd64Sig) Fail("the ZIP64 end record has a bad signature");
    if (U32(rec + 16) != 0 || U32(rec + 20) != 0 ||
        U64(rec + 24) != U64(rec + 32)) {
      throw NotImplemented(absl::StrCat("parameter file \"", file_,
                                        "\": multi-disk zip archives are not "
                                        "supported"));
    }
    dir = Directory{U64(rec + 48), U64(rec + 40), U64(rec + 32)};
    limit = record;
  } else if (dir.offset == kSentinel32 || dir.size == kSentinel32 ||
             count16 == kSentinel16) {
    Fail("the zip end record defers to a ZIP64 record that is not there");
  } else if (disk != 0 || dir_disk != 0 || disk_count != count16) {
    throw NotImplemented(
        absl::StrCat("parameter file \"", file_,
                     "\": multi-disk zip archives are not supported"));
  }
  if (dir.offset > limit || dir.size > limit - dir.offset) {
    Fail(absl::StrCat("the central directory (offset ", dir.offset, ", ",
                      dir.size, " bytes) does not fit before its end record"));
  }
  if (dir.count > dir.size / kCentralBytes) {
    Fail(absl::StrCat("the central directory declares ", dir.count,
                      " entries in ", dir.size, " bytes"));
  }
  return dir;
}

ZipEntry ZipReader::ReadDirectoryEntry(uint64_t index) {
  const std::string what = absl::StrCat("zip entry ", index);
  unsigned char h[kCentralBytes];
  r_.Bytes(h, sizeof(h), what);
  if (U32(h) != kCentralSig) Fail(what + " has a bad signature");
  const uint16_t flags = U16(h + 8);
  ZipEntry e;
  e.method = U16(h + 10);
  e.crc32 = U32(h + 16);
  e.compressed_size = U32(h + 20);
  e.size = U32(h + 24);
  const uint16_t name_len = U16(h + 28), extra_len = U16(h + 30);
  const uint16_t comment_len = U16(h + 32), disk = U16(h + 34);
  e.local_header_offset = U32(h + 42);
  e.name.resize(name_len);
  r_.Bytes(e.name.data(), e.name.size(), what + "'s name");
  const std::string label = absl::StrCat(what, " (\"", e.name, "\")");
  std::vector<unsigned char> extra(extra_len);
  r_.Bytes(extra.data(), extra.size(), label + "'s extra field");
  r_.Seek(static_cast<uint64_t>(in_.tellg()) + comment_len,
          label + "'s comment");
  // The ZIP64 extra field holds, in this order, the values whose 32-bit
  // fields are saturated.
  for (size_t at = 0; at + 4 <= extra.size();) {
    const uint16_t id = U16(&extra[at]), len = U16(&extra[at + 2]);
    if (at + 4 + len > extra.size()) {
      Fail(label + "'s extra field overruns its length");
    }
    if (id == kZip64ExtraId) {
      const unsigned char* p = &extra[at + 4];
      size_t left = len;
      auto take = [&](uint64_t& field) {
        if (left < 8) Fail(label + "'s ZIP64 field is too short");
        field = U64(p);
        p += 8;
        left -= 8;
      };
      if (e.size == kSentinel32) take(e.size);
      if (e.compressed_size == kSentinel32) take(e.compressed_size);
      if (e.local_header_offset == kSentinel32) take(e.local_header_offset);
    }
    at += 4 + len;
  }
  if (e.name.empty()) Fail(what + " has an empty name");
  if (disk != 0 && disk != kSentinel16) {
    throw NotImplemented(
        absl::StrCat("parameter file \"", file_, "\": ", label, " is on disk ",
                     disk, "; multi-disk archives are not supported"));
  }
  if ((flags & (kFlagEncrypted | kFlagStrongEncryption)) != 0) {
    throw NotImplemented(absl::StrCat("parameter file \"", file_, "\": ", label,
                                      " is encrypted"));
  }
  if (e.method != 0 && e.method != 8) {
    throw NotImplemented(absl::StrCat(
        "parameter file \"", file_, "\": ", label, " uses compression method ",
        e.method, "; only stored (0) and deflated (8) entries are supported"));
  }
  if (e.method == 0 && e.compressed_size != e.size) {
    Fail(absl::StrCat(label, " is stored but its sizes differ (",
                      e.compressed_size, " and ", e.size, ")"));
  }
  if (e.method == 8 && e.size / kMaxDeflateRatio > e.compressed_size + 1) {
    Fail(absl::StrCat(label, " claims ", e.size, " bytes from ",
                      e.compressed_size,
                      " deflated ones, more than deflate can give"));
  }
  return e;
}

std::vector<char> ZipReader::Read(const ZipEntry& e) {
  const std::string label = absl::StrCat("zip entry \"", e.name, "\"");
  r_.Seek(e.local_header_offset, label + "'s local header");
  unsigned char h[kLocalBytes];
  r_.Bytes(h, sizeof(h), label + "'s local header");
  if (U32(h) != kLocalSig) Fail(label + "'s local header has a bad signature");
  const uint16_t name_len = U16(h + 26), extra_len = U16(h + 28);
  std::string name(name_len, '\0');
  r_.Bytes(name.data(), name.size(), label + "'s local name");
  if (name != e.name) {
    Fail(absl::StrCat(label, "'s local header names \"", name, "\""));
  }
  r_.Seek(static_cast<uint64_t>(in_.tellg()) + extra_len,
          label + "'s local extra field");
  r_.Require(e.compressed_size, label + "'s data");
  std::vector<char> stored(static_cast<size_t>(e.compressed_size));
  r_.Bytes(stored.data(), stored.size(), label + "'s data");
  std::vector<char> data;
  if (e.method == 0) {
    data = std::move(stored);
  } else {
    if (!Inflate(stored, e.size, &data)) {
      Fail(absl::StrCat(label, "'s deflated data does not inflate to ", e.size,
                        " bytes"));
    }
  }
  const uint32_t crc = Crc32(0, data.data(), data.size());
  if (crc != e.crc32) {
    Fail(absl::StrCat(label, " fails its CRC-32 check (0x", absl::Hex(crc),
                      ", expected 0x", absl::Hex(e.crc32), ")"));
  }
  return data;
}

ZipWriter::ZipWriter(const std::string& file, uint64_t zip64_from)
    : file_(file),
      zip64_from_(zip64_from),
      out_(file, std::ios::binary | std::ios::trunc) {
  if (!out_) {
    throw RuntimeError(absl::StrCat("cannot open \"", file,
                                    "\" for writing: ", std::strerror(errno)));
  }
}

void ZipWriter::Add(const std::string& name,
                    const std::vector<std::string_view>& parts) {
  if (name.empty() || name.size() > kSentinel16) {
    throw InvalidArgument(absl::StrCat("writing \"", file_,
                                       "\": a zip entry name of ", name.size(),
                                       " bytes (1 to 65535)"));
  }
  ZipEntry e;
  e.name = name;
  e.local_header_offset = offset_;
  for (std::string_view part : parts) {
    e.crc32 = Crc32(e.crc32, part.data(), part.size());
    e.size += part.size();
  }
  e.compressed_size = e.size;
  const bool big = Needs64(e.size);
  const bool utf8 = std::any_of(name.begin(), name.end(),
                                [](char c) { return (c & 0x80) != 0; });
  std::string h;
  Append<uint32_t>(h, kLocalSig);
  Append<uint16_t>(h, big ? kVersionZip64 : kVersionDefault);
  Append<uint16_t>(h, utf8 ? kFlagUtf8 : 0);
  Append<uint16_t>(h, 0);  // stored
  Append<uint16_t>(h, 0);  // time
  Append<uint16_t>(h, kDosDate);
  Append<uint32_t>(h, e.crc32);
  Append<uint32_t>(h, big ? kSentinel32 : static_cast<uint32_t>(e.size));
  Append<uint32_t>(h, big ? kSentinel32 : static_cast<uint32_t>(e.size));
  Append<uint16_t>(h, static_cast<uint16_t>(name.size()));
  Append<uint16_t>(h, big ? 20 : 0);
  h += name;
  if (big) {  // a local ZIP64 field holds both sizes
    Append<uint16_t>(h, kZip64ExtraId);
    Append<uint16_t>(h, 16);
    Append<uint64_t>(h, e.size);
    Append<uint64_t>(h, e.size);
  }
  out_.write(h.data(), static_cast<std::streamsize>(h.size()));
  for (std::string_view part : parts) {
    out_.write(part.data(), static_cast<std::streamsize>(part.size()));
  }
  offset_ += h.size() + e.size;
  entries_.push_back(std::move(e));
}

void ZipWriter::Finish() {
  const uint64_t dir_offset = offset_;
  std::string d;
  for (const ZipEntry& e : entries_) {
    const bool big = Needs64(e.size), far = Needs64(e.local_header_offset);
    const uint16_t extra = (big ? 16 : 0) + (far ? 8 : 0);
    const bool utf8 = std::any_of(e.name.begin(), e.name.end(),
                                  [](char c) { return (c & 0x80) != 0; });
    const uint16_t version = big || far ? kVersionZip64 : kVersionDefault;
    Append<uint32_t>(d, kCentralSig);
    Append<uint16_t>(d, version);  // made by (MS-DOS attributes)
    Append<uint16_t>(d, version);  // needed
    Append<uint16_t>(d, utf8 ? kFlagUtf8 : 0);
    Append<uint16_t>(d, 0);
    Append<uint16_t>(d, 0);
    Append<uint16_t>(d, kDosDate);
    Append<uint32_t>(d, e.crc32);
    Append<uint32_t>(d, big ? kSentinel32 : static_cast<uint32_t>(e.size));
    Append<uint32_t>(d, big ? kSentinel32 : static_cast<uint32_t>(e.size));
    Append<uint16_t>(d, static_cast<uint16_t>(e.name.size()));
    Append<uint16_t>(d, extra == 0 ? 0 : extra + 4);
    Append<uint16_t>(d, 0);  // comment
    Append<uint16_t>(d, 0);  // disk
    Append<uint16_t>(d, 0);  // internal attributes
    Append<uint32_t>(d, 0);  // external attributes
    Append<uint32_t>(
        d, far ? kSentinel32 : static_cast<uint32_t>(e.local_header_offset));
    d += e.name;
    if (extra != 0) {
      Append<uint16_t>(d, kZip64ExtraId);
      Append<uint16_t>(d, extra);
      if (big) {
        Append<uint64_t>(d, e.size);
        Append<uint64_t>(d, e.size);
      }
      if (far) Append<uint64_t>(d, e.local_header_offset);
    }
  }
  const uint64_t count = entries_.size(), dir_size = d.size();
  const bool many = count >= std::min<uint64_t>(kSentinel16, zip64_from_);
  const bool zip64 = many || Needs64(dir_offset) || Needs64(dir_size);
  if (zip64) {
    const uint64_t record = dir_offset + dir_size;
    Append<uint32_t>(d, kEnd64Sig);
    Append<uint64_t>(d, kEnd64Bytes - 12);  // the record's size after this
    Append<uint16_t>(d, kVersionZip64);
    Append<uint16_t>(d, kVersionZip64);
    Append<uint32_t>(d, 0);
    Append<uint32_t>(d, 0);
    Append<uint64_t>(d, count);
    Append<uint64_t>(d, count);
    Append<uint64_t>(d, dir_size);
    Append<uint64_t>(d, dir_offset);
    Append<uint32_t>(d, kEnd64LocatorSig);
    Append<uint32_t>(d, 0);
    Append<uint64_t>(d, record);
    Append<uint32_t>(d, 1);
  }
  const uint16_t count16 = zip64 ? kSentinel16 : static_cast<uint16_t>(count);
  Append<uint32_t>(d, kEndSig);
  Append<uint16_t>(d, 0);
  Append<uint16_t>(d, 0);
  Append<uint16_t>(d, count16);
  Append<uint16_t>(d, count16);
  Append<uint32_t>(d, zip64 ? kSentinel32 : static_cast<uint32_t>(dir_size));
  Append<uint32_t>(d, zip64 ? kSentinel32 : static_cast<uint32_t>(dir_offset));
  Append<uint16_t>(d, 0);  // comment
  out_.write(d.data(), static_cast<std::streamsize>(d.size()));
  out_.close();
  if (!out_) {
    throw RuntimeError(absl::StrCat("writing \"", file_, "\" failed"));
  }
}

}  // namespace internal
}  // namespace nn
}  // namespace mx
