// The CUDA plugin's own elementwise kernels: unary maps, binaries (plain,
// broadcasting, with a scalar), comparisons, activation gradients and
// FullyConnected's bias (optimizer updates: optimizer_kernels.cu; casts,
// fills, random numbers, one_hot: fill_kernels.cu; reductions, softmax and
// gathers: reduce_kernels.cu). Grid-stride loops of 256 threads; float16 is
// loaded and stored as __half and computed in float; integers (unary, binary,
// scalar and comparison maps) wrap, divide and saturate as the CPU kernels do.
// The write request is a template parameter, so the element loop has no branch
// on it.
#include <cuda_fp16.h>

#include <cmath>
#include <type_traits>

#include "backends/common/mxnet_math.h"
#include "backends/cuda/elementwise.h"
#include "backends/cuda/kernel_util.cuh"
#include "backends/plugin_api/mx_plugin.h"

namespace mx_cuda {
namespace {

using namespace kernel;  // NOLINT: the shared kernel helpers.

// x < 0; false for unsigned types without comparing them with zero (which
// nvcc warns is pointless).
template <typename A>
__device__ __forceinline__ bool IsNegative(A x) {
  if constexpr (std::is_unsigned<A>::value) {
    return false;
  } else {
    return x < A(0);
  }
}

template <typename A>
__device__ __forceinline__ A SignOf(A x) {
  return IsNan(x) ? x : static_cast<A>((x > A(0)) - IsNegative(x));
}

template <typename A>
__device__ __forceinline__ A SoftRelu(A x) {
  // log(1 + e^x) without overflow.
  return x > A(0) ? x + log1p(exp(-x)) : log1p(exp(x));
}

// The unary ops defined on integers (the CPU's numeric-domain ones); the
// float-only ones never reach integer data (type inference refuses it).
template <typename A>
__device__ A ApplyIntegerUnary(Unary op, A x) {
  switch (op) {
    case Unary::kNegative:
      return WrapNeg(x);
    case Unary::kAbs:
      return IsNegative(x) ? WrapNeg(x) : x;
    case Unary::kSign:
      return SignOf(x);
    case Unary::kSquare:
      return WrapMul(x, x);
    case Unary::kRelu:  // A NaN stays, as on the CPU.
      return x > A(0) || IsNan(x) ? x : A(0);
    case Unary::kLogicalNot:
      return x != A(0) ? A(0) : A(1);
    default:  // _copy, and rounding leaves integers as they are.
      return x;
  }
}

template <typename A>
__device__ A ApplyFloatUnary(Unary op, A x) {
  switch (op) {
    case Unary::kIdentity:
      return x;
    case Unary::kNegative:
      return -x;
    case Unary::kAbs:
      return x < A(0) ? -x : x;
    case Unary::kSign:
      return SignOf(x);
    case Unary::kExp:
      return exp(x);
    case Unary::kLog:
      return log(x);
    case Unary::kSqrt:
      return sqrt(x);
    case Unary::kRsqrt:
      return A(1) / sqrt(x);
    case Unary::kSquare:
      return x * x;
    case Unary::kReciprocal:
      return A(1) / x;
    case Unary::kSin:
      return sin(x);
    case Unary::kCos:
      return cos(x);
    case Unary::kTanh:
      return tanh(x);
    case Unary::kSigmoid:
      return A(1) / (A(1) + exp(-x));
    case Unary::kRelu:
      return x > A(0) || IsNan(x) ? x : A(0);
    case Unary::kSoftrelu:
      return SoftRelu(x);
    case Unary::kErf:
      return erf(x);
    case Unary::kExpm1:
      return expm1(x);
    case Unary::kLog1p:
      return log1p(x);
    case Unary::kSoftsign:
      return x / (A(1) + (x < A(0) ? -x : x));
    case Unary::kLogSigmoid:
      return -SoftRelu(-x);
    case Unary::kMish:
      return x * tanh(SoftRelu(x));
    case Unary::kTan:
      return tan(x);
    case Unary::kSinh:
      return sinh(x);
    case Unary::kCosh:
      return cosh(x);
    case Unary::kArcsin:
      return asin(x);
    case Unary::kArccos:
      return acos(x);
    case Unary::kArctan:
      return atan(x);
    case Unary::kArcsinh:
      return asinh(x);
    case Unary::kArccosh:
      return acosh(x);
    case Unary::kArctanh:
      return atanh(x);
    case Unary::kLog2:
      return log2(x);
    case Unary::kLog10:
      return log10(x);
    case Unary::kCbrt:
      return cbrt(x);
    case Unary::kRcbrt:
      return A(1) / cbrt(x);
    case Unary::kDegrees:
      return x * static_cast<A>(180 / 3.14159265358979323846);
    case Unary::kRadians:
      return x * static_cast<A>(3.14159265358979323846 / 180);
    case Unary::kRound:
      return round(x);
    case Unary::kRint:
      return mx_math::RintAsMxnet(x);
    case Unary::kTrunc:
      return trunc(x);
    case Unary::kFloor:
      return floor(x);
    case Unary::kCeil:
      return ceil(x);
    case Unary::kLogicalNot:
      return x != A(0) ? A(0) : A(1);
    case Unary::kGamma:
      return tgamma(x);
    case Unary::kGammaln:
      return lgamma(x);
    case Unary::kDigamma:
      return static_cast<A>(mx_math::Digamma(static_cast<double>(x)));
    case Unary::kErfinv:  // NaN outside [-1, 1], as the CPU's.
      return fabs(x) <= A(1) ? static_cast<A>(erfinv(static_cast<double>(x)))
                             : static_cast<A>(NAN);
  }
  return x;
}

template <typename A>
__device__ A ApplyUnary(Unary op, A x) {
  if constexpr (std::is_integral<A>::value) {
    return ApplyIntegerUnary(op, x);
  } else {
    return ApplyFloatUnary(op, x);
  }
}

// a / b; for integers, division by zero gives 0 (as NumPy and the CPU
// kernels) and INT_MIN / -1 wraps.
template <typename A>
__device__ __forceinline__ A Divide(A a, A b) {
  if constexpr (std::is_integral<A>::value) {
    if (b == A(0)) return A(0);
    if constexpr (std::is_signed<A>::value) {
      if (b == A(-1)) return WrapNeg(a);
    }
  }
  return a / b;
}

// a ^ b; for integers as the CPU's saturating cast of std::pow in double.
// Exponents are integers there, so the power is multiplied out by squaring
// (exact wherever it is below 2^53; CUDA's pow may be 1 ulp off, which the
// cast to an integer would turn into an off-by-one).
template <typename A>
__device__ __forceinline__ A Power(A a, A b) {
  if constexpr (std::is_integral<A>::value) {
    double base = static_cast<double>(a), result = 1;
    uint64_t e =
        IsNegative(b) ? 0 - static_cast<uint64_t>(b) : static_cast<uint64_t>(b);
    for (; e != 0; e >>= 1) {
      if (e & 1) result *= base;
      base *= base;
    }
    return SaturatingCast<A>(IsNegative(b) ? 1.0 / result : result);
  } else {
    return pow(a, b);
  }
}

template <typename A>
__device__ __forceinline__ A Hypot(A a, A b) {
  if constexpr (std::is_integral<A>::value) {
    return SaturatingCast<A>(
        hypot(static_cast<double>(a), static_cast<double>(b)));
  } else {
    return hypot(a, b);
  }
}

// smooth_l1 of x with sigma, as the CPU's SmoothL1F (integers in double).
template <typename A>
__device__ __forceinline__ A SmoothL1(A a, A b) {
  using C = typename std::conditional<std::is_floating_point<A>::value, A,
                                      double>::type;
  return SaturatingCast<A>(mx_math::SmoothL1Loss<C>(a, b));
}

template <typename A>
__device__ A ApplyBinary(Binary op, A a, A b) {
  switch (op) {
    case Binary::kAdd:
      return WrapAdd(a, b);
    case Binary::kSub:
      return WrapSub(a, b);
    case Binary::kMul:
      return WrapMul(a, b);
    case Binary::kDiv:
      return Divide(a, b);
    // NaN wins, as in the CPU kernels.
    case Binary::kMax:
      return IsNan(a) || a > b ? a : b;
    case Binary::kMin:
      return IsNan(a) || a < b ? a : b;
    case Binary::kPower:
      return Power(a, b);
    case Binary::kReluGrad:
      return WrapMul(a, SignOf(b));
    case Binary::kMod:
      return mx_math::ModAsMxnet(a, b);
    case Binary::kHypot:
      return Hypot(a, b);
    case Binary::kSmoothL1:
      return SmoothL1(a, b);
    case Binary::kPolygamma:
      if constexpr (std::is_floating_point<A>::value) {
        return static_cast<A>(mx_math::Polygamma(static_cast<int>(b), a));
      } else {
        return a;  // Float-only: type inference refuses integers.
      }
    case Binary::kLogicalAnd:
      return a != A(0) && b != A(0) ? A(1) : A(0);
    case Binary::kLogicalOr:
      return a != A(0) || b != A(0) ? A(1) : A(0);
    case Binary::kLogicalXor:
      return (a != A(0)) != (b != A(0)) ? A(1) : A(0);
    case Binary::kEq:
      return a == b ? A(1) : A(0);
    case Binary::kNe:
      return a != b ? A(1) : A(0);
    case Binary::kGt:
      return a > b ? A(1) : A(0);
    case Binary::kGe:
      return a >= b ? A(1) : A(0);
    case Binary::kLt:
      return a < b ? A(1) : A(0);
    case Binary::kLe:
      return a <= b ? A(1) : A(0);
  }
  return a;
}

// Offsets into a and b of output element i under a broadcast index.
__device__ __forceinline__ void BroadcastOffsets(const BroadcastIndex& bc,
                                                 int64_t i, int64_t* ia,
                                                 int64_t* ib) {
  int64_t rest = i;
  *ia = 0;
  *ib = 0;
  for (int d = bc.ndim - 1; d >= 0; --d) {
    const int64_t k = rest % bc.shape[d];
    rest /= bc.shape[d];
    *ia += k * bc.a_stride[d];
    *ib += k * bc.b_stride[d];
  }
}

template <int kReq, typename T>
__global__ void UnaryKernel(Unary op, int64_t n, const T* x, T* y) {
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < n;
       i += int64_t{blockDim.x} * gridDim.x) {
    Store<kReq>(y, i, ApplyUnary(op, Load(x, i)));
  }
}

template <int kReq, typename T>
__global__ void BinaryKernel(Binary op, int64_t n, const T* a, const T* b,
                             T* y) {
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < n;
       i += int64_t{blockDim.x} * gridDim.x) {
    Store<kReq>(y, i, ApplyBinary(op, Load(a, i), Load(b, i)));
  }
}

