// oneDNN kernels that move or add whole arrays: Concat (the concat
// primitive, any axis, plain float32 arrays) and elemwise_add /
// broadcast_add of large arrays (the binary primitive; the second operand
// may broadcast, the first must have the output's shape). Adds of fewer
// than MX_ONEDNN_MIN_ADD_ELEMENTS output elements (default 65536) are
// declined: below that the built-in loop costs less than a primitive call.
#ifndef MXCORE_BACKENDS_ONEDNN_JOIN_ADD_KERNELS_H_
#define MXCORE_BACKENDS_ONEDNN_JOIN_ADD_KERNELS_H_

#include "backends/plugin_api/mx_plugin_cpp.h"

namespace mx_onednn {

void RegisterJoinAddKernels(mxplugin::Plugin& plugin);

}  // namespace mx_onednn

#endif  // MXCORE_BACKENDS_ONEDNN_JOIN_ADD_KERNELS_H_
