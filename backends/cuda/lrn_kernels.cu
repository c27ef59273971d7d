// LRN's kernels: a grid-stride loop over the elements, each running the
// shared per-element rules (backends/common/lrn.h).
#include "backends/cuda/index_util.cuh"
#include "backends/cuda/lrn_kernels.h"

namespace mx_cuda {
namespace {

using namespace kernel;  // NOLINT: the shared kernel helpers.

template <int kReq, typename T>
__global__ void LrnForwardKernel(mx_lrn::LrnSpec s, int64_t n, const T* x, T* y,
                                 T* norm, int norm_req) {
  using A = typename Acc<T>::type;
  MX_GRID_LOOP(i, n) {
    A nv;
    const A v = mx_lrn::LrnForwardAt<A>(s, x, i, &nv);
    if (y != nullptr) Put<kReq>(y, i, v);
    if (norm_req == MX_REQ_ADD) {
      Put<MX_REQ_ADD>(norm, i, nv);
    } else if (norm_req != MX_REQ_NULL) {
      Put<MX_REQ_WRITE>(norm, i, nv);
    }
  }
}

template <int kReq, typename T>
__global__ void LrnBackwardKernel(mx_lrn::LrnSpec s, int64_t n, const T* g,
                                  const T* x, const T* norm, T* dx) {
  using A = typename Acc<T>::type;
  MX_GRID_LOOP(i, n) {
    Put<kReq>(dx, i, mx_lrn::LrnBackwardAt<A>(s, g, x, norm, i));
  }
}

struct ForwardLauncher {
  mx_lrn::LrnSpec s;
  int64_t n;
  const void* x;
  void* y;
  void* norm;
  int norm_req;
  cudaStream_t st;
  template <int R, typename T>
  void operator()() const {
    LrnForwardKernel<R, T><<<Blocks(n), kThreads, 0, st>>>(
        s, n, static_cast<const T*>(x), static_cast<T*>(y),
        static_cast<T*>(norm), norm_req);
  }
};

struct BackwardLauncher {
  mx_lrn::LrnSpec s;
  int64_t n;
  const void* g;
  const void* x;
  const void* norm;
  void* dx;
  cudaStream_t st;
  template <int R, typename T>
  void operator()() const {
    LrnBackwardKernel<R, T><<<Blocks(n), kThreads, 0, st>>>(
        s, n, static_cast<const T*>(g), static_cast<const T*>(x),
        static_cast<const T*>(norm), static_cast<T*>(dx));
  }
};

}  // namespace

cudaError_t LaunchLrnForward(int dtype, const mx_lrn::LrnSpec& s, int64_t n,
                             const void* x, void* y, int y_req, void* norm,
                             int norm_req, cudaStream_t stream) {
  if (n == 0 || (y_req == MX_REQ_NULL && norm_req == MX_REQ_NULL)) {
    return cudaSuccess;
  }
  // y's request picks the kernel; without one only norm is written.
  const bool write_y = y_req != MX_REQ_NULL;
  const cudaError_t err = Dispatch(
      dtype, write_y ? y_req : MX_REQ_WRITE,
      ForwardLauncher{s, n, x, write_y ? y : nullptr, norm, norm_req, stream});
  return err != cudaSuccess ? err : cudaGetLastError();
}

cudaError_t LaunchLrnBackward(int dtype, const mx_lrn::LrnSpec& s, int64_t n,
                              const void* g, const void* x, const void* norm,
                              void* dx, int req, cudaStream_t stream) {
  if (n == 0) return cudaSuccess;
  const cudaError_t err =
      Dispatch(dtype, req, BackwardLauncher{s, n, g, x, norm, dx, stream});
  return err != cudaSuccess ? err : cudaGetLastError();
}

}  // namespace mx_cuda
