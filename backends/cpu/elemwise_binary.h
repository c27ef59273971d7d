// Internal: the templates behind every binary elementwise op. A functor F
// with `static A Map(A a, A b)` (or `bool Map` for comparisons) becomes an
// op with NumPy broadcasting (RegisterBinary), with equal shapes
// (RegisterElemwise) or with a scalar attribute (RegisterScalar, `scalar op x`
// when kReverse), with shape, dtype and in-place inference.
//
//   struct HypotF {
//     template <typename A>
//     static A Map(A a, A b) { return std::hypot(a, b); }
//   };
//   RegisterBinary<HypotF>("broadcast_hypot", {}, "sqrt(a^2 + b^2)");
#ifndef MXCORE_BACKENDS_CPU_ELEMWISE_BINARY_H_
#define MXCORE_BACKENDS_CPU_ELEMWISE_BINARY_H_

#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "backends/cpu/elemwise.h"
#include "backends/cpu/kernel_util.h"
#include "graph/op.h"

namespace mx {
namespace cpu {

// NumPy broadcasting of "lhs" and "rhs" (elemwise_ops.cc).
void BinaryShape(const NodeAttrs& attrs, std::vector<TShape>* in,
                 std::vector<TShape>* out);

// MXNet's legacy comparisons (broadcast_equal, _greater_scalar, ...) give
// 1 or 0 in the inputs' dtype, so graphs may add or multiply the result; the
// NumPy-style ones (_npi_equal, ...) use F itself and give bool.
template <typename F>
struct AsNumberF {
  template <typename A>
  static A Map(A a, A b) {
    return F::Map(a, b) ? A(1) : A(0);
  }
};

// Output element type of F on T: bool for comparisons, T otherwise.
template <typename F, typename T>
using OutT = std::conditional_t<
    std::is_same_v<decltype(F::Map(AccType<T>(), AccType<T>())), bool>, bool,
    T>;

template <typename F>
void BinaryCompute(const OpContext&, const NodeAttrs&,
                   const std::vector<TBlob>& in,
                   const std::vector<OpReqType>& req,
                   const std::vector<TBlob>& out) {
  const TBlob &a = in[0], &b = in[1], &o = out[0];
  MX_DTYPE_SWITCH(a.dtype, T, {
    using A = AccType<T>;
    using O = OutT<F, T>;
    const T* pa = a.data<T>();
    const T* pb = b.data<T>();
    O* po = o.data<O>();
    const OpReqType r = req[0];
    const int64_t n = o.Size();
    if (a.shape == o.shape && b.shape == o.shape) {
      ParallelFor(n, kElemwiseGrain, [&](int64_t s, int64_t e) {
        AssignRange(po, r, s, e, [=](int64_t i) {
          return F::Map(static_cast<A>(pa[i]), static_cast<A>(pb[i]));
        });
      });
    } else if (a.shape == o.shape && b.Size() == 1) {
      const A vb = static_cast<A>(pb[0]);
      ParallelFor(n, kElemwiseGrain, [&](int64_t s, int64_t e) {
        AssignRange(po, r, s, e, [=](int64_t i) {
          return F::Map(static_cast<A>(pa[i]), vb);
        });
      });
    } else {
      const std::vector<int64_t> sa = BroadcastStrides(a.shape, o.shape);
      const std::vector<int64_t> sb = BroadcastStrides(b.shape, o.shape);
      ParallelFor(n, kElemwiseGrain / 4, [&](int64_t s, int64_t e) {
        for (int64_t i = s; i < e; ++i) {
          const A va = static_cast<A>(pa[BroadcastOffset(i, o.shape, sa)]);
          const A vb = static_cast<A>(pb[BroadcastOffset(i, o.shape, sb)]);
          Assign(po + i, r, F::Map(va, vb));
        }
      });
    }
  });
}

template <typename F>
void BinaryType(const NodeAttrs& attrs, std::vector<DType>* in,
                std::vector<DType>* out) {
  constexpr bool kCompare = std::is_same_v<OutT<F, float>, bool>;
  AssignType(attrs, in, 0, (*in)[1], false);
  AssignType(attrs, in, 1, (*in)[0], false);
  if ((*in)[0] == DType::kUnknown) {
    if (!kCompare) {
      AssignType(attrs, in, 0, (*out)[0], false);
      AssignType(attrs, in, 1, (*out)[0], false);
    }
    return;
  }
  if (!kCompare) RequireNumeric(attrs, (*in)[0]);
  AssignType(attrs, out, 0, kCompare ? DType::kBool : (*in)[0], true);
}

template <typename F>
Op& RegisterBinaryOp(const std::string& name,
                     const std::vector<std::string>& aliases,
                     const std::string& doc, FInferShape infer_shape) {
  constexpr bool kCompare = std::is_same_v<OutT<F, float>, bool>;
  Op& op = OpRegistry::Get()
               ->Register(name)
               .Describe(doc)
               .SetNumInputs(2)
               .SetInputNames({"lhs", "rhs"})
               .SetInferShape(std::move(infer_shape))
               .SetInferType(BinaryType<F>)
               .SetCompute(Context::kCPU, BinaryCompute<F>);
  if (!kCompare) {
    op.SetInplaceOption([](const NodeAttrs&) {
      return std::vector<std::pair<int, int>>{{0, 0}, {1, 0}};
    });
  }
  for (const std::string& alias : aliases) op.AddAlias(alias);
  return op;
}

// broadcast_<x>: NumPy broadcasting.
template <typename F>
void RegisterBinary(const std::string& name,
                    const std::vector<std::string>& aliases,
                    const std::string& doc) {
  RegisterBinaryOp<F>(name, aliases, doc, BinaryShape);
}

// elemwise_<x>: both inputs and the output have one shape, which lets shape
// inference run backwards (as MXNet's elemwise ops do).
template <typename F>
void RegisterElemwise(const std::string& name,
                      const std::vector<std::string>& aliases,
                      const std::string& doc) {
  RegisterBinaryOp<F>(name, aliases, doc, SameShape);
}

// ---- Scalar forms. ----

// out = F(in, scalar), or F(scalar, in) when kReverse, in in's dtype (the
// scalar saturated to it).
template <typename F, bool kReverse>
void ScalarKernel(double scalar, const TBlob& in, OpReqType req,
                  const TBlob& out) {
  MX_DTYPE_SWITCH(in.dtype, T, {
    using A = AccType<T>;
    using O = OutT<F, T>;
    const A s = SaturatingCast<A>(scalar);
    const T* x = in.data<T>();
    O* y = out.data<O>();
    ParallelFor(in.Size(), kElemwiseGrain, [&](int64_t b, int64_t e) {
      AssignRange(y, req, b, e, [=](int64_t i) {
        const A v = static_cast<A>(x[i]);
        return kReverse ? F::Map(s, v) : F::Map(v, s);
      });
    });
  });
}

template <typename F, bool kReverse>
void ScalarCompute(const OpContext&, const NodeAttrs& attrs,
                   const std::vector<TBlob>& in,
                   const std::vector<OpReqType>& req,
                   const std::vector<TBlob>& out) {
  ScalarKernel<F, kReverse>(attrs.get<ScalarParam>().scalar, in[0], req[0],
                            out[0]);
}

template <typename F, bool kReverse = false>
void RegisterScalar(const std::string& name,
                    const std::vector<std::string>& aliases,
                    const std::string& doc) {
  constexpr bool kCompare = std::is_same_v<OutT<F, float>, bool>;
  Op& op =
      OpRegistry::Get()
          ->Register(name)
          .Describe(doc)
          .SetNumInputs(1)
          .SetInputNames({"data"})
          .SetParams<ScalarParam>()
          .SetInferShape(SameShape)
          .SetInferType([](const NodeAttrs& attrs, std::vector<DType>* in,
                           std::vector<DType>* out) {
            if ((*in)[0] == DType::kUnknown) {
              if (!kCompare) AssignType(attrs, in, 0, (*out)[0], false);
              return;
            }
            if (!kCompare) RequireNumeric(attrs, (*in)[0]);
            AssignType(attrs, out, 0, kCompare ? DType::kBool : (*in)[0], true);
          })
          .SetCompute(Context::kCPU, ScalarCompute<F, kReverse>);
  if (!kCompare) op.SetInplaceOption(InplaceFirst);
  for (const std::string& alias : aliases) op.AddAlias(alias);
}

}  // namespace cpu
}  // namespace mx

#endif  // MXCORE_BACKENDS_CPU_ELEMWISE_BINARY_H_
