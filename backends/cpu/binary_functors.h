// Internal: the functors of the binary elementwise ops, computed on the
// accumulation type (elemwise_binary.h turns each into a kernel). The
// legacy ops (broadcast_add, _mod_scalar, ...) and MXNet 2's NumPy-interface
// ops (_npi_add, ...) share them.
#ifndef MXCORE_BACKENDS_CPU_BINARY_FUNCTORS_H_
#define MXCORE_BACKENDS_CPU_BINARY_FUNCTORS_H_

#include <cmath>
#include <type_traits>

#include "backends/common/mxnet_math.h"
#include "backends/cpu/kernel_util.h"

namespace mx {
namespace cpu {

struct AddF {
  template <typename A>
  static A Map(A a, A b) {
    return WrapAdd(a, b);  // Integers wrap, as in NumPy.
  }
};
struct SubF {
  template <typename A>
  static A Map(A a, A b) {
    return WrapSub(a, b);
  }
};
struct MulF {
  template <typename A>
  static A Map(A a, A b) {
    return WrapMul(a, b);
  }
};
struct DivF {
  template <typename A>
  static A Map(A a, A b) {
    // Integer division by zero gives 0 (as NumPy does) instead of a trap.
    if constexpr (std::is_integral_v<A>) {
      if (b == 0) return 0;
      if constexpr (std::is_signed_v<A>) {
        if (b == -1) return WrapNeg(a);  // Avoids INT_MIN / -1.
      }
    }
    return a / b;
  }
};
struct PowF {
  template <typename A>
  static A Map(A a, A b) {
    return SaturatingCast<A>(
        std::pow(static_cast<double>(a), static_cast<double>(b)));
  }
};
struct MaxF {
  template <typename A>
  static A Map(A a, A b) {
    return a > b || IsNan(a) ? a : b;  // NaN in either wins, as NumPy.
  }
};
struct MinF {
  template <typename A>
  static A Map(A a, A b) {
    return a < b || IsNan(a) ? a : b;  // NaN in either wins, as NumPy.
  }
};
struct EqF {
  template <typename A>
  static bool Map(A a, A b) {
    return a == b;
  }
};
struct NeF {
  template <typename A>
  static bool Map(A a, A b) {
    return a != b;
  }
};
struct GtF {
  template <typename A>
  static bool Map(A a, A b) {
    return a > b;
  }
};
struct GeF {
  template <typename A>
  static bool Map(A a, A b) {
    return a >= b;
  }
};
struct LtF {
  template <typename A>
  static bool Map(A a, A b) {
    return a < b;
  }
};
struct LeF {
  template <typename A>
  static bool Map(A a, A b) {
    return a <= b;
  }
};
// MXNet's mod (and Python's %): the sign of the divisor, x mod 0 = 0.
struct ModF {
  template <typename A>
  static A Map(A a, A b) {
    return mx_math::ModAsMxnet(a, b);
  }
};

}  // namespace cpu
}  // namespace mx

#endif  // MXCORE_BACKENDS_CPU_BINARY_FUNCTORS_H_
