// GPU kernels for np.einsum (_npi_einsum) and its gradient
// (_backward_npi_einsum): the CPU's plan (backends/common/einsum.h), one
// contraction per target (einsum_kernels.cu).
#include <string>
#include <vector>

#include "backends/common/einsum.h"
#include "backends/cuda/cuda_ops.h"
#include "backends/cuda/cuda_util.h"
#include "backends/cuda/einsum_kernels.h"

namespace mx_cuda {
namespace {

using mxplugin::Attrs;
using mxplugin::Error;
using mxplugin::KernelContext;
using mxplugin::Tensor;
using mxplugin::Tensors;

mx_math::EinsumPlan PlanOf(const std::string& op, const Attrs& attrs,
                           const std::vector<std::vector<int64_t>>& shapes) {
  mx_math::EinsumPlan plan;
  const std::string why =
      mx_math::EinsumPlanOf(attrs.Get("subscripts", ""), shapes, &plan);
  if (!why.empty()) throw Error(MX_STATUS_SHAPE_ERROR, op + ": " + why);
  return plan;
}

void Einsum(const KernelContext& ctx, const Attrs& attrs, Tensors in,
            const int32_t* req, Tensors out) {
  const std::string op = "_npi_einsum";
  RequireNumeric(op, out[0]);
  std::vector<std::vector<int64_t>> shapes;
  std::vector<const void*> factors;
  for (size_t k = 0; k < in.size(); ++k) {
    shapes.push_back(in[k].shape());
    factors.push_back(in[k].data<void>());
  }
  const auto c = mx_math::ForwardContraction(PlanOf(op, attrs, shapes), shapes);
  CheckLaunch(op,
              LaunchEinsumContraction(out[0].dtype(), c, factors.data(),
                                      out[0].data<void>(), out[0].size(),
                                      req[0], StreamOf(ctx)),
              out[0].dtype());
}

// (out_grad, operands...) -> a gradient per operand.
void EinsumBackward(const KernelContext& ctx, const Attrs& attrs, Tensors in,
                    const int32_t* req, Tensors out) {
  const std::string op = "_backward_npi_einsum";
  RequireFloat(op, in[0]);
  std::vector<std::vector<int64_t>> shapes;
  for (size_t k = 1; k < in.size(); ++k) shapes.push_back(in[k].shape());
  const mx_math::EinsumPlan plan = PlanOf(op, attrs, shapes);
  for (size_t k = 0; k < out.size(); ++k) {
    std::vector<const void*> factors{in[0].data<void>()};
    for (size_t j = 1; j < in.size(); ++j) {
      if (j - 1 != k) factors.push_back(in[j].data<void>());
    }
    const auto c =
        mx_math::GradientContraction(plan, shapes, static_cast<int>(k));
    CheckLaunch(op,
                LaunchEinsumContraction(out[k].dtype(), c, factors.data(),
                                        out[k].data<void>(), out[k].size(),
                                        req[k], StreamOf(ctx)),
                out[k].dtype());
  }
}

}  // namespace

void RegisterEinsumOps(mxplugin::Plugin& plugin) {
  RegisterGpuKernel(plugin, "_npi_einsum", Einsum);
  RegisterGpuKernel(plugin, "_backward_npi_einsum", EinsumBackward);
}

}  // namespace mx_cuda
