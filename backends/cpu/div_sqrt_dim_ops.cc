// _contrib_div_sqrt_dim: x / sqrt(x.shape[-1]), the attention-score scale
// of MXNet's transformer models. Linear, so it is its own gradient.
#include <cmath>
#include <vector>

#include "absl/strings/str_cat.h"
#include "backends/cpu/grad_util.h"
#include "backends/cpu/kernel_util.h"
#include "base/error.h"

namespace mx {
namespace cpu {
namespace {

void DivSqrtDimCompute(const OpContext&, const NodeAttrs&,
                       const std::vector<TBlob>& in,
                       const std::vector<OpReqType>& req,
                       const std::vector<TBlob>& out) {
  if (req[0] == OpReqType::kNullOp) return;
  const TShape& s = in[0].shape;
  const double scale = 1.0 / std::sqrt(static_cast<double>(s[s.ndim() - 1]));
  MX_FLOAT_DTYPE_SWITCH(in[0].dtype, T, {
    using A = AccType<T>;
    const T* x = in[0].data<T>();
    T* y = out[0].data<T>();
    const int64_t n = in[0].Size();
    for (int64_t i = 0; i < n; ++i) {
      Assign(y + i, req[0], static_cast<A>(x[i]) * static_cast<A>(scale));
    }
  });
}

MX_REGISTER_OP(_contrib_div_sqrt_dim)
    .Describe("x / sqrt(size of x's last axis).")
    .SetNumInputs(1)
    .SetInputNames({"data"})
    .SetInferShape([](const NodeAttrs& attrs, std::vector<TShape>* in,
                      std::vector<TShape>* out) {
      SameShape(attrs, in, out);
      const TShape& d = (*in)[0];
      if (d.ndim_known() && d.ndim() == 0) {
        throw ShapeError(absl::StrCat(OpLabel(attrs),
                                      ": input 0 (data) has shape ()"
                                      " but at least one axis is required"));
      }
    })
    .SetInferType([](const NodeAttrs& attrs, std::vector<DType>* in,
                     std::vector<DType>* out) {
      SameType(attrs, in, out);
      if ((*in)[0] != DType::kUnknown) RequireFloat(attrs, (*in)[0]);
    })
    .SetInplaceOption([](const NodeAttrs&) {
      return std::vector<std::pair<int, int>>{{0, 0}};
    })
    .SetCompute(Context::kCPU, DivSqrtDimCompute);

[[maybe_unused]] const bool kGradientRegistered = [] {
  SetUnaryGrad("_contrib_div_sqrt_dim", [](GradBuilder& b, const NodeEntry& g) {
    return b.Op("_contrib_div_sqrt_dim", {g});
  });
  return true;
}();

}  // namespace
}  // namespace cpu
}  // namespace mx
