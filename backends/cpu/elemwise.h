// Internal: shared between the elementwise kernels and their gradients.
//
// RegisterUnary is the one template behind every unary math op: a functor
// on the accumulation type becomes a kernel with shape, dtype and in-place
// inference.
//
//   RegisterUnary("sin", UnaryDomain::kFloat,
//                 [](auto x) { return std::sin(x); }, "sine");
#ifndef MXCORE_BACKENDS_CPU_ELEMWISE_H_
#define MXCORE_BACKENDS_CPU_ELEMWISE_H_

#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "backends/cpu/kernel_util.h"
#include "graph/op.h"
#include "graph/params.h"

namespace mx {
namespace cpu {

// Parameter of the scalar forms (_plus_scalar, _rdiv_scalar, ...).
struct ScalarParam {
  double scalar = 0;
  static void Declare(ParamSchema<ScalarParam>* s) {
    s->Field("scalar", &ScalarParam::scalar).Required();
  }
};

// Sets "FGradient" on the unary, binary, scalar and comparison ops and on
// clip. Called by elemwise_ops.cc once they are registered.
void RegisterElemwiseGradients();

// Which input dtypes a unary op accepts: any but bool, or floating point.
enum class UnaryDomain { kNumeric, kFloat };

// Elements per ParallelFor chunk of the elementwise kernels.
constexpr int64_t kElemwiseGrain = 1 << 14;

// A kernel applying f to every element, computed in AccType<T>.
template <typename F>
FCompute UnaryKernel(F f) {
  return [f](const OpContext&, const NodeAttrs&, const std::vector<TBlob>& in,
             const std::vector<OpReqType>& req, const std::vector<TBlob>& out) {
    MX_DTYPE_SWITCH(in[0].dtype, T, {
      const T* x = in[0].data<T>();
      T* y = out[0].data<T>();
      const OpReqType r = req[0];
      ParallelFor(in[0].Size(), kElemwiseGrain, [&](int64_t b, int64_t e) {
        AssignRange(y, r, b, e, [=](int64_t i) {
          return f(static_cast<AccType<T>>(x[i]));
        });
      });
    });
  };
}

// f on floating-point values, the identity on integers: rounding leaves
// integers as they are, and float-only functions (Eigen's special
// functions reject integer types at compile time) are never called on
// them (type inference refuses integer inputs to kFloat ops).
template <typename F>
auto OnFloats(F f) {
  return [f](auto x) {
    if constexpr (std::is_integral_v<decltype(x)>) {
      return x;
    } else {
      return f(x);
    }
  };
}

// Output dtype = input dtype, which must be in `domain` (else DTypeError).
inline void CheckUnaryType(UnaryDomain domain, const NodeAttrs& attrs,
                           std::vector<DType>* in, std::vector<DType>* out) {
  SameType(attrs, in, out);
  if ((*in)[0] == DType::kUnknown) return;
  if (domain == UnaryDomain::kFloat) {
    RequireFloat(attrs, (*in)[0]);
  } else {
    RequireNumeric(attrs, (*in)[0]);
  }
}

inline std::vector<std::pair<int, int>> InplaceFirst(const NodeAttrs&) {
  return {{0, 0}};
}

// Registers op `name` with input "data" computing f elementwise.
template <typename F>
Op& RegisterUnary(const std::string& name, UnaryDomain domain, F f,
                  const std::string& doc) {
  return OpRegistry::Get()
      ->Register(name)
      .Describe(doc)
      .SetNumInputs(1)
      .SetInputNames({"data"})
      .SetInferShape(SameShape)
      .SetInferType([domain](const NodeAttrs& attrs, std::vector<DType>* in,
                             std::vector<DType>* out) {
        CheckUnaryType(domain, attrs, in, out);
      })
      .SetInplaceOption(InplaceFirst)
      .SetCompute(Context::kCPU, UnaryKernel(f));
}

}  // namespace cpu
}  // namespace mx

#endif  // MXCORE_BACKENDS_CPU_ELEMWISE_H_
