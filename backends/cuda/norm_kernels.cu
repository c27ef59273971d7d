// LeakyReLU, prelu, LayerNorm and L2Normalization kernels of the CUDA
// plugin (norm_kernels.h). Row reductions run one block per line with
// kernel::BlockSum, in double as the CPU kernels sum; grid-stride loops
// everywhere so any size fits the grid.
#include "backends/cuda/kernel_util.cuh"
#include "backends/cuda/norm_kernels.h"
#include "backends/cuda/norm_util.cuh"

namespace mx_cuda {
namespace {

using namespace kernel;  // NOLINT: the shared kernel helpers.

// ---- LeakyReLU and prelu. ----

template <typename T>
__global__ void LeakyKernel(Leaky mode, int64_t n, double slope, const T* x,
                            T* y, int req) {
  using A = typename Acc<T>::type;
  const A s = static_cast<A>(slope);
  MX_CUDA_GRID_STRIDE(i, n) {
    const A v = Load(x, i);
    A r;
    switch (mode) {
      case Leaky::kLeaky:
        r = v > A(0) ? v : s * v;
        break;
      case Leaky::kElu:
        r = v > A(0) ? v : s * expm1(v);
        break;
      case Leaky::kSelu: {
        const A alpha = static_cast<A>(1.6732632423543772848170429916717);
        const A scale = static_cast<A>(1.0507009873554804934193349852946);
        r = scale * (v > A(0) ? v : alpha * expm1(v));
        break;
      }
      case Leaky::kGelu:
        r = A(0.5) * v *
            (A(1) + erf(v * static_cast<A>(0.70710678118654752440)));
        break;
      default:  // kRreluMask
        r = v > A(0) ? A(1) : s;
        break;
    }
    Put(y, i, req, r);
  }
}

__device__ __forceinline__ int64_t ChannelOf(const Lines& l, int64_t i) {
  return (i / l.inner) % l.len;
}

template <typename T>
__global__ void PreluKernel(Lines l, const T* x, const T* gamma, T* y,
                            int req) {
  using A = typename Acc<T>::type;
  MX_CUDA_GRID_STRIDE(i, l.outer * l.len * l.inner) {
    const A v = Load(x, i);
    Put(y, i, req, v > A(0) ? v : Load(gamma, ChannelOf(l, i)) * v);
  }
}

template <typename T>
__global__ void PreluGradKernel(Lines l, const T* og, const T* x,
                                const T* gamma, T* dx, int req) {
  using A = typename Acc<T>::type;
  MX_CUDA_GRID_STRIDE(i, l.outer * l.len * l.inner) {
    const A g = Load(og, i);
    Put(dx, i, req, Load(x, i) > A(0) ? g : g * Load(gamma, ChannelOf(l, i)));
  }
}

// One block per channel: the sum of g * x over its elements with x <= 0.
template <typename T>
__global__ void PreluGammaGradKernel(Lines l, const T* og, const T* x,
                                     T* dgamma, int req) {
  using A = typename Acc<T>::type;
  __shared__ double shared[kThreads];
  for (int64_t c = blockIdx.x; c < l.len; c += gridDim.x) {
    double s = 0;
    for (int64_t j = threadIdx.x; j < l.outer * l.inner; j += kThreads) {
      const int64_t i = ((j / l.inner) * l.len + c) * l.inner + j % l.inner;
      const A v = Load(x, i);
      if (!(v > A(0))) {
        s += static_cast<double>(Load(og, i)) * static_cast<double>(v);
      }
    }
    s = BlockSum(s, shared);
    if (threadIdx.x == 0) Put(dgamma, c, req, static_cast<A>(s));
  }
}

// ---- LayerNorm and L2Normalization. ----

// The mean and biased variance of one line (two passes, as the CPU).
template <typename T>
__device__ void LineMoments(const Lines& l, const T* x, int64_t base,
                            double* shared, double* mean, double* var) {
  double s = 0;
  for (int64_t i = threadIdx.x; i < l.len; i += kThreads) {
    s += static_cast<double>(Load(x, base + i * l.inner));
  }
  const double m = BlockSum(s, shared) / static_cast<double>(l.len);
  s = 0;
  for (int64_t i = threadIdx.x; i < l.len; i += kThreads) {
    const double c = static_cast<double>(Load(x, base + i * l.inner)) - m;
    s += c * c;
  }
  *mean = m;
  *var = BlockSum(s, shared) / static_cast<double>(l.len);
}

template <typename T>
__global__ void LayerNormKernel(Lines l, double eps, const T* x, const T* gamma,
                                const T* beta, T* y, int req_y, T* mean_out,
                                int req_mean, T* std_out, int req_std) {
  using A = typename Acc<T>::type;
  __shared__ double shared[kThreads];
  for (int64_t line = blockIdx.x; line < l.outer * l.inner; line += gridDim.x) {
    const int64_t base = LineBase(l, line);
    double mean, var;
    LineMoments(l, x, base, shared, &mean, &var);
    const double inv_std = 1.0 / sqrt(var + eps);
    if (threadIdx.x == 0) {
      Put(mean_out, line, req_mean, static_cast<A>(mean));
      Put(std_out, line, req_std, static_cast<A>(1.0 / inv_std));
    }
    if (req_y == MX_REQ_NULL) continue;
    for (int64_t i = threadIdx.x; i < l.len; i += kThreads) {
      const int64_t k = base + i * l.inner;
      const double v = (static_cast<double>(Load(x, k)) - mean) * inv_std;
      Put(y, k, req_y,
          static_cast<A>(v * static_cast<double>(Load(gamma, i)) +
                         static_cast<double>(Load(beta, i))));
    }
  }
}

// dx per line; each line's (mean, inv_std) kept in `stats` for the gamma
// and beta sums of LayerNormParamGradKernel.
template <typename T>
__global__ void LayerNormGradKernel(Lines l, double eps, const T* og,
                                    const T* x, const T* gamma, T* dx, int req,
                                    double* stats) {
  using A = typename Acc<T>::type;
  __shared__ double shared[kThreads];
  const double n = static_cast<double>(l.len);
  for (int64_t line = blockIdx.x; line < l.outer * l.inner; line += gridDim.x) {
    const int64_t base = LineBase(l, line);
    double mean, var;
    LineMoments(l, x, base, shared, &mean, &var);
    const double inv_std = 1.0 / sqrt(var + eps);
    if (threadIdx.x == 0) {
      stats[2 * line] = mean;
      stats[2 * line + 1] = inv_std;
    }
    if (req == MX_REQ_NULL) continue;
    double s_gh = 0, s_ghxh = 0;
    for (int64_t i = threadIdx.x; i < l.len; i += kThreads) {
      const int64_t k = base + i * l.inner;
      const double xh = (static_cast<double>(Load(x, k)) - mean) * inv_std;
      const double gh = static_cast<double>(Load(og, k)) *
                        static_cast<double>(Load(gamma, i));
      s_gh += gh;
      s_ghxh += gh * xh;
    }
    s_gh = BlockSum(s_gh, shared);
    s_ghxh = BlockSum(s_ghxh, shared);
    for (int64_t i = threadIdx.x; i < l.len; i += kThreads) {
      const int64_t k = base + i * l.inner;
      const double xh = (static_cast<double>(Load(x, k)) - mean) * inv_std;
      const double gh = static_cast<double>(Load(og, k)) *
                        static_cast<double>(Load(gamma, i));
      Put(dx, k, req,
          static_cast<A>(inv_std * (gh - s_gh / n - xh * s_ghxh / n)));
    }
  }
}

// One block per position i of the axis: dgamma = sum g * xh, dbeta = sum g.
template <typename T>
__global__ void LayerNormParamGradKernel(Lines l, const T* og, const T* x,
                                         const double* stats, T* dgamma,
                                         int req_dgamma, T* dbeta,
                                         int req_dbeta) {
  using A = typename Acc<T>::type;
  __shared__ double shared[kThreads];
  for (int64_t i = blockIdx.x; i < l.len; i += gridDim.x) {
    double s_g = 0, s_gxh = 0;
    for (int64_t line = threadIdx.x; line < l.outer * l.inner;
         line += kThreads) {
      const int64_t k = LineBase(l, line) + i * l.inner;
      const double g = static_cast<double>(Load(og, k));
      const double xh = (static_cast<double>(Load(x, k)) - stats[2 * line]) *
                        stats[2 * line + 1];
      s_g += g;
      s_gxh += g * xh;
    }
    s_g = BlockSum(s_g, shared);
    s_gxh = BlockSum(s_gxh, shared);
    if (threadIdx.x == 0) {
      Put(dgamma, i, req_dgamma, static_cast<A>(s_gxh));
      Put(dbeta, i, req_dbeta, static_cast<A>(s_g));
    }
  }
}

template <typename T>
__device__ double LineNorm(const Lines& l, double eps, const T* x, int64_t base,
                           double* shared) {
  double s = 0;
  for (int64_t i = threadIdx.x; i < l.len; i += kThreads) {
    const double v = static_cast<double>(Load(x, base + i * l.inner));
    s += v * v;
  }
  return sqrt(BlockSum(s, shared) + eps);
}

template <typename T>
__global__ void L2NormKernel(Lines l, double eps, const T* x, T* y, int req) {
  using A = typename Acc<T>::type;
  __shared__ double shared[kThreads];
  for (int64_t line = blockIdx.x; line < l.outer * l.inner; line += gridDim.x) {
    const int64_t base = LineBase(l, line);
    const double norm = LineNorm(l, eps, x, base, shared);
    for (int64_t i = threadIdx.x; i < l.len; i += kThreads) {
      const int64_t k = base + i * l.inner;
      Put(y, k, req, static_cast<A>(static_cast<double>(Load(x, k)) / norm));
    }
  }
}

// dx = (g - y * sum(g * y)) / norm with y = x / norm.
template <typename T>
__global__ void L2NormGradKernel(Lines l, double eps, const T* og, const T* x,
                                 T* dx, int req) {
  using A = typename Acc<T>::type;
  __shared__ double shared[kThreads];
  for (int64_t line = blockIdx.x; line < l.outer * l.inner; line += gridDim.x) {
    const int64_t base = LineBase(l, line);
    const double norm = LineNorm(l, eps, x, base, shared);
    double gy = 0;
    for (int64_t i = threadIdx.x; i < l.len; i += kThreads) {
      const int64_t k = base + i * l.inner;
      gy += static_cast<double>(Load(og, k)) * static_cast<double>(Load(x, k)) /
            norm;
    }
    gy = BlockSum(gy, shared);
    for (int64_t i = threadIdx.x; i < l.len; i += kThreads) {
      const int64_t k = base + i * l.inner;
      const double y = static_cast<double>(Load(x, k)) / norm;
      Put(dx, k, req,
          static_cast<A>((static_cast<double>(Load(og, k)) - y * gy) / norm));
    }
  }
}

// ---- Launchers: Dispatch picks T; requests are passed at run time. ----

struct LeakyLauncher {
  Leaky mode;
  int64_t n;
  double slope;
  const void* x;
  void* y;
  int req;
  cudaStream_t s;
  template <int R, typename T>
  void operator()() const {
    LeakyKernel<T><<<Blocks(n), kThreads, 0, s>>>(
        mode, n, slope, static_cast<const T*>(x), static_cast<T*>(y), req);
  }
};

struct PreluLauncher {
  Lines l;
  const void *og, *x, *gamma;
  void* y;
  int req;
  void* dgamma;
  int req_dgamma;
  cudaStream_t s;
  template <int R, typename T>
  void operator()() const {
    const int64_t n = l.outer * l.len * l.inner;
    const T* xt = static_cast<const T*>(x);
    const T* gt = static_cast<const T*>(gamma);
    if (og == nullptr) {
      PreluKernel<T>
          <<<Blocks(n), kThreads, 0, s>>>(l, xt, gt, static_cast<T*>(y), req);
      return;
    }
    const T* ogt = static_cast<const T*>(og);
    if (Writes(req)) {
      PreluGradKernel<T><<<Blocks(n), kThreads, 0, s>>>(
          l, ogt, xt, gt, static_cast<T*>(y), req);
    }
    if (Writes(req_dgamma)) {
      PreluGammaGradKernel<T><<<LineBlocks(l.len), kThreads, 0, s>>>(
          l, ogt, xt, static_cast<T*>(dgamma), req_dgamma);
    }
  }
};

struct LayerNormLauncher {
  Lines l;
  double eps;
  const void *x, *gamma, *beta;
  void* y;
  int req_y;
  void* mean;
  int req_mean;
  void* std;
  int req_std;
  cudaStream_t s;
  template <int R, typename T>
  void operator()() const {
    LayerNormKernel<T><<<LineBlocks(l.outer * l.inner), kThreads, 0, s>>>(
        l, eps, static_cast<const T*>(x), static_cast<const T*>(gamma),
        static_cast<const T*>(beta), static_cast<T*>(y), req_y,
        static_cast<T*>(mean), req_mean, static_cast<T*>(std), req_std);
  }
};

struct LayerNormGradLauncher {
  Lines l;
  double eps;
  const void *og, *x, *gamma;
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
    double* stats = static_cast<double*>(scratch);
    const T* ogt = static_cast<const T*>(og);
    const T* xt = static_cast<const T*>(x);
    LayerNormGradKernel<T><<<LineBlocks(l.outer * l.inner), kThreads, 0, s>>>(
        l, eps, ogt, xt, static_cast<const T*>(gamma), static_cast<T*>(dx),
        req_dx, stats);
    if (Writes(req_dgamma) || Writes(req_dbeta)) {
      LayerNormParamGradKernel<T><<<LineBlocks(l.len), kThreads, 0, s>>>(
          l, ogt, xt, stats, static_cast<T*>(dgamma), req_dgamma,
          static_cast<T*>(dbeta), req_dbeta);
    }
  }
};

struct L2NormLauncher {
  Lines l;
  double eps;
  const void *og, *x;
  void* y;
  int req;
  cudaStream_t s;
  template <int R, typename T>
  void operator()() const {
    const int blocks = LineBlocks(l.outer * l.inner);
    if (og == nullptr) {
      L2NormKernel<T><<<blocks, kThreads, 0, s>>>(
          l, eps, static_cast<const T*>(x), static_cast<T*>(y), req);
    } else {
      L2NormGradKernel<T><<<blocks, kThreads, 0, s>>>(
          l, eps, static_cast<const T*>(og), static_cast<const T*>(x),
          static_cast<T*>(y), req);
    }
  }
};

}  // namespace

