// GPU kernels for MXNet's elementwise, broadcast, scalar, activation,
// softmax, shape (same bytes, new shape) and optimizer-update
// ops, on the plugin's own CUDA kernels (elementwise.cu).
#include <algorithm>
#include <cmath>
#include <map>
#include <string>
#include <vector>

#include "backends/common/attr_parse.h"
#include "backends/cuda/cuda_ops.h"
#include "backends/cuda/cuda_util.h"
#include "backends/cuda/dnn_calls.h"
#include "backends/cuda/elementwise.h"

namespace mx_cuda {
namespace {

using mxplugin::Attrs;
using mxplugin::Error;
using mxplugin::KernelContext;
using mxplugin::Tensor;
using mxplugin::Tensors;

// The unary ops the CPU also computes on integers.
bool IntegerUnary(Unary u) {
  switch (u) {
    case Unary::kNegative:
    case Unary::kAbs:
    case Unary::kSign:
    case Unary::kSquare:
    case Unary::kRelu:
    case Unary::kRound:
    case Unary::kRint:
    case Unary::kTrunc:
    case Unary::kFloor:
    case Unary::kCeil:
    case Unary::kLogicalNot:
      return true;
    default:
      return false;
  }
}

void RegisterUnary(mxplugin::Plugin& plugin, const std::string& op, Unary u) {
  RegisterGpuKernel(
      plugin, op,
      [op, u](const KernelContext& ctx, const Attrs&, Tensors in,
              const int32_t* req, Tensors out) {
        if (IntegerUnary(u)) {
          RequireNumeric(op, in[0]);
        } else {
          RequireFloat(op, in[0]);
        }
        CheckCuda(
            LaunchUnary(u, in[0].dtype(), in[0].size(), in[0].data<void>(),
                        out[0].data<void>(), req[0], StreamOf(ctx)),
            op);
      });
}

void RegisterBinary(mxplugin::Plugin& plugin, const std::string& op, Binary f,
                    bool broadcast) {
  RegisterGpuKernel(
      plugin, op,
      [op, f, broadcast](const KernelContext& ctx, const Attrs&, Tensors in,
                         const int32_t* req, Tensors out) {
        RequireNumeric(op, in[0]);
        const bool same =
            in[0].shape() == out[0].shape() && in[1].shape() == out[0].shape();
        BroadcastIndex bc;
        if (!same) {
          if (!broadcast) {
            throw Error(MX_STATUS_SHAPE_ERROR,
                        op + ": operands differ in shape");
          }
          bc = MakeBroadcast(op, in[0], in[1], out[0]);
        }
        CheckCuda(
            LaunchBinary(f, in[0].dtype(), out[0].size(), in[0].data<void>(),
                         in[1].data<void>(), out[0].data<void>(), req[0],
                         same ? nullptr : &bc, StreamOf(ctx)),
            op);
      });
}

void RegisterScalar(mxplugin::Plugin& plugin, const std::string& op, Binary f,
                    bool reverse) {
  RegisterGpuKernel(
      plugin, op,
      [op, f, reverse](const KernelContext& ctx, const Attrs& attrs, Tensors in,
                       const int32_t* req, Tensors out) {
        RequireNumeric(op, in[0]);
        const double s = NumberAttr(op, attrs, "scalar", 0.0);
        CheckCuda(LaunchScalar(f, reverse, in[0].dtype(), in[0].size(),
                               in[0].data<void>(), s, out[0].data<void>(),
                               req[0], StreamOf(ctx)),
                  op);
      });
}

const std::map<std::string, Unary>& ActivationTypes() {
  static const auto* m = new std::map<std::string, Unary>{
      {"relu", Unary::kRelu},         {"sigmoid", Unary::kSigmoid},
      {"tanh", Unary::kTanh},         {"softrelu", Unary::kSoftrelu},
      {"softsign", Unary::kSoftsign}, {"log_sigmoid", Unary::kLogSigmoid},
      {"mish", Unary::kMish}};
  return *m;
}

void Activation(const KernelContext& ctx, const Attrs& attrs, Tensors in,
                const int32_t* req, Tensors out) {
  RequireFloat("Activation", in[0]);
  const std::string act = attrs.Get("act_type");
  auto it = ActivationTypes().find(act);
  if (it == ActivationTypes().end()) {
    throw Error(MX_STATUS_INVALID_ARGUMENT,
                "Activation: act_type=\"" + act +
                    "\" is not one of relu, "
                    "sigmoid, tanh, softrelu, softsign, log_sigmoid, mish");
  }
  if (DnnActivation("Activation", ctx, it->second, in[0].dtype(), in[0].size(),
                    in[0].data<void>(), out[0].data<void>(), req[0])) {
    return;
  }
  CheckCuda(
      LaunchUnary(it->second, in[0].dtype(), in[0].size(), in[0].data<void>(),
                  out[0].data<void>(), req[0], StreamOf(ctx)),
      "Activation");
}

// (outer, len, inner) of a softmax along attrs' axis of `t`.
void SoftmaxExtents(const std::string& op, const Attrs& attrs, const Tensor& t,
                    int64_t* outer, int64_t* len, int64_t* inner,
                    double* temperature) {
  const int n = t.ndim();
  const auto axis = mxplugin::ParseInt(attrs.Get("axis", "-1"));
  if (!axis || *axis < -n || *axis >= n) {
    throw Error(MX_STATUS_INVALID_ARGUMENT,
                op + ": axis=" + attrs.Get("axis", "-1") + " for " +
                    std::to_string(n) + " dims");
  }
  const int ax = static_cast<int>(*axis < 0 ? *axis + n : *axis);
  *outer = *inner = 1;
  for (int d = 0; d < ax; ++d) *outer *= t.dim(d);
  for (int d = ax + 1; d < n; ++d) *inner *= t.dim(d);
  *len = t.dim(ax);
  *temperature = NumberAttr(op, attrs, "temperature", 1.0);
}

// use_length: each line's valid length from the lengths (input `index`)
// into scratch, checked (one synchronization); null without use_length.
const int64_t* ValidLengths(const std::string& op, const KernelContext& ctx,
                            const Attrs& attrs, Tensors in, size_t index,
                            int64_t lines, int64_t len, void* scratch,
                            int* bad) {
  if (!FlagAttr(op, attrs, "use_length", "False")) return nullptr;
  if (in.size() <= index) {
    throw Error(MX_STATUS_INVALID_ARGUMENT,
                op + ": use_length=True needs the length input");
  }
  const Tensor lengths = in[index];
  auto* valid = static_cast<int64_t*>(scratch);
  CheckLaunch(
      op,
      LaunchSoftmaxLengths(lengths.dtype(), lines, len, lengths.data<void>(),
                           valid, bad, StreamOf(ctx)),
      lengths.dtype());
  CheckFlag(ctx, op, bad,
            "a length is outside [0, " + std::to_string(len) + "]");
  return valid;
}

// kMin: softmin, softmax of -x (the own kernel with the temperature
// negated). With `dtype` the data is cast to the output's dtype first (the
// CPU computes float16 data in float too); with use_length the lines are
// limited to their lengths (input 1).
template <bool kLog, bool kMin = false>
void Softmax(const KernelContext& ctx, const Attrs& attrs, Tensors in,
             const int32_t* req, Tensors out) {
  const std::string op = kMin ? "softmin" : (kLog ? "log_softmax" : "softmax");
  if (req[0] == MX_REQ_NULL) return;
  RequireFloat(op, in[0]);
  RequireFloat(op, out[0]);
  int64_t outer, len, inner;
  double t;
  SoftmaxExtents(op, attrs, in[0], &outer, &len, &inner, &t);
  if (kMin) t = -t;
  const bool use_length = FlagAttr(op, attrs, "use_length", "False");
  const int od = out[0].dtype();
  if (!use_length && t == 1.0 && od == in[0].dtype() &&
      DnnSoftmax(op, ctx, kLog, od, outer, len, inner, in[0].data<void>(),
                 out[0].data<void>(), req[0])) {
    return;
  }
  const size_t valid_bytes = use_length ? outer * inner * sizeof(int64_t) : 0;
  const size_t cast_bytes =
      od != in[0].dtype() ? in[0].size() * DTypeSize(od) : 0;
  void* scratch = nullptr;
  int* bad = FlagAndScratch(ctx, op, valid_bytes + cast_bytes, &scratch);
  const int64_t* valid =
      ValidLengths(op, ctx, attrs, in, 1, outer * inner, len, scratch, bad);
  const void* x = in[0].data<void>();
  if (cast_bytes > 0) {
    void* converted = static_cast<char*>(scratch) + valid_bytes;
    CheckLaunch(op,
                LaunchCast(in[0].dtype(), od, in[0].size(), x, converted,
                           StreamOf(ctx)),
                in[0].dtype());
    x = converted;
  }
  CheckCuda(LaunchSoftmax(kLog, od, outer, len, inner, t, valid, x,
                          out[0].data<void>(), req[0], StreamOf(ctx)),
            op);
}

// (out_grad, output[, length]) -> data_grad, in the output's dtype (the
// host casts it to the data's when `dtype` made them differ).
template <bool kLog, bool kMin = false>
void SoftmaxBackward(const KernelContext& ctx, const Attrs& attrs, Tensors in,
                     const int32_t* req, Tensors out) {
  const std::string op =
      kMin ? "_backward_softmin"
           : (kLog ? "_backward_log_softmax" : "_backward_softmax");
  if (req[0] == MX_REQ_NULL) return;
  RequireFloat(op, in[0]);
  int64_t outer, len, inner;
  double t;
  SoftmaxExtents(op, attrs, in[1], &outer, &len, &inner, &t);
  if (kMin) t = -t;
  const bool use_length = FlagAttr(op, attrs, "use_length", "False");
  if (!use_length && t == 1.0 && in[1].dtype() == in[0].dtype() &&
      out[0].dtype() == in[0].dtype() &&
      DnnSoftmaxBackward(op, ctx, kLog, in[0].dtype(), outer, len, inner,
                         in[1].data<void>(), in[0].data<void>(),
                         out[0].data<void>(), req[0])) {
    return;
  }
  void* scratch = nullptr;
  int* bad = FlagAndScratch(
      ctx, op, use_length ? outer * inner * sizeof(int64_t) : 0, &scratch);
  const int64_t* valid =
      ValidLengths(op, ctx, attrs, in, 2, outer * inner, len, scratch, bad);
  CheckCuda(LaunchSoftmaxGrad(kLog, in[0].dtype(), outer, len, inner, t, valid,
                              in[0].data<void>(), in[1].data<void>(),
                              out[0].data<void>(), req[0], StreamOf(ctx)),
            op);
}

// masked_softmax's mask (bool, the data's rank, each dimension the data's
// or 1; the core's shape inference has checked the rest) laid over data.
MaskLayout MaskLayoutOf(const std::string& op, const Tensor& data,
                        const Tensor& mask) {
  if (mask.dtype() != MX_DTYPE_BOOL) {
    throw Error(MX_STATUS_DTYPE_ERROR, op + ": the mask must be bool");
  }
  if (data.ndim() > kMaxDims || mask.ndim() != data.ndim()) {
    Unsupported(op, "data of rank " + std::to_string(data.ndim()) +
                        " with a mask of rank " + std::to_string(mask.ndim()));
  }
  MaskLayout l;
  l.ndim = data.ndim();
  int64_t step = 1;
  for (int d = l.ndim - 1; d >= 0; --d) {
    l.shape[d] = data.dim(d);
    l.mask_stride[d] = mask.dim(d) == 1 ? 0 : step;
    step *= mask.dim(d);
  }
  return l;
}

// (data, mask) -> y; normalize "None" is MXNet 2's default, True.
template <bool kLog>
void MaskedSoftmax(const KernelContext& ctx, const Attrs& attrs, Tensors in,
                   const int32_t* req, Tensors out) {
  const std::string op = kLog ? "masked_log_softmax" : "masked_softmax";
  if (req[0] == MX_REQ_NULL) return;
  RequireFloat(op, in[0]);
  int64_t outer, len, inner;
  double t;
  SoftmaxExtents(op, attrs, in[0], &outer, &len, &inner, &t);
  const bool normalize = attrs.Get("normalize", "None") == "None" ||
                         FlagAttr(op, attrs, "normalize", "True");
  CheckCuda(LaunchMaskedSoftmax(kLog, normalize, in[0].dtype(), outer, len,
                                inner, t, MaskLayoutOf(op, in[0], in[1]),
                                in[1].data<bool>(), in[0].data<void>(),
                                out[0].data<void>(), req[0], StreamOf(ctx)),
            op);
}

// (out_grad, mask, output) -> data_grad.
template <bool kLog>
void MaskedSoftmaxBackward(const KernelContext& ctx, const Attrs& attrs,
                           Tensors in, const int32_t* req, Tensors out) {
  const std::string op =
      kLog ? "_backward_masked_log_softmax" : "_backward_masked_softmax";
  if (req[0] == MX_REQ_NULL) return;
  RequireFloat(op, in[0]);
  int64_t outer, len, inner;
  double t;
  SoftmaxExtents(op, attrs, in[0], &outer, &len, &inner, &t);
  CheckCuda(LaunchMaskedSoftmaxGrad(kLog, in[0].dtype(), outer, len, inner, t,
                                    MaskLayoutOf(op, in[0], in[1]),
                                    in[1].data<bool>(), in[0].data<void>(),
                                    in[2].data<void>(), out[0].data<void>(),
                                    req[0], StreamOf(ctx)),
            op);
}

// clip: max(x, a_min) then min(., a_max); NaN stays NaN, as on the CPU.
void Clip(const KernelContext& ctx, const Attrs& attrs, Tensors in,
          const int32_t* req, Tensors out) {
  const std::string op = "clip";
  if (req[0] == MX_REQ_NULL) return;
  RequireNumeric(op, in[0]);
  const double lo = NumberAttr(op, attrs, "a_min", 0.0);
  const double hi = NumberAttr(op, attrs, "a_max", 0.0);
  if (lo > hi) {
    throw Error(MX_STATUS_INVALID_ARGUMENT,
                op + ": a_min=" + attrs.Get("a_min") +
                    " is greater than a_max=" + attrs.Get("a_max"));
  }
  cudaStream_t s = StreamOf(ctx);
  const int dt = in[0].dtype();
  const int64_t n = in[0].size();
  if (req[0] == MX_REQ_ADD) {
    void* tmp = Workspace(ctx, ByteSize(in[0]));
    CheckCuda(LaunchScalar(Binary::kMax, false, dt, n, in[0].data<void>(), lo,
                           tmp, MX_REQ_WRITE, s),
              op);
    CheckCuda(LaunchScalar(Binary::kMin, false, dt, n, tmp, hi,
                           out[0].data<void>(), MX_REQ_ADD, s),
              op);
    return;
  }
  CheckCuda(LaunchScalar(Binary::kMax, false, dt, n, in[0].data<void>(), lo,
                         out[0].data<void>(), MX_REQ_WRITE, s),
            op);
  CheckCuda(LaunchScalar(Binary::kMin, false, dt, n, out[0].data<void>(), hi,
                         out[0].data<void>(), MX_REQ_WRITE, s),
            op);
}

// add_n / ElementWiseSum: the sum of its inputs (gradient accumulation).
void AddN(const KernelContext& ctx, const Attrs&, Tensors in,
          const int32_t* req, Tensors out) {
  const std::string op = "add_n";
  if (req[0] == MX_REQ_NULL) return;
  RequireNumeric(op, out[0]);
  const int dt = out[0].dtype();
  const int64_t n = out[0].size();
  void* y = out[0].data<void>();
  cudaStream_t s = StreamOf(ctx);
  if (in.size() == 1) {
    CheckCuda(
        LaunchUnary(Unary::kIdentity, dt, n, in[0].data<void>(), y, req[0], s),
        op);
    return;
  }
  // y (+)= in0 + in1, then y += in_i; an input may share y's memory only
  // as in0 (in-place), which the first pass reads before writing.
  CheckCuda(LaunchBinary(Binary::kAdd, dt, n, in[0].data<void>(),
                         in[1].data<void>(), y, req[0], nullptr, s),
            op);
  for (int i = 2; i < in.size(); ++i) {
    CheckCuda(LaunchUnary(Unary::kIdentity, dt, n, in[i].data<void>(), y,
                          MX_REQ_ADD, s),
              op);
  }
}

}  // namespace

void RegisterElementwiseOps(mxplugin::Plugin& plugin) {
  const std::pair<const char*, Unary> unary[] = {
      {"negative", Unary::kNegative},
      {"abs", Unary::kAbs},
      {"sign", Unary::kSign},
      {"exp", Unary::kExp},
      {"log", Unary::kLog},
      {"sqrt", Unary::kSqrt},
      {"rsqrt", Unary::kRsqrt},
      {"square", Unary::kSquare},
      {"reciprocal", Unary::kReciprocal},
      {"sin", Unary::kSin},
      {"cos", Unary::kCos},
      {"tanh", Unary::kTanh},
      {"sigmoid", Unary::kSigmoid},
      {"relu", Unary::kRelu},
      {"erf", Unary::kErf},
      {"expm1", Unary::kExpm1},
      {"log1p", Unary::kLog1p},
      {"tan", Unary::kTan},
      {"sinh", Unary::kSinh},
      {"cosh", Unary::kCosh},
      {"arcsin", Unary::kArcsin},
      {"arccos", Unary::kArccos},
      {"arctan", Unary::kArctan},
      {"arcsinh", Unary::kArcsinh},
      {"arccosh", Unary::kArccosh},
      {"arctanh", Unary::kArctanh},
      {"log2", Unary::kLog2},
      {"log10", Unary::kLog10},
      {"cbrt", Unary::kCbrt},
      {"rcbrt", Unary::kRcbrt},
      {"degrees", Unary::kDegrees},
      {"radians", Unary::kRadians},
      {"round", Unary::kRound},
      {"rint", Unary::kRint},
      {"fix", Unary::kTrunc},  // MXNet's fix is trunc.
      {"trunc", Unary::kTrunc},
      {"floor", Unary::kFloor},
      {"ceil", Unary::kCeil},
      {"logical_not", Unary::kLogicalNot},
      {"gamma", Unary::kGamma},
      {"gammaln", Unary::kGammaln},
      {"digamma", Unary::kDigamma},
      {"erfinv", Unary::kErfinv}};
  for (const auto& [op, u] : unary) RegisterUnary(plugin, op, u);
  // MXNet 2's NumPy names of the functions that keep the dtype (the float
  // functions of integers are in numpy_ops.cc).
  const std::pair<const char*, Unary> numpy_unary[] = {
      {"_npi_negative", Unary::kNegative},
      {"_npi_absolute", Unary::kAbs},
      {"_npi_sign", Unary::kSign},
      {"_npi_square", Unary::kSquare},
      {"_npi_reciprocal", Unary::kReciprocal},
      {"_npi_rint", Unary::kRint},
      {"_npi_ceil", Unary::kCeil},
      {"_npi_floor", Unary::kFloor},
      {"_npi_trunc", Unary::kTrunc},
      {"_npi_fix", Unary::kTrunc}};
  for (const auto& [op, u] : numpy_unary) RegisterUnary(plugin, op, u);
  // sigmoid of input 0; input 1, the label, feeds only the gradient.
  RegisterUnary(plugin, "LogisticRegressionOutput", Unary::kSigmoid);

  RegisterBinary(plugin, "elemwise_add", Binary::kAdd, false);
  RegisterBinary(plugin, "elemwise_sub", Binary::kSub, false);
  RegisterBinary(plugin, "elemwise_mul", Binary::kMul, false);
  RegisterBinary(plugin, "elemwise_div", Binary::kDiv, false);
  RegisterBinary(plugin, "_backward_relu", Binary::kReluGrad, false);
  RegisterBinary(plugin, "broadcast_add", Binary::kAdd, true);
  RegisterBinary(plugin, "broadcast_sub", Binary::kSub, true);
  RegisterBinary(plugin, "broadcast_mul", Binary::kMul, true);
  RegisterBinary(plugin, "broadcast_div", Binary::kDiv, true);
  RegisterBinary(plugin, "broadcast_maximum", Binary::kMax, true);
  RegisterBinary(plugin, "broadcast_minimum", Binary::kMin, true);
  RegisterBinary(plugin, "broadcast_power", Binary::kPower, true);

  RegisterScalar(plugin, "_plus_scalar", Binary::kAdd, false);
  RegisterScalar(plugin, "_minus_scalar", Binary::kSub, false);
  RegisterScalar(plugin, "_rminus_scalar", Binary::kSub, true);
  RegisterScalar(plugin, "_mul_scalar", Binary::kMul, false);
  RegisterScalar(plugin, "_div_scalar", Binary::kDiv, false);
  RegisterScalar(plugin, "_rdiv_scalar", Binary::kDiv, true);
  RegisterScalar(plugin, "_power_scalar", Binary::kPower, false);
  RegisterScalar(plugin, "_maximum_scalar", Binary::kMax, false);
  RegisterScalar(plugin, "_minimum_scalar", Binary::kMin, false);
  RegisterScalar(plugin, "_rpower_scalar", Binary::kPower, true);
  RegisterBinary(plugin, "broadcast_mod", Binary::kMod, true);
  RegisterBinary(plugin, "_mod", Binary::kMod, false);
  RegisterScalar(plugin, "_mod_scalar", Binary::kMod, false);
  RegisterScalar(plugin, "_rmod_scalar", Binary::kMod, true);
  RegisterBinary(plugin, "broadcast_hypot", Binary::kHypot, true);
  RegisterBinary(plugin, "_hypot", Binary::kHypot, false);
  RegisterScalar(plugin, "_hypot_scalar", Binary::kHypot, false);
  RegisterScalar(plugin, "smooth_l1", Binary::kSmoothL1, false);
  RegisterGpuKernel(
      plugin, "polygamma",
      [](const KernelContext& ctx, const Attrs& attrs, Tensors in,
         const int32_t* req, Tensors out) {
        const std::string op = "polygamma";
        RequireFloat(op, in[0]);
        const auto n = mxplugin::ParseInt(attrs.Get("n", ""));
        if (!n || *n < 0 || *n > 1000) {
          throw Error(MX_STATUS_INVALID_ARGUMENT,
                      op + ": n=\"" + attrs.Get("n", "") +
                          "\" must be an integer in [0, 1000]");
        }
        CheckCuda(
            LaunchScalar(Binary::kPolygamma, false, in[0].dtype(), in[0].size(),
                         in[0].data<void>(), static_cast<double>(*n),
                         out[0].data<void>(), req[0], StreamOf(ctx)),
            op);
      });
  const std::pair<const char*, Binary> logical[] = {
      {"and", Binary::kLogicalAnd},
      {"or", Binary::kLogicalOr},
      {"xor", Binary::kLogicalXor}};
  for (const auto& [name, f] : logical) {
    const std::string n = name;
    RegisterBinary(plugin, "broadcast_logical_" + n, f, true);
    RegisterBinary(plugin, "_logical_" + n, f, false);
    RegisterScalar(plugin, "_logical_" + n + "_scalar", f, false);
  }

  // Comparisons: MXNet's legacy names as 1/0 in the operands' dtype (the
  // NumPy-style names, bool, are in numpy_ops.cc).
  const std::pair<const char*, Binary> compare[] = {
      {"equal", Binary::kEq},   {"not_equal", Binary::kNe},
      {"greater", Binary::kGt}, {"greater_equal", Binary::kGe},
      {"lesser", Binary::kLt},  {"lesser_equal", Binary::kLe}};
  for (const auto& [name, f] : compare) {
    const std::string n = name;
    RegisterBinary(plugin, "broadcast_" + n, f, true);
    RegisterScalar(plugin, "_" + n + "_scalar", f, false);
  }

  RegisterGpuKernel(plugin, "Activation", Activation);
  RegisterGpuKernel(plugin, "softmax", Softmax<false>);
  RegisterGpuKernel(plugin, "log_softmax", Softmax<true>);
  RegisterGpuKernel(plugin, "_backward_softmax", SoftmaxBackward<false>);
  RegisterGpuKernel(plugin, "_backward_log_softmax", SoftmaxBackward<true>);
  RegisterGpuKernel(plugin, "softmin", Softmax<false, true>);
  RegisterGpuKernel(plugin, "_backward_softmin", SoftmaxBackward<false, true>);
  RegisterGpuKernel(plugin, "masked_softmax", MaskedSoftmax<false>);
  RegisterGpuKernel(plugin, "masked_log_softmax", MaskedSoftmax<true>);
  RegisterGpuKernel(plugin, "_backward_masked_softmax",
                    MaskedSoftmaxBackward<false>);
  RegisterGpuKernel(plugin, "_backward_masked_log_softmax",
                    MaskedSoftmaxBackward<true>);
  RegisterGpuKernel(plugin, "add_n", AddN);
  RegisterGpuKernel(plugin, "clip", Clip);
}

}  // namespace mx_cuda