template <int kReq, typename T>
__global__ void BroadcastKernel(Binary op, int64_t n, const T* a, const T* b,
                                T* y, BroadcastIndex bc) {
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < n;
       i += int64_t{blockDim.x} * gridDim.x) {
    int64_t ia, ib;
    BroadcastOffsets(bc, i, &ia, &ib);
    Store<kReq>(y, i, ApplyBinary(op, Load(a, ia), Load(b, ib)));
  }
}

template <int kReq, typename T>
__global__ void ScalarKernel(Binary op, bool reverse, int64_t n, const T* x,
                             double s, T* y) {
  using A = typename Acc<T>::type;
  const A sv = SaturatingCast<A>(s);
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < n;
       i += int64_t{blockDim.x} * gridDim.x) {
    const A v = Load(x, i);
    Store<kReq>(y, i,
                reverse ? ApplyBinary(op, sv, v) : ApplyBinary(op, v, sv));
  }
}

// bc.ndim 0: a and b (or the scalar, b null) index like y.
template <bool kOr, typename T>
__global__ void CompareKernel(Binary op, int64_t n, const T* a, const T* b,
                              double s, bool reverse, BroadcastIndex bc,
                              bool* y) {
  using A = typename Acc<T>::type;
  const A sv = SaturatingCast<A>(s);
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < n;
       i += int64_t{blockDim.x} * gridDim.x) {
    int64_t ia = i, ib = i;
    if (bc.ndim > 0) BroadcastOffsets(bc, i, &ia, &ib);
    const A va = Load(a, ia);
    const A vb = b == nullptr ? sv : Load(b, ib);
    const bool v =
        (reverse ? ApplyBinary(op, vb, va) : ApplyBinary(op, va, vb)) != A(0);
    y[i] = kOr ? (y[i] || v) : v;
  }
}

