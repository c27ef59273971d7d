// np.einsum (MXNet 2's _npi_einsum: num_args, subscripts, optimize) and
// its gradient _backward_npi_einsum, over backends/common/einsum.h. A
// contraction of two float factors (a two-operand einsum, or one of its
// gradients) big enough to gain runs as batched matrix products
// (einsum_gemm.h, as MXNet 2's optimize=1); everything else sums each
// element's free labels directly, as MXNet 2's optimize=0 (optimize itself
// is accepted and ignored), floats in double, integers in 64 bits wrapping
// to the dtype. Data of any numeric dtype, all operands of one (MXNet 2
// does not promote). Gradients for float dtypes.
#include <string>
#include <type_traits>
#include <vector>

#include "absl/strings/str_cat.h"
#include "backends/common/einsum.h"
#include "backends/cpu/einsum_gemm.h"
#include "backends/cpu/grad_util.h"
#include "backends/cpu/kernel_util.h"
#include "base/error.h"

namespace mx {
namespace cpu {
namespace {

struct EinsumParam {
  int num_args = 0;
  std::string subscripts;
  int optimize = 0;
  static void Declare(ParamSchema<EinsumParam>* s) {
    s->Field("num_args", &EinsumParam::num_args)
        .Required()
        .AtMost(mx_math::kMaxEinsumFactors)
        .Describe("number of operands");
    s->Field("subscripts", &EinsumParam::subscripts)
        .Describe("NumPy's subscripts, e.g. 'ij,jk->ik'");
    s->Field("optimize", &EinsumParam::optimize)
        .Describe("MXNet 2's contraction-order switch (ignored)");
  }
};

int NumOperands(const NodeAttrs& a) {
  return std::max(0, a.get<EinsumParam>().num_args);
}

// The shapes of the operands, which start at input `first` (1 in the
// gradient, after out_grad), as the plan takes them.
std::vector<std::vector<int64_t>> ShapesOf(const std::vector<TShape>& s,
                                           size_t first) {
  std::vector<std::vector<int64_t>> out;
  for (size_t i = first; i < s.size(); ++i) {
    out.emplace_back(s[i].begin(), s[i].end());
  }
  return out;
}
std::vector<std::vector<int64_t>> ShapesOf(const std::vector<TBlob>& in,
                                           size_t first) {
  std::vector<TShape> s;
  for (const TBlob& b : in) s.push_back(b.shape);
  return ShapesOf(s, first);
}

mx_math::EinsumPlan PlanOf(const NodeAttrs& attrs,
                           const std::vector<std::vector<int64_t>>& shapes) {
  mx_math::EinsumPlan plan;
  const std::string& subscripts = attrs.get<EinsumParam>().subscripts;
  const std::string why = mx_math::EinsumPlanOf(subscripts, shapes, &plan);
  if (!why.empty()) {
    throw ShapeError(
        absl::StrCat(OpLabel(attrs), ": subscripts '", subscripts, "': ", why));
  }
  return plan;
}

void EinsumShape(const NodeAttrs& attrs, std::vector<TShape>* in,
                 std::vector<TShape>* out) {
  if (NumOperands(attrs) < 1) {
    throw InvalidArgument(
        absl::StrCat(OpLabel(attrs), ": num_args must be at least 1"));
  }
  for (const TShape& s : *in) {
    if (!s.is_known()) return;
  }
  AssignShape(attrs, out, 0,
              TShape(PlanOf(attrs, ShapesOf(*in, 0)).output_shape), true);
}

// Writes every element of `target` as contraction c says, from `factors`
// (blobs of T): as matrix products where einsum_gemm.h takes c, else
// element by element.
template <typename T>
void Contract(const mx_math::EinsumContraction& c,
              const std::vector<const TBlob*>& blobs, OpReqType req, T* target,
              int64_t n) {
  if constexpr (std::is_floating_point_v<AccType<T>>) {
    if (blobs.size() == 2 &&
        ContractByGemm(c, blobs[0]->data<T>(), blobs[0]->Size(),
                       blobs[1]->data<T>(), blobs[1]->Size(), req, target)) {
      return;
    }
  }
  std::vector<const T*> factors;
  for (const TBlob* b : blobs) factors.push_back(b->data<T>());
  using A = std::conditional_t<std::is_integral_v<T>, uint64_t, double>;
  const auto load = [&](int f, int64_t at) -> A {
    if constexpr (std::is_integral_v<T>) {
      return static_cast<A>(static_cast<int64_t>(factors[f][at]));
    } else {
      return static_cast<A>(static_cast<AccType<T>>(factors[f][at]));
    }
  };
  ParallelFor(n, 64, [&](int64_t s, int64_t e) {
    for (int64_t i = s; i < e; ++i) {
      const A v = mx_math::ContractElement<A>(c, i, load);
      if constexpr (std::is_integral_v<T>) {
        Assign(target + i, req, static_cast<T>(static_cast<int64_t>(v)));
      } else {
        Assign(target + i, req, static_cast<AccType<T>>(v));
      }
    }
  });
}

void EinsumCompute(const OpContext&, const NodeAttrs& attrs,
                   const std::vector<TBlob>& in,
                   const std::vector<OpReqType>& req,
                   const std::vector<TBlob>& out) {
  if (req[0] == OpReqType::kNullOp || out[0].Size() == 0) return;
  const auto shapes = ShapesOf(in, 0);
  const auto plan = PlanOf(attrs, shapes);
  const auto c = mx_math::ForwardContraction(plan, shapes);
  std::vector<const TBlob*> factors;
  for (const TBlob& b : in) factors.push_back(&b);
  MX_DTYPE_SWITCH(out[0].dtype, T, {
    Contract<T>(c, factors, req[0], out[0].data<T>(), out[0].Size());
  });
}

// (out_grad, operands...) -> a gradient per operand.
void EinsumBackwardCompute(const OpContext&, const NodeAttrs& attrs,
                           const std::vector<TBlob>& in,
                           const std::vector<OpReqType>& req,
                           const std::vector<TBlob>& out) {
  const auto shapes = ShapesOf(in, 1);
  const auto plan = PlanOf(attrs, shapes);
  MX_FLOAT_DTYPE_SWITCH(in[0].dtype, T, {
    for (size_t k = 0; k < out.size(); ++k) {
      if (req[k] == OpReqType::kNullOp || out[k].Size() == 0) continue;
      std::vector<const TBlob*> factors{&in[0]};
      for (size_t j = 1; j < in.size(); ++j) {
        if (j - 1 != k) factors.push_back(&in[j]);
      }
      Contract<T>(
          mx_math::GradientContraction(plan, shapes, static_cast<int>(k)),
          factors, req[k], out[k].data<T>(), out[k].Size());
    }
  });
}

void OperandsShareType(const NodeAttrs& attrs, std::vector<DType>* in,
                       std::vector<DType>* out) {
  SameType(attrs, in, out);
  if ((*out)[0] != DType::kUnknown) RequireNumeric(attrs, (*out)[0]);
}

MX_REGISTER_OP(_npi_einsum)
    .Describe(
        "np.einsum: products of the operands summed over the labels the "
        "output lacks (NumPy's subscripts: diagonals, '...', implicit "
        "output).")
    .SetParams<EinsumParam>()
    .SetNumInputs(NumOperands)
    .SetKeyVarNumArgs("num_args")
    .SetInputNames([](const NodeAttrs& a) {
      std::vector<std::string> names;
      for (int i = 0; i < NumOperands(a); ++i) {
        names.push_back(absl::StrCat("operand", i));
      }
      return names;
    })
    .SetInferShape(EinsumShape)
    .SetInferType(OperandsShareType)
    .SetCompute(Context::kCPU, EinsumCompute);

MX_REGISTER_OP(_backward_npi_einsum)
    .Describe("Gradients of _npi_einsum: (out_grad, operands...) -> grads.")
    .SetParams<EinsumParam>()
    .SetNumInputs([](const NodeAttrs& a) { return NumOperands(a) + 1; })
    .SetNumOutputs(NumOperands)
    .SetInputNames([](const NodeAttrs& a) {
      std::vector<std::string> names{"out_grad"};
      for (int i = 0; i < NumOperands(a); ++i) {
        names.push_back(absl::StrCat("operand", i));
      }
      return names;
    })
    .SetInferShape([](const NodeAttrs& attrs, std::vector<TShape>* in,
                      std::vector<TShape>* out) {
      for (size_t k = 0; k < out->size(); ++k) {
        AssignShape(attrs, out, static_cast<int>(k), (*in)[k + 1], true);
        AssignShape(attrs, in, static_cast<int>(k + 1), (*out)[k], false);
      }
    })
    .SetInferType(SameFloatType)
    .SetCompute(Context::kCPU, EinsumBackwardCompute);

[[maybe_unused]] const bool kGradientRegistered = [] {
  SetGradient(
      "_npi_einsum", [](GradBuilder& b, const std::vector<NodeEntry>& g) {
        std::vector<NodeEntry> in{g[0]};
        for (const NodeEntry& x : b.n->inputs) in.push_back(x);
        const NodeEntry all = b.Op("_backward_npi_einsum", in, b.n->attrs.dict);
        std::vector<NodeEntry> grads;
        for (size_t k = 0; k < b.n->inputs.size(); ++k) {
          grads.push_back(NodeEntry{all.node, static_cast<uint32_t>(k), 0});
        }
        return grads;
      });
  return true;
}();

}  // namespace
}  // namespace cpu
}  // namespace mx
