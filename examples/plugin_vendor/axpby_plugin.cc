// A vendor's op, `vendor_axpby`: y = alpha * a + beta * b (float32, equal
// shapes), registered through mxcore's C plugin ABI.
#include "backends/plugin_api/mx_plugin_cpp.h"

namespace {

using namespace mxplugin;  // NOLINT: an example

void Axpby(const KernelContext& ctx, const Attrs& attrs, Tensors in,
           const int32_t* req, Tensors out) {
  if (in[0].dtype() != MX_DTYPE_FLOAT32 || in[1].dtype() != MX_DTYPE_FLOAT32) {
    throw Error(MX_STATUS_DTYPE_ERROR, "vendor_axpby takes float32");
  }
  if (req[0] == MX_REQ_NULL) return;
  const float alpha = static_cast<float>(attrs.GetFloat("alpha", 1));
  const float beta = static_cast<float>(attrs.GetFloat("beta", 1));
  const float* a = in[0].data<float>();
  const float* b = in[1].data<float>();
  float* y = out[0].data<float>();
  const bool add = req[0] == MX_REQ_ADD;
  ctx.ParallelFor(out[0].size(), 4096, [&](int64_t lo, int64_t hi) {
    for (int64_t i = lo; i < hi; ++i) {
      y[i] = (add ? y[i] : 0) + alpha * a[i] + beta * b[i];
    }
  });
}

}  // namespace

MX_PLUGIN("vendor_axpby", [](Plugin& p) {
  p.RegisterOp(OpDef("vendor_axpby")
                   .Describe("alpha * a + beta * b")
                   .Inputs({"a", "b"})
                   .Attr("alpha", MX_ATTR_FLOAT, "1")
                   .Attr("beta", MX_ATTR_FLOAT, "1")
                   .InferShape(SameShape)
                   .Kernel(MX_DEVICE_CPU, Axpby));
})
