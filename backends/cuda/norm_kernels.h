// Launchers of the CUDA plugin's normalization, output-layer and
// activation kernels (norm_kernels.cu), with the CPU kernels' semantics
// (backends/cpu: nn_ops.cc, layer_norm_ops.cc, l2_normalization_ops.cc,
// softmax_output_ops.cc, softmax_ops.cc, adaptive_pool_ops.cc). float32,
// float64 and float16 (computed in float; row statistics in double as on
// the CPU). Labels may be any numeric dtype but bool. Each launcher returns
// the launch status (cudaErrorInvalidValue for a dtype it lacks) and never
// throws; `req` is an MxOpReq, per output.
#ifndef MXCORE_BACKENDS_CUDA_NORM_KERNELS_H_
#define MXCORE_BACKENDS_CUDA_NORM_KERNELS_H_

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

namespace mx_cuda {

// outer * inner lines of `len` values `inner` apart: line l starts at
// (l / inner) * len * inner + l % inner.
struct Lines {
  int64_t outer = 0, len = 0, inner = 1;
};

// Elementwise LeakyReLU modes; kRreluMask writes rrelu's slope output
// (1 where x > 0, else `slope`).
enum class Leaky : int { kLeaky, kElu, kSelu, kGelu, kRreluMask };
cudaError_t LaunchLeaky(Leaky mode, int dtype, int64_t n, double slope,
                        const void* x, void* y, int req, cudaStream_t stream);

// prelu on data viewed as (outer, channels, inner): gamma[channel] * x
// where x <= 0. Gradient: (out_grad, data, gamma) -> (dx, dgamma), dgamma
// the per-channel sum of g * x where x <= 0.
cudaError_t LaunchPrelu(int dtype, const Lines& l, const void* x,
                        const void* gamma, void* y, int req,
                        cudaStream_t stream);
cudaError_t LaunchPreluBackward(int dtype, const Lines& l, const void* og,
                                const void* x, const void* gamma, void* dx,
                                int req_dx, void* dgamma, int req_dgamma,
                                cudaStream_t stream);

// LayerNorm over the lines of x (gamma, beta of extent len); mean and std
// have one value per line. The gradient needs LayerNormScratchBytes(l) of
// device scratch.
cudaError_t LaunchLayerNorm(int dtype, const Lines& l, double eps,
                            const void* x, const void* gamma, const void* beta,
                            void* y, int req_y, void* mean, int req_mean,
                            void* std, int req_std, cudaStream_t stream);
cudaError_t LaunchLayerNormBackward(int dtype, const Lines& l, double eps,
                                    const void* og, const void* x,
                                    const void* gamma, void* dx, int req_dx,
                                    void* dgamma, int req_dgamma, void* dbeta,
                                    int req_dbeta, void* scratch,
                                    cudaStream_t stream);
size_t LayerNormScratchBytes(const Lines& l);

// x / sqrt(sum(x^2) + eps) over each line; gradient from (out_grad, data).
cudaError_t LaunchL2Norm(int dtype, const Lines& l, double eps, const void* x,
                         void* y, int req, cudaStream_t stream);
cudaError_t LaunchL2NormBackward(int dtype, const Lines& l, double eps,
                                 const void* og, const void* x, void* dx,
                                 int req, cudaStream_t stream);

// SoftmaxOutput's labels, one per line of `l` (len = classes): writes to
// `check` (device, 16 bytes) the first line whose label is outside
// [0, classes) and not ignored (UINT64_MAX if none) and, as a double, the
// number of lines not ignored.
struct SoftmaxOutputArgs {
  Lines l;
  bool use_ignore = false, out_grad = false;
  double ignore_label = -1, scale = 1, smooth_alpha = 0;
};
cudaError_t LaunchSoftmaxOutputCheck(int label_dtype,
                                     const SoftmaxOutputArgs& a,
                                     const void* label, void* check,
                                     cudaStream_t stream);
// data_grad = (y - target) * scale (times the head gradient with out_grad),
// 0 on ignored lines; labels already checked.
cudaError_t LaunchSoftmaxOutputGrad(int dtype, int label_dtype,
                                    const SoftmaxOutputArgs& a, const void* og,
                                    const void* y, const void* label, void* dx,
                                    int req, cudaStream_t stream);

// softmax_cross_entropy of (rows, classes) data and rows labels: out[0] =
// sum of -log softmax(row)[label]. `bad` (device uint64, set to UINT64_MAX
// by the caller) gets the first row with a label outside [0, classes).
// The forward needs CrossEntropyScratchBytes(rows) of scratch.
cudaError_t LaunchCrossEntropy(int dtype, int label_dtype, int64_t rows,
                               int64_t classes, const void* x,
                               const void* label, void* y, int req,
                               uint64_t* bad, void* scratch,
                               cudaStream_t stream);
size_t CrossEntropyScratchBytes(int64_t rows);
// data_grad = out_grad[0] * (softmax(row) - onehot(label)).
cudaError_t LaunchCrossEntropyGrad(int dtype, int label_dtype, int64_t rows,
                                   int64_t classes, const void* og,
                                   const void* x, const void* label, void* dx,
                                   int req, uint64_t* bad, cudaStream_t stream);

// _contrib_AdaptiveAvgPooling2D on (planes, h, w) to (planes, oh, ow) and
// its gradient (gathered per input element, no atomics).
struct AdaptivePoolShape {
  int64_t planes = 0, h = 0, w = 0, oh = 1, ow = 1;
};
cudaError_t LaunchAdaptivePool(int dtype, const AdaptivePoolShape& s,
                               const void* x, void* y, int req,
                               cudaStream_t stream);
cudaError_t LaunchAdaptivePoolBackward(int dtype, const AdaptivePoolShape& s,
                                       const void* og, void* dx, int req,
                                       cudaStream_t stream);

}  // namespace mx_cuda

#endif  // MXCORE_BACKENDS_CUDA_NORM_KERNELS_H_
