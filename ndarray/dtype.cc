#include "ndarray/dtype.h"

#include "absl/strings/str_cat.h"
#include "base/error.h"

namespace mx {

uint16_t float16::FromFloat(float f) {
  uint32_t x;
  std::memcpy(&x, &f, sizeof(x));
  const uint32_t sign = (x >> 16) & 0x8000u;
  const uint32_t exp = (x >> 23) & 0xFFu;
  uint32_t mant = x & 0x7FFFFFu;
  if (exp == 0xFF) {  // Inf or NaN (keep NaN quiet and non-zero).
    return static_cast<uint16_t>(sign | 0x7C00u | (mant ? 0x200u : 0u));
  }
  int32_t e = static_cast<int32_t>(exp) - 127 + 15;
  if (e >= 0x1F) return static_cast<uint16_t>(sign | 0x7C00u);  // Overflow.
  if (e <= 0) {  // Subnormal half or zero.
    if (e < -10) return static_cast<uint16_t>(sign);
    mant |= 0x800000u;
    const int shift = 14 - e;
    uint32_t half = mant >> shift;
    const uint32_t rem = mant & ((1u << shift) - 1);
    const uint32_t mid = 1u << (shift - 1);
    if (rem > mid || (rem == mid && (half & 1u))) ++half;  // Round to even.
    return static_cast<uint16_t>(sign | half);
  }
  uint32_t half = (static_cast<uint32_t>(e) << 10) | (mant >> 13);
  const uint32_t rem = mant & 0x1FFFu;
  if (rem > 0x1000u || (rem == 0x1000u && (half & 1u))) ++half;  // May carry.
  return static_cast<uint16_t>(sign | half);
}

float float16::ToFloat(uint16_t h) {
  const uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
  uint32_t exp = (h >> 10) & 0x1Fu;
  uint32_t mant = h & 0x3FFu;
  uint32_t x;
  if (exp == 0) {
    if (mant == 0) {
      x = sign;
    } else {  // Subnormal: normalize.
      int e = -1;
      do {
        mant <<= 1;
        ++e;
      } while ((mant & 0x400u) == 0);
      x = sign | (static_cast<uint32_t>(127 - 15 - e) << 23) |
          ((mant & 0x3FFu) << 13);
    }
  } else if (exp == 0x1F) {
    x = sign | 0x7F800000u | (mant << 13);
  } else {
    x = sign | ((exp - 15 + 127) << 23) | (mant << 13);
  }
  float f;
  std::memcpy(&f, &x, sizeof(f));
  return f;
}

size_t DTypeSize(DType t) {
  switch (t) {
    case DType::kFloat32:
    case DType::kInt32:
      return 4;
    case DType::kFloat64:
    case DType::kInt64:
      return 8;
    case DType::kFloat16:
      return 2;
    case DType::kUInt8:
    case DType::kInt8:
    case DType::kBool:
      return 1;
    default:
      return 0;
  }
}

const char* DTypeName(DType t) {
  switch (t) {
    case DType::kFloat32:
      return "float32";
    case DType::kFloat64:
      return "float64";
    case DType::kFloat16:
      return "float16";
    case DType::kUInt8:
      return "uint8";
    case DType::kInt32:
      return "int32";
    case DType::kInt8:
      return "int8";
    case DType::kInt64:
      return "int64";
    case DType::kBool:
      return "bool";
    default:
      return "unknown";
  }
}

DType ParseDType(const std::string& name) {
  for (int i = 0; i <= 7; ++i) {
    DType t = static_cast<DType>(i);
    if (name == DTypeName(t) || name == std::to_string(i)) return t;
  }
  if (name == "float") return DType::kFloat32;
  if (name == "double") return DType::kFloat64;
  if (name == "half") return DType::kFloat16;
  throw DTypeError(absl::StrCat(
      "unknown dtype \"", name,
      "\"; expected one of float32, float64, float16, uint8, int32, int8, "
      "int64, bool"));
}

bool IsFloat(DType t) {
  return t == DType::kFloat32 || t == DType::kFloat64 || t == DType::kFloat16;
}

bool IsInteger(DType t) {
  return t == DType::kUInt8 || t == DType::kInt32 || t == DType::kInt8 ||
         t == DType::kInt64;
}

std::ostream& operator<<(std::ostream& os, DType t) {
  return os << DTypeName(t);
}

void ThrowUnsupportedDType(DType t, const char* where) {
  throw DTypeError(absl::StrCat(where, ": unsupported dtype ", DTypeName(t),
                                " (", static_cast<int>(t), ")"));
}

}  // namespace mx