cudaError_t LaunchLeaky(Leaky mode, int dtype, int64_t n, double slope,
                        const void* x, void* y, int req, cudaStream_t stream) {
  if (n == 0 || !Writes(req)) return cudaSuccess;
  return Dispatch(dtype, MX_REQ_WRITE,
                  LeakyLauncher{mode, n, slope, x, y, req, stream});
}

cudaError_t LaunchPrelu(int dtype, const Lines& l, const void* x,
                        const void* gamma, void* y, int req,
                        cudaStream_t stream) {
  if (l.outer * l.len * l.inner == 0 || !Writes(req)) return cudaSuccess;
  return Dispatch(dtype, MX_REQ_WRITE,
                  PreluLauncher{l, nullptr, x, gamma, y, req, nullptr,
                                MX_REQ_NULL, stream});
}

cudaError_t LaunchPreluBackward(int dtype, const Lines& l, const void* og,
                                const void* x, const void* gamma, void* dx,
                                int req_dx, void* dgamma, int req_dgamma,
                                cudaStream_t stream) {
  if (l.len == 0) return cudaSuccess;
  return Dispatch(
      dtype, MX_REQ_WRITE,
      PreluLauncher{l, og, x, gamma, dx, req_dx, dgamma, req_dgamma, stream});
}

