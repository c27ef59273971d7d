// Launchers of the CUDA plugin's own kernels (elementwise.cu,
// optimizer_kernels.cu, fill_kernels.cu and reduce_kernels.cu,
// compiled by nvcc), callable from the plugin's C++ code compiled by the host
// compiler. Every launcher handles float32, float64 and float16 (computed
// in float), takes the output's write request (MX_REQ_WRITE, _INPLACE or
// _ADD) and returns the launch status; it never throws.
//
//   CheckCuda(LaunchUnary(Unary::kRelu, MX_DTYPE_FLOAT32, n, x, y,
//                         MX_REQ_WRITE, stream), "relu");
#ifndef MXCORE_BACKENDS_CUDA_ELEMENTWISE_H_
#define MXCORE_BACKENDS_CUDA_ELEMENTWISE_H_

#include <cuda_runtime.h>

#include <cstdint>

namespace mx_cuda {

enum class Unary : int {
  kIdentity,
  kNegative,
  kAbs,
  kSign,
  kExp,
  kLog,
  kSqrt,
  kRsqrt,
  kSquare,
  kReciprocal,
  kSin,
  kCos,
  kTanh,
  kSigmoid,
  kRelu,
  kSoftrelu,
  kErf,
  kExpm1,
  kLog1p,
  kSoftsign,
  kLogSigmoid,
  kMish,
  kTan,
  kSinh,
  kCosh,
  kArcsin,
  kArccos,
  kArctan,
  kArcsinh,
  kArccosh,
  kArctanh,
  kLog2,
  kLog10,
  kCbrt,
  kRcbrt,
  kDegrees,
  kRadians,
  // Rounding (the identity on integers; kRint's halves go toward -inf, as
  // MXNet's rint) and logical_not (1/0 in the dtype).
  kRound,
  kRint,
  kTrunc,
  kFloor,
  kCeil,
  kLogicalNot,
  kGamma,
  kGammaln,
  kDigamma,
  kErfinv,
};

enum class Binary : int {
  kAdd,
  kSub,
  kMul,
  kDiv,
  kMax,
  kMin,
  kPower,
  kReluGrad,  // a * sign(b): relu's gradient from (ograd, output).
  kMod,       // MXNet's mod: the sign of b, a mod 0 = 0.
  kHypot,
  kSmoothL1,   // smooth_l1(a) with sigma b.
  kPolygamma,  // polygamma of a with order b.
  // Logical ops as 1 or 0 in the operands' dtype (non-zero is true).
  kLogicalAnd,
  kLogicalOr,
  kLogicalXor,
  // Comparisons as 1 or 0 in the operands' dtype (MXNet's legacy
  // broadcast_equal, _greater_scalar, ...); LaunchCompare writes bool.
  kEq,
  kNe,
  kGt,
  kGe,
  kLt,
  kLe,
};

constexpr int kMaxDims = 8;

// Index maps of a broadcasting binary op: output shape and each operand's
// element strides (0 along broadcast axes), all of rank `ndim`.
struct BroadcastIndex {
  int ndim = 0;
  int64_t shape[kMaxDims];
  int64_t a_stride[kMaxDims];
  int64_t b_stride[kMaxDims];
};

cudaError_t LaunchUnary(Unary op, int dtype, int64_t n, const void* x, void* y,
                        int req, cudaStream_t stream);

// `bc` null: a, b and y have n elements each.
cudaError_t LaunchBinary(Binary op, int dtype, int64_t n, const void* a,
                         const void* b, void* y, int req,
                         const BroadcastIndex* bc, cudaStream_t stream);

// y = x op s, or s op x when `reverse`.
cudaError_t LaunchScalar(Binary op, bool reverse, int dtype, int64_t n,
                         const void* x, double s, void* y, int req,
                         cudaStream_t stream);

// Comparison op (kEq ... kLe) to a bool array (NumPy-style _npi_equal,
// ...): y = a op b (`bc` as LaunchBinary), or with `b` null y = x op s (s op
// x when `reverse`). MX_REQ_ADD ors into y, as the CPU's bool add does.
cudaError_t LaunchCompare(Binary op, int dtype, int64_t n, const void* a,
                          const void* b, double s, bool reverse,
                          const BroadcastIndex* bc, void* y, int req,
                          cudaStream_t stream);

// Activation gradients from (ograd, output y): relu, sigmoid, tanh,
// softrelu (d/dx log(1+e^x) = 1 - e^-y).
enum class ActGrad : int { kRelu, kSigmoid, kTanh, kSoftrelu };
cudaError_t LaunchActGrad(ActGrad op, int dtype, int64_t n, const void* dy,
                          const void* y, void* dx, int req,
                          cudaStream_t stream);

// MXNet's sgd_update (mom null) and sgd_mom_update (mom updated in place).
struct SgdParams {
  double lr = 0, wd = 0, rescale = 1, clip = -1, momentum = 0;
};
cudaError_t LaunchSgd(int dtype, int64_t n, const void* w, const void* g,
                      void* mom, void* out, int req, const SgdParams& p,
                      cudaStream_t stream);

// Many sgd_mom_updates in one launch (blockIdx.y picks the parameter).
constexpr int kMultiUpdateMax = 24;
struct MultiSgdTable {
  int count = 0;
  const void* w[kMultiUpdateMax];
  const void* g[kMultiUpdateMax];
  void* mom[kMultiUpdateMax];
  void* out[kMultiUpdateMax];
  int64_t n[kMultiUpdateMax];
  int req[kMultiUpdateMax];
};
cudaError_t LaunchMultiSgdMom(int dtype, const MultiSgdTable& table,
                              const SgdParams& p, cudaStream_t stream);

// MXNet's adam_update: mean and var updated in place.
struct AdamParams {
  double lr = 0, wd = 0, rescale = 1, clip = -1, beta1 = 0.9, beta2 = 0.999,
         epsilon = 1e-8;
};
cudaError_t LaunchAdam(int dtype, int64_t n, const void* w, const void* g,
                       void* mean, void* var, void* out, int req,
                       const AdamParams& p, cudaStream_t stream);

// Sum, mean, max, min, prod, nansum or nanprod over the middle axis of x
// viewed as (outer, reduce, inner); max/min propagate NaN, nansum/nanprod
// leave it out.
enum class Reduce : int { kSum, kMean, kMax, kMin, kProd, kNanSum, kNanProd };
cudaError_t LaunchReduce(Reduce op, int dtype, int64_t outer, int64_t reduce,
                         int64_t inner, const void* x, void* y, int req,
                         cudaStream_t stream);

// The L1 (ord 1) or L2 (ord 2) norm over the middle axis of x (float32/64/
// 16) viewed as (outer, reduce, inner), into y of out_dtype (a float
// dtype): sums in double, float64 squares scaled (no overflow).
cudaError_t LaunchNorm(int ord, int dtype, int out_dtype, int64_t outer,
                       int64_t reduce, int64_t inner, const void* x, void* y,
                       int req, cudaStream_t stream);

// moments over the middle axis of x (float) viewed as (outer, reduce,
// inner): the mean and the biased variance (two passes, in double); an
// empty reduction (reduce 0) writes nothing (the caller fills NaN).
cudaError_t LaunchMoments(int dtype, int64_t outer, int64_t reduce,
                          int64_t inner, const void* x, void* mean,
                          int req_mean, void* var, int req_var,
                          cudaStream_t stream);

// prod's gradient over the middle axis of x viewed as (outer, reduce,
// inner): dx = g (outer, inner) times the product of the other elements
// of the line, exact where x has zeros; skip_nan (nanprod): NaN elements
// count as 1 and get 0.
cudaError_t LaunchProdGrad(bool skip_nan, int dtype, int64_t outer,
                           int64_t reduce, int64_t inner, const void* g,
                           const void* x, void* dx, int req,
                           cudaStream_t stream);

// y = x converted to dst_dtype (float32/64/16, int32/64, uint8, int8,
// bool); float to integer truncates as static_cast.
cudaError_t LaunchCast(int src_dtype, int dst_dtype, int64_t n, const void* x,
                       void* y, cudaStream_t stream);

// softmax / log_softmax over the middle axis of (outer, len, inner), with
// x divided by `temperature` first; and the gradient from (ograd, output).
// valid (device, one per line, may be null): each line's first valid[line]
// elements count, the rest are 0.
cudaError_t LaunchSoftmax(bool log, int dtype, int64_t outer, int64_t len,
                          int64_t inner, double temperature,
                          const int64_t* valid, const void* x, void* y, int req,
                          cudaStream_t stream);
cudaError_t LaunchSoftmaxGrad(bool log, int dtype, int64_t outer, int64_t len,
                              int64_t inner, double temperature,
                              const int64_t* valid, const void* dy,
                              const void* y, void* dx, int req,
                              cudaStream_t stream);
// masked_softmax / masked_log_softmax over the middle axis of (outer, len,
// inner) and their gradient from (ograd, output): only elements whose bool
// mask is true count; the others give 0 (log: -inf) and no gradient. The
// mask is read at mask_stride (0 along its broadcast axes) over `shape`,
// the data's (rank ndim <= kMaxDims). normalize=false skips subtracting
// each line's maximum.
struct MaskLayout {
  int ndim = 0;
  int64_t shape[kMaxDims];
  int64_t mask_stride[kMaxDims];
};
cudaError_t LaunchMaskedSoftmax(bool log, bool normalize, int dtype,
                                int64_t outer, int64_t len, int64_t inner,
                                double temperature, const MaskLayout& layout,
                                const bool* mask, const void* x, void* y,
                                int req, cudaStream_t stream);
cudaError_t LaunchMaskedSoftmaxGrad(bool log, int dtype, int64_t outer,
                                    int64_t len, int64_t inner,
                                    double temperature,
                                    const MaskLayout& layout, const bool* mask,
                                    const void* dy, const void* y, void* dx,
                                    int req, cudaStream_t stream);
// softmax's use_length: `lengths` (length_dtype, one per line) truncated
// into valid; one outside [0, len] sets *bad.
cudaError_t LaunchSoftmaxLengths(int length_dtype, int64_t lines, int64_t len,
                                 const void* lengths, int64_t* valid, int* bad,
                                 cudaStream_t stream);

// y[i, j] (+)= bias[j] for y of (rows, cols): FullyConnected's bias.
cudaError_t LaunchAddBias(int dtype, int64_t rows, int64_t cols,
                          const void* bias, void* y, cudaStream_t stream);

// y[o] = scale * sum over r of src[offset + offset(o) + offset(r)]: output
// coordinates (shape, stride into src) and reduced coordinates (rshape,
// rstride). With no reduced dims it copies with broadcasting (stride 0).
struct GatherIndex {
  int ndim = 0, rdim = 0;
  double scale = 1;
  // Integer data: sums in double, then scaled and saturated into the dtype
  // (_reduce_sum_like's CPU rule); else sums wrap in the dtype and a scale
  // truncates (the CPU's static_cast), as the CPU's other ops do.
  bool saturate = false;
  int64_t offset = 0;  // Added to every source index (slices).
  int64_t shape[kMaxDims], stride[kMaxDims];
  int64_t rshape[kMaxDims], rstride[kMaxDims];
};
cudaError_t LaunchGatherSum(int dtype, int64_t n, const GatherIndex& index,
                            const void* src, void* y, int req,
                            cudaStream_t stream);

// The inverse of a plain gather (no reduced dims, distinct targets):
// y[offset + offset(i)] (+)= src[i] for src of n elements indexed by
// (shape, stride into y). Elements of y not hit are left as they are.
cudaError_t LaunchScatter(int dtype, int64_t n, const GatherIndex& index,
                          const void* src, void* y, int req,
                          cudaStream_t stream);

// MXNet's Pad: output (out_shape) reads input (in_shape, in_stride) at
// position - before, past the borders the constant, the edge element or
// the mirror image about the edge element.
enum class PadMode : int { kConstant, kEdge, kReflect };
struct PadIndex {
  int ndim = 0;
  PadMode mode = PadMode::kConstant;
  int64_t out_shape[kMaxDims], in_shape[kMaxDims], in_stride[kMaxDims];
  int64_t before[kMaxDims];
};
cudaError_t LaunchPad(int dtype, int64_t n, const PadIndex& index, double value,
                      const void* x, void* y, int req, cudaStream_t stream);
// dx += the gradient of Pad from dy (n elements of out_shape); the caller
// zeroes dx first unless adding to it.
cudaError_t LaunchPadGrad(int dtype, int64_t n, const PadIndex& index,
                          const void* dy, void* dx, cudaStream_t stream);

// y[i] = value (float and integer dtypes; integers as the CPU's fills:
// truncated toward zero, wrapped modulo 2^bits, NaN 0).
cudaError_t LaunchFill(int dtype, int64_t n, double value, void* y,
                       cudaStream_t stream);

// Counter-based random numbers (Philox4x32-10, cuRAND's device API):
// element i is drawn from subsequence i of `seed`, so a seed reproduces
// the array whatever the launch shape. normal: loc + scale * N(0, 1);
// uniform: a + (b - a) * U[0, 1).
cudaError_t LaunchRandom(bool normal, int dtype, int64_t n, double a, double b,
                         uint64_t seed, void* y, cudaStream_t stream);

// y (n, depth) = on where the index equals the column, else off; indices
// of dtype `index_dtype` (float32/64, int32/64) truncated to integers.
cudaError_t LaunchOneHot(int dtype, int index_dtype, int64_t n, int64_t depth,
                         const void* indices, double on, double off, void* y,
                         cudaStream_t stream);

}  // namespace mx_cuda

#endif  // MXCORE_BACKENDS_CUDA_ELEMENTWISE_H_
