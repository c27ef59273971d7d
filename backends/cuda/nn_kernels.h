// Launchers of the CUDA plugin's pooling, BatchNorm and Dropout kernels
// (nn_kernels.cu, batch_norm_kernels.cu). float32, float64 and float16
// (computed in float; the per-channel BatchNorm arrays are float32 for float16
// data, as on the CPU). Each returns the launch status and never throws.
#ifndef MXCORE_BACKENDS_CUDA_NN_KERNELS_H_
#define MXCORE_BACKENDS_CUDA_NN_KERNELS_H_

#include <cuda_runtime.h>

#include <cstdint>

namespace mx_cuda {

// Pooling over (planes, d, h, w) data; 1-D and 2-D windows have leading
// extents of 1. MXNet's windows: [o*s - p, min(o*s - p + k, n + p)).
struct PoolShape {
  int64_t planes = 0;
  int64_t in[3] = {1, 1, 1}, out[3] = {1, 1, 1};
  int64_t k[3] = {1, 1, 1}, s[3] = {1, 1, 1}, p[3] = {0, 0, 0};
};
enum class PoolType : int { kMax, kAvg, kSum };

// argmax (int32, may be null): position of each window's first maximum in
// its plane, -1 for a window entirely in the padding (which gives 0).
cudaError_t LaunchPoolForward(PoolType type, bool count_include_pad, int dtype,
                              const PoolShape& shape, const void* x, void* y,
                              int req, int32_t* argmax, cudaStream_t stream);

// data_grad from out_grad: max windows send their gradient to the first
// maximum (recomputed from x, or taken from argmax when not null), avg
// spreads it over the window's count, sum copies it. `bad_argmax` (device
// int, zeroed by the caller) is set to 1 when an argmax is out of range.
cudaError_t LaunchPoolBackward(PoolType type, bool count_include_pad, int dtype,
                               const PoolShape& shape, const void* og,
                               const void* x, const int32_t* argmax, void* dx,
                               int req, int* bad_argmax, cudaStream_t stream);

// BatchNorm on (outer, channels, inner) data, in three launches that each
// fill the GPU (per-channel partial sums, a per-channel finish, an
// elementwise pass); sums in double, variance as E[x^2] - mean^2. batch_stats:
// normalize with the batch's mean and (biased) variance, write them to mean/var
// and update the moving statistics; otherwise use the moving ones.
struct BatchNormArgs {
  int64_t outer = 0, channels = 0, inner = 0;
  double eps = 1e-3, momentum = 0.9;
  bool fix_gamma = true, batch_stats = false;
};
cudaError_t LaunchBatchNormForward(int dtype, const BatchNormArgs& a,
                                   const void* x, const void* gamma,
                                   const void* beta, void* moving_mean,
                                   void* moving_var, void* y, int req_y,
                                   void* mean, int req_mean, void* var,
                                   int req_var, void* scratch,
                                   cudaStream_t stream);
// (out_grad, data, gamma, mean, var) -> (data_grad, gamma_grad, beta_grad).
cudaError_t LaunchBatchNormBackward(int dtype, const BatchNormArgs& a,
                                    const void* og, const void* x,
                                    const void* gamma, const void* mean,
                                    const void* var, void* dx, int req_dx,
                                    void* dgamma, int req_dgamma, void* dbeta,
                                    int req_dbeta, void* scratch,
                                    cudaStream_t stream);
// After cuDNN's training forward (dnn_calls.h): from the batch mean and
// inv_std = 1/sqrt(var + eps) per channel (param_dtype: float32, or
// float64 for float64 data), writes mean and the biased var under their
// requests and updates the moving statistics with a.momentum.
cudaError_t LaunchBatchNormFromInvStd(int param_dtype, const BatchNormArgs& a,
                                      const void* batch_mean,
                                      const void* inv_std, void* mean,
                                      int req_mean, void* var, int req_var,
                                      void* moving_mean, void* moving_var,
                                      cudaStream_t stream);
// Device scratch memory the two BatchNorm launchers need.
size_t BatchNormScratchBytes(const BatchNormArgs& a);

// Dropout's mask: 0 with probability p, else 1/(1-p) (0 when p = 1);
// element i from Philox subsequence i of `seed`.
cudaError_t LaunchDropoutMask(int dtype, int64_t n, double p, uint64_t seed,
                              void* mask, cudaStream_t stream);

}  // namespace mx_cuda

#endif  // MXCORE_BACKENDS_CUDA_NN_KERNELS_H_
