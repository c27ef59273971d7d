#include "nn/npy_format.h"

#include <cstring>
#include <optional>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "base/error.h"

namespace mx {
namespace nn {
namespace internal {
namespace {

constexpr size_t kPreambleV1 = sizeof(kNpyMagic) + 2 + 2;  // + uint16 length
constexpr size_t kPreambleV2 = sizeof(kNpyMagic) + 2 + 4;  // + uint32 length
// numpy pads headers so the data is 64-byte aligned (ARRAY_ALIGN).
constexpr size_t kAlign = 64;
// A larger header is corrupt or hostile (numpy itself refuses > 10000
// bytes by default); no shape of up to kMaxNdim dims needs more.
constexpr size_t kMaxHeaderBytes = 1 << 16;
constexpr int kMaxNdim = 32;

struct DescrInfo {
  const char* code;  // the type code without the byte-order character
  DType dtype;
};
constexpr DescrInfo kDescrs[] = {
    {"f2", DType::kFloat16}, {"f4", DType::kFloat32}, {"f8", DType::kFloat64},
    {"i1", DType::kInt8},    {"i4", DType::kInt32},   {"i8", DType::kInt64},
    {"u1", DType::kUInt8},   {"b1", DType::kBool},
};

// Type codes NumPy writes that have no mxcore dtype, for a clear message.
const char* MissingTypeName(const std::string& code) {
  static const std::pair<const char*, const char*> kMissing[] = {
      {"i2", "int16"},       {"u2", "uint16"},    {"u4", "uint32"},
      {"u8", "uint64"},      {"b2", "bfloat16"},  {"c8", "complex64"},
      {"c16", "complex128"}, {"f16", "float128"}, {"O", "object"},
  };
  for (const auto& [c, name] : kMissing) {
    if (code == c) return name;
  }
  return nullptr;
}

// A recursive-descent reader of the header's dict literal.
class HeaderParser {
 public:
  HeaderParser(const std::string& text, const std::string& where)
      : s_(text), where_(where) {}

  struct Header {
    std::string descr;
    bool fortran_order = false;
    std::vector<int64_t> shape;
  };

  Header Parse() {
    Header h;
    bool has_descr = false, has_order = false, has_shape = false;
    Expect('{');
    while (!Peek('}')) {
      const std::string key = String();
      Expect(':');
      if (key == "descr") {
        if (Peek('[')) {
          throw NotImplemented(
              absl::StrCat(where_,
                           ": a structured dtype; only plain numeric and bool "
                           "arrays can be loaded"));
        }
        h.descr = String();
        has_descr = true;
      } else if (key == "fortran_order") {
        h.fortran_order = Bool();
        has_order = true;
      } else if (key == "shape") {
        h.shape = Tuple();
        has_shape = true;
      } else {
        Fail(absl::StrCat("has the unexpected key '", key, "'"));
      }
      if (!Peek(',')) break;
      Expect(',');
    }
    Expect('}');
    SkipSpace();
    if (at_ != s_.size()) Fail("has text after the dict");
    if (!has_descr || !has_order || !has_shape) {
      Fail("lacks one of 'descr', 'fortran_order' and 'shape'");
    }
    return h;
  }

