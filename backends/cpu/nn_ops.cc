// Neural-network layers without weights to multiply: Activation, LeakyReLU
// and Dropout, with gradients built from elementwise ops (so they can be
// differentiated again). BatchNorm is in batch_norm_ops.cc.
#include <cmath>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "backends/cpu/grad_util.h"
#include "backends/cpu/kernel_util.h"
#include "backends/cpu/random_draws.h"
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
      AssignRange(dst, req, b, e,
                  [=](int64_t i) { return f(static_cast<A>(src[i])); });
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
             [](auto x) { return x > 0 || IsNan(x) ? x : decltype(x)(0); });
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
        .Choices({"leaky", "elu", "selu", "gelu", "prelu", "rrelu"});
    s->Field("slope", &LeakyReLUParam::slope)
        .Describe("leaky: slope for x < 0; elu: alpha");
    s->Field("lower_bound", &LeakyReLUParam::lower_bound)
        .Describe("rrelu: smallest random slope");
    s->Field("upper_bound", &LeakyReLUParam::upper_bound)
        .Describe("rrelu: largest random slope");
  }
};

// prelu's inputs: data (batch, channels, ...) and gamma, one slope per
// channel (axis 1) or one for all; `data` and `gamma` index `in`.
void PreluInputShapes(const NodeAttrs& attrs, std::vector<TShape>* in, int data,
                      int gamma) {
  const TShape& d = (*in)[data];
  const TShape& g = (*in)[gamma];
  if (d.ndim_known() && d.ndim() < 2) {
    throw ShapeError(absl::StrCat(OpLabel(attrs), ": input ", data,
                                  " (data) has shape ", d.ToString(),
                                  " but prelu needs (batch, channels, ...)"));
  }
  if (g.ndim_known() && g.ndim() == 1 && g[0] == 1) return;
  if (d.ndim_known()) AssignShape(attrs, in, gamma, TShape{d[1]}, false);
  AssignShape(attrs, in, gamma, TShape{-1}, false);
}

void LeakyReLUShape(const NodeAttrs& attrs, std::vector<TShape>* in,
                    std::vector<TShape>* out) {
  const LeakyReLUParam& p = attrs.get<LeakyReLUParam>();
  if (p.act_type == "rrelu" &&
      !(p.lower_bound >= 0 && p.lower_bound <= p.upper_bound)) {
    throw InvalidArgument(absl::StrCat(
        OpLabel(attrs), ": lower_bound=", p.lower_bound, " and upper_bound=",
        p.upper_bound, " must satisfy 0 <= lower_bound <= upper_bound"));
  }
  AssignShape(attrs, in, 0, (*out)[0], false);
  for (size_t i = 0; i < out->size(); ++i) {
    AssignShape(attrs, out, static_cast<int>(i), (*in)[0], true);
  }
  if (p.act_type == "prelu") PreluInputShapes(attrs, in, 0, 1);
}

// prelu's slope for flat data index i: gamma[channel] (or gamma[0]).
struct PreluIndex {
  int64_t channels, inner;
  explicit PreluIndex(const TBlob& data, const TBlob& gamma)
      : channels(gamma.Size() == 1 ? 1 : data.shape[1]),
        inner(gamma.Size() == 1 ? 1
                                : data.shape.ProdDims(2, data.shape.ndim())) {}
  int64_t operator()(int64_t i) const {
    return channels == 1 ? 0 : (i / inner) % channels;
  }
};

void PreluCompute(const NodeAttrs& attrs, const std::vector<TBlob>& in,
                  OpReqType req, const TBlob& out) {
  if (in[1].Size() != 1 && in[1].Size() != in[0].shape[1]) {
    throw ShapeError(absl::StrCat(
        OpLabel(attrs), ": input 1 (gamma) has shape ", in[1].shape.ToString(),
        " but data ", in[0].shape.ToString(), " has ", in[0].shape[1],
        " channels"));
  }
  const PreluIndex ch(in[0], in[1]);
  MX_FLOAT_DTYPE_SWITCH(in[0].dtype, T, {
    using A = AccType<T>;
    const T* x = in[0].data<T>();
    const T* gamma = in[1].data<T>();
    T* y = out.data<T>();
    const int64_t n = in[0].Size();
    for (int64_t i = 0; i < n; ++i) {
      const A v = static_cast<A>(x[i]);
      Assign(y + i, req, v > A(0) ? v : static_cast<A>(gamma[ch(i)]) * v);
    }
  });
}

