// Helpers shared by the built-in CPU kernels (and CPU kernels of plugins):
// writing by request type, float16 arithmetic through float, broadcasting
// index math, and a parallel loop.
#ifndef MXCORE_BACKENDS_CPU_KERNEL_UTIL_H_
#define MXCORE_BACKENDS_CPU_KERNEL_UTIL_H_

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "base/parallel.h"
#include "graph/op.h"
#include "ndarray/ndarray.h"

namespace mx {
namespace cpu {

// The type arithmetic on T is done in: float for float16, T otherwise.
template <typename T>
struct AccTypeOf {
  using type = T;
};
template <>
struct AccTypeOf<float16> {
  using type = float;
};
template <typename T>
using AccType = typename AccTypeOf<T>::type;

// NaN test for every element type (false for integers and bool); x != x
// instead of std::isnan so float16 and integer types need no overloads.
template <typename A>
inline bool IsNan(A x) {
  return x != x;  // NOLINT: the NaN test
}

// static_cast<T>(v) made defined for every double: for integer T, NaN
// becomes 0 and values outside T's range saturate (casting those is
// undefined behaviour). Float results reaching integer dtypes (scalar
// attributes, pow, sums in double) go through it.
template <typename T>
inline T SaturatingCast(double v) {
  if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) {
    if (std::isnan(v)) return T(0);
    if (v <= static_cast<double>(std::numeric_limits<T>::lowest())) {
      return std::numeric_limits<T>::lowest();
    }
    // max() may round up as a double (2^63), so >= saturates it exactly.
    if (v >= static_cast<double>(std::numeric_limits<T>::max())) {
      return std::numeric_limits<T>::max();
    }
  }
  return static_cast<T>(v);
}

// Integer +, -, * and negation that wrap modulo 2^bits, as NumPy's integer
// arithmetic does: on signed types the plain operators overflow into
// undefined behaviour (int64 square of 2^48, -INT64_MIN). Other types use
// the plain operators.
template <typename A>
inline constexpr bool kWrappingInt =
    std::is_integral_v<A>&& std::is_signed_v<A> && !std::is_same_v<A, bool>;
template <typename A>
inline A WrapAdd(A a, A b) {
  if constexpr (kWrappingInt<A>) {
    using U = std::make_unsigned_t<A>;
    return static_cast<A>(
        static_cast<U>(static_cast<U>(a) + static_cast<U>(b)));
  } else {
    return a + b;
  }
}
template <typename A>
inline A WrapSub(A a, A b) {
  if constexpr (kWrappingInt<A>) {
    using U = std::make_unsigned_t<A>;
    return static_cast<A>(
        static_cast<U>(static_cast<U>(a) - static_cast<U>(b)));
  } else {
    return a - b;
  }
}
template <typename A>
inline A WrapMul(A a, A b) {
  if constexpr (kWrappingInt<A>) {
    // Unsigned types narrower than int promote to int, where the product
    // can overflow: multiply as unsigned 64-bit.
    return static_cast<A>(static_cast<uint64_t>(static_cast<int64_t>(a)) *
                          static_cast<uint64_t>(static_cast<int64_t>(b)));
  } else if constexpr (std::is_same_v<A, bool>) {
    return a && b;
  } else {
    return a * b;
  }
}
template <typename A>
inline A WrapNeg(A a) {
  if constexpr (kWrappingInt<A>) {
    return WrapSub(A(0), a);
  } else {
    return -a;
  }
}

// Writes `value` to *dst as `req` says.
template <typename T, typename V>
inline void Assign(T* dst, OpReqType req, V value) {
  if (req == OpReqType::kAddTo) {
    *dst = static_cast<T>(
        WrapAdd(static_cast<AccType<T>>(*dst), static_cast<AccType<T>>(value)));
  } else if (req != OpReqType::kNullOp) {
    *dst = static_cast<T>(value);
  }
}

// Copies `n` elements (a contiguous block) as `req` says.
template <typename T>
inline void CopyBlock(const T* src, T* dst, int64_t n, OpReqType req) {
  if (req == OpReqType::kAddTo) {
    for (int64_t i = 0; i < n; ++i) Assign(dst + i, req, src[i]);
  } else if (req != OpReqType::kNullOp && n > 0) {
    std::memcpy(dst, src, static_cast<size_t>(n) * sizeof(T));
  }
}

// dst[i] = value(i) for i in [begin, end), written as `req` says. The
// request is tested once, outside the loop, so the loop vectorizes.
template <typename T, typename F>
inline void AssignRange(T* dst, OpReqType req, int64_t begin, int64_t end,
                        F value) {
  if (req == OpReqType::kNullOp) return;
  if (req == OpReqType::kAddTo) {
    for (int64_t i = begin; i < end; ++i) {
      dst[i] = static_cast<T>(WrapAdd(static_cast<AccType<T>>(dst[i]),
                                      static_cast<AccType<T>>(value(i))));
    }
  } else {
    for (int64_t i = begin; i < end; ++i) dst[i] = static_cast<T>(value(i));
  }
}

// The shared CPU parallel loop (base/parallel.h).
using ::mx::ParallelFor;

// NumPy broadcasting of two shapes; throws ShapeError naming the op.
TShape BroadcastShape(const NodeAttrs& attrs, const TShape& a, const TShape& b);

// Strides of `in` (right-aligned to `out`'s rank) with 0 on broadcast axes.
std::vector<int64_t> BroadcastStrides(const TShape& in, const TShape& out);

// Element offset in an input for flat output index `i`, given the output
// shape and the input's broadcast strides.
inline int64_t BroadcastOffset(int64_t i, const TShape& out,
                               const std::vector<int64_t>& strides) {
  int64_t offset = 0;
  for (int d = out.ndim() - 1; d >= 0; --d) {
    const int64_t extent = out[d];
    offset += (i % extent) * strides[d];
    i /= extent;
  }
  return offset;
}

// Row-major strides of a shape.
std::vector<int64_t> Strides(const TShape& shape);

// A numeric blob's values as doubles (labels, lengths of any dtype).
std::vector<double> DoublesOf(const TBlob& b);

// out = in converted elementwise to out's dtype (ConvertElement), written
// as `req` says; the shapes have equal sizes. Cast's kernel.
void ConvertBlob(const TBlob& in, OpReqType req, const TBlob& out);

// Copies consecutive pieces of `in` along `axis`: out[k] gets indices
// [pieces[k].first, pieces[k].second) of that axis, written as req[k] says
// (out[k]'s shape may drop the axis, as squeeze_axis does). The kernel of
// SliceChannel, _split_v2 and _split_like.
void SplitAlongAxis(const TBlob& in, int axis,
                    const std::vector<std::pair<int64_t, int64_t>>& pieces,
                    const std::vector<OpReqType>& req,
                    const std::vector<TBlob>& out);

// `b` itself when it has `dtype`, else a converted copy (ConvertBlob) in
// the kernel's temporary space (the op must request kTempSpace, e.g. with
// TempSpaceRequest).
TBlob InDType(const OpContext& ctx, const TBlob& b, DType dtype);
std::vector<ResourceRequest> TempSpaceRequest(const NodeAttrs&);

// "op \"name\"" for messages.
std::string OpLabel(const NodeAttrs& attrs);

// A parameter of two extents >= 1 (ROIAlign's and ROIPooling's
// pooled_size), as (first, second); InvalidArgument naming `name` otherwise.
std::pair<int64_t, int64_t> TwoExtents(const NodeAttrs& attrs, const char* name,
                                       const TShape& s);

// Inference helpers for ops with one output whose dtype is fixed.
void OutputTypeIs(DType t, const NodeAttrs& attrs, std::vector<DType>* in,
                  std::vector<DType>* out);

// Throws DTypeError unless `t` is one of the listed kinds.
void RequireFloat(const NodeAttrs& attrs, DType t);
void RequireNumeric(const NodeAttrs& attrs, DType t);  // Not bool.
// InvalidArgument unless a softmax temperature (when given) is finite and
// non-zero.
void RequireTemperature(const NodeAttrs& attrs,
                        const std::optional<double>& temperature);
// Index inputs may have any numeric dtype: DTypeError for bool, naming
// input `input` (`name`).
void RequireIndexType(const NodeAttrs& attrs, DType t, int input,
                      const char* name);

// An index brought into [0, n) (n > 0): clamped, or wrapped modulo n (the
// "clip" and "wrap" modes of take and pick).
inline int64_t ClipOrWrapIndex(int64_t i, int64_t n, bool wrap) {
  if (!wrap) return std::clamp<int64_t>(i, 0, n - 1);
  i %= n;
  return i < 0 ? i + n : i;
}

// All inputs and outputs share one floating-point dtype (input 0's kind is
// checked first, so an integer input is named as such).
inline void SameFloatType(const NodeAttrs& attrs, std::vector<DType>* in,
                          std::vector<DType>* out) {
  if ((*in)[0] != DType::kUnknown) RequireFloat(attrs, (*in)[0]);
  SameType(attrs, in, out);
  if ((*in)[0] != DType::kUnknown) RequireFloat(attrs, (*in)[0]);
}

}  // namespace cpu
}  // namespace mx

#endif  // MXCORE_BACKENDS_CPU_KERNEL_UTIL_H_
