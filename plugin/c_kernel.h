// Internal to the plugin host: a plugin's compute function (MxComputeFn)
// as an mxcore kernel, shared by kernels for existing ops (c_kernel.cc)
// and ops defined through the C ABI (c_op.cc).
#ifndef MXCORE_PLUGIN_C_KERNEL_H_
#define MXCORE_PLUGIN_C_KERNEL_H_

#include <cstdint>
#include <memory>
#include <string>

#include "backends/plugin_api/mx_plugin.h"
#include "graph/node.h"
#include "graph/op.h"

namespace mx {
namespace plugin {

// Op attribute marking ops defined through the C ABI, whose nodes hold the
// plugin's parsed attributes; read once per kernel, not per call.
inline constexpr char kCOpAttr[] = "FPluginCOp";

// What a plugin callback gets as `attrs` for a node of a C op (c_op.cc).
const void* ParsedOf(const NodeAttrs& attrs);

// "<who>: op <name> \"<node>\"" for errors of a kernel call.
std::string KernelLabel(const std::string& who, const NodeAttrs& attrs);

// Throws InvalidArgument (naming `label`) unless kernels run on dev_type.
void CheckDevType(int32_t dev_type, const std::string& label);

// `fn` as a kernel. `c_op`: the node is a C op's (attributes as its
// plugin parsed them), else a built-in op's (attribute strings).
// `fallback`: the kernel this one replaced, run when the plugin declines a
// call with MX_STATUS_NOT_IMPLEMENTED (a dtype it does not handle).
FCompute WrapCompute(MxComputeFn fn, void* user_data, std::string who,
                     bool c_op,
                     std::shared_ptr<const Op::DeviceKernels> fallback = {});

// A kernel for an existing dynamic-shape op (boolean_mask, ...): outputs
// reach the plugin unallocated (data null, ndim -1) and it allocates each
// through alloc_output. A decline (MX_STATUS_NOT_IMPLEMENTED) before any
// allocation runs the kernel this one replaced.
FComputeDynamic WrapComputeDynamic(
    MxComputeFn fn, void* user_data, std::string who,
    std::shared_ptr<const Op::DeviceKernels> fallback);

}  // namespace plugin
}  // namespace mx

#endif  // MXCORE_PLUGIN_C_KERNEL_H_
