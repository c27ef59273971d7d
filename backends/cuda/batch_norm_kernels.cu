// BatchNorm kernels of the CUDA plugin, with the CPU kernel's semantics
// (backends/cpu/batch_norm_ops.cc): biased batch variance, double
// accumulation, moving statistics updated with the momentum; and the
// finish after cuDNN's training forward (dnn_calls.cc).
#include <cuda_fp16.h>

#include "backends/cuda/kernel_util.cuh"
#include "backends/cuda/nn_kernels.h"

namespace mx_cuda {
namespace {

using namespace kernel;  // NOLINT: the shared kernel helpers.

// BatchNorm in three steps, each using the whole GPU: per-channel partial
// sums from `splits` blocks per channel (grid channels x splits), a
// per-channel finish (one thread per channel), and an elementwise pass.
// Partials and per-channel results live in caller-provided scratch.
inline int Splits(const BatchNormArgs& a) {
  const int64_t count = a.outer * a.inner;
  const int64_t s = count / (kThreads * 16);
  return static_cast<int>(s < 1 ? 1 : (s > 64 ? 64 : s));
}

// Element j of channel c's (outer x inner) elements.
__device__ __forceinline__ int64_t ChannelIndex(const BatchNormArgs& a,
                                                int64_t c, int64_t j) {
  return ((j / a.inner) * a.channels + c) * a.inner + j % a.inner;
}

// partial[(c * splits + s) * 2 + {0, 1}] = sum of (v, v^2) over the
// split's elements, v = x, or (og, og * (x - mean) * inv_std) for the
// gradient (stats = (mean, inv_std) per channel).
template <typename T, bool kGrad>
__global__ void ChannelPartialsKernel(BatchNormArgs a, const T* x, const T* og,
                                      const double* stats, double* partial) {
  __shared__ double shared[kThreads];
  const int64_t c = blockIdx.x;
  const int splits = gridDim.y;
  const int64_t count = a.outer * a.inner;
  double s0 = 0, s1 = 0;
  const double m = kGrad ? stats[2 * c] : 0, inv = kGrad ? stats[2 * c + 1] : 0;
  for (int64_t j = blockIdx.y * int64_t{kThreads} + threadIdx.x; j < count;
       j += int64_t{kThreads} * splits) {
    const int64_t idx = ChannelIndex(a, c, j);
    const double v = static_cast<double>(Load(x, idx));
    if (kGrad) {
      const double g = static_cast<double>(Load(og, idx));
      s0 += g;
      s1 += g * (v - m) * inv;
    } else {
      s0 += v;
      s1 += v * v;
    }
  }
  s0 = BlockSum(s0, shared);
  s1 = BlockSum(s1, shared);
  if (threadIdx.x == 0) {
    partial[(c * splits + blockIdx.y) * 2] = s0;
    partial[(c * splits + blockIdx.y) * 2 + 1] = s1;
  }
}

template <typename P>
__device__ __forceinline__ void Put(P* p, int64_t i, int req, double v) {
  if (req == MX_REQ_ADD) {
    p[i] += static_cast<P>(v);
  } else if (req != MX_REQ_NULL) {
    p[i] = static_cast<P>(v);
  }
}

// Forward finish: coef[2c] = scale, coef[2c+1] = shift; mean/var outputs
// and the moving statistics.
template <typename P>
__global__ void BatchNormFinishKernel(BatchNormArgs a, int splits,
                                      const double* partial, const P* gamma,
                                      const P* beta, P* moving_mean,
                                      P* moving_var, P* mean_out, int req_mean,
                                      P* var_out, int req_var, double* coef) {
  const int64_t c = blockIdx.x * int64_t{blockDim.x} + threadIdx.x;
  if (c >= a.channels) return;
  const int64_t count = a.outer * a.inner;
  double mean, var;
  if (a.batch_stats) {
    double sum = 0, sq = 0;
    for (int s = 0; s < splits; ++s) {
      sum += partial[(c * splits + s) * 2];
      sq += partial[(c * splits + s) * 2 + 1];
    }
    mean = sum / count;
    var = sq / count - mean * mean;
    if (var < 0) var = 0;
  } else {
    mean = static_cast<double>(moving_mean[c]);
    var = static_cast<double>(moving_var[c]);
  }
  const double g = a.fix_gamma ? 1.0 : static_cast<double>(gamma[c]);
  const double scale = g / sqrt(var + a.eps);
  coef[2 * c] = scale;
  coef[2 * c + 1] = static_cast<double>(beta[c]) - mean * scale;
  Put(mean_out, c, req_mean, mean);
  Put(var_out, c, req_var, var);
  if (a.batch_stats) {
    const double m = a.momentum;
    moving_mean[c] = static_cast<P>(static_cast<double>(moving_mean[c]) * m +
                                    mean * (1 - m));
    moving_var[c] =
        static_cast<P>(static_cast<double>(moving_var[c]) * m + var * (1 - m));
  }
}

// After cuDNN's forward: mean and var = 1/inv_std^2 - eps (in double) to
// the outputs, and the moving statistics updated as above.
template <typename P>
__global__ void BatchNormFromInvStdKernel(BatchNormArgs a, const P* batch_mean,
                                          const P* inv_std, P* mean_out,
                                          int req_mean, P* var_out, int req_var,
                                          P* moving_mean, P* moving_var) {
  const int64_t c = blockIdx.x * int64_t{blockDim.x} + threadIdx.x;
  if (c >= a.channels) return;
  const double mean = static_cast<double>(batch_mean[c]);
  const double inv = static_cast<double>(inv_std[c]);
  double var = 1.0 / (inv * inv) - a.eps;
  if (var < 0) var = 0;
  Put(mean_out, c, req_mean, mean);
  Put(var_out, c, req_var, var);
  const double m = a.momentum;
  moving_mean[c] =
      static_cast<P>(static_cast<double>(moving_mean[c]) * m + mean * (1 - m));
  moving_var[c] =
      static_cast<P>(static_cast<double>(moving_var[c]) * m + var * (1 - m));
}

// y = x * coef[2c] + coef[2c+1] for every element (c its channel).
template <int kReq, typename T>
__global__ void ChannelAffineKernel(BatchNormArgs a, const T* x,
                                    const double* coef, T* y) {
  using A = typename Acc<T>::type;
  const int64_t n = a.outer * a.channels * a.inner;
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < n;
       i += int64_t{blockDim.x} * gridDim.x) {
    const int64_t c = (i / a.inner) % a.channels;
    const double v =
        static_cast<double>(Load(x, i)) * coef[2 * c] + coef[2 * c + 1];
    Store<kReq>(y, i, static_cast<A>(v));
  }
}

// Gradient: stats[2c] = mean, stats[2c+1] = 1/sqrt(var + eps).
template <typename P>
__global__ void BatchNormStatsKernel(BatchNormArgs a, const P* mean,
                                     const P* var, double* stats) {
  const int64_t c = blockIdx.x * int64_t{blockDim.x} + threadIdx.x;
  if (c >= a.channels) return;
  stats[2 * c] = static_cast<double>(mean[c]);
  stats[2 * c + 1] = 1.0 / sqrt(static_cast<double>(var[c]) + a.eps);
}

// Gradient finish: dgamma, dbeta, and the per-channel coefficients of
// dx = k0 * og + k1 * x + k2 (coef[3c..3c+2]).
template <typename P>
__global__ void BatchNormGradFinishKernel(BatchNormArgs a, int splits,
                                          const double* partial,
                                          const double* stats, const P* gamma,
                                          P* dgamma, int req_dgamma, P* dbeta,
                                          int req_dbeta, double* coef) {
  const int64_t c = blockIdx.x * int64_t{blockDim.x} + threadIdx.x;
  if (c >= a.channels) return;
  const int64_t count = a.outer * a.inner;
  double sum_g = 0, sum_gx = 0;
  for (int s = 0; s < splits; ++s) {
    sum_g += partial[(c * splits + s) * 2];
    sum_gx += partial[(c * splits + s) * 2 + 1];
  }
  const double m = stats[2 * c], inv = stats[2 * c + 1];
  const double gm = a.fix_gamma ? 1.0 : static_cast<double>(gamma[c]);
  const double scale = gm * inv;
  const double mean_g = a.batch_stats ? sum_g / count : 0;
  const double mean_gx = a.batch_stats ? sum_gx / count : 0;
  // dx = scale * (og - mean_g - (x - m) * inv * mean_gx)
  coef[3 * c] = scale;
  coef[3 * c + 1] = -scale * inv * mean_gx;
  coef[3 * c + 2] = -scale * mean_g + scale * m * inv * mean_gx;
  Put(dgamma, c, req_dgamma, a.fix_gamma ? 0.0 : sum_gx);
  Put(dbeta, c, req_dbeta, sum_g);
}

template <int kReq, typename T>
__global__ void BatchNormGradApplyKernel(BatchNormArgs a, const T* og,
                                         const T* x, const double* coef,
                                         T* dx) {
  using A = typename Acc<T>::type;
  const int64_t n = a.outer * a.channels * a.inner;
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < n;
       i += int64_t{blockDim.x} * gridDim.x) {
    const int64_t c = (i / a.inner) % a.channels;
    const double v = coef[3 * c] * static_cast<double>(Load(og, i)) +
                     coef[3 * c + 1] * static_cast<double>(Load(x, i)) +
                     coef[3 * c + 2];
    Store<kReq>(dx, i, static_cast<A>(v));
  }
}

