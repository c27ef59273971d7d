// oneDNN softmax and logsoftmax kernels for softmax, log_softmax and their
// backward ops (_backward_softmax, _backward_log_softmax: (out_grad,
// output) -> data_grad) on float32 arrays, any axis. A temperature other
// than 1 runs on the built-in kernels.
#ifndef MXCORE_BACKENDS_ONEDNN_SOFTMAX_KERNELS_H_
#define MXCORE_BACKENDS_ONEDNN_SOFTMAX_KERNELS_H_

#include "backends/plugin_api/mx_plugin_cpp.h"

namespace mx_onednn {

void RegisterSoftmaxKernels(mxplugin::Plugin& plugin);

}  // namespace mx_onednn

#endif  // MXCORE_BACKENDS_ONEDNN_SOFTMAX_KERNELS_H_
