// shape_array: data's shape as a 1-D int64 array (MXNet's shape_array);
// the gradient to data is zero.
#include <vector>

#include "backends/cpu/grad_util.h"
#include "backends/cpu/kernel_util.h"

namespace mx {
namespace cpu {
namespace {

MX_REGISTER_OP(shape_array)
    .Describe("The shape of data as a 1-D int64 array.")
    .SetNumInputs(1)
    .SetInputNames({"data"})
    .SetInferShape([](const NodeAttrs& attrs, std::vector<TShape>* in,
                      std::vector<TShape>* out) {
      if ((*in)[0].ndim_known()) {
        AssignShape(attrs, out, 0, TShape{(*in)[0].ndim()}, true);
      }
    })
    .SetInferType([](const NodeAttrs& attrs, std::vector<DType>*,
                     std::vector<DType>* out) {
      AssignType(attrs, out, 0, DType::kInt64, true);
    })
    .SetCompute(Context::kCPU, [](const OpContext&, const NodeAttrs&,
                                  const std::vector<TBlob>& in,
                                  const std::vector<OpReqType>& req,
                                  const std::vector<TBlob>& out) {
      int64_t* y = out[0].data<int64_t>();
      for (int d = 0; d < in[0].shape.ndim(); ++d) {
        Assign(y + d, req[0], in[0].shape[d]);
      }
    });

[[maybe_unused]] const bool kGradientRegistered = [] {
  SetGradient("shape_array", [](GradBuilder& b, const std::vector<NodeEntry>&) {
    return std::vector<NodeEntry>{b.Op("zeros_like", {b.x()})};
  });
  return true;
}();

}  // namespace
}  // namespace cpu
}  // namespace mx
