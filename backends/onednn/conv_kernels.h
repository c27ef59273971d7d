// oneDNN convolution kernels for Convolution and _backward_Convolution
// (1-, 2- and 3-D, groups, stride, dilation, symmetric padding, bias) on
// plain NCW / NCHW / NCDHW float32 arrays.
#ifndef MXCORE_BACKENDS_ONEDNN_CONV_KERNELS_H_
#define MXCORE_BACKENDS_ONEDNN_CONV_KERNELS_H_

#include "backends/plugin_api/mx_plugin_cpp.h"

namespace mx_onednn {

void RegisterConvKernels(mxplugin::Plugin& plugin);

}  // namespace mx_onednn

#endif  // MXCORE_BACKENDS_ONEDNN_CONV_KERNELS_H_
