// oneDNN kernels for BatchNorm and _backward_BatchNorm on plain float32
// arrays with the channel on axis 1 (NC, NCW, NCHW, NCDHW): training with
// batch statistics (and the moving statistics updated in place, as the
// built-in kernel does), inference or use_global_stats with the moving
// statistics, fix_gamma. float16 data and other axes run on the built-in
// kernels.
#ifndef MXCORE_BACKENDS_ONEDNN_BATCH_NORM_KERNELS_H_
#define MXCORE_BACKENDS_ONEDNN_BATCH_NORM_KERNELS_H_

#include "backends/plugin_api/mx_plugin_cpp.h"

namespace mx_onednn {

void RegisterBatchNormKernels(mxplugin::Plugin& plugin);

}  // namespace mx_onednn

#endif  // MXCORE_BACKENDS_ONEDNN_BATCH_NORM_KERNELS_H_
