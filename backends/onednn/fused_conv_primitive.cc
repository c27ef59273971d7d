#include "backends/onednn/fused_conv_primitive.h"

#include <cmath>
#include <string>
#include <vector>

#include "backends/common/attr_parse.h"
#include "backends/onednn/dnnl_context.h"

namespace mx_onednn {
namespace {

using mxplugin::Attrs;
using mxplugin::Error;

// A role's input index, -1 when the fused graph has no such input.
int Role(const Attrs& a, const char* key) {
  return static_cast<int>(a.GetInt(key, -1));
}

std::vector<int64_t> Tuple(const Attrs& a, const char* key, const char* op) {
  const std::string text = a.Get(key, "()");
  if (text == "None" || text.empty()) return {};
  std::optional<std::vector<int64_t>> t = mxplugin::ParseTuple(text);
  if (!t) {
    throw Error(MX_STATUS_INVALID_ARGUMENT, std::string(op) + ": attribute " +
                                                key + " = \"" + text +
                                                "\" is not a tuple");
  }
  return *t;
}

// Per-axis value of a window attribute (empty: `fill`).
int64_t Axis(const std::vector<int64_t>& v, size_t i, int64_t fill) {
  return v.empty() ? fill : (i < v.size() ? v[i] : fill);
}

}  // namespace

ConvFusion ParseConvFusion(const Attrs& a, const char* op) {
  ConvFusion f;
  f.num_inputs = static_cast<int>(a.GetInt("num_inputs", 0));
  f.data = Role(a, "data_input");
  f.weight = Role(a, "weight_input");
  f.bias = Role(a, "bias_input");
  f.gamma = Role(a, "gamma_input");
  f.beta = Role(a, "beta_input");
  f.mean = Role(a, "mean_input");
  f.var = Role(a, "var_input");
  f.sum = Role(a, "sum_input");
  f.with_bn = f.gamma >= 0;
  f.eps = a.GetFloat("bn_eps", 1e-3);
  f.fix_gamma =
      mxplugin::ParseBool(a.Get("bn_fix_gamma", "True")).value_or(true);
  f.num_filter = a.GetInt("num_filter", 0);
  f.num_group = a.GetInt("num_group", 1);
  f.kernel = Tuple(a, "kernel", op);
  f.stride = Tuple(a, "stride", op);
  f.dilate = Tuple(a, "dilate", op);
  f.pad = Tuple(a, "pad", op);
  for (const char* key : {"act", "postsum_act"}) {
    const std::string act = a.Get(key, "");
    if (act.empty()) continue;
    std::optional<PostOp> p =
        ParsePostOp(act, a.GetFloat(std::string(key) + "_slope", 0.25));
    if (!p) {
      throw Error(MX_STATUS_INVALID_ARGUMENT,
                  std::string(op) + ": unknown activation \"" + act + "\"");
    }
    (std::string(key) == "act" ? f.act : f.postsum_act) = p;
  }
  const int n = f.num_inputs;
  auto in_range = [n](int i, bool required) {
    return required ? (i >= 0 && i < n) : (i >= -1 && i < n);
  };
  const bool bn_ok =
      !f.with_bn || (in_range(f.beta, true) && in_range(f.mean, true) &&
                     in_range(f.var, true));
  // Windows as the built-in Convolution takes them: a value per axis (or
  // none), strides and dilations from 1, no negative padding, and sizes
  // whose products cannot overflow.
  bool window_ok = !f.kernel.empty() && f.kernel.size() <= 3;
  for (const auto* v : {&f.kernel, &f.stride, &f.dilate, &f.pad}) {
    window_ok &= v->empty() || v->size() == f.kernel.size();
    for (int64_t x : *v) {
      window_ok &= x >= (v == &f.pad ? 0 : 1) && x <= (1 << 20);
    }
  }
  if (n < 2 || !window_ok || !in_range(f.data, true) ||
      !in_range(f.weight, true) || !in_range(f.bias, false) ||
      !in_range(f.sum, false) || !bn_ok || f.num_filter < 1 ||
      f.num_filter > (1 << 24) || f.num_group < 1 ||
      f.num_filter % f.num_group != 0 || (f.postsum_act && f.sum < 0)) {
    throw Error(MX_STATUS_INVALID_ARGUMENT,
                std::string(op) +
                    ": inconsistent attributes (input roles, kernel, "
                    "stride, dilate, pad, num_filter, num_group, "
                    "activations)");
  }
  return f;
}

void InferConvFusionShapes(const ConvFusion& f, const char* op,
                           mxplugin::ShapeSlots& in,
                           mxplugin::ShapeSlots& out) {
  const size_t rank = f.kernel.size();
  auto set = [&](int index, const mxplugin::Shape& needed) {
    MergeInputShape(op, index, needed, in);
  };
  const int64_t filters = f.num_filter;
  if (in[f.data]) {
    const mxplugin::Shape& d = *in[f.data];
    if (d.size() != rank + 2) {
      throw Error(MX_STATUS_SHAPE_ERROR, std::string(op) + ": data of rank " +
                                             std::to_string(d.size()) +
                                             " for a " + std::to_string(rank) +
                                             "-D kernel");
    }
    if (d[1] >= 0 && d[1] % f.num_group != 0) {
      throw Error(MX_STATUS_SHAPE_ERROR,
                  std::string(op) + ": " + std::to_string(d[1]) +
                      " channels in " + std::to_string(f.num_group) +
                      " groups");
    }
    mxplugin::Shape w = {filters, d[1] < 0 ? -1 : d[1] / f.num_group};
    w.insert(w.end(), f.kernel.begin(), f.kernel.end());
    set(f.weight, w);
    mxplugin::Shape o = {d[0], filters};
    for (size_t i = 0; i < rank; ++i) {
      const int64_t k = f.kernel[i], s = Axis(f.stride, i, 1),
                    dl = Axis(f.dilate, i, 1), p = Axis(f.pad, i, 0);
      const int64_t extent = dl * (k - 1) + 1;
      if (d[2 + i] < 0) {  // Unknown yet.
        o.push_back(-1);
        continue;
      }
      if (d[2 + i] + 2 * p < extent) {
        throw Error(MX_STATUS_SHAPE_ERROR,
                    std::string(op) + ": the window does not fit the data");
      }
      o.push_back((d[2 + i] + 2 * p - extent) / s + 1);
    }
    out[0] = o;
    set(f.sum, o);
  }
  for (int role : {f.bias, f.gamma, f.beta, f.mean, f.var}) {
    set(role, {filters});
  }
}

std::vector<int> ConvWeightInputs(const ConvFusion& f) {
  std::vector<int> v = {f.weight};
  for (int role : {f.bias, f.gamma, f.beta, f.mean, f.var}) {
    if (role >= 0) v.push_back(role);
  }
  return v;
}

std::vector<bool> ConvOwnWrites(const ConvFusion& f) {
  std::vector<bool> own;
  for (int i : ConvWeightInputs(f)) own.push_back(i == f.mean || i == f.var);
  return own;
}

FusedConvPrimitive::FusedConvPrimitive(const ConvFusion& f, const Dims& src,
                                       const Dims& dst)
    : f_(f), filters_(f.num_filter) {
  const int64_t groups = f.num_group, c = src[1];
  weights_dims_ = groups == 1 ? Dims{filters_, c}
                              : Dims{groups, filters_ / groups, c / groups};
  weights_dims_.insert(weights_dims_.end(), f.kernel.begin(), f.kernel.end());
  Dims strides, dilates, pad;  // oneDNN's dilation is MXNet's minus 1.
  for (size_t i = 0; i < f.kernel.size(); ++i) {
    strides.push_back(Axis(f.stride, i, 1));
    dilates.push_back(Axis(f.dilate, i, 1) - 1);
    pad.push_back(Axis(f.pad, i, 0));
  }
  has_bias_ = f.with_bn || f.bias >= 0;
  dnnl::post_ops ops;
  if (f.act) ops.append_eltwise(1.0f, f.act->alg, f.act->alpha, 0.0f);
  if (f.sum >= 0) ops.append_sum(1.0f);
  if (f.postsum_act) {
    ops.append_eltwise(1.0f, f.postsum_act->alg, f.postsum_act->alpha, 0.0f);
  }
  dnnl::primitive_attr attr = UserScratchpadAttr();
  attr.set_post_ops(ops);
  auto any = [](const Dims& dims) {
    return dnnl::memory::desc(dims, dnnl::memory::data_type::f32,
                              dnnl::memory::format_tag::any);
  };
  // Blocked layouts (nChw16c, nhwc, ...) run oneDNN's direct JIT kernels,
  // several times faster than the GEMM-based one it picks for plain NCHW.
  dnnl::convolution_forward::desc desc(
      dnnl::prop_kind::forward_inference, dnnl::algorithm::convolution_direct,
      any(src), any(weights_dims_),
      has_bias_ ? PlainDesc({filters_}) : dnnl::memory::desc(), any(dst),
      strides, dilates, pad, pad);
  dnnl::convolution_forward::primitive_desc pd(desc, attr, Engine());
  src_ = pd.src_desc();
  dst_ = pd.dst_desc();
  scratchpad_ = pd.scratchpad_desc();
  prim_ = dnnl::convolution_forward(pd);
  weights_ = dnnl::memory(pd.weights_desc(), Engine());
  if (has_bias_) bias_ = dnnl::memory(pd.bias_desc(), Engine());
}

void FusedConvPrimitive::PrepareWeights(
    const std::function<const float*(int)>& input) {
  const ConvFusion& f = f_;
  int64_t weight_size = 1;
  for (int64_t d : weights_dims_) weight_size *= d;
  const int64_t per_filter = weight_size / filters_;
  const float* w = input(f.weight);
  std::vector<float> scale(filters_, 1.0f), shift(filters_, 0.0f);
  if (f.with_bn) {
    const float* gamma = input(f.gamma);
    const float* beta = input(f.beta);
    const float* mean = input(f.mean);
    const float* var = input(f.var);
    for (int64_t c = 0; c < filters_; ++c) {
      scale[c] = (f.fix_gamma ? 1.0f : gamma[c]) /
                 std::sqrt(var[c] + static_cast<float>(f.eps));
      shift[c] = beta[c] - mean[c] * scale[c];
    }
  }
  std::vector<float> folded(w, w + weight_size);
  if (f.with_bn) {
    for (int64_t c = 0; c < filters_; ++c) {
      for (int64_t i = 0; i < per_filter; ++i) {
        folded[c * per_filter + i] *= scale[c];
      }
    }
  }
  dnnl::memory plain = Wrap(PlainDesc(weights_dims_), folded.data());
  dnnl::stream stream(Engine());
  dnnl::reorder(plain, weights_).execute(stream, plain, weights_);
  stream.wait();
  if (has_bias_) {
    auto* b = static_cast<float*>(bias_.get_data_handle());
    const float* given = f.bias >= 0 ? input(f.bias) : nullptr;
    for (int64_t c = 0; c < filters_; ++c) {
      b[c] = (given ? given[c] : 0.0f) * scale[c] + shift[c];
    }
  }
}

void FusedConvPrimitive::Run(const dnnl::memory& src,
                             const dnnl::memory& dst) const {
  std::unordered_map<int, dnnl::memory> args{
      {DNNL_ARG_SRC, src}, {DNNL_ARG_WEIGHTS, weights_}, {DNNL_ARG_DST, dst}};
  if (has_bias_) args.emplace(DNNL_ARG_BIAS, bias_);
  Execute(prim_, scratchpad_, std::move(args));
}

}  // namespace mx_onednn
