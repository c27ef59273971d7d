// BlockGrad (alias stop_gradient): the identity forward whose gradient is
// zero, so backward stops there (MXNet's way of freezing a branch).
#include <cstring>
#include <vector>

#include "backends/cpu/grad_util.h"
#include "backends/cpu/kernel_util.h"

namespace mx {
namespace cpu {
namespace {

void IdentityCompute(const OpContext&, const NodeAttrs&,
                     const std::vector<TBlob>& in,
                     const std::vector<OpReqType>& req,
                     const std::vector<TBlob>& out) {
  if (req[0] == OpReqType::kNullOp) return;
  MX_DTYPE_SWITCH(in[0].dtype, T, {
    const T* x = in[0].data<T>();
    T* y = out[0].data<T>();
    if (req[0] == OpReqType::kAddTo) {
      const int64_t n = in[0].Size();
      for (int64_t i = 0; i < n; ++i) Assign(y + i, req[0], x[i]);
    } else if (x != y) {
      std::memcpy(y, x, sizeof(T) * in[0].Size());
    }
  });
}

MX_REGISTER_OP(BlockGrad)
    .Describe("The identity; its gradient is zero (stops backward).")
    .SetNumInputs(1)
    .SetInputNames({"data"})
    .SetInferShape(SameShape)
    .SetInferType(SameType)
    .SetInplaceOption([](const NodeAttrs&) {
      return std::vector<std::pair<int, int>>{{0, 0}};
    })
    .SetCompute(Context::kCPU, IdentityCompute)
    .AddAlias("stop_gradient");

[[maybe_unused]] const bool kGradientRegistered = [] {
  SetGradient("BlockGrad", [](GradBuilder& b, const std::vector<NodeEntry>&) {
    return std::vector<NodeEntry>{b.Op("zeros_like", {b.x()})};
  });
  return true;
}();

}  // namespace
}  // namespace cpu
}  // namespace mx
