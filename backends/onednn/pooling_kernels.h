// oneDNN pooling kernels for Pooling and _backward_Pooling (max, avg with
// and without padding counted, global; valid and full conventions) on
// plain float32 arrays. sum and lp pooling run on the built-in kernels.
//
// Max pooling: the op's hidden argmax output (read by the host's
// _backward_Pooling_max) has mxcore's format, not oneDNN's workspace, so
// max Pooling is declined whenever the argmax is requested. A direct call
// of _backward_Pooling (out_grad, data) reruns oneDNN's forward-training
// pooling for its workspace, then runs the backward primitive with it.
#ifndef MXCORE_BACKENDS_ONEDNN_POOLING_KERNELS_H_
#define MXCORE_BACKENDS_ONEDNN_POOLING_KERNELS_H_

#include "backends/plugin_api/mx_plugin_cpp.h"

namespace mx_onednn {

void RegisterPoolingKernels(mxplugin::Plugin& plugin);

}  // namespace mx_onednn

#endif  // MXCORE_BACKENDS_ONEDNN_POOLING_KERNELS_H_
