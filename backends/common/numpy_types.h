// MXNet 2's dtype rules for its NumPy-interface ops (_npi_add, _npi_exp,
// _npi_add_scalar, ...), shared by mxcore's CPU ops (type inference) and the
// CUDA plugin (the dtype to compute in). Dtypes are MXNet's codes: float32
// 0, float64 1, float16 2, uint8 3, int32 4, int8 5, int64 6, bool 7.
// Header-only; numpy_types_test.cc checks every pair.
//
// The rules are MXNet's, not NumPy's: int32 + float16 is float16 (NumPy:
// float64), and int data with a float scalar is float64.
//
//   mx_numpy::PromoteTypes(kInt32, kFloat16);   // float16
//   mx_numpy::PromoteTypes(kUInt8, kInt8);      // int32
//   mx_numpy::TrueDivideType(kInt32, kInt64);   // float32
//   mx_numpy::ScalarOpType(kInt32, false);      // float64 (x + 0.5)
#ifndef MXCORE_BACKENDS_COMMON_NUMPY_TYPES_H_
#define MXCORE_BACKENDS_COMMON_NUMPY_TYPES_H_

namespace mx_numpy {

constexpr int kFloat32 = 0, kFloat64 = 1, kFloat16 = 2, kUInt8 = 3, kInt32 = 4,
              kInt8 = 5, kInt64 = 6, kBool = 7;

constexpr bool IsFloatCode(int t) {
  return t == kFloat32 || t == kFloat64 || t == kFloat16;
}

// The dtype two operands of a binary op meet in: the wider float if
// either is a float (float16 < float32 < float64, and a float beats any
// integer), else the wider integer (int64, then int32, then uint8, then
// int8; bool is the narrowest), except uint8 with int8, which is int32.
constexpr int PromoteTypes(int a, int b) {
  if (a == b) return a;
  if (IsFloatCode(a) || IsFloatCode(b)) {
    if (a == kFloat64 || b == kFloat64) return kFloat64;
    if (a == kFloat32 || b == kFloat32) return kFloat32;
    return kFloat16;
  }
  if ((a == kUInt8 && b == kInt8) || (a == kInt8 && b == kUInt8)) {
    return kInt32;
  }
  if (a == kInt64 || b == kInt64) return kInt64;
  if (a == kInt32 || b == kInt32) return kInt32;
  if (a == kUInt8 || b == kUInt8) return kUInt8;
  return kInt8;  // int8 with bool.
}

// true_divide: a float as PromoteTypes, float32 when neither is a float.
constexpr int TrueDivideType(int a, int b) {
  return IsFloatCode(a) || IsFloatCode(b) ? PromoteTypes(a, b) : kFloat32;
}

// An op of data and a Python scalar (`is_int`: the scalar was an int):
// integer data with a float scalar gives float64, bool data int64 (int
// scalar) or float64; otherwise the data's dtype.
constexpr int ScalarOpType(int data, bool is_int) {
  if (data == kBool) return is_int ? kInt64 : kFloat64;
  if (!IsFloatCode(data) && !is_int) return kFloat64;
  return data;
}

// true_divide by (or of) a scalar, and the float functions (exp, sin, ...)
// of integer or bool data: float data keeps its dtype, the rest float32.
constexpr int FloatResultType(int data) {
  return IsFloatCode(data) ? data : kFloat32;
}

}  // namespace mx_numpy

#endif  // MXCORE_BACKENDS_COMMON_NUMPY_TYPES_H_
