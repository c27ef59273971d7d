// oneDNN pooling kernels for Pooling and _backward_Pooling (max, avg with
// and without padding counted, global; valid and full conventions) on
// plain float32 arrays. sum and lp pooling run on the built-in kernels.
//
// Max backward: the ABI gives a kernel of an existing op no state and no
// extra outputs, and the built-in gradient passes (out_grad, data) to
// _backward_Pooling, so there is no place to keep the forward's argmax
// workspace between the two calls. The backward kernel therefore reruns
// oneDNN's forward-training pooling to produce the workspace, then runs
// the backward primitive with it (one extra pass over the data).
#ifndef MXCORE_BACKENDS_ONEDNN_POOLING_KERNELS_H_
#define MXCORE_BACKENDS_ONEDNN_POOLING_KERNELS_H_

#include "backends/plugin_api/mx_plugin_cpp.h"

namespace mx_onednn {

void RegisterPoolingKernels(mxplugin::Plugin& plugin);

}  // namespace mx_onednn

#endif  // MXCORE_BACKENDS_ONEDNN_POOLING_KERNELS_H_
