// Launchers of the RNN op's per-step cell kernels (rnn_kernels.cu): one
// thread per hidden unit of each sequence runs backends/common/rnn_cell.h.
// The matrix products around a step are cuBLAS calls made by the host
// (rnn_ops.cc through backends/common/rnn_driver.h). Return the launch
// status; never throw.
#ifndef MXCORE_BACKENDS_CUDA_RNN_KERNELS_H_
#define MXCORE_BACKENDS_CUDA_RNN_KERNELS_H_

#include <cuda_runtime.h>

#include "backends/common/rnn_cell.h"

namespace mx_cuda {

cudaError_t LaunchRnnStepForward(const mx_rnn::RnnStep<float>& s,
                                 cudaStream_t stream);
cudaError_t LaunchRnnStepForward(const mx_rnn::RnnStep<double>& s,
                                 cudaStream_t stream);
cudaError_t LaunchRnnStepBackward(const mx_rnn::RnnStepGrad<float>& s,
                                  cudaStream_t stream);
cudaError_t LaunchRnnStepBackward(const mx_rnn::RnnStepGrad<double>& s,
                                  cudaStream_t stream);

}  // namespace mx_cuda

#endif  // MXCORE_BACKENDS_CUDA_RNN_KERNELS_H_
