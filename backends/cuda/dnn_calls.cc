#include "backends/cuda/dnn_calls.h"

#include <cudnn.h>

#include <atomic>
#include <climits>
#include <vector>

#include "backends/cuda/conv_plan.h"
#include "backends/cuda/cuda_util.h"

namespace mx_cuda {
namespace {

using mxplugin::KernelContext;

// Descriptors of this thread, set before each call (setting is a host-side
// struct write; creating and destroying per call would cost more).
struct Descriptors {
  cudnnTensorDescriptor_t a = nullptr, b = nullptr;
  cudnnActivationDescriptor_t act = nullptr;
  cudnnPoolingDescriptor_t pool = nullptr;
  Descriptors() {
    try {
      CheckDnn(cudnnCreateTensorDescriptor(&a), "cudnnCreateTensorDescriptor");
      CheckDnn(cudnnCreateTensorDescriptor(&b), "cudnnCreateTensorDescriptor");
      CheckDnn(cudnnCreateActivationDescriptor(&act),
               "cudnnCreateActivationDescriptor");
      CheckDnn(cudnnCreatePoolingDescriptor(&pool),
               "cudnnCreatePoolingDescriptor");
    } catch (...) {
      Destroy();
      throw;
    }
  }
  ~Descriptors() { Destroy(); }
  void Destroy() {
    if (a != nullptr) cudnnDestroyTensorDescriptor(a);
    if (b != nullptr) cudnnDestroyTensorDescriptor(b);
    if (act != nullptr) cudnnDestroyActivationDescriptor(act);
    if (pool != nullptr) cudnnDestroyPoolingDescriptor(pool);
    a = b = nullptr;
    act = nullptr;
    pool = nullptr;
  }
};
Descriptors& Mine() {
  thread_local Descriptors d;
  return d;
}

// Whether every extent is positive and the elements fit cuDNN's int
// indexing.
bool FitsDnn(const std::vector<int64_t>& dims) {
  int64_t total = 1;
  for (int64_t d : dims) {
    if (d <= 0 || d > INT_MAX) return false;
    total *= d;
    if (total > INT_MAX) return false;
  }
  return true;
}

// A packed NCHW or NCDHW tensor of `dims` (4 or 5 extents).
void SetPacked(const std::string& op, cudnnTensorDescriptor_t d, int dtype,
               const std::vector<int64_t>& dims) {
  std::vector<int> n(dims.begin(), dims.end()), strides(dims.size());
  int stride = 1;
  for (size_t i = dims.size(); i-- > 0;) {
    strides[i] = stride;
    stride *= n[i];
  }
  CheckDnn(cudnnSetTensorNdDescriptor(d, DnnType(op, dtype),
                                      static_cast<int>(n.size()), n.data(),
                                      strides.data()),
           op + ": tensor descriptor");
}

bool CudnnTakes(int dtype) { return IsFloat(dtype) && !OwnKernelsOnly(); }

std::atomic<int64_t> g_calls{0};

// A cuDNN call's status: true once it ran (counted), false when cuDNN
// does not support the case (the caller runs its own kernel; nothing was
// written), else an error naming `what`.
bool Took(cudnnStatus_t st, const std::string& what) {
  if (st == CUDNN_STATUS_NOT_SUPPORTED) return false;
  CheckDnn(st, what);
  g_calls.fetch_add(1, std::memory_order_relaxed);
  return true;
}

// Along C of (outer, len, inner, 1): for every (n, h) when inner > 1;
// rows (inner 1) as instances, which cuDNN runs far faster (5 us against
// 79 us for 32 x 1000 on an H200).
cudnnSoftmaxMode_t SoftmaxMode(int64_t inner) {
  return inner == 1 ? CUDNN_SOFTMAX_MODE_INSTANCE : CUDNN_SOFTMAX_MODE_CHANNEL;
}

cudnnHandle_t HandleOf(const KernelContext& ctx) {
  return DnnHandle(ctx.dev_id(), StreamOf(ctx));
}

}  // namespace

int64_t DnnCalls() { return g_calls.load(std::memory_order_relaxed); }

bool OwnKernelsOnly() {
  static const bool own = EnvFlag("MX_CUDA_OWN_KERNELS");
  return own;
}

namespace {

// Softmax forward (y from x) or backward (dx from y and dy) along the
// middle extent of (outer, len, inner).
bool SoftmaxCall(const std::string& op, const KernelContext& ctx, bool log,
                 bool backward, int dtype, int64_t outer, int64_t len,
                 int64_t inner, const void* x_or_y, const void* dy, void* out,
                 int32_t req) {
  const std::vector<int64_t> dims = {outer, len, inner, 1};
  if (!CudnnTakes(dtype) || !FitsDnn(dims)) return false;
  if (req == MX_REQ_NULL) return true;
  Descriptors& d = Mine();
  SetPacked(op, d.a, dtype, dims);
  const cudnnSoftmaxAlgorithm_t algo =
      log ? CUDNN_SOFTMAX_LOG : CUDNN_SOFTMAX_ACCURATE;
  return Took(
      backward ? cudnnSoftmaxBackward(HandleOf(ctx), algo, SoftmaxMode(inner),
                                      DnnOne(dtype), d.a, x_or_y, d.a, dy,
                                      BetaFor(req, dtype), d.a, out)
               : cudnnSoftmaxForward(HandleOf(ctx), algo, SoftmaxMode(inner),
                                     DnnOne(dtype), d.a, x_or_y,
                                     BetaFor(req, dtype), d.a, out),
      op);
}

}  // namespace

bool DnnSoftmax(const std::string& op, const KernelContext& ctx, bool log,
                int dtype, int64_t outer, int64_t len, int64_t inner,
                const void* x, void* y, int32_t req) {
  return SoftmaxCall(op, ctx, log, /*backward=*/false, dtype, outer, len, inner,
                     x, nullptr, y, req);
}

bool DnnSoftmaxBackward(const std::string& op, const KernelContext& ctx,
                        bool log, int dtype, int64_t outer, int64_t len,
                        int64_t inner, const void* y, const void* dy, void* dx,
                        int32_t req) {
  return SoftmaxCall(op, ctx, log, /*backward=*/true, dtype, outer, len, inner,
                     y, dy, dx, req);
}

bool DnnActivation(const std::string& op, const KernelContext& ctx, Unary kind,
                   int dtype, int64_t n, const void* x, void* y, int32_t req) {
  cudnnActivationMode_t mode;
  switch (kind) {
    case Unary::kRelu:
      mode = CUDNN_ACTIVATION_RELU;
      break;
    case Unary::kSigmoid:
      mode = CUDNN_ACTIVATION_SIGMOID;
      break;
    case Unary::kTanh:
      mode = CUDNN_ACTIVATION_TANH;
      break;
    default:
      return false;
  }
  const std::vector<int64_t> dims = {1, 1, 1, n};
  if (!CudnnTakes(dtype) || !FitsDnn(dims)) return false;
  if (req == MX_REQ_NULL) return true;
  Descriptors& d = Mine();
  SetPacked(op, d.a, dtype, dims);
  CheckDnn(cudnnSetActivationDescriptor(d.act, mode, CUDNN_PROPAGATE_NAN, 0),
           op + ": activation descriptor");
  return Took(cudnnActivationForward(HandleOf(ctx), d.act, DnnOne(dtype), d.a,
                                     x, BetaFor(req, dtype), d.a, y),
              op);
}

bool DnnPoolForward(const std::string& op, const KernelContext& ctx,
                    PoolType type, bool count_include_pad, int dtype,
                    int64_t channels, const PoolShape& g, const void* x,
                    void* y, int32_t req) {
  if (type == PoolType::kSum || !CudnnTakes(dtype) || channels <= 0 ||
      g.planes % channels != 0) {
    return false;
  }
  // 2-D windows (and 1-D ones, as height 1) as 4-D tensors, 3-D as 5-D.
  const int first = g.in[0] == 1 && g.k[0] == 1 && g.p[0] == 0 ? 1 : 0;
  const int64_t batch = g.planes / channels;
  std::vector<int64_t> in_dims = {batch, channels},
                       out_dims = {batch, channels};
  std::vector<int> window, pad, stride;
  for (int a = first; a < 3; ++a) {
    in_dims.push_back(g.in[a]);
    out_dims.push_back(g.out[a]);
    // A window wholly in the padding gives MXNet's 0, not cuDNN's -inf.
    if (g.p[a] >= g.k[a] || g.k[a] > INT_MAX || g.s[a] > INT_MAX) {
      return false;
    }
    window.push_back(static_cast<int>(g.k[a]));
    pad.push_back(static_cast<int>(g.p[a]));
    stride.push_back(static_cast<int>(g.s[a]));
  }
  if (!FitsDnn(in_dims) || !FitsDnn(out_dims)) return false;
  const int spatial = static_cast<int>(window.size());
  Descriptors& d = Mine();
  const cudnnPoolingMode_t mode =
      type == PoolType::kMax
          ? CUDNN_POOLING_MAX
          : (count_include_pad ? CUDNN_POOLING_AVERAGE_COUNT_INCLUDE_PADDING
                               : CUDNN_POOLING_AVERAGE_COUNT_EXCLUDE_PADDING);
  CheckDnn(
      cudnnSetPoolingNdDescriptor(d.pool, mode, CUDNN_PROPAGATE_NAN, spatial,
                                  window.data(), pad.data(), stride.data()),
      op + ": pooling descriptor");
  SetPacked(op, d.a, dtype, in_dims);
  // cuDNN's extents are MXNet's "valid" ones; "full" ones that differ
  // (windows past the padded input) stay with the plugin's kernel.
  std::vector<int> want(in_dims.size());
  CheckDnn(cudnnGetPoolingNdForwardOutputDim(
               d.pool, d.a, static_cast<int>(want.size()), want.data()),
           op + ": output extents");
  for (size_t i = 0; i < want.size(); ++i) {
    if (want[i] != out_dims[i]) return false;
  }
  if (req == MX_REQ_NULL) return true;
  SetPacked(op, d.b, dtype, out_dims);
  return Took(cudnnPoolingForward(HandleOf(ctx), d.pool, DnnOne(dtype), d.a, x,
                                  BetaFor(req, dtype), d.b, y),
              op);
}

bool DnnBatchNormTrain(const std::string& op, const KernelContext& ctx,
                       const BatchNormArgs& a, int dtype, const void* x,
                       const void* gamma, const void* beta, void* moving_mean,
                       void* moving_var, void* y, int32_t req_y, void* mean,
                       int32_t req_mean, void* var, int32_t req_var) {
  const std::vector<int64_t> dims = {a.outer, a.channels, a.inner, 1};
  // One value per channel has no variance cuDNN computes; MXNet's is 0.
  // Batches above 880801 fail in cuDNN's spatial training mode (PyTorch
  // keeps such batches off cuDNN too).
  if (!a.batch_stats || req_y == MX_REQ_NULL || !CudnnTakes(dtype) ||
      !FitsDnn(dims) || a.outer * a.inner < 2 || a.outer > 880801 ||
      a.eps < CUDNN_BN_MIN_EPSILON) {
    return false;
  }
  const int param_dtype =
      dtype == MX_DTYPE_FLOAT64 ? MX_DTYPE_FLOAT64 : MX_DTYPE_FLOAT32;
  const size_t param_bytes = DTypeSize(param_dtype);
  cudaStream_t s = StreamOf(ctx);
  // Scratch: the batch mean, 1/sqrt(var + eps), and gamma = 1 (fix_gamma).
  char* scratch =
      static_cast<char*>(Workspace(ctx, 3 * a.channels * param_bytes));
  void* save_mean = scratch;
  void* save_inv_std = scratch + a.channels * param_bytes;
  const void* scale = gamma;
  if (a.fix_gamma) {
    void* ones = scratch + 2 * a.channels * param_bytes;
    CheckLaunch(op, LaunchFill(param_dtype, a.channels, 1.0, ones, s),
                param_dtype);
    scale = ones;
  }
  Descriptors& d = Mine();
  SetPacked(op, d.a, dtype, dims);
  CheckDnn(cudnnDeriveBNTensorDescriptor(d.b, d.a, CUDNN_BATCHNORM_SPATIAL),
           op + ": parameter descriptor");
  if (!Took(cudnnBatchNormalizationForwardTraining(
                HandleOf(ctx), CUDNN_BATCHNORM_SPATIAL, DnnOne(dtype),
                BetaFor(req_y, dtype), d.a, x, d.a, y, d.b, scale, beta,
                /*exponentialAverageFactor=*/0, nullptr, nullptr, a.eps,
                save_mean, save_inv_std),
            op)) {
    return false;
  }
  CheckLaunch(op,
              LaunchBatchNormFromInvStd(param_dtype, a, save_mean, save_inv_std,
                                        mean, req_mean, var, req_var,
                                        moving_mean, moving_var, s),
              param_dtype);
  return true;
}

}  // namespace mx_cuda
