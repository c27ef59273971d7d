// np.einsum on the GPU (einsum_kernels.h).
#include <type_traits>

#include "backends/cuda/einsum_kernels.h"
#include "backends/cuda/index_util.cuh"

namespace mx_cuda {
namespace {

using namespace kernel;  // NOLINT: the shared kernel helpers.

template <typename T>
using EinsumAcc =
    std::conditional_t<std::is_integral_v<T>, unsigned long long, double>;

template <typename T>
struct Factors {
  const T* p[mx_math::kMaxEinsumFactors];
  // Factor f's element at `at`, in the accumulator's type.
  __host__ __device__ EinsumAcc<T> operator()(int f, int64_t at) const {
    if constexpr (std::is_integral_v<T>) {
      return static_cast<EinsumAcc<T>>(static_cast<int64_t>(p[f][at]));
    } else {
      return static_cast<EinsumAcc<T>>(
          static_cast<typename Acc<T>::type>(p[f][at]));
    }
  }
};

template <int kReq, typename T>
__global__ void ContractKernel(int64_t n, mx_math::EinsumContraction c,
                               Factors<T> factors, T* y) {
  MX_GRID_LOOP(i, n) {
    const EinsumAcc<T> v =
        mx_math::ContractElement<EinsumAcc<T>>(c, i, factors);
    if constexpr (std::is_integral_v<T>) {
      Store<kReq>(y, i, static_cast<T>(static_cast<int64_t>(v)));
    } else {
      Store<kReq>(y, i, static_cast<typename Acc<T>::type>(v));
    }
  }
}

struct ContractLauncher {
  const mx_math::EinsumContraction* c;
  const void* const* factors;
  void* y;
  int64_t n;
  cudaStream_t st;
  template <int R, typename T>
  void operator()() const {
    Factors<T> f;
    for (int k = 0; k < c->num_factors; ++k) {
      f.p[k] = static_cast<const T*>(factors[k]);
    }
    ContractKernel<R, T>
        <<<Blocks(n), kThreads, 0, st>>>(n, *c, f, static_cast<T*>(y));
  }
};

}  // namespace

cudaError_t LaunchEinsumContraction(int dtype,
                                    const mx_math::EinsumContraction& c,
                                    const void* const* factors, void* target,
                                    int64_t n, int req, cudaStream_t stream) {
  if (n == 0) return cudaSuccess;
  return Dispatch<true>(dtype, req,
                        ContractLauncher{&c, factors, target, n, stream});
}

}  // namespace mx_cuda