 private:
  [[noreturn]] void Fail(const std::string& what) const {
    throw InvalidArgument(absl::StrCat(where_, ": the .npy header ", what,
                                       " (at character ", at_, ")"));
  }
  void SkipSpace() {
    while (at_ < s_.size() && (s_[at_] == ' ' || s_[at_] == '\t' ||
                               s_[at_] == '\n' || s_[at_] == '\r')) {
      ++at_;
    }
  }
  bool Peek(char c) {
    SkipSpace();
    return at_ < s_.size() && s_[at_] == c;
  }
  void Expect(char c) {
    if (!Peek(c)) Fail(absl::StrCat("expected '", std::string(1, c), "'"));
    ++at_;
  }
  std::string String() {
    SkipSpace();
    if (at_ >= s_.size() || (s_[at_] != '\'' && s_[at_] != '"')) {
      Fail("expected a string");
    }
    const char quote = s_[at_++];
    const size_t end = s_.find(quote, at_);
    if (end == std::string::npos) Fail("has an unterminated string");
    std::string out = s_.substr(at_, end - at_);
    if (out.find('\\') != std::string::npos) Fail("has an escaped string");
    at_ = end + 1;
    return out;
  }
  bool Bool() {
    SkipSpace();
    for (const auto& [word, value] :
         {std::pair<const char*, bool>{"True", true}, {"False", false}}) {
      const size_t n = std::strlen(word);
      if (s_.compare(at_, n, word) == 0) {
        at_ += n;
        return value;
      }
    }
    Fail("expected True or False");
  }
  std::vector<int64_t> Tuple() {
    std::vector<int64_t> dims;
    Expect('(');
    while (!Peek(')')) {
      if (static_cast<int>(dims.size()) == kMaxNdim) {
        Fail(absl::StrCat("has a shape of more than ", kMaxNdim, " dims"));
      }
      dims.push_back(Int());
      if (!Peek(',')) break;
      Expect(',');
    }
    Expect(')');
    return dims;
  }
  int64_t Int() {
    SkipSpace();
    const size_t start = at_;
    int64_t value = 0;
    while (at_ < s_.size() && s_[at_] >= '0' && s_[at_] <= '9') {
      const int digit = s_[at_++] - '0';
      if (value > (INT64_MAX - digit) / 10) Fail("has a dimension too large");
      value = value * 10 + digit;
    }
    if (at_ == start) Fail("expected a non-negative integer");
    if (at_ < s_.size() && s_[at_] == 'L') ++at_;  // Python 2's long suffix
    return value;
  }

