// The RNN op's step kernels: a grid-stride loop over the N * H units of
// one step, each running the shared cell arithmetic.
#include "backends/cuda/kernel_util.cuh"
#include "backends/cuda/rnn_kernels.h"

namespace mx_cuda {
namespace {

// The cell arithmetic of a step, by the step's kind.
template <typename A>
__device__ void RunStepAt(const mx_rnn::RnnStep<A>& s, int64_t i) {
  mx_rnn::RnnStepForwardAt(s, i);
}
template <typename A>
__device__ void RunStepAt(const mx_rnn::RnnStepGrad<A>& s, int64_t i) {
  mx_rnn::RnnStepBackwardAt(s, i);
}

template <typename Step>
__global__ void StepKernel(Step s, int64_t total) {
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < total;
       i += int64_t{gridDim.x} * blockDim.x) {
    RunStepAt(s, i);
  }
}

template <typename Step>
cudaError_t LaunchStep(const Step& s, cudaStream_t stream) {
  const int64_t total = s.n * s.h_size;
  if (total == 0) return cudaSuccess;
  StepKernel<Step>
      <<<kernel::Blocks(total), kernel::kThreads, 0, stream>>>(s, total);
  return cudaGetLastError();
}

}  // namespace

cudaError_t LaunchRnnStepForward(const mx_rnn::RnnStep<float>& s,
                                 cudaStream_t stream) {
  return LaunchStep(s, stream);
}
cudaError_t LaunchRnnStepForward(const mx_rnn::RnnStep<double>& s,
                                 cudaStream_t stream) {
  return LaunchStep(s, stream);
}
cudaError_t LaunchRnnStepBackward(const mx_rnn::RnnStepGrad<float>& s,
                                  cudaStream_t stream) {
  return LaunchStep(s, stream);
}
cudaError_t LaunchRnnStepBackward(const mx_rnn::RnnStepGrad<double>& s,
                                  cudaStream_t stream) {
  return LaunchStep(s, stream);
}

}  // namespace mx_cuda
