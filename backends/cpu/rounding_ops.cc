// Rounding ops as MXNet defines them: round (half away from zero), rint
// (nearest, ties toward -inf: MXNet's rint picks the floor when x is as near
// to it as to the ceiling, so rint(2.5) = 2 and rint(-2.5) = -3, unlike C's
// rint), fix and trunc (toward zero), floor and ceil. Integer inputs are
// returned unchanged (MXNet rounds them through float, which changes int64
// values above 2^24). The gradient is zero, as MXNet's.
#include <cmath>

#include "backends/common/mxnet_math.h"
#include "backends/cpu/elemwise.h"
#include "backends/cpu/grad_util.h"

namespace mx {
namespace cpu {
namespace {

[[maybe_unused]] const bool kRegistered = [] {
  using D = UnaryDomain;
  RegisterUnary("round", D::kNumeric,
                OnFloats([](auto x) { return std::round(x); }),
                "nearest integer, halves away from zero");
  RegisterUnary("rint", D::kNumeric,
                OnFloats([](auto x) { return mx_math::RintAsMxnet(x); }),
                "nearest integer, halves toward -inf (MXNet's rint)");
  // MXNet's fix picks whichever of floor and ceil is smaller in magnitude:
  // trunc, signed zeros included.
  RegisterUnary("fix", D::kNumeric,
                OnFloats([](auto x) { return std::trunc(x); }),
                "nearest integer toward zero");
  RegisterUnary("trunc", D::kNumeric,
                OnFloats([](auto x) { return std::trunc(x); }),
                "nearest integer toward zero");
  RegisterUnary("floor", D::kNumeric,
                OnFloats([](auto x) { return std::floor(x); }),
                "largest integer <= x");
  RegisterUnary("ceil", D::kNumeric,
                OnFloats([](auto x) { return std::ceil(x); }),
                "smallest integer >= x");
  for (const char* op : {"round", "rint", "fix", "trunc", "floor", "ceil"}) {
    SetZeroGrad(op);
  }
  return true;
}();

}  // namespace
}  // namespace cpu
}  // namespace mx
