// The CUDA plugin's optimizer updates: MXNet's sgd_update and
// sgd_mom_update (one parameter, or up to kMultiUpdateMax in one launch)
// and adam_update, computed in float for float16 as the elementwise
// kernels are (elementwise.cu). The write request of the output is a
// template parameter; the optimizer state is always written in place.
#include <cuda_fp16.h>

#include "backends/cuda/elementwise.h"
#include "backends/cuda/kernel_util.cuh"
#include "backends/plugin_api/mx_plugin.h"

namespace mx_cuda {
namespace {

using namespace kernel;  // NOLINT: the shared kernel helpers.

template <int kReq, typename T>
__global__ void SgdKernel(int64_t n, const T* w, const T* g, T* mom, T* out,
                          SgdParams p) {
  using A = typename Acc<T>::type;
  const A lr = p.lr, wd = p.wd, rescale = p.rescale, clip = p.clip,
          momentum = p.momentum;
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < n;
       i += int64_t{blockDim.x} * gridDim.x) {
    A gi = Load(g, i) * rescale;
    if (clip >= A(0)) gi = gi < -clip ? -clip : (gi > clip ? clip : gi);
    const A wi = Load(w, i);
    if (mom == nullptr) {
      Store<kReq>(out, i, wi - lr * (gi + wd * wi));
    } else {
      const A m = momentum * Load(mom, i) - lr * (gi + wd * wi);
      mom[i] = static_cast<T>(m);
      Store<kReq>(out, i, wi + m);
    }
  }
}

template <typename T>
__global__ void MultiSgdMomKernel(MultiSgdTable t, SgdParams p) {
  using A = typename Acc<T>::type;
  const int k = blockIdx.y;
  const A lr = p.lr, wd = p.wd, rescale = p.rescale, clip = p.clip,
          momentum = p.momentum;
  const T* w = static_cast<const T*>(t.w[k]);
  const T* g = static_cast<const T*>(t.g[k]);
  T* mom = static_cast<T*>(t.mom[k]);
  T* out = static_cast<T*>(t.out[k]);
  const int req = t.req[k];
  if (req == MX_REQ_NULL) return;
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < t.n[k];
       i += int64_t{blockDim.x} * gridDim.x) {
    A gi = Load(g, i) * rescale;
    if (clip >= A(0)) gi = gi < -clip ? -clip : (gi > clip ? clip : gi);
    const A wi = Load(w, i);
    const A m = momentum * Load(mom, i) - lr * (gi + wd * wi);
    mom[i] = static_cast<T>(m);
    if (req == MX_REQ_ADD) {
      out[i] = static_cast<T>(Load(out, i) + wi + m);
    } else {
      out[i] = static_cast<T>(wi + m);
    }
  }
}

template <int kReq, typename T>
__global__ void AdamKernel(int64_t n, const T* w, const T* g, T* mean, T* var,
                           T* out, AdamParams p) {
  using A = typename Acc<T>::type;
  const A lr = p.lr, wd = p.wd, rescale = p.rescale, clip = p.clip,
          b1 = p.beta1, b2 = p.beta2, eps = p.epsilon;
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < n;
       i += int64_t{blockDim.x} * gridDim.x) {
    // As MXNet's AdamUpdateKernel (and the CPU): weight decay joins the
    // rescaled gradient before clipping.
    const A wi = Load(w, i);
    A gi = Load(g, i) * rescale + wd * wi;
    if (clip >= A(0)) gi = gi < -clip ? -clip : (gi > clip ? clip : gi);
    const A m = b1 * Load(mean, i) + (A(1) - b1) * gi;
    const A v = b2 * Load(var, i) + (A(1) - b2) * gi * gi;
    mean[i] = static_cast<T>(m);
    var[i] = static_cast<T>(v);
    Store<kReq>(out, i, wi - lr * m / (sqrt(v) + eps));
  }
}

struct SgdLauncher {
  int64_t n;
  const void* w;
  const void* g;
  void* mom;
  void* out;
  SgdParams p;
  cudaStream_t s;
  template <int R, typename T>
  void operator()() const {
    SgdKernel<R, T><<<Blocks(n), kThreads, 0, s>>>(
        n, static_cast<const T*>(w), static_cast<const T*>(g),
        static_cast<T*>(mom), static_cast<T*>(out), p);
  }
};

struct MultiSgdLauncher {
  MultiSgdTable t;
  SgdParams p;
  cudaStream_t s;
  template <int R, typename T>
  void operator()() const {
    int64_t longest = 0;
    for (int k = 0; k < t.count; ++k)
      longest = t.n[k] > longest ? t.n[k] : longest;
    const int blocks = Blocks(longest) < 1024 ? Blocks(longest) : 1024;
    MultiSgdMomKernel<T><<<dim3(blocks, t.count), kThreads, 0, s>>>(t, p);
  }
};

struct AdamLauncher {
  int64_t n;
  const void *w, *g;
  void *mean, *var, *out;
  AdamParams p;
  cudaStream_t s;
  template <int R, typename T>
  void operator()() const {
    AdamKernel<R, T><<<Blocks(n), kThreads, 0, s>>>(
        n, static_cast<const T*>(w), static_cast<const T*>(g),
        static_cast<T*>(mean), static_cast<T*>(var), static_cast<T*>(out), p);
  }
};

}  // namespace

cudaError_t LaunchSgd(int dtype, int64_t n, const void* w, const void* g,
                      void* mom, void* out, int req, const SgdParams& p,
                      cudaStream_t stream) {
  if (n == 0) return cudaSuccess;
  return Dispatch(dtype, req, SgdLauncher{n, w, g, mom, out, p, stream});
}

cudaError_t LaunchMultiSgdMom(int dtype, const MultiSgdTable& table,
                              const SgdParams& p, cudaStream_t stream) {
  if (table.count == 0) return cudaSuccess;
  return Dispatch(dtype, MX_REQ_WRITE, MultiSgdLauncher{table, p, stream});
}

cudaError_t LaunchAdam(int dtype, int64_t n, const void* w, const void* g,
                       void* mean, void* var, void* out, int req,
                       const AdamParams& p, cudaStream_t stream) {
  if (n == 0) return cudaSuccess;
  return Dispatch(dtype, req, AdamLauncher{n, w, g, mean, var, out, p, stream});
}

}  // namespace mx_cuda
