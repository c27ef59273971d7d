// oneDNN eltwise kernels for Activation (relu, sigmoid, tanh, softrelu)
// and LeakyReLU (leaky) forward. Their backward passes are graphs of
// elementwise ops in mxcore (see ActivationGradient in
// backends/cpu/nn_ops.cc), not kernels a plugin can replace. Other
// act_types run on the built-in kernels: oneDNN's elu computes exp(x) - 1,
// which loses the relative precision expm1 keeps near 0.
#ifndef MXCORE_BACKENDS_ONEDNN_ELTWISE_KERNELS_H_
#define MXCORE_BACKENDS_ONEDNN_ELTWISE_KERNELS_H_

#include "backends/plugin_api/mx_plugin_cpp.h"

namespace mx_onednn {

void RegisterEltwiseKernels(mxplugin::Plugin& plugin);

}  // namespace mx_onednn

#endif  // MXCORE_BACKENDS_ONEDNN_ELTWISE_KERNELS_H_