template <int kReq, typename T>
__global__ void ActGradKernel(ActGrad op, int64_t n, const T* dy, const T* y,
                              T* dx) {
  using A = typename Acc<T>::type;
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < n;
       i += int64_t{blockDim.x} * gridDim.x) {
    const A g = Load(dy, i), o = Load(y, i);
    A d;
    switch (op) {
      case ActGrad::kRelu:
        d = g * SignOf(o);
        break;
      case ActGrad::kSigmoid:
        d = g * o * (A(1) - o);
        break;
      case ActGrad::kTanh:
        d = g * (A(1) - o * o);
        break;
      default:
        d = g * (A(1) - exp(-o));
        break;
    }
    Store<kReq>(dx, i, d);
  }
}

template <typename T>
__global__ void AddBiasKernel(int64_t rows, int64_t cols, const T* bias, T* y) {
  using A = typename Acc<T>::type;
  const int64_t n = rows * cols;
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < n;
       i += int64_t{blockDim.x} * gridDim.x) {
    y[i] = static_cast<T>(Load(y, i) + Load(bias, i % cols));
  }
}

struct CompareLauncher {
  Binary op;
  int64_t n;
  const void *a, *b;
  double s;
  bool reverse;
  BroadcastIndex bc;
  bool* y;
  cudaStream_t st;
  template <int R, typename T>
  void operator()() const {
    CompareKernel<R == MX_REQ_ADD, T><<<Blocks(n), kThreads, 0, st>>>(
        op, n, static_cast<const T*>(a), static_cast<const T*>(b), s, reverse,
        bc, y);
  }
};

