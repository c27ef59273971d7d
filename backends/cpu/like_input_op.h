// Ops whose optional second input lends only its shape (Crop's crop_like,
// _contrib_BilinearResize2D's like), and their gradients
// (ograd, data[, like]) -> (data_grad[, zeros for like]): the shape and
// dtype functions, the input names and the gradient pair, written once.
//
//   RegisterLikeInputOp(op, backward, ShapeOf, "crop_like", {"num_args", "2"},
//                       /*float_only=*/false, compute, backward_compute)
//     .SetParams<CropParam>() ... (the caller finishes both ops' setup).
#ifndef MXCORE_BACKENDS_CPU_LIKE_INPUT_OP_H_
#define MXCORE_BACKENDS_CPU_LIKE_INPUT_OP_H_

#include <algorithm>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "backends/cpu/grad_util.h"
#include "backends/cpu/kernel_util.h"

namespace mx {
namespace cpu {

// The output shape for data (and like, when the op has it).
using LikeOutShape = std::function<TShape(const NodeAttrs&, const TShape& data,
                                          const TShape* like)>;
// Whether a node of the op has the like input.
using HasLike = std::function<bool(const NodeAttrs&)>;

// Registers `op` (data[, like]) and `backward` (ograd, data[, like]) with
// their input counts, names, shapes and dtypes (data's; float_only: a
// DTypeError for others), the CPU kernels, and the gradients: op's is
// backward's outputs; backward's (linear in ograd) is op applied to the
// head gradient with ograd as its like input, attrs changed by
// `as_like_attrs` (e.g. mode=like). Returns the two ops for their params.
inline std::pair<Op*, Op*> RegisterLikeInputOp(
    const std::string& op, const std::string& backward, HasLike has_like,
    LikeOutShape shape, const std::string& like_name,
    const AttrDict& as_like_attrs, bool float_only, FCompute compute,
    FCompute backward_compute) {
  const auto names = [has_like, like_name](bool grad) {
    return [has_like, like_name, grad](const NodeAttrs& attrs) {
      std::vector<std::string> n;
      if (grad) n.push_back("ograd");
      n.push_back("data");
      if (has_like(attrs)) n.push_back(like_name);
      return n;
    };
  };
  // Inputs from `first` on are (data[, like]).
  const auto out_shape = [shape](const NodeAttrs& attrs,
                                 const std::vector<TShape>& in, size_t first,
                                 TShape* out) {
    const TShape& d = in[first];
    const bool like = in.size() > first + 1;
    if (!d.is_known() || (like && !in[first + 1].is_known())) return false;
    *out = shape(attrs, d, like ? &in[first + 1] : nullptr);
    return true;
  };
  const auto check = [float_only](const NodeAttrs& attrs, DType t) {
    if (float_only && t != DType::kUnknown) RequireFloat(attrs, t);
  };
  const auto count = [has_like](const NodeAttrs& attrs) {
    return has_like(attrs) ? 2 : 1;
  };
  Op& fwd =
      OpRegistry::Get()
          ->Register(op)
          .SetNumInputs(count)
          .SetInputNames(names(false))
          .SetInferShape([out_shape](const NodeAttrs& attrs,
                                     std::vector<TShape>* in,
                                     std::vector<TShape>* out) {
            TShape s;
            if (out_shape(attrs, *in, 0, &s))
              AssignShape(attrs, out, 0, s, true);
          })
          .SetInferType([check](const NodeAttrs& attrs, std::vector<DType>* in,
                                std::vector<DType>* out) {
            AssignType(attrs, out, 0, (*in)[0], true);
            AssignType(attrs, in, 0, (*out)[0], false);
            check(attrs, (*in)[0]);
          })
          .SetCompute(Context::kCPU, compute);
  Op& bwd =
      OpRegistry::Get()
          ->Register(backward)
          .SetNumInputs([count](const NodeAttrs& a) { return count(a) + 1; })
          .SetNumOutputs(count)
          .SetInputNames(names(true))
          .SetInferShape([out_shape](const NodeAttrs& attrs,
                                     std::vector<TShape>* in,
                                     std::vector<TShape>* out) {
            for (size_t k = 1; k < in->size(); ++k) {
              AssignShape(attrs, out, k - 1, (*in)[k], true);
            }
            TShape s;
            if (out_shape(attrs, *in, 1, &s))
              AssignShape(attrs, in, 0, s, false);
          })
          .SetInferType([check](const NodeAttrs& attrs, std::vector<DType>* in,
                                std::vector<DType>* out) {
            for (size_t k = 1; k < in->size(); ++k) {
              AssignType(attrs, out, k - 1, (*in)[k], true);
            }
            AssignType(attrs, in, 0, (*in)[1], false);
            check(attrs, (*in)[1]);
          })
          .SetCompute(Context::kCPU, backward_compute);
  SetGradient(op, [backward](GradBuilder& b, const std::vector<NodeEntry>& g) {
    std::vector<NodeEntry> in{g[0]};
    for (const NodeEntry& x : b.n->inputs) in.push_back(x);
    return OutputsOf(b.Op(backward, in, b.n->attrs.dict), b.n->inputs.size());
  });
  SetGradient(backward, [op, as_like_attrs](GradBuilder& b,
                                            const std::vector<NodeEntry>& g) {
    AttrDict attrs = b.n->attrs.dict;
    for (const auto& [k, v] : as_like_attrs) attrs[k] = v;
    std::vector<NodeEntry> grads{b.Op(op, {g[0], b.x(0)}, attrs)};
    grads.resize(b.n->inputs.size());  // data and like: no gradient.
    return grads;
  });
  return {&fwd, &bwd};
}

// A backward kernel's second output, the gradient of an input that lends
// only its shape or positions (like, crop_like, ROIPooling's rois): zeros,
// written as the request says.
inline void ZeroLikeGradient(const std::vector<OpReqType>& req,
                             const std::vector<TBlob>& out) {
  if (out.size() < 2 || req[1] == OpReqType::kNullOp ||
      req[1] == OpReqType::kAddTo) {
    return;
  }
  MX_DTYPE_SWITCH(out[1].dtype, T, {
    std::fill(out[1].data<T>(), out[1].data<T>() + out[1].Size(), T{});
  });
}

}  // namespace cpu
}  // namespace mx

#endif  // MXCORE_BACKENDS_CPU_LIKE_INPUT_OP_H_
