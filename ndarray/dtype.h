// Element types of arrays.
//
// The numbering follows MXNet's (mshadow's) type flags, so symbol files that
// record dtypes as integers load unchanged. MX_DTYPE_SWITCH binds a C++ type
// for a runtime dtype:
//
//   MX_DTYPE_SWITCH(arr.dtype(), T, {
//     const T* p = arr.data<T>();
//   });
#ifndef MXCORE_NDARRAY_DTYPE_H_
#define MXCORE_NDARRAY_DTYPE_H_

#include <cstdint>
#include <cstring>
#include <limits>
#include <ostream>
#include <string>
#include <type_traits>

namespace mx {

enum class DType : int {
  kUnknown = -1,
  kFloat32 = 0,
  kFloat64 = 1,
  kFloat16 = 2,
  kUInt8 = 3,
  kInt32 = 4,
  kInt8 = 5,
  kInt64 = 6,
  kBool = 7,
};

// IEEE 754 half precision, stored as bits; arithmetic goes through float.
struct float16 {
  uint16_t bits = 0;
  float16() = default;
  float16(float f) : bits(FromFloat(f)) {}  // NOLINT: implicit like a float.
  operator float() const { return ToFloat(bits); }

  static uint16_t FromFloat(float f);
  static float ToFloat(uint16_t h);
};

// One element converted to another element type, as the Cast op and
// dtype-converting copies do: to bool is x != 0; float to integer
// truncates toward zero, saturates at the integer's range and maps NaN to
// 0 (so no conversion is undefined behaviour); float16 goes through float.
template <typename To, typename From>
inline To ConvertElement(From v) {
  using A = std::conditional_t<std::is_same_v<From, float16>, float, From>;
  const A a = static_cast<A>(v);
  if constexpr (std::is_same_v<To, bool>) {
    return a != A(0);
  } else if constexpr (std::is_integral_v<To> && std::is_floating_point_v<A>) {
    if (a != a) return To(0);  // NaN.
    const double d = static_cast<double>(a);
    constexpr To kMin = std::numeric_limits<To>::min();
    constexpr To kMax = std::numeric_limits<To>::max();
    if (d <= static_cast<double>(kMin)) return kMin;
    if (d >= static_cast<double>(kMax)) return kMax;
    return static_cast<To>(d);
  } else if constexpr (std::is_same_v<To, float16>) {
    return float16(static_cast<float>(a));
  } else {
    return static_cast<To>(a);
  }
}

// Bytes per element; 0 for kUnknown.
size_t DTypeSize(DType t);
// "float32", "float64", "float16", "uint8", "int32", "int8", "int64",
// "bool"; "unknown".
const char* DTypeName(DType t);
// Inverse of DTypeName (also accepts the integer flags "0".."7");
// throws DTypeError.
DType ParseDType(const std::string& name);
bool IsFloat(DType t);
bool IsInteger(DType t);  // Signed or unsigned integers, not bool.

std::ostream& operator<<(std::ostream& os, DType t);

template <typename T>
struct DTypeOf;
template <>
struct DTypeOf<float> {
  static constexpr DType value = DType::kFloat32;
};
template <>
struct DTypeOf<double> {
  static constexpr DType value = DType::kFloat64;
};
template <>
struct DTypeOf<float16> {
  static constexpr DType value = DType::kFloat16;
};
template <>
struct DTypeOf<uint8_t> {
  static constexpr DType value = DType::kUInt8;
};
template <>
struct DTypeOf<int32_t> {
  static constexpr DType value = DType::kInt32;
};
template <>
struct DTypeOf<int8_t> {
  static constexpr DType value = DType::kInt8;
};
template <>
struct DTypeOf<int64_t> {
  static constexpr DType value = DType::kInt64;
};
template <>
struct DTypeOf<bool> {
  static constexpr DType value = DType::kBool;
};

// Throws DTypeError for kUnknown or an out-of-range value.
[[noreturn]] void ThrowUnsupportedDType(DType t, const char* where);

}  // namespace mx

#define MX_DTYPE_CASE_(flag, CType, T, ...) \
  case ::mx::DType::flag: {                 \
    using T = CType;                        \
    { __VA_ARGS__ }                         \
    break;                                  \
  }

// All eight dtypes.
#define MX_DTYPE_SWITCH(dtype, T, ...)                      \
  switch (dtype) {                                          \
    MX_DTYPE_CASE_(kFloat32, float, T, __VA_ARGS__)         \
    MX_DTYPE_CASE_(kFloat64, double, T, __VA_ARGS__)        \
    MX_DTYPE_CASE_(kFloat16, ::mx::float16, T, __VA_ARGS__) \
    MX_DTYPE_CASE_(kUInt8, uint8_t, T, __VA_ARGS__)         \
    MX_DTYPE_CASE_(kInt32, int32_t, T, __VA_ARGS__)         \
    MX_DTYPE_CASE_(kInt8, int8_t, T, __VA_ARGS__)           \
    MX_DTYPE_CASE_(kInt64, int64_t, T, __VA_ARGS__)         \
    MX_DTYPE_CASE_(kBool, bool, T, __VA_ARGS__)             \
    default:                                                \
      ::mx::ThrowUnsupportedDType(dtype, __func__);         \
  }

// Floating-point dtypes only.
#define MX_FLOAT_DTYPE_SWITCH(dtype, T, ...)                \
  switch (dtype) {                                          \
    MX_DTYPE_CASE_(kFloat32, float, T, __VA_ARGS__)         \
    MX_DTYPE_CASE_(kFloat64, double, T, __VA_ARGS__)        \
    MX_DTYPE_CASE_(kFloat16, ::mx::float16, T, __VA_ARGS__) \
    default:                                                \
      ::mx::ThrowUnsupportedDType(dtype, __func__);         \
  }

#endif  // MXCORE_NDARRAY_DTYPE_H_
