// CTCLoss on the GPU (ctc_kernels.h), with the CPU kernel's arithmetic
// (backends/cpu/ctc_loss_ops.cc): per sequence, one block computes each
// frame's log-softmax (a thread per frame), the alpha rows (a thread per
// state, one block barrier per frame), log p, then the beta rows from the
// last frame back with each frame's gradient (a thread per class).
#include <cuda_fp16.h>

#include "backends/common/ctc_math.h"
#include "backends/cuda/ctc_kernels.h"
#include "backends/cuda/kernel_util.cuh"
#include "backends/cuda/norm_util.cuh"
#include "backends/plugin_api/mx_plugin.h"

namespace mx_cuda {
namespace {

using namespace kernel;  // NOLINT: the shared kernel helpers.

template <typename T>
__global__ void CtcLossKernel(CtcBatch batch, const CtcSequence* seqs,
                              const int64_t* all_labels, const T* x, T* loss,
                              int req_loss, T* grad, int req_grad,
                              double* scratch) {
  using A = typename Acc<T>::type;
  __shared__ double log_p;
  const int64_t local = blockIdx.x, i = batch.first + local;
  const int64_t n = batch.n, classes = batch.classes;
  const CtcSequence seq = seqs[i];
  const int64_t frames = seq.frames, states = 2 * seq.num_labels + 1;
  const int64_t* labels = all_labels + seq.label_offset;
  const int64_t lattice = batch.t_max * batch.max_states;
  double* lp = scratch + local * batch.t_max * classes;
  double* alpha =
      scratch + batch.count * batch.t_max * classes + local * 2 * lattice;
  double* beta = alpha + lattice;
  for (int64_t t = threadIdx.x; t < frames; t += blockDim.x) {
    const T* row = x + (t * n + i) * classes;
    const auto value = [row](int64_t k) {
      return static_cast<double>(Load(row, k));
    };
    const double lse = mx_math::LogSumExp(classes, value);
    for (int64_t k = 0; k < classes; ++k) lp[t * classes + k] = value(k) - lse;
  }
  __syncthreads();
  for (int64_t t = 0; t < frames; ++t) {
    for (int64_t s = threadIdx.x; s < states; s += blockDim.x) {
      alpha[t * states + s] =
          t == 0
              ? mx_math::CtcAlphaStart(lp, labels, s, batch.blank)
              : mx_math::CtcAlphaAt(alpha + (t - 1) * states, lp + t * classes,
                                    labels, s, batch.blank);
    }
    __syncthreads();
  }
  if (threadIdx.x == 0) {
    if (frames == 0) {
      log_p = seq.num_labels == 0 ? 0.0 : -INFINITY;
    } else {
      log_p = mx_math::CtcLogLikelihood(alpha + (frames - 1) * states, states);
    }
    if (req_loss != MX_REQ_NULL) Put(loss, i, req_loss, static_cast<A>(-log_p));
  }
  __syncthreads();
  if (req_grad == MX_REQ_NULL) return;
  const double lp_total = log_p;
  const bool feasible = lp_total != -INFINITY;
  for (int64_t t = batch.t_max - 1; t >= 0; --t) {
    const bool in_sequence = feasible && t < frames;
    if (in_sequence) {
      for (int64_t s = threadIdx.x; s < states; s += blockDim.x) {
        beta[t * states + s] =
            t == frames - 1
                ? mx_math::CtcBetaEnd(lp + t * classes, labels, s, states,
                                      batch.blank)
                : mx_math::CtcBetaAt(beta + (t + 1) * states, lp + t * classes,
                                     labels, s, states, batch.blank);
      }
      __syncthreads();
    }
    T* dst = grad + (t * n + i) * classes;
    for (int64_t k = threadIdx.x; k < classes; k += blockDim.x) {
      const double g = in_sequence ? mx_math::CtcGradAt(
                                         alpha + t * states, beta + t * states,
                                         lp + t * classes, labels, states,
                                         batch.blank, lp_total, k)
                                   : 0.0;
      Put(dst, k, req_grad, static_cast<A>(g));
    }
  }
}

template <typename T>
void LaunchLoss(const CtcBatch& b, const CtcSequence* seqs,
                const int64_t* labels, const void* x, void* loss, int req_loss,
                void* grad, int req_grad, double* scratch,
                cudaStream_t stream) {
  CtcLossKernel<T><<<static_cast<unsigned>(b.count), kThreads, 0, stream>>>(
      b, seqs, labels, static_cast<const T*>(x), static_cast<T*>(loss),
      req_loss, static_cast<T*>(grad), req_grad, scratch);
}

template <int kReq, typename T>
__global__ void CtcBackwardKernel(int64_t total, int64_t n, int64_t classes,
                                  const T* og, const T* g, T* dx) {
  using A = typename Acc<T>::type;
  MX_CUDA_GRID_STRIDE(e, total) {
    Store<kReq>(dx, e,
                static_cast<A>(Load(og, (e / classes) % n) * Load(g, e)));
  }
}

struct BackwardLauncher {
  int64_t total, n, classes;
  const void *og, *g;
  void* dx;
  cudaStream_t s;
  template <int R, typename T>
  void operator()() const {
    CtcBackwardKernel<R, T><<<Blocks(total), kThreads, 0, s>>>(
        total, n, classes, static_cast<const T*>(og), static_cast<const T*>(g),
        static_cast<T*>(dx));
  }
};

}  // namespace

size_t CtcScratchBytes(const CtcBatch& b) {
  return static_cast<size_t>(b.count * b.t_max) *
         static_cast<size_t>(b.classes + 2 * b.max_states) * sizeof(double);
}

cudaError_t LaunchCtcLoss(int dtype, const CtcBatch& b, const CtcSequence* seqs,
                          const int64_t* labels, const void* x, void* loss,
                          int req_loss, void* grad, int req_grad, void* scratch,
                          cudaStream_t stream) {
  if (b.count == 0) return cudaSuccess;
  double* d = static_cast<double*>(scratch);
  switch (dtype) {
    case MX_DTYPE_FLOAT32:
      LaunchLoss<float>(b, seqs, labels, x, loss, req_loss, grad, req_grad, d,
                        stream);
      break;
    case MX_DTYPE_FLOAT64:
      LaunchLoss<double>(b, seqs, labels, x, loss, req_loss, grad, req_grad, d,
                         stream);
      break;
    case MX_DTYPE_FLOAT16:
      LaunchLoss<__half>(b, seqs, labels, x, loss, req_loss, grad, req_grad, d,
                         stream);
      break;
    default:
      return cudaErrorInvalidValue;
  }
  return cudaGetLastError();
}

cudaError_t LaunchCtcLossBackward(int dtype, int64_t total, int64_t n,
                                  int64_t classes, const void* og,
                                  const void* grad, void* dx, int req,
                                  cudaStream_t stream) {
  if (total == 0) return cudaSuccess;
  return Dispatch(dtype, req,
                  BackwardLauncher{total, n, classes, og, grad, dx, stream});
}

}  // namespace mx_cuda
