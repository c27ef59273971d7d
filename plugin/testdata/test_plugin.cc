// The plugin the loader tests use, written with the C++ layer:
//   - op _test_plugin_scale (y = scale * x, attr "scale" default 2) with a
//     gradient op _test_plugin_scale_backward, and a stateful op
//     _test_plugin_offset (y = x + offset, state made once per node);
//   - ops whose shape inference or kernel fail, for error reporting;
//   - a kernel for the existing op "negative" that counts its calls and
//     keeps the thread count of the last (MxKernelContext.num_threads);
//   - a kernel for the dynamic-shape op "flatnonzero" (float32 and int32;
//     others declined to the built-in one), which allocates its output
//     through the ABI's alloc_output once it has counted;
//   - a thread runtime (chunks run one after another on the caller) that
//     counts its loops;
//   - backend "test_plugin" claiming chains of _test_plugin_scale into one
//     _default_subgraph_op.
#include <atomic>
#include <cstdint>
#include <vector>

#include "backends/plugin_api/mx_plugin_cpp.h"

namespace {

using mxplugin::Attrs;
using mxplugin::KernelContext;
using mxplugin::Tensors;

std::atomic<int> negative_calls{0};
std::atomic<int> negative_threads{0};
std::atomic<int> runtime_loops{0};

void RunChunks(void*, int64_t chunks, MxParallelBody body, void* arg) {
  ++runtime_loops;
  for (int64_t c = 0; c < chunks; ++c) body(arg, c, c + 1);
}
std::atomic<int> flatnonzero_calls{0};

template <typename T>
void FlatNonzero(const KernelContext& ctx, const mxplugin::Tensor& x) {
  const T* p = x.data<T>();
  std::vector<int64_t> idx;
  for (int64_t i = 0; i < x.size(); ++i) {
    if (p[i] != T(0)) idx.push_back(i);
  }
  const mxplugin::Tensor y =
      ctx.AllocOutput(0, {static_cast<int64_t>(idx.size())});
  for (size_t k = 0; k < idx.size(); ++k) y.data<int64_t>()[k] = idx[k];
}
std::atomic<int> states_created{0};

void RequireFloat32(const mxplugin::Tensor& t) {
  if (t.dtype() != MX_DTYPE_FLOAT32) {
    throw mxplugin::Error(MX_STATUS_DTYPE_ERROR,
                          "test_plugin: this kernel takes float32 only");
  }
}

template <typename T>
void Scale(const KernelContext& ctx, T s, const T* x, int32_t req, T* y,
           int64_t n) {
  const bool add = req == MX_REQ_ADD;
  ctx.ParallelFor(n, 1024, [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i) y[i] = (add ? y[i] : 0) + s * x[i];
  });
}

// float32 and float64; other dtypes are a DTypeError.
void ScaleKernel(const KernelContext& ctx, const Attrs& attrs, Tensors in,
                 const int32_t* req, Tensors out) {
  if (req[0] == MX_REQ_NULL) return;
  const double s = attrs.GetFloat("scale", 2);
  if (in[0].dtype() == MX_DTYPE_FLOAT64 && out[0].dtype() == MX_DTYPE_FLOAT64) {
    Scale<double>(ctx, s, in[0].data<double>(), req[0], out[0].data<double>(),
                  in[0].size());
    return;
  }
  RequireFloat32(in[0]);
  RequireFloat32(out[0]);
  Scale<float>(ctx, static_cast<float>(s), in[0].data<float>(), req[0],
               out[0].data<float>(), in[0].size());
}

class ScaleProperty : public mxplugin::Property {
 public:
  std::string name() const override { return "test_plugin"; }
  std::unique_ptr<mxplugin::Selector> CreateSelector() override {
    return std::make_unique<mxplugin::PredicateSelector>(
        [](const mxplugin::NodeView& n) {
          return n.op() == "_test_plugin_scale";
        });
  }
  mxplugin::SubgraphNode CreateNode(const MxGraphView&, int) override {
    mxplugin::SubgraphNode node;
    node.op = "_default_subgraph_op";
    node.attach_subgraph = true;
    return node;
  }
};

