// twice.cc. BUILD: cc_binary(name = "libtwice.so", srcs = ["twice.cc"],
//   linkshared = 1, deps = ["//backends/plugin_api:cpp_api"])
#include "backends/plugin_api/mx_plugin_cpp.h"

namespace {

using namespace mxplugin;

// y = factor * x (float32); honours the write request.
void Twice(const KernelContext& ctx, const Attrs& attrs, Tensors in,
           const int32_t* req, Tensors out) {
  if (in[0].dtype() != MX_DTYPE_FLOAT32) {
    throw Error(MX_STATUS_DTYPE_ERROR, "twice takes float32");
  }
  const float f = static_cast<float>(attrs.GetFloat("factor", 2));
  const float* x = in[0].data<float>();
  float* y = out[0].data<float>();
  if (req[0] == MX_REQ_NULL) return;
  const bool add = req[0] == MX_REQ_ADD;
  ctx.ParallelFor(in[0].size(), 4096, [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i) y[i] = (add ? y[i] : 0) + f * x[i];
  });
}

void Negate(const KernelContext&, const Attrs&, Tensors in,
            const int32_t* req, Tensors out) {
  if (in[0].dtype() != MX_DTYPE_FLOAT32) {  // The built-in kernel runs.
    throw Error(MX_STATUS_NOT_IMPLEMENTED, "negative: float32 only here");
  }
  const float* x = in[0].data<float>();
  float* y = out[0].data<float>();
  for (int64_t i = 0; req[0] != MX_REQ_NULL && i < in[0].size(); ++i) {
    y[i] = (req[0] == MX_REQ_ADD ? y[i] : 0) - x[i];
  }
}

}  // namespace

MX_PLUGIN("twice", [](Plugin& p) {
  p.RegisterOp(OpDef("twice")
                   .Describe("factor * x")
                   .Inputs({"data"})
                   .Attr("factor", MX_ATTR_FLOAT, "2")
                   .InferShape(SameShape)
                   .Kernel(MX_DEVICE_CPU, Twice)
                   .Gradient("twice", 0));  // d/dx: factor * grad
  p.RegisterKernel("negative", MX_DEVICE_CPU, Negate);
})