struct UnaryLauncher {
  Unary op;
  int64_t n;
  const void* x;
  void* y;
  cudaStream_t s;
  template <int R, typename T>
  void operator()() const {
    UnaryKernel<R, T><<<Blocks(n), kThreads, 0, s>>>(
        op, n, static_cast<const T*>(x), static_cast<T*>(y));
  }
};

struct BinaryLauncher {
  Binary op;
  int64_t n;
  const void* a;
  const void* b;
  void* y;
  const BroadcastIndex* bc;
  cudaStream_t s;
  template <int R, typename T>
  void operator()() const {
    if (bc == nullptr) {
      BinaryKernel<R, T><<<Blocks(n), kThreads, 0, s>>>(
          op, n, static_cast<const T*>(a), static_cast<const T*>(b),
          static_cast<T*>(y));
    } else {
      BroadcastKernel<R, T><<<Blocks(n), kThreads, 0, s>>>(
          op, n, static_cast<const T*>(a), static_cast<const T*>(b),
          static_cast<T*>(y), *bc);
    }
  }
};

struct ScalarLauncher {
  Binary op;
  bool reverse;
  int64_t n;
  const void* x;
  double sc;
  void* y;
  cudaStream_t s;
  template <int R, typename T>
  void operator()() const {
    ScalarKernel<R, T><<<Blocks(n), kThreads, 0, s>>>(
        op, reverse, n, static_cast<const T*>(x), sc, static_cast<T*>(y));
  }
};

struct ActGradLauncher {
  ActGrad op;
  int64_t n;
  const void* dy;
  const void* y;
  void* dx;
  cudaStream_t s;
  template <int R, typename T>
  void operator()() const {
    ActGradKernel<R, T><<<Blocks(n), kThreads, 0, s>>>(
        op, n, static_cast<const T*>(dy), static_cast<const T*>(y),
        static_cast<T*>(dx));
  }
};

struct AddBiasLauncher {
  int64_t rows, cols;
  const void* bias;
  void* y;
  cudaStream_t s;
  template <int R, typename T>
  void operator()() const {
    AddBiasKernel<T><<<Blocks(rows * cols), kThreads, 0, s>>>(
        rows, cols, static_cast<const T*>(bias), static_cast<T*>(y));
  }
};

}  // namespace

cudaError_t LaunchUnary(Unary op, int dtype, int64_t n, const void* x, void* y,
                        int req, cudaStream_t stream) {
  if (n == 0) return cudaSuccess;
  return Dispatch<true>(dtype, req, UnaryLauncher{op, n, x, y, stream});
}

cudaError_t LaunchBinary(Binary op, int dtype, int64_t n, const void* a,
                         const void* b, void* y, int req,
                         const BroadcastIndex* bc, cudaStream_t stream) {
  if (n == 0) return cudaSuccess;
  return Dispatch<true>(dtype, req, BinaryLauncher{op, n, a, b, y, bc, stream});
}

cudaError_t LaunchScalar(Binary op, bool reverse, int dtype, int64_t n,
                         const void* x, double scalar, void* y, int req,
                         cudaStream_t stream) {
  if (n == 0) return cudaSuccess;
  return Dispatch<true>(dtype, req,
                        ScalarLauncher{op, reverse, n, x, scalar, y, stream});
}

cudaError_t LaunchCompare(Binary op, int dtype, int64_t n, const void* a,
                          const void* b, double s, bool reverse,
                          const BroadcastIndex* bc, void* y, int req,
                          cudaStream_t stream) {
  if (n == 0) return cudaSuccess;
  BroadcastIndex index;
  index.ndim = 0;
  if (bc != nullptr) index = *bc;
  return Dispatch<true>(dtype, req,
                        CompareLauncher{op, n, a, b, s, reverse, index,
                                        static_cast<bool*>(y), stream});
}

cudaError_t LaunchActGrad(ActGrad op, int dtype, int64_t n, const void* dy,
                          const void* y, void* dx, int req,
                          cudaStream_t stream) {
  if (n == 0) return cudaSuccess;
  return Dispatch(dtype, req, ActGradLauncher{op, n, dy, y, dx, stream});
}

cudaError_t LaunchAddBias(int dtype, int64_t rows, int64_t cols,
                          const void* bias, void* y, cudaStream_t stream) {
  if (rows * cols == 0) return cudaSuccess;
  return Dispatch(dtype, MX_REQ_WRITE,
                  AddBiasLauncher{rows, cols, bias, y, stream});
}

}  // namespace mx_cuda