void Register(mxplugin::Plugin& p) {
  p.RegisterOp(mxplugin::OpDef("_test_plugin_scale")
                   .Describe("scale * x (test plugin)")
                   .Inputs({"data"})
                   .Attr("scale", MX_ATTR_FLOAT, "2", "the factor")
                   .InferShape(mxplugin::SameShape)
                   .Kernel(MX_DEVICE_CPU, ScaleKernel)
                   .Inplace(0, 0)
                   .Gradient("_test_plugin_scale_backward", 0));
  // d(scale * x)/dx * g = scale * g: the same computation on the gradient.
  p.RegisterOp(mxplugin::OpDef("_test_plugin_scale_backward")
                   .Inputs({"out_grad"})
                   .Attr("scale", MX_ATTR_FLOAT, "2")
                   .InferShape(mxplugin::SameShape)
                   .Kernel(MX_DEVICE_CPU, ScaleKernel)
                   .Gradient("_test_plugin_scale_backward", 0));
  p.RegisterOp(mxplugin::OpDef("_test_plugin_offset")
                   .Inputs({"data"})
                   .Attr("offset", MX_ATTR_FLOAT, std::nullopt, "required")
                   .InferShape(mxplugin::SameShape)
                   .Resources(MX_RESOURCE_TEMP_SPACE)
                   .Stateful(
                       MX_DEVICE_CPU,
                       [](const Attrs& attrs, int, int,
                          const std::vector<mxplugin::Shape>& shapes,
                          const std::vector<int>&) -> std::shared_ptr<void> {
                         ++states_created;
                         (void)shapes;
                         return std::make_shared<float>(
                             static_cast<float>(attrs.GetFloat("offset", 0)));
                       },
                       [](void* state, const KernelContext& ctx, Tensors in,
                          const int32_t*, Tensors out) {
                         RequireFloat32(in[0]);
                         const float off = *static_cast<float*>(state);
                         const int64_t n = in[0].size();
                         // Goes through temp space to prove the request works.
                         float* tmp = static_cast<float*>(
                             ctx.TempSpace(n * sizeof(float)));
                         for (int64_t i = 0; i < n; ++i) {
                           tmp[i] = in[0].data<float>()[i] + off;
                         }
                         for (int64_t i = 0; i < n; ++i)
                           out[0].data<float>()[i] = tmp[i];
                       }));
  p.RegisterOp(mxplugin::OpDef("_test_plugin_bad_shape")
                   .Inputs({"data"})
                   .InferShape([](const Attrs&, mxplugin::ShapeSlots&,
                                  mxplugin::ShapeSlots&) {
                     throw mxplugin::Error(MX_STATUS_SHAPE_ERROR,
                                           "the test op refuses every shape");
                   })
                   .Kernel(MX_DEVICE_CPU, ScaleKernel));
  p.RegisterOp(mxplugin::OpDef("_test_plugin_bad_kernel")
                   .Inputs({"data"})
                   .InferShape(mxplugin::SameShape)
                   .Kernel(MX_DEVICE_CPU, [](const KernelContext&, const Attrs&,
                                             Tensors, const int32_t*, Tensors) {
                     throw mxplugin::Error(MX_STATUS_RUNTIME_ERROR,
                                           "the kernel failed on "
                                           "purpose");
                   }));
  p.RegisterKernel("negative", MX_DEVICE_CPU,
                   [](const KernelContext& ctx, const Attrs&, Tensors in,
                      const int32_t* req, Tensors out) {
                     ++negative_calls;
                     negative_threads = ctx.num_threads();
                     if (req[0] == MX_REQ_NULL) return;
                     RequireFloat32(in[0]);
                     RequireFloat32(out[0]);
                     const float* x = in[0].data<float>();
                     float* y = out[0].data<float>();
                     const bool add = req[0] == MX_REQ_ADD;
                     for (int64_t i = 0; i < in[0].size(); ++i) {
                       y[i] = (add ? y[i] : 0) - x[i];
                     }
                   });
  p.RegisterKernel("flatnonzero", MX_DEVICE_CPU,
                   [](const KernelContext& ctx, const Attrs&, Tensors in,
                      const int32_t*, Tensors) {
                     ++flatnonzero_calls;
                     if (in[0].dtype() == MX_DTYPE_FLOAT32) {
                       FlatNonzero<float>(ctx, in[0]);
                     } else if (in[0].dtype() == MX_DTYPE_INT32) {
                       FlatNonzero<int32_t>(ctx, in[0]);
                     } else {
                       throw mxplugin::Error(MX_STATUS_NOT_IMPLEMENTED,
                                             "float32 and int32 only");
                     }
                   });
  p.RegisterSubgraphProperty("test_plugin", std::make_shared<ScaleProperty>());
  p.OfferThreadRuntime(RunChunks);
}

}  // namespace

MX_PLUGIN("test_plugin", Register)

// For tests: how often the plugin's kernels ran.
extern "C" __attribute__((visibility("default"))) int
mx_test_plugin_negative_calls() {
  return negative_calls.load();
}
extern "C" __attribute__((visibility("default"))) int
mx_test_plugin_runtime_loops() {
  return runtime_loops.load();
}
extern "C" __attribute__((visibility("default"))) int
mx_test_plugin_negative_threads() {
  return negative_threads.load();
}
extern "C" __attribute__((visibility("default"))) int
mx_test_plugin_flatnonzero_calls() {
  return flatnonzero_calls.load();
}
extern "C" __attribute__((visibility("default"))) int
mx_test_plugin_states_created() {
  return states_created.load();
}