// Per-channel arrays: float32 for float16 data.
template <typename T>
struct ParamOf {
  using type = T;
};
template <>
struct ParamOf<__half> {
  using type = float;
};

// Scratch layout: partials (channels x splits x 2), then per-channel
// coefficients (channels x 3), then stats (channels x 2), in doubles.
struct BatchNormScratch {
  double *partial, *coef, *stats;
  BatchNormScratch(const BatchNormArgs& a, void* scratch) {
    partial = static_cast<double*>(scratch);
    coef = partial + a.channels * Splits(a) * 2;
    stats = coef + a.channels * 3;
  }
};

int ChannelBlocks(const BatchNormArgs& a) {
  return static_cast<int>((a.channels + kThreads - 1) / kThreads);
}

struct BatchNormForwardLauncher {
  BatchNormArgs a;
  const void *x, *gamma, *beta;
  void *mm, *mv, *y;
  int req_y;
  void* mean;
  int req_mean;
  void* var;
  int req_var;
  void* scratch;
  cudaStream_t s;
  template <int R, typename T>
  void operator()() const {
    using P = typename ParamOf<T>::type;
    const BatchNormScratch w(a, scratch);
    const int splits = Splits(a);
    if (a.batch_stats) {
      ChannelPartialsKernel<T, false>
          <<<dim3(static_cast<unsigned>(a.channels), splits), kThreads, 0, s>>>(
              a, static_cast<const T*>(x), nullptr, nullptr, w.partial);
    }
    BatchNormFinishKernel<P><<<ChannelBlocks(a), kThreads, 0, s>>>(
        a, splits, w.partial, static_cast<const P*>(gamma),
        static_cast<const P*>(beta), static_cast<P*>(mm), static_cast<P*>(mv),
        static_cast<P*>(mean), req_mean, static_cast<P*>(var), req_var, w.coef);
    if (req_y == MX_REQ_NULL) return;
    const int64_t n = a.outer * a.channels * a.inner;
    if (req_y == MX_REQ_ADD) {
      ChannelAffineKernel<MX_REQ_ADD, T><<<Blocks(n), kThreads, 0, s>>>(
          a, static_cast<const T*>(x), w.coef, static_cast<T*>(y));
    } else {
      ChannelAffineKernel<MX_REQ_WRITE, T><<<Blocks(n), kThreads, 0, s>>>(
          a, static_cast<const T*>(x), w.coef, static_cast<T*>(y));
    }
  }
};

