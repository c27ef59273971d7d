// cuDNN's softmax, activation, pooling and batch-normalization calls, as
// the plugin's kernels use them where cuDNN is the faster library (measured
// side by side with the plugin's own kernels by cudnn_op_benchmark; the
// README's CUDA section has the numbers). Each takes the kernel's extents
// as they are and returns false, having done nothing, where cuDNN cannot
// take the case (an extent beyond int, an empty tensor, an option cuDNN
// lacks, or cuDNN answering CUDNN_STATUS_NOT_SUPPORTED): the caller then
// runs its own kernel. Other cuDNN failures throw mxplugin::Error naming
// `op`.
//
//   if (!DnnSoftmax(op, ctx, /*log=*/true, dt, outer, len, inner, x, y, req))
//     LaunchSoftmax(...);
#ifndef MXCORE_BACKENDS_CUDA_DNN_CALLS_H_
#define MXCORE_BACKENDS_CUDA_DNN_CALLS_H_

#include <cstdint>
#include <string>

#include "backends/cuda/elementwise.h"
#include "backends/cuda/nn_kernels.h"
#include "backends/plugin_api/mx_plugin_cpp.h"

namespace mx_cuda {

// MX_CUDA_OWN_KERNELS=1: every call below returns false, so the plugin's
// own kernels run (read once; for comparisons and as MXNet's cudnn_off).
bool OwnKernelsOnly();

// Calls below that ran cuDNN (for tests: which path ran).
int64_t DnnCalls();

// softmax or log_softmax along the middle extent of (outer, len, inner).
bool DnnSoftmax(const std::string& op, const mxplugin::KernelContext& ctx,
                bool log, int dtype, int64_t outer, int64_t len, int64_t inner,
                const void* x, void* y, int32_t req);
// Their gradient from the forward's output y and the output gradient dy.
bool DnnSoftmaxBackward(const std::string& op,
                        const mxplugin::KernelContext& ctx, bool log, int dtype,
                        int64_t outer, int64_t len, int64_t inner,
                        const void* y, const void* dy, void* dx, int32_t req);

// relu, sigmoid or tanh of n elements (other kinds: false). relu keeps a
// NaN, as the CPU's does.
bool DnnActivation(const std::string& op, const mxplugin::KernelContext& ctx,
                   Unary kind, int dtype, int64_t n, const void* x, void* y,
                   int32_t req);

// Max or average pooling without argmax positions, of 1-, 2- or 3-D
// windows that stay inside the padded input (MXNet's "valid" convention,
// and "full" where it gives the same output extents); sum pooling: false.
// (shape.planes = batch * channels.)
bool DnnPoolForward(const std::string& op, const mxplugin::KernelContext& ctx,
                    PoolType type, bool count_include_pad, int dtype,
                    int64_t channels, const PoolShape& shape, const void* x,
                    void* y, int32_t req);

// BatchNorm with batch statistics (a.batch_stats) over (outer, channels,
// inner): cuDNN normalizes and computes the mean and 1/sqrt(var + eps);
// a small kernel then writes mean and the biased var with their requests
// and updates the moving statistics with them (cuDNN's own update would
// use the unbiased variance; MXNet's CPU kernel does not). eps below
// cuDNN's minimum: false.
bool DnnBatchNormTrain(const std::string& op,
                       const mxplugin::KernelContext& ctx,
                       const BatchNormArgs& a, int dtype, const void* x,
                       const void* gamma, const void* beta, void* moving_mean,
                       void* moving_var, void* y, int32_t req_y, void* mean,
                       int32_t req_mean, void* var, int32_t req_var);

}  // namespace mx_cuda

#endif  // MXCORE_BACKENDS_CUDA_DNN_CALLS_H_