// rrelu: output 1 is the slope applied to each element (1 where x > 0):
// random in [lower_bound, upper_bound] in training, their mean otherwise.
void RreluCompute(const OpContext& ctx, const LeakyReLUParam& p,
                  const std::vector<TBlob>& in,
                  const std::vector<OpReqType>& req,
                  const std::vector<TBlob>& out) {
  MX_FLOAT_DTYPE_SWITCH(in[0].dtype, T, {
    using A = AccType<T>;
    const T* x = in[0].data<T>();
    T* y = out[0].data<T>();
    T* mask = out[1].data<T>();
    const double mean = (p.lower_bound + p.upper_bound) / 2;
    const int64_t n = in[0].Size();
    for (int64_t i = 0; i < n; ++i) {
      double slope = mean;
      if (ctx.is_train) {
        slope = p.lower_bound +
                Canonical(ctx.random()) * (p.upper_bound - p.lower_bound);
      }
      const A v = static_cast<A>(x[i]);
      const A m = v > A(0) ? A(1) : static_cast<A>(slope);
      Assign(mask + i, req[1], m);
      Assign(y + i, req[0], v * m);
    }
  });
}

void LeakyReLUCompute(const OpContext& ctx, const NodeAttrs& attrs,
                      const std::vector<TBlob>& in,
                      const std::vector<OpReqType>& req,
                      const std::vector<TBlob>& out) {
  const LeakyReLUParam& p = attrs.get<LeakyReLUParam>();
  const double slope = p.slope;
  if (p.act_type == "prelu") {
    PreluCompute(attrs, in, req[0], out[0]);
  } else if (p.act_type == "rrelu") {
    RreluCompute(ctx, p, in, req, out);
  } else if (p.act_type == "leaky") {
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
        "slope*(e^x-1)), selu, gelu (0.5x(1+erf(x/sqrt(2)))), prelu (x or "
        "gamma[channel]*x, gamma learned) and rrelu (x or r*x, r uniform in "
        "[lower_bound, upper_bound] in training, their mean otherwise; "
        "output 1 holds the slopes).")
    .SetNumInputs([](const NodeAttrs& attrs) {
      return attrs.get<LeakyReLUParam>().act_type == "prelu" ? 2 : 1;
    })
    .SetInputNames([](const NodeAttrs& attrs) {
      if (attrs.get<LeakyReLUParam>().act_type == "prelu") {
        return std::vector<std::string>{"data", "gamma"};
      }
      return std::vector<std::string>{"data"};
    })
    .SetNumOutputs([](const NodeAttrs& attrs) {
      return attrs.get<LeakyReLUParam>().act_type == "rrelu" ? 2 : 1;
    })
    .SetNumVisibleOutputs([](const NodeAttrs&) { return 1; })
    .SetParams<LeakyReLUParam>()
    .SetInferShape(LeakyReLUShape)
    .SetInferType([](const NodeAttrs& attrs, std::vector<DType>* in,
                     std::vector<DType>* out) {
      FloatUnaryType(attrs, in, out);
      if (in->size() > 1) AssignType(attrs, in, 1, (*in)[0], false);
    })
    .SetInplaceOption([](const NodeAttrs& attrs) {
      // prelu's backward reads the data.
      return attrs.get<LeakyReLUParam>().act_type == "prelu"
                 ? std::vector<std::pair<int, int>>{}
                 : InplaceFirst(attrs);
    })
    .SetResourceRequest([](const NodeAttrs& attrs) {
      return attrs.get<LeakyReLUParam>().act_type == "rrelu"
                 ? std::vector<ResourceRequest>{{ResourceRequest::kRandom}}
                 : std::vector<ResourceRequest>{};
    })
    .SetCompute(Context::kCPU, LeakyReLUCompute);

// Inputs (out_grad, data, gamma); outputs (data_grad, gamma_grad):
// g * slope, and per channel the sum of g * x where x <= 0.
void PreluBackwardCompute(const OpContext&, const NodeAttrs&,
                          const std::vector<TBlob>& in,
                          const std::vector<OpReqType>& req,
                          const std::vector<TBlob>& out) {
  const PreluIndex ch(in[1], in[2]);
  MX_FLOAT_DTYPE_SWITCH(in[1].dtype, T, {
    using A = AccType<T>;
    const T* g = in[0].data<T>();
    const T* x = in[1].data<T>();
    const T* gamma = in[2].data<T>();
    std::vector<double> dgamma(static_cast<size_t>(in[2].Size()), 0.0);
    T* dx = out[0].data<T>();
    const int64_t n = in[1].Size();
    for (int64_t i = 0; i < n; ++i) {
      const A v = static_cast<A>(x[i]);
      const A gi = static_cast<A>(g[i]);
      const int64_t c = ch(i);
      if (v > A(0)) {
        Assign(dx + i, req[0], gi);
      } else {
        Assign(dx + i, req[0], gi * static_cast<A>(gamma[c]));
        dgamma[c] += static_cast<double>(gi) * static_cast<double>(v);
      }
    }
    T* dg = out[1].data<T>();
    for (size_t c = 0; c < dgamma.size(); ++c) {
      Assign(dg + c, req[1], static_cast<A>(dgamma[c]));
    }
  });
}

MX_REGISTER_OP(_backward_LeakyReLU_prelu)
    .Describe(
        "Gradient of LeakyReLU act_type=prelu: (out_grad, data, gamma) -> "
        "(data_grad, gamma_grad).")
    .SetNumInputs(3)
    .SetInputNames({"out_grad", "data", "gamma"})
    .SetNumOutputs(2)
    .SetParams<LeakyReLUParam>()
    .SetInferShape([](const NodeAttrs& attrs, std::vector<TShape>* in,
                      std::vector<TShape>* out) {
      AssignShape(attrs, in, 0, (*in)[1], false);
      PreluInputShapes(attrs, in, 1, 2);
      AssignShape(attrs, out, 0, (*in)[1], true);
      AssignShape(attrs, out, 1, (*in)[2], true);
    })
    .SetInferType([](const NodeAttrs& attrs, std::vector<DType>* in,
                     std::vector<DType>* out) {
      for (int i : {0, 2}) AssignType(attrs, in, i, (*in)[1], false);
      AssignType(attrs, out, 0, (*in)[1], true);
      AssignType(attrs, out, 1, (*in)[1], true);
    })
    .SetCompute(Context::kCPU, PreluBackwardCompute);

// ---- Dropout. ----

struct DropoutParam {
  double p = 0.5;
  std::string mode = "training";
  TShape axes;
  std::optional<bool> cudnn_off;
  static void Declare(ParamSchema<DropoutParam>* s) {
    s->Field("p", &DropoutParam::p).Describe("Drop probability, in [0, 1].");
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
  if (!(p.p >= 0 && p.p <= 1)) {
    throw InvalidArgument(
        absl::StrCat(OpLabel(attrs), ": p=", p.p, " must be in [0, 1]"));
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
    DrawDropoutMask(ctx.random(), p.p, mask.data(),
                    static_cast<int64_t>(mask.size()));
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
        "probability p and scales the rest by 1/(1-p) (p = 1: all zeros); "
        "the identity otherwise. Output 1 is the mask (0 or 1/(1-p)) "
        "applied.")
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

// ---- Gradients. ----

using E = NodeEntry;

struct Ops {
  GradBuilder& b;
  E Op(const char* op, std::vector<E> in, AttrDict attrs = {}) {
    return b.Op(op, std::move(in), std::move(attrs));
  }
  E Scalar(const char* op, E x, double s) {
    return Op(op, {x}, {{"scalar", AttrText(s)}});
  }
  E Act(const char* act, E x) {
    return Op("Activation", {x}, {{"act_type", act}});
  }
  // 1 where x > 0, else 0 (its own gradient is zero).
  E Positive(E x) { return Op("sign", {Op("relu", {x})}); }
  // e^min(x, 0), which cannot overflow: min(x, 0) = -relu(-x).
  E ExpNonPositive(E x) {
    return Op("exp", {Op("negative", {Op("relu", {Op("negative", {x})})})});
  }
  // (1 - m) * a * e^min(x, 0) + m with m = [x > 0]: elu's slope.
  E EluSlope(E x, double alpha) {
    const E m = Positive(x);
    const E neg = b.Mul(Scalar("_rminus_scalar", m, 1),
                        b.Scale(ExpNonPositive(x), alpha));
    return Op("elemwise_add", {m, neg});
  }
};

// d activation / d x as a graph; y is the forward output.
E ActivationSlope(GradBuilder& b, const std::string& act) {
  Ops o{b};
  const E x = b.x(), y = b.y();
  if (act == "relu") return o.Op("sign", {y});  // y >= 0
  if (act == "sigmoid") return b.Mul(y, o.Scalar("_rminus_scalar", y, 1));
  if (act == "tanh") {
    return o.Scalar("_rminus_scalar", o.Op("square", {y}), 1);
  }
  if (act == "softrelu") return o.Act("sigmoid", x);
  if (act == "softsign") {
    const E denom = o.Scalar("_plus_scalar", o.Op("abs", {x}), 1);
    return o.Op("reciprocal", {o.Op("square", {denom})});
  }
  if (act == "log_sigmoid") {  // sigmoid(-x) = 1 - e^y
    return o.Scalar("_rminus_scalar", o.Op("exp", {y}), 1);
  }
  // mish: t + x * (1 - t^2) * sigmoid(x) with t = tanh(softrelu(x)).
  const E t = o.Op("tanh", {o.Act("softrelu", x)});
  const E dt = o.Scalar("_rminus_scalar", o.Op("square", {t}), 1);
  return o.Op("elemwise_add", {t, b.Mul(x, b.Mul(dt, o.Act("sigmoid", x)))});
}

E LeakyReLUSlope(GradBuilder& b, const LeakyReLUParam& p) {
  Ops o{b};
  const E x = b.x();
  if (p.act_type == "leaky") {
    return o.Scalar("_plus_scalar", b.Scale(o.Positive(x), 1 - p.slope),
                    p.slope);
  }
  if (p.act_type == "elu") return o.EluSlope(x, p.slope);
  if (p.act_type == "selu") {
    return b.Scale(o.EluSlope(x, 1.6732632423543772848170429916717),
                   1.0507009873554804934193349852946);
  }
  // gelu: Phi(x) + x * phi(x).
  const E cdf =
      b.Scale(o.Scalar("_plus_scalar",
                       o.Op("erf", {b.Scale(x, 0.70710678118654752440)}), 1),
              0.5);
  const E pdf = b.Scale(o.Op("exp", {b.Scale(o.Op("square", {x}), -0.5)}),
                        0.39894228040143267794);  // 1/sqrt(2 pi)
  return o.Op("elemwise_add", {cdf, b.Mul(x, pdf)});
}

[[maybe_unused]] const bool kGradientsRegistered = [] {
  SetGradient("Activation", [](GradBuilder& b, const std::vector<E>& g) {
    const std::string& act = b.n->attrs.get<ActivationParam>().act_type;
    if (act == "relu") {  // One pass instead of the slope and a multiply.
      return std::vector<E>{b.Op("_backward_relu", {g[0], b.y()})};
    }
    return std::vector<E>{b.Mul(g[0], ActivationSlope(b, act))};
  });
  SetGradient("LeakyReLU", [](GradBuilder& b, const std::vector<E>& g) {
    const LeakyReLUParam& p = b.n->attrs.get<LeakyReLUParam>();
    if (p.act_type == "prelu") {
      const E d = b.Op("_backward_LeakyReLU_prelu", {g[0], b.x(0), b.x(1)},
                       b.n->attrs.dict);
      return OutputsOf(d, 2);
    }
    // rrelu: the slopes the forward drew, kept in output 1.
    if (p.act_type == "rrelu") return std::vector<E>{b.Mul(g[0], b.y(1))};
    return std::vector<E>{b.Mul(g[0], LeakyReLUSlope(b, p))};
  });
  // The mask output is what the forward multiplied by (all ones when
  // inactive), so the gradient repeats the forward's draw.
  SetGradient("Dropout", [](GradBuilder& b, const std::vector<E>& g) {
    const bool shared = b.n->attrs.get<DropoutParam>().axes.ndim() > 0;
    const E mask = b.y(1);
    return std::vector<E>{shared ? b.Op("broadcast_mul", {g[0], mask})
                                 : b.Mul(g[0], mask)};
  });
  return true;
}();

}  // namespace
}  // namespace cpu
}  // namespace mx
