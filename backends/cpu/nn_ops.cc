// Neural-network layers without weights to multiply: Activation, LeakyReLU,
// BatchNorm (with in-place moving statistics) and Dropout.
#include <cmath>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "backends/cpu/kernel_util.h"
#include "base/error.h"

namespace mx {
namespace cpu {
namespace {

constexpr int64_t kGrain = 1 << 14;

// y = f(x) elementwise, computed in AccType<T>.
template <typename F>
void MapFloat(const TBlob& x, OpReqType req, const TBlob& y, F f) {
  if (req == OpReqType::kNullOp) return;
  MX_FLOAT_DTYPE_SWITCH(x.dtype, T, {
    using A = AccType<T>;
    const T* src = x.data<T>();
    T* dst = y.data<T>();
    ParallelFor(x.Size(), kGrain, [&](int64_t b, int64_t e) {
      for (int64_t i = b; i < e; ++i) {
        Assign(dst + i, req, f(static_cast<A>(src[i])));
      }
    });
  });
}

// One float dtype for the data and every output.
void FloatUnaryType(const NodeAttrs& attrs, std::vector<DType>* in,
                    std::vector<DType>* out) {
  AssignType(attrs, in, 0, (*out)[0], false);
  const DType t = (*in)[0];
  if (t == DType::kUnknown) return;
  RequireFloat(attrs, t);
  for (size_t i = 0; i < out->size(); ++i) {
    AssignType(attrs, out, static_cast<int>(i), t, true);
  }
}

std::vector<std::pair<int, int>> InplaceFirst(const NodeAttrs&) {
  return {{0, 0}};
}

// log(1 + e^x) without overflow.
template <typename A>
A SoftRelu(A x) {
  return x > A(0) ? x + std::log1p(std::exp(-x)) : std::log1p(std::exp(x));
}

// ---- Activation. ----

struct ActivationParam {
  std::string act_type;
  static void Declare(ParamSchema<ActivationParam>* s) {
    s->Field("act_type", &ActivationParam::act_type)
        .Required()
        .Choices({"relu", "sigmoid", "tanh", "softrelu", "softsign",
                  "log_sigmoid", "mish"});
  }
};

void ActivationCompute(const OpContext&, const NodeAttrs& attrs,
                       const std::vector<TBlob>& in,
                       const std::vector<OpReqType>& req,
                       const std::vector<TBlob>& out) {
  const std::string& act = attrs.get<ActivationParam>().act_type;
  if (act == "relu") {
    MapFloat(in[0], req[0], out[0],
             [](auto x) { return x > 0 ? x : decltype(x)(0); });
  } else if (act == "sigmoid") {
    MapFloat(in[0], req[0], out[0], [](auto x) {
      using A = decltype(x);
      return A(1) / (A(1) + std::exp(-x));
    });
  } else if (act == "tanh") {
    MapFloat(in[0], req[0], out[0], [](auto x) { return std::tanh(x); });
  } else if (act == "softrelu") {
    MapFloat(in[0], req[0], out[0], [](auto x) { return SoftRelu(x); });
  } else if (act == "softsign") {
    MapFloat(in[0], req[0], out[0], [](auto x) {
      using A = decltype(x);
      return x / (A(1) + std::fabs(x));
    });
  } else if (act == "log_sigmoid") {
    MapFloat(in[0], req[0], out[0], [](auto x) { return -SoftRelu(-x); });
  } else {  // mish
    MapFloat(in[0], req[0], out[0],
             [](auto x) { return x * std::tanh(SoftRelu(x)); });
  }
}

MX_REGISTER_OP(Activation)
    .Describe(
        "Elementwise activation: relu, sigmoid, tanh, softrelu "
        "(log(1+e^x)), softsign (x/(1+|x|)), log_sigmoid or mish.")
    .SetNumInputs(1)
    .SetInputNames({"data"})
    .SetParams<ActivationParam>()
    .SetInferShape(SameShape)
    .SetInferType(FloatUnaryType)
    .SetInplaceOption(InplaceFirst)
    .SetCompute(Context::kCPU, ActivationCompute);

// ---- LeakyReLU. ----

struct LeakyReLUParam {
  std::string act_type = "leaky";
  double slope = 0.25;
  double lower_bound = 0.125;
  double upper_bound = 0.334;
  static void Declare(ParamSchema<LeakyReLUParam>* s) {
    s->Field("act_type", &LeakyReLUParam::act_type)
        .Choices({"leaky", "elu", "selu", "gelu", "prelu", "rrelu"})
        .Describe("prelu and rrelu are not implemented");
    s->Field("slope", &LeakyReLUParam::slope)
        .Describe("leaky: slope for x < 0; elu: alpha");
    s->Field("lower_bound", &LeakyReLUParam::lower_bound)
        .Describe("rrelu only");
    s->Field("upper_bound", &LeakyReLUParam::upper_bound)
        .Describe("rrelu only");
  }
};

void LeakyReLUShape(const NodeAttrs& attrs, std::vector<TShape>* in,
                    std::vector<TShape>* out) {
  const std::string& act = attrs.get<LeakyReLUParam>().act_type;
  if (act == "prelu" || act == "rrelu") {
    throw NotImplemented(absl::StrCat(OpLabel(attrs), ": act_type=", act,
                                      " is not implemented; leaky, elu, "
                                      "selu and gelu are"));
  }
  SameShape(attrs, in, out);
}

void LeakyReLUCompute(const OpContext&, const NodeAttrs& attrs,
                      const std::vector<TBlob>& in,
                      const std::vector<OpReqType>& req,
                      const std::vector<TBlob>& out) {
  const LeakyReLUParam& p = attrs.get<LeakyReLUParam>();
  const double slope = p.slope;
  if (p.act_type == "leaky") {
    MapFloat(in[0], req[0], out[0], [slope](auto x) {
      using A = decltype(x);
      return x > A(0) ? x : static_cast<A>(slope) * x;
    });
  } else if (p.act_type == "elu") {
    MapFloat(in[0], req[0], out[0], [slope](auto x) {
      using A = decltype(x);
      return x > A(0) ? x : static_cast<A>(slope) * std::expm1(x);
    });
  } else if (p.act_type == "selu") {
    MapFloat(in[0], req[0], out[0], [](auto x) {
      using A = decltype(x);
      const A alpha = static_cast<A>(1.6732632423543772848170429916717);
      const A scale = static_cast<A>(1.0507009873554804934193349852946);
      return scale * (x > A(0) ? x : alpha * std::expm1(x));
    });
  } else {  // gelu
    MapFloat(in[0], req[0], out[0], [](auto x) {
      using A = decltype(x);
      return A(0.5) * x *
             (A(1) + std::erf(x * static_cast<A>(0.70710678118654752440)));
    });
  }
}

MX_REGISTER_OP(LeakyReLU)
    .Describe(
        "Leaky rectifiers: leaky (x or slope*x), elu (x or "
        "slope*(e^x-1)), selu, gelu (0.5x(1+erf(x/sqrt(2)))).")
    .SetNumInputs([](const NodeAttrs& attrs) {
      return attrs.get<LeakyReLUParam>().act_type == "prelu" ? 2 : 1;
    })
    .SetInputNames([](const NodeAttrs& attrs) {
      if (attrs.get<LeakyReLUParam>().act_type == "prelu") {
        return std::vector<std::string>{"data", "gamma"};
      }
      return std::vector<std::string>{"data"};
    })
    .SetParams<LeakyReLUParam>()
    .SetInferShape(LeakyReLUShape)
    .SetInferType(FloatUnaryType)
    .SetInplaceOption(InplaceFirst)
    .SetCompute(Context::kCPU, LeakyReLUCompute);

// ---- BatchNorm. ----

struct BatchNormParam {
  double eps = 1e-3;
  double momentum = 0.9;
  bool fix_gamma = true;
  bool use_global_stats = false;
  int axis = 1;
  bool output_mean_var = false;
  bool cudnn_off = false;
  static void Declare(ParamSchema<BatchNormParam>* s) {
    s->Field("eps", &BatchNormParam::eps);
    s->Field("momentum", &BatchNormParam::momentum)
        .Describe("moving = moving * momentum + batch * (1 - momentum)");
    s->Field("fix_gamma", &BatchNormParam::fix_gamma)
        .Describe("Treat gamma as 1.");
    s->Field("use_global_stats", &BatchNormParam::use_global_stats)
        .Describe("Normalize with the moving statistics even in training.");
    s->Field("axis", &BatchNormParam::axis).Describe("The channel axis.");
    s->Field("output_mean_var", &BatchNormParam::output_mean_var)
        .Describe("Ignored: mean and var are always outputs 1 and 2.");
    s->Field("cudnn_off", &BatchNormParam::cudnn_off).Describe("Ignored.");
  }
};

constexpr int kBNParams[] = {1, 2, 3, 4};  // gamma, beta, moving mean/var.

void BatchNormShape(const NodeAttrs& attrs, std::vector<TShape>* in,
                    std::vector<TShape>* out) {
  const BatchNormParam& p = attrs.get<BatchNormParam>();
  AssignShape(attrs, in, 0, (*out)[0], false);
  AssignShape(attrs, out, 0, (*in)[0], true);
  const TShape& d = (*in)[0];
  if (!d.ndim_known()) return;
  const int ax = d.CheckAxis(p.axis, OpLabel(attrs).c_str());
  // The channel count may come from the data or any per-channel array.
  TShape channels{d[ax]};
  for (int i : kBNParams) MergeShape(&channels, (*in)[i]);
  for (int i : kBNParams) AssignShape(attrs, in, i, channels, false);
  AssignShape(attrs, out, 1, channels, true);
  AssignShape(attrs, out, 2, channels, true);
  TShape dc = TShape::Filled(d.ndim(), -1);
  dc[ax] = channels[0];
  AssignShape(attrs, in, 0, dc, false);
  AssignShape(attrs, out, 0, (*in)[0], true);
}

// The data and output 0 share a float dtype; the per-channel arrays are
// float32 for float16 data (as in MXNet) and the data's dtype otherwise.
void BatchNormType(const NodeAttrs& attrs, std::vector<DType>* in,
                   std::vector<DType>* out) {
  AssignType(attrs, in, 0, (*out)[0], false);
  const DType t = (*in)[0];
  if (t == DType::kUnknown) return;
  RequireFloat(attrs, t);
  AssignType(attrs, out, 0, t, true);
  const DType pt = t == DType::kFloat16 ? DType::kFloat32 : t;
  for (int i : kBNParams) AssignType(attrs, in, i, pt, false);
  AssignType(attrs, out, 1, pt, true);
  AssignType(attrs, out, 2, pt, true);
}

template <typename T>
void BatchNormImpl(const OpContext& ctx, const BatchNormParam& p,
                   const std::vector<TBlob>& in,
                   const std::vector<OpReqType>& req,
                   const std::vector<TBlob>& out) {
  using P = AccType<T>;
  const TShape& s = in[0].shape;
  const int ax = s.CheckAxis(p.axis, "BatchNorm");
  const int64_t channels = s[ax], outer = s.ProdDims(0, ax),
                inner = s.ProdDims(ax + 1, s.ndim());
  const int64_t count = outer * inner;
  // Batch statistics in training; none in an empty batch.
  const bool batch_stats = ctx.is_train && !p.use_global_stats && count > 0;
  const T* x = in[0].data<T>();
  const P* gamma = in[1].data<P>();
  const P* beta = in[2].data<P>();
  P* moving_mean = in[3].data<P>();
  P* moving_var = in[4].data<P>();
  T* y = out[0].data<T>();
  P* mean_out = out[1].data<P>();
  P* var_out = out[2].data<P>();
  ParallelFor(channels, 1, [&](int64_t b, int64_t e) {
    for (int64_t c = b; c < e; ++c) {
      double mean, var;
      if (batch_stats) {
        double sum = 0, sq = 0;
        for (int64_t o = 0; o < outer; ++o) {
          const T* row = x + (o * channels + c) * inner;
          for (int64_t i = 0; i < inner; ++i)
            sum += static_cast<double>(row[i]);
        }
        mean = sum / count;
        for (int64_t o = 0; o < outer; ++o) {
          const T* row = x + (o * channels + c) * inner;
          for (int64_t i = 0; i < inner; ++i) {
            const double dv = static_cast<double>(row[i]) - mean;
            sq += dv * dv;
          }
        }
        var = sq / count;
      } else {
        mean = static_cast<double>(moving_mean[c]);
        var = static_cast<double>(moving_var[c]);
      }
      const double g = p.fix_gamma ? 1.0 : static_cast<double>(gamma[c]);
      const double scale = g / std::sqrt(var + p.eps);
      const double shift = static_cast<double>(beta[c]) - mean * scale;
      if (req[0] != OpReqType::kNullOp) {
        for (int64_t o = 0; o < outer; ++o) {
          const int64_t base = (o * channels + c) * inner;
          for (int64_t i = 0; i < inner; ++i) {
            const double v = static_cast<double>(x[base + i]) * scale + shift;
            Assign(y + base + i, req[0], static_cast<P>(v));
          }
        }
      }
      Assign(mean_out + c, req[1], static_cast<P>(mean));
      Assign(var_out + c, req[2], static_cast<P>(var));
      if (batch_stats) {
        const double m = p.momentum;
        moving_mean[c] = static_cast<P>(
            static_cast<double>(moving_mean[c]) * m + mean * (1 - m));
        moving_var[c] = static_cast<P>(static_cast<double>(moving_var[c]) * m +
                                       var * (1 - m));
      }
    }
  });
}

void BatchNormCompute(const OpContext& ctx, const NodeAttrs& attrs,
                      const std::vector<TBlob>& in,
                      const std::vector<OpReqType>& req,
                      const std::vector<TBlob>& out) {
  const BatchNormParam& p = attrs.get<BatchNormParam>();
  MX_FLOAT_DTYPE_SWITCH(in[0].dtype, T,
                        { BatchNormImpl<T>(ctx, p, in, req, out); });
}

MX_REGISTER_OP(BatchNorm)
    .Describe(
        "Batch normalization over every axis but `axis`. In training "
        "(unless use_global_stats) it normalizes with the batch mean and "
        "biased variance, returns them as outputs 1 and 2 and updates "
        "moving_mean / moving_var in place; otherwise it uses the moving "
        "statistics, which outputs 1 and 2 then copy.")
    .SetNumInputs(5)
    .SetInputNames({"data", "gamma", "beta", "moving_mean", "moving_var"})
    .SetNumOutputs(3)
    // Composed symbols expose the saved statistics only on request.
    .SetNumVisibleOutputs([](const NodeAttrs& attrs) {
      return attrs.get<BatchNormParam>().output_mean_var ? 3 : 1;
    })
    .SetOutputNames({"output", "mean", "var"})
    .SetParams<BatchNormParam>()
    .SetInferShape(BatchNormShape)
    .SetInferType(BatchNormType)
    .SetMutateInputs([](const NodeAttrs&) {
      return std::vector<int>{3, 4};
    })
    .SetCompute(Context::kCPU, BatchNormCompute);

// ---- Dropout. ----

struct DropoutParam {
  double p = 0.5;
  std::string mode = "training";
  TShape axes;
  std::optional<bool> cudnn_off;
  static void Declare(ParamSchema<DropoutParam>* s) {
    s->Field("p", &DropoutParam::p).Describe("Drop probability, in [0, 1).");
    s->Field("mode", &DropoutParam::mode)
        .Choices({"training", "always"})
        .Describe("training: active only in training mode");
    s->Field("axes", &DropoutParam::axes)
        .Describe("Axes along which one mask value is shared.");
    s->Field("cudnn_off", &DropoutParam::cudnn_off).Describe("Ignored.");
  }
};

void DropoutShape(const NodeAttrs& attrs, std::vector<TShape>* in,
                  std::vector<TShape>* out) {
  const DropoutParam& p = attrs.get<DropoutParam>();
  if (!(p.p >= 0 && p.p < 1)) {
    throw InvalidArgument(
        absl::StrCat(OpLabel(attrs), ": p=", p.p, " must be in [0, 1)"));
  }
  AssignShape(attrs, in, 0, (*out)[0], false);
  AssignShape(attrs, out, 0, (*in)[0], true);
  const TShape& d = (*in)[0];
  if (!d.ndim_known()) return;
  TShape mask = d;
  if (p.axes.ndim_known()) {
    for (int64_t a : p.axes) {
      mask[d.CheckAxis(static_cast<int>(a), OpLabel(attrs).c_str())] = 1;
    }
  }
  AssignShape(attrs, out, 1, mask, true);
}

template <typename T>
void DropoutImpl(const OpContext& ctx, const DropoutParam& p, const TBlob& in,
                 const std::vector<OpReqType>& req,
                 const std::vector<TBlob>& out) {
  using A = AccType<T>;
  const TBlob& mask_blob = out[1];
  const bool active = (ctx.is_train || p.mode == "always") && p.p > 0;
  // The mask as stored, so that output = data * mask exactly.
  std::vector<T> mask(static_cast<size_t>(mask_blob.Size()), T(1.0f));
  if (active) {
    const T keep_scale = static_cast<T>(1.0 / (1.0 - p.p));
    RandomEngine& rng = ctx.random();
    for (T& m : mask) {
      // 53 random bits give a uniform double in [0, 1).
      const double u = static_cast<double>(rng() >> 11) * 0x1.0p-53;
      m = u < p.p ? T(0.0f) : keep_scale;
    }
  }
  const T* x = in.data<T>();
  T* y = out[0].data<T>();
  T* mask_out = mask_blob.data<T>();
  for (size_t i = 0; i < mask.size(); ++i)
    Assign(mask_out + i, req[1], mask[i]);
  if (req[0] == OpReqType::kNullOp) return;
  const int64_t n = in.Size();
  if (mask_blob.shape == in.shape) {
    for (int64_t i = 0; i < n; ++i) {
      Assign(y + i, req[0], static_cast<A>(x[i]) * static_cast<A>(mask[i]));
    }
  } else {
    const std::vector<int64_t> strides =
        BroadcastStrides(mask_blob.shape, in.shape);
    for (int64_t i = 0; i < n; ++i) {
      const T m = mask[BroadcastOffset(i, in.shape, strides)];
      Assign(y + i, req[0], static_cast<A>(x[i]) * static_cast<A>(m));
    }
  }
}

void DropoutCompute(const OpContext& ctx, const NodeAttrs& attrs,
                    const std::vector<TBlob>& in,
                    const std::vector<OpReqType>& req,
                    const std::vector<TBlob>& out) {
  const DropoutParam& p = attrs.get<DropoutParam>();
  MX_FLOAT_DTYPE_SWITCH(in[0].dtype, T,
                        { DropoutImpl<T>(ctx, p, in[0], req, out); });
}

MX_REGISTER_OP(Dropout)
    .Describe(
        "In training (or mode=always) zeroes each element with "
        "probability p and scales the rest by 1/(1-p); the identity "
        "otherwise. Output 1 is the mask (0 or 1/(1-p)) applied.")
    .SetNumInputs(1)
    .SetInputNames({"data"})
    .SetNumOutputs(2)
    .SetNumVisibleOutputs([](const NodeAttrs&) { return 1; })
    .SetOutputNames({"output", "mask"})
    .SetParams<DropoutParam>()
    .SetInferShape(DropoutShape)
    .SetInferType(FloatUnaryType)
    .SetInplaceOption(InplaceFirst)
    .SetResourceRequest([](const NodeAttrs&) {
      return std::vector<ResourceRequest>{{ResourceRequest::kRandom}};
    })
    .SetCompute(Context::kCPU, DropoutCompute);

}  // namespace
}  // namespace cpu
}  // namespace mx