  const std::string& s_;
  const std::string& where_;
  size_t at_ = 0;
};

DType DTypeOfDescr(const std::string& descr, const std::string& where) {
  if (descr.empty()) {
    throw InvalidArgument(absl::StrCat(where, ": an empty dtype descr"));
  }
  const char order = descr[0];
  const bool has_order =
      order == '<' || order == '>' || order == '|' || order == '=';
  const std::string code = has_order ? descr.substr(1) : descr;
  if (const char* missing = MissingTypeName(code)) {
    throw NotImplemented(absl::StrCat(where, ": NumPy dtype ", missing, " ('",
                                      descr,
                                      "'), which mxcore does not support"));
  }
  for (const DescrInfo& d : kDescrs) {
    if (code != d.code) continue;
    if (order == '>' && DTypeSize(d.dtype) > 1) {
      throw NotImplemented(
          absl::StrCat(where, ": big-endian data ('", descr,
                       "'); only little-endian files can be loaded"));
    }
    return d.dtype;
  }
  throw NotImplemented(absl::StrCat(where, ": dtype descr '", descr,
                                    "' is not one mxcore supports (",
                                    "float16/32/64, int8/32/64, uint8, bool)"));
}

const char* DescrOf(DType dtype) {
  switch (dtype) {
    case DType::kFloat32:
      return "<f4";
    case DType::kFloat64:
      return "<f8";
    case DType::kFloat16:
      return "<f2";
    case DType::kUInt8:
      return "|u1";
    case DType::kInt32:
      return "<i4";
    case DType::kInt8:
      return "|i1";
    case DType::kInt64:
      return "<i8";
    case DType::kBool:
      return "|b1";
    default:
      throw InvalidArgument(
          absl::StrCat("no .npy descr for dtype ", DTypeName(dtype)));
  }
}

// Fortran (column-major) data to C order, element by element.
std::vector<char> FortranToC(const char* src, const std::vector<int64_t>& dims,
                             size_t item) {
  const size_t rank = dims.size();
  int64_t count = 1;
  for (int64_t d : dims) count *= d;
  std::vector<char> out(static_cast<size_t>(count) * item);
  if (count == 0) return out;
  // Column-major strides, walked with a C-order index counter.
  std::vector<int64_t> stride(rank), index(rank, 0);
  int64_t step = 1;
  for (size_t k = 0; k < rank; ++k) {
    stride[k] = step;
    step *= dims[k];
  }
  int64_t offset = 0;
  for (int64_t i = 0; i < count; ++i) {
    std::memcpy(out.data() + static_cast<size_t>(i) * item,
                src + static_cast<size_t>(offset) * item, item);
    for (size_t k = rank; k-- > 0;) {
      if (++index[k] < dims[k]) {
        offset += stride[k];
        break;
      }
      offset -= stride[k] * (dims[k] - 1);
      index[k] = 0;
    }
  }
  return out;
}

}  // namespace

NDArray ParseNpy(const std::vector<char>& bytes, const std::string& where) {
  auto fail = [&](const std::string& what) -> void {
    throw InvalidArgument(absl::StrCat(where, ": ", what));
  };
  if (bytes.size() < kPreambleV1 ||
      std::memcmp(bytes.data(), kNpyMagic, sizeof(kNpyMagic)) != 0) {
    fail("not a .npy array (no \\x93NUMPY magic)");
  }
  const auto* u = reinterpret_cast<const unsigned char*>(bytes.data());
  const int major = u[6], minor = u[7];
  if (major < 1 || major > 3 || minor != 0) {
    fail(absl::StrCat(".npy version ", major, ".", minor,
                      " (1.0, 2.0 and 3.0 are known)"));
  }
  size_t preamble = kPreambleV1;
  size_t header_len = u[8] | (u[9] << 8);
  if (major >= 2) {
    preamble = kPreambleV2;
    if (bytes.size() < preamble) fail("truncated .npy preamble");
    header_len = static_cast<size_t>(u[8]) | (static_cast<size_t>(u[9]) << 8) |
                 (static_cast<size_t>(u[10]) << 16) |
                 (static_cast<size_t>(u[11]) << 24);
  }
  if (header_len > kMaxHeaderBytes) {
    fail(absl::StrCat(".npy header of ", header_len, " bytes (at most ",
                      kMaxHeaderBytes, ")"));
  }
  if (header_len > bytes.size() - preamble) {
    fail(absl::StrCat(".npy header of ", header_len, " bytes in ",
                      bytes.size() - preamble, " bytes"));
  }
  const std::string text(bytes.data() + preamble, header_len);
  const HeaderParser::Header h = HeaderParser(text, where).Parse();
  const DType dtype = DTypeOfDescr(h.descr, where);
  const size_t item = DTypeSize(dtype);
  const std::optional<int64_t> nbytes = CheckedProduct(
      absl::Span<const int64_t>(h.shape), static_cast<int64_t>(item));
  const size_t data_at = preamble + header_len;
  const size_t have = bytes.size() - data_at;
  if (!nbytes || static_cast<uint64_t>(*nbytes) != have) {
    fail(absl::StrCat("shape (", absl::StrJoin(h.shape, ", "), ") of ",
                      DTypeName(dtype), " needs ",
                      nbytes ? absl::StrCat(*nbytes) : "more than 2^63",
                      " bytes of data; the array holds ", have));
  }
  const char* data = bytes.data() + data_at;
  std::vector<char> reordered;
  if (h.fortran_order && h.shape.size() > 1) {
    reordered = FortranToC(data, h.shape, item);
    data = reordered.data();
  }
  if (dtype == DType::kBool) {
    for (size_t i = 0; i < have; ++i) {
      const auto b = static_cast<unsigned char>(data[i]);
      if (b > 1) {
        fail(absl::StrCat("bool element ", i, " is byte ", b,
                          " (bool data must be 0 or 1)"));
      }
    }
  }
  const TShape shape(h.shape);
  NDArray array(shape, Context::CPU(), dtype);
  // Written even when empty: an array nothing wrote cannot be read.
  array.SyncCopyFromCPU(data, static_cast<size_t>(shape.Size()));
  return array;
}

std::string NpyHeader(const TShape& shape, DType dtype) {
  std::string dims;
  for (int64_t d : shape) absl::StrAppend(&dims, dims.empty() ? "" : ", ", d);
  if (shape.ndim() == 1) dims += ",";
  std::string dict =
      absl::StrCat("{'descr': '", DescrOf(dtype),
                   "', 'fortran_order': False, 'shape': (", dims, "), }");
  // numpy's padding: spaces, then the newline, so the data is aligned.
  const size_t pad = kAlign - (kPreambleV1 + dict.size() + 1) % kAlign;
  dict.append(pad, ' ');
  dict += '\n';
  std::string out(kNpyMagic, sizeof(kNpyMagic));
  out += '\x01';
  out += '\x00';
  out += static_cast<char>(dict.size() & 0xFF);
  out += static_cast<char>((dict.size() >> 8) & 0xFF);
  return out + dict;
}

}  // namespace internal
}  // namespace nn
}  // namespace mx