struct BatchNormBackwardLauncher {
  BatchNormArgs a;
  const void *og, *x, *gamma, *mean, *var;
  void* dx;
  int req_dx;
  void* dgamma;
  int req_dgamma;
  void* dbeta;
  int req_dbeta;
  void* scratch;
  cudaStream_t s;
  template <int R, typename T>
  void operator()() const {
    using P = typename ParamOf<T>::type;
    const BatchNormScratch w(a, scratch);
    const int splits = Splits(a);
    BatchNormStatsKernel<P><<<ChannelBlocks(a), kThreads, 0, s>>>(
        a, static_cast<const P*>(mean), static_cast<const P*>(var), w.stats);
    ChannelPartialsKernel<T, true>
        <<<dim3(static_cast<unsigned>(a.channels), splits), kThreads, 0, s>>>(
            a, static_cast<const T*>(x), static_cast<const T*>(og), w.stats,
            w.partial);
    BatchNormGradFinishKernel<P><<<ChannelBlocks(a), kThreads, 0, s>>>(
        a, splits, w.partial, w.stats, static_cast<const P*>(gamma),
        static_cast<P*>(dgamma), req_dgamma, static_cast<P*>(dbeta), req_dbeta,
        w.coef);
    if (req_dx == MX_REQ_NULL) return;
    const int64_t n = a.outer * a.channels * a.inner;
    if (req_dx == MX_REQ_ADD) {
      BatchNormGradApplyKernel<MX_REQ_ADD, T><<<Blocks(n), kThreads, 0, s>>>(
          a, static_cast<const T*>(og), static_cast<const T*>(x), w.coef,
          static_cast<T*>(dx));
    } else {
      BatchNormGradApplyKernel<MX_REQ_WRITE, T><<<Blocks(n), kThreads, 0, s>>>(
          a, static_cast<const T*>(og), static_cast<const T*>(x), w.coef,
          static_cast<T*>(dx));
    }
  }
};

}  // namespace