cudaError_t LaunchLayerNorm(int dtype, const Lines& l, double eps,
                            const void* x, const void* gamma, const void* beta,
                            void* y, int req_y, void* mean, int req_mean,
                            void* std, int req_std, cudaStream_t stream) {
  if (l.outer * l.inner == 0) return cudaSuccess;
  return Dispatch(dtype, MX_REQ_WRITE,
                  LayerNormLauncher{l, eps, x, gamma, beta, y, req_y, mean,
                                    req_mean, std, req_std, stream});
}

cudaError_t LaunchLayerNormBackward(int dtype, const Lines& l, double eps,
                                    const void* og, const void* x,
                                    const void* gamma, void* dx, int req_dx,
                                    void* dgamma, int req_dgamma, void* dbeta,
                                    int req_dbeta, void* scratch,
                                    cudaStream_t stream) {
  // No lines still writes the gamma and beta gradients (sums of nothing).
  if (l.outer * l.inner == 0 && l.len == 0) return cudaSuccess;
  return Dispatch(
      dtype, MX_REQ_WRITE,
      LayerNormGradLauncher{l, eps, og, x, gamma, dx, req_dx, dgamma,
                            req_dgamma, dbeta, req_dbeta, scratch, stream});
}

size_t LayerNormScratchBytes(const Lines& l) {
  return static_cast<size_t>(l.outer * l.inner * 2 + 1) * sizeof(double);
}

cudaError_t LaunchL2Norm(int dtype, const Lines& l, double eps, const void* x,
                         void* y, int req, cudaStream_t stream) {
  if (l.outer * l.inner == 0 || !Writes(req)) return cudaSuccess;
  return Dispatch(dtype, MX_REQ_WRITE,
                  L2NormLauncher{l, eps, nullptr, x, y, req, stream});
}

cudaError_t LaunchL2NormBackward(int dtype, const Lines& l, double eps,
                                 const void* og, const void* x, void* dx,
                                 int req, cudaStream_t stream) {
  if (l.outer * l.inner == 0 || !Writes(req)) return cudaSuccess;
  return Dispatch(dtype, MX_REQ_WRITE,
                  L2NormLauncher{l, eps, og, x, dx, req, stream});
}

}  // namespace mx_cuda
