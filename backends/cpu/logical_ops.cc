// MXNet's logical ops: logical_not and and/or/xor in three forms (broadcast_
// logical_*, elemwise _logical_*, _logical_*_scalar). Non-zero is true (NaN
// too); the result is 1 or 0 in the input's dtype, as MXNet 1.x gives it.
// The gradient is zero.
#include <string>

#include "absl/strings/str_cat.h"
#include "backends/cpu/elemwise.h"
#include "backends/cpu/elemwise_binary.h"
#include "backends/cpu/grad_util.h"

namespace mx {
namespace cpu {
namespace {

struct AndF {
  template <typename A>
  static A Map(A a, A b) {
    return a != A(0) && b != A(0) ? A(1) : A(0);
  }
};
struct OrF {
  template <typename A>
  static A Map(A a, A b) {
    return a != A(0) || b != A(0) ? A(1) : A(0);
  }
};
struct XorF {
  template <typename A>
  static A Map(A a, A b) {
    return (a != A(0)) != (b != A(0)) ? A(1) : A(0);
  }
};

template <typename F>
void RegisterLogical(const std::string& op, const std::string& mxnet_alias,
                     const std::string& scalar_alias, const std::string& doc) {
  RegisterBinary<F>("broadcast_logical_" + op, {},
                    absl::StrCat(doc, " with broadcasting"));
  RegisterElemwise<F>("_logical_" + op, {mxnet_alias},
                      absl::StrCat(doc, ", equal shapes"));
  RegisterScalar<F>("_logical_" + op + "_scalar", {scalar_alias},
                    absl::StrCat(doc, " with a scalar"));
  for (const std::string& name : {"broadcast_logical_" + op, "_logical_" + op,
                                  "_logical_" + op + "_scalar"}) {
    SetZeroGrad(name);
  }
}

[[maybe_unused]] const bool kRegistered = [] {
  RegisterUnary(
      "logical_not", UnaryDomain::kNumeric,
      [](auto x) {
        return x != decltype(x)(0) ? decltype(x)(0) : decltype(x)(1);
      },
      "1 where x is 0, else 0, in x's dtype");
  SetZeroGrad("logical_not");
  RegisterLogical<AndF>("and", "_Logical_And", "_LogicalAndScalar",
                        "a and b as 1/0 in the inputs' dtype");
  RegisterLogical<OrF>("or", "_Logical_Or", "_LogicalOrScalar",
                       "a or b as 1/0 in the inputs' dtype");
  RegisterLogical<XorF>("xor", "_Logical_Xor", "_LogicalXorScalar",
                        "a xor b as 1/0 in the inputs' dtype");
  return true;
}();

}  // namespace
}  // namespace cpu
}  // namespace mx