cudaError_t LaunchBatchNormForward(int dtype, const BatchNormArgs& a,
                                   const void* x, const void* gamma,
                                   const void* beta, void* moving_mean,
                                   void* moving_var, void* y, int req_y,
                                   void* mean, int req_mean, void* var,
                                   int req_var, void* scratch,
                                   cudaStream_t stream) {
  if (a.channels == 0) return cudaSuccess;
  return Dispatch(dtype, MX_REQ_WRITE,
                  BatchNormForwardLauncher{a, x, gamma, beta, moving_mean,
                                           moving_var, y, req_y, mean, req_mean,
                                           var, req_var, scratch, stream});
}

cudaError_t LaunchBatchNormBackward(int dtype, const BatchNormArgs& a,
                                    const void* og, const void* x,
                                    const void* gamma, const void* mean,
                                    const void* var, void* dx, int req_dx,
                                    void* dgamma, int req_dgamma, void* dbeta,
                                    int req_dbeta, void* scratch,
                                    cudaStream_t stream) {
  if (a.channels == 0) return cudaSuccess;
  return Dispatch(
      dtype, MX_REQ_WRITE,
      BatchNormBackwardLauncher{a, og, x, gamma, mean, var, dx, req_dx, dgamma,
                                req_dgamma, dbeta, req_dbeta, scratch, stream});
}

cudaError_t LaunchBatchNormFromInvStd(int param_dtype, const BatchNormArgs& a,
                                      const void* batch_mean,
                                      const void* inv_std, void* mean,
                                      int req_mean, void* var, int req_var,
                                      void* moving_mean, void* moving_var,
                                      cudaStream_t stream) {
  if (a.channels == 0) return cudaSuccess;
  const int blocks = Blocks(a.channels);
  if (param_dtype == MX_DTYPE_FLOAT64) {
    BatchNormFromInvStdKernel<double><<<blocks, kThreads, 0, stream>>>(
        a, static_cast<const double*>(batch_mean),
        static_cast<const double*>(inv_std), static_cast<double*>(mean),
        req_mean, static_cast<double*>(var), req_var,
        static_cast<double*>(moving_mean), static_cast<double*>(moving_var));
  } else if (param_dtype == MX_DTYPE_FLOAT32) {
    BatchNormFromInvStdKernel<float><<<blocks, kThreads, 0, stream>>>(
        a, static_cast<const float*>(batch_mean),
        static_cast<const float*>(inv_std), static_cast<float*>(mean), req_mean,
        static_cast<float*>(var), req_var, static_cast<float*>(moving_mean),
        static_cast<float*>(moving_var));
  } else {
    return cudaErrorInvalidValue;
  }
  return cudaGetLastError();
}

size_t BatchNormScratchBytes(const BatchNormArgs& a) {
  return static_cast<size_t>(a.channels * (Splits(a) * 2 + 3 + 2)) *
         sizeof(double);
}

}  // namespace mx_cuda
