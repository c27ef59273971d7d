#include "backends/onednn/fused_conv.h"

#include <cmath>
#include <cstring>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "backends/common/attr_parse.h"
#include "backends/onednn/dnnl_context.h"
#include "backends/onednn/weight_cache.h"

namespace mx_onednn {

using mxplugin::Attrs;
using mxplugin::Error;
using mxplugin::KernelContext;
using mxplugin::Tensors;

std::optional<PostOp> ParsePostOp(const std::string& act, double slope) {
  PostOp p;
  p.alpha = 0;
  if (act == "relu") {
    p.alg = dnnl::algorithm::eltwise_relu;
  } else if (act == "leaky") {
    p.alg = dnnl::algorithm::eltwise_relu;
    p.alpha = static_cast<float>(slope);
  } else if (act == "sigmoid") {
    p.alg = dnnl::algorithm::eltwise_logistic;
  } else if (act == "tanh") {
    p.alg = dnnl::algorithm::eltwise_tanh;
  } else if (act == "softrelu") {
    p.alg = dnnl::algorithm::eltwise_soft_relu;
  } else {
    return std::nullopt;
  }
  return p;
}

void CheckFusedFloat32(const char* op, Tensors in, Tensors out) {
  for (Tensors t : {in, out}) {
    for (int i = 0; i < t.size(); ++i) {
      if (t[i].dtype() != MX_DTYPE_FLOAT32) {
        throw Error(MX_STATUS_DTYPE_ERROR,
                    std::string(op) +
                        ": float32 only (partition other dtypes without the "
                        "onednn backend)");
      }
    }
  }
}

mxplugin::OpDef FusedOpDef(const char* op, const char* description) {
  mxplugin::OpDef def(op);
  def.Describe(description)
      .NumInputs([](const Attrs& a) {
        return static_cast<int>(a.GetInt("num_inputs", 0));
      })
      .Attr("num_inputs", MX_ATTR_INT)
      .Attr("data_input", MX_ATTR_INT)
      .Attr("weight_input", MX_ATTR_INT)
      .Attr("bias_input", MX_ATTR_INT, "-1");
  return def;
}

namespace {

constexpr char kOp[] = "_sg_onednn_conv";

// A role's input index, -1 when the fused graph has no such input.
int Role(const Attrs& a, const char* key) {
  return static_cast<int>(a.GetInt(key, -1));
}

struct ConvFusion {
  int num_inputs = 0;
  int data = -1, weight = -1, bias = -1;
  bool with_bn = false;
  int gamma = -1, beta = -1, mean = -1, var = -1;
  double eps = 1e-3;
  bool fix_gamma = true;
  std::optional<PostOp> act, postsum_act;
  int sum = -1;  // The residual added to the convolution ("sum" post-op).
  int64_t num_filter = 0, num_group = 1;
  std::vector<int64_t> kernel, stride, dilate, pad;
};

std::vector<int64_t> Tuple(const Attrs& a, const char* key) {
  const std::string text = a.Get(key, "()");
  if (text == "None" || text.empty()) return {};
  std::optional<std::vector<int64_t>> t = mxplugin::ParseTuple(text);
  if (!t) {
    throw Error(MX_STATUS_INVALID_ARGUMENT, std::string(kOp) + ": attribute " +
                                                key + " = \"" + text +
                                                "\" is not a tuple");
  }
  return *t;
}

std::shared_ptr<void> Parse(const Attrs& a) {
  auto f = std::make_shared<ConvFusion>();
  f->num_inputs = static_cast<int>(a.GetInt("num_inputs", 0));
  f->data = Role(a, "data_input");
  f->weight = Role(a, "weight_input");
  f->bias = Role(a, "bias_input");
  f->gamma = Role(a, "gamma_input");
  f->beta = Role(a, "beta_input");
  f->mean = Role(a, "mean_input");
  f->var = Role(a, "var_input");
  f->sum = Role(a, "sum_input");
  f->with_bn = f->gamma >= 0;
  f->eps = a.GetFloat("bn_eps", 1e-3);
  f->fix_gamma =
      mxplugin::ParseBool(a.Get("bn_fix_gamma", "True")).value_or(true);
  f->num_filter = a.GetInt("num_filter", 0);
  f->num_group = a.GetInt("num_group", 1);
  f->kernel = Tuple(a, "kernel");
  f->stride = Tuple(a, "stride");
  f->dilate = Tuple(a, "dilate");
  f->pad = Tuple(a, "pad");
  for (const char* key : {"act", "postsum_act"}) {
    const std::string act = a.Get(key, "");
    if (act.empty()) continue;
    std::optional<PostOp> p =
        ParsePostOp(act, a.GetFloat(std::string(key) + "_slope", 0.25));
    if (!p) {
      throw Error(MX_STATUS_INVALID_ARGUMENT,
                  std::string(kOp) + ": unknown activation \"" + act + "\"");
    }
    (std::string(key) == "act" ? f->act : f->postsum_act) = p;
  }
  const int n = f->num_inputs;
  auto in_range = [n](int i, bool required) {
    return required ? (i >= 0 && i < n) : (i >= -1 && i < n);
  };
  const bool bn_ok =
      !f->with_bn || (in_range(f->beta, true) && in_range(f->mean, true) &&
                      in_range(f->var, true));
  if (n < 2 || !in_range(f->data, true) || !in_range(f->weight, true) ||
      !in_range(f->bias, false) || !in_range(f->sum, false) || !bn_ok ||
      f->kernel.empty() || f->kernel.size() > 3 || f->num_filter < 1 ||
      f->num_group < 1 || f->num_filter % f->num_group != 0 ||
      (f->postsum_act && f->sum < 0)) {
    throw Error(MX_STATUS_INVALID_ARGUMENT,
                std::string(kOp) +
                    ": inconsistent attributes (input roles, kernel, "
                    "num_filter, num_group, activations)");
  }
  return f;
}

// Per-axis value of a window attribute (empty: `fill`).
int64_t Axis(const std::vector<int64_t>& v, size_t i, int64_t fill) {
  return v.empty() ? fill : (i < v.size() ? v[i] : fill);
}

void InferShape(const Attrs& a, mxplugin::ShapeSlots& in,
                mxplugin::ShapeSlots& out) {
  const auto& f = a.parsed<ConvFusion>();
  const size_t rank = f.kernel.size();
  // Fills what is unknown (a missing shape or -1 dimensions).
  auto set = [&](int index, const mxplugin::Shape& s) {
    if (index < 0) return;
    if (!in[index] || in[index]->size() != s.size()) {
      if (!in[index]) in[index] = s;
      return;
    }
    for (size_t i = 0; i < s.size(); ++i) {
      if ((*in[index])[i] < 0) (*in[index])[i] = s[i];
    }
  };
  const int64_t filters = f.num_filter;
  if (in[f.data]) {
    const mxplugin::Shape& d = *in[f.data];
    if (d.size() != rank + 2) {
      throw Error(MX_STATUS_SHAPE_ERROR, std::string(kOp) + ": data of rank " +
                                             std::to_string(d.size()) +
                                             " for a " + std::to_string(rank) +
                                             "-D kernel");
    }
    mxplugin::Shape w = {filters, d[1] / f.num_group};
    w.insert(w.end(), f.kernel.begin(), f.kernel.end());
    set(f.weight, w);
    mxplugin::Shape o = {d[0], filters};
    for (size_t i = 0; i < rank; ++i) {
      const int64_t k = f.kernel[i], s = Axis(f.stride, i, 1),
                    dl = Axis(f.dilate, i, 1), p = Axis(f.pad, i, 0);
      const int64_t extent = dl * (k - 1) + 1;
      if (s < 1 || d[2 + i] + 2 * p < extent) {
        throw Error(MX_STATUS_SHAPE_ERROR,
                    std::string(kOp) + ": the window does not fit the data");
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

// Per node: the primitive for its shapes and the weights (and bias) it
// runs with, folded with BatchNorm and reordered once.
struct Geometry {
  Dims src, weights, bias, dst;
  Dims strides, dilates, pad;  // oneDNN's dilation is MXNet's minus 1.
  bool has_bias = false;
};

std::vector<int> WeightInputs(const ConvFusion& f);

struct State {
  ConvFusion f;
  // The inputs the prepared weights come from, and which of them the op
  // writes itself (BatchNorm's moving statistics: their version bumps are
  // its own).
  std::vector<int> weight_inputs;
  std::vector<bool> own_writes;
  void Init() {
    weight_inputs = WeightInputs(f);
    for (int i : weight_inputs) own_writes.push_back(i == f.mean || i == f.var);
  }
  std::mutex mu;
  WeightCache cache;
  bool built = false;
  Geometry geometry;
  dnnl::convolution_forward prim;
  // The primitive's activation layouts: blocked ones (nChw8c, ...) run
  // the direct JIT convolution, several times faster than the GEMM-based
  // one oneDNN picks for plain NCHW; the op's arrays stay NCHW and are
  // reordered around it, through per-thread scratch buffers.
  dnnl::memory::desc src, weights, bias, dst, scratchpad;
  dnnl::memory::desc plain_src, plain_dst;
  bool blocked_src = false, blocked_dst = false;
  dnnl::reorder to_blocked_src, to_blocked_dst, from_blocked_dst;
  dnnl::memory prepared_weights, prepared_bias;
};

void Build(State* s, Tensors in, Tensors out) {
  const ConvFusion& f = s->f;
  Geometry g;
  const std::vector<int64_t> data = in[f.data].shape(), o = out[0].shape();
  g.src = Dims(data.begin(), data.end());
  g.dst = Dims(o.begin(), o.end());
  const int64_t groups = f.num_group, filters = f.num_filter, c = data[1];
  g.weights = groups == 1 ? Dims{filters, c}
                          : Dims{groups, filters / groups, c / groups};
  g.weights.insert(g.weights.end(), f.kernel.begin(), f.kernel.end());
  for (size_t i = 0; i < f.kernel.size(); ++i) {
    g.strides.push_back(Axis(f.stride, i, 1));
    g.dilates.push_back(Axis(f.dilate, i, 1) - 1);
    g.pad.push_back(Axis(f.pad, i, 0));
  }
  g.bias = {filters};
  g.has_bias = f.with_bn || f.bias >= 0;
  dnnl::post_ops ops;
  if (f.act) ops.append_eltwise(1.0f, f.act->alg, f.act->alpha, 0.0f);
  if (f.sum >= 0) ops.append_sum(1.0f);
  if (f.postsum_act) {
    ops.append_eltwise(1.0f, f.postsum_act->alg, f.postsum_act->alpha, 0.0f);
  }
  dnnl::primitive_attr attr = UserScratchpadAttr();
  attr.set_post_ops(ops);
  const dnnl::memory::desc any_weights(g.weights, dnnl::memory::data_type::f32,
                                       dnnl::memory::format_tag::any);
  auto any = [](const Dims& dims) {
    return dnnl::memory::desc(dims, dnnl::memory::data_type::f32,
                              dnnl::memory::format_tag::any);
  };
  dnnl::convolution_forward::desc desc(
      dnnl::prop_kind::forward_inference, dnnl::algorithm::convolution_direct,
      any(g.src), any_weights,
      g.has_bias ? PlainDesc(g.bias) : dnnl::memory::desc(), any(g.dst),
      g.strides, g.dilates, g.pad, g.pad);
  dnnl::convolution_forward::primitive_desc pd(desc, attr, Engine());
  s->geometry = g;
  s->src = pd.src_desc();
  s->weights = pd.weights_desc();
  s->bias = pd.bias_desc();
  s->dst = pd.dst_desc();
  s->scratchpad = pd.scratchpad_desc();
  s->prim = dnnl::convolution_forward(pd);
  s->plain_src = PlainDesc(g.src);
  s->plain_dst = PlainDesc(g.dst);
  auto reorder = [](const dnnl::memory::desc& from,
                    const dnnl::memory::desc& to) {
    return dnnl::reorder(
        dnnl::reorder::primitive_desc(Engine(), from, Engine(), to));
  };
  s->blocked_src = s->src != s->plain_src;
  if (s->blocked_src) s->to_blocked_src = reorder(s->plain_src, s->src);
  s->blocked_dst = s->dst != s->plain_dst;
  if (s->blocked_dst) {
    s->to_blocked_dst = reorder(s->plain_dst, s->dst);
    s->from_blocked_dst = reorder(s->dst, s->plain_dst);
  }
  s->prepared_weights = dnnl::memory(s->weights, Engine());
  if (g.has_bias) s->prepared_bias = dnnl::memory(s->bias, Engine());
  s->built = true;
}

// Folds BatchNorm into the weights and bias (w * scale, (b - mean) * scale
// + beta with scale = gamma / sqrt(var + eps)) and reorders the weights to
// the primitive's layout.
void PrepareWeights(State* s, Tensors in) {
  const ConvFusion& f = s->f;
  const Geometry& g = s->geometry;
  const int64_t filters = g.bias[0];
  const int64_t per_filter = in[f.weight].size() / filters;
  const float* w = in[f.weight].data<float>();
  std::vector<float> scale(filters, 1.0f), shift(filters, 0.0f);
  if (f.with_bn) {
    const float* gamma = in[f.gamma].data<float>();
    const float* beta = in[f.beta].data<float>();
    const float* mean = in[f.mean].data<float>();
    const float* var = in[f.var].data<float>();
    for (int64_t c = 0; c < filters; ++c) {
      scale[c] = (f.fix_gamma ? 1.0f : gamma[c]) /
                 std::sqrt(var[c] + static_cast<float>(f.eps));
      shift[c] = beta[c] - mean[c] * scale[c];
    }
  }
  std::vector<float> folded(w, w + in[f.weight].size());
  if (f.with_bn) {
    for (int64_t c = 0; c < filters; ++c) {
      for (int64_t i = 0; i < per_filter; ++i) {
        folded[c * per_filter + i] *= scale[c];
      }
    }
  }
  dnnl::memory plain = Wrap(PlainDesc(g.weights), folded.data());
  dnnl::stream stream(Engine());
  dnnl::reorder(plain, s->prepared_weights)
      .execute(stream, plain, s->prepared_weights);
  stream.wait();
  if (g.has_bias) {
    auto* b = static_cast<float*>(s->prepared_bias.get_data_handle());
    const float* given = f.bias >= 0 ? in[f.bias].data<float>() : nullptr;
    for (int64_t c = 0; c < filters; ++c) {
      b[c] = (given ? given[c] : 0.0f) * scale[c] + shift[c];
    }
  }
}

std::vector<int> WeightInputs(const ConvFusion& f) {
  std::vector<int> v = {f.weight};
  for (int role : {f.bias, f.gamma, f.beta, f.mean, f.var}) {
    if (role >= 0) v.push_back(role);
  }
  return v;
}

void Compute(void* state, const KernelContext& ctx, Tensors in,
             const int32_t* req, Tensors out) {
  auto* s = static_cast<State*>(state);
  const ConvFusion& f = s->f;
  CheckFusedFloat32(kOp, in, out);
  if (ctx.is_train() && f.with_bn) {
    throw Error(MX_STATUS_NOT_IMPLEMENTED,
                std::string(kOp) +
                    ": inference only (BatchNorm is folded into the weights); "
                    "training runs the unfused graph");
  }
  const float* data = in[f.data].data<float>();
  const float* residual = f.sum >= 0 ? in[f.sum].data<float>() : nullptr;
  OutputBuffer dst(out[0], req[0], {data});
  if (dst.skip()) return;
  std::lock_guard<std::mutex> lock(s->mu);
  if (!s->built) Build(s, in, out);
  if (!s->cache.Fresh(ctx, s->weight_inputs, s->own_writes)) {
    PrepareWeights(s, in);
  }
  const dnnl::memory::desc none;
  dnnl::memory src = Wrap(s->plain_src, data);
  if (s->blocked_src) {
    dnnl::memory blocked = Wrap(s->src, ThreadBuffer(0, s->src.get_size()));
    Execute(s->to_blocked_src, none,
            {{DNNL_ARG_FROM, src}, {DNNL_ARG_TO, blocked}});
    src = blocked;
  }
  dnnl::memory plain_out = Wrap(s->plain_dst, dst.data());
  dnnl::memory result = s->blocked_dst
                            ? Wrap(s->dst, ThreadBuffer(1, s->dst.get_size()))
                            : plain_out;
  if (residual != nullptr) {
    // The "sum" post-op adds to what the destination holds.
    if (s->blocked_dst) {
      Execute(s->to_blocked_dst, none,
              {{DNNL_ARG_FROM, Wrap(s->plain_dst, residual)},
               {DNNL_ARG_TO, result}});
    } else if (residual != dst.data()) {
      std::memcpy(dst.data(), residual, out[0].size() * sizeof(float));
    }
  }
  std::unordered_map<int, dnnl::memory> args{
      {DNNL_ARG_SRC, src},
      {DNNL_ARG_WEIGHTS, s->prepared_weights},
      {DNNL_ARG_DST, result}};
  if (s->geometry.has_bias) args.emplace(DNNL_ARG_BIAS, s->prepared_bias);
  Execute(s->prim, s->scratchpad, std::move(args));
  if (s->blocked_dst) {
    Execute(s->from_blocked_dst, none,
            {{DNNL_ARG_FROM, result}, {DNNL_ARG_TO, plain_out}});
  }
  dst.Finish();
}

}  // namespace

void RegisterFusedConv(mxplugin::Plugin& plugin) {
  mxplugin::OpDef op = FusedOpDef(
      kOp,
      "Convolution fused by the onednn subgraph property with what follows "
      "it: BatchNorm (folded into the weights once, refolded when an input "
      "changes), an activation, the addition of a residual (a \"sum\" "
      "post-op) and an activation after it. Inference only; float32.");
  op.Attr("gamma_input", MX_ATTR_INT, "-1")
      .Attr("beta_input", MX_ATTR_INT, "-1")
      .Attr("mean_input", MX_ATTR_INT, "-1")
      .Attr("var_input", MX_ATTR_INT, "-1")
      .Attr("sum_input", MX_ATTR_INT, "-1")
      .Attr("bn_eps", MX_ATTR_FLOAT, "0.001")
      .Attr("bn_fix_gamma", MX_ATTR_BOOL, "True")
      .Attr("act", MX_ATTR_STRING, "")
      .Attr("act_slope", MX_ATTR_FLOAT, "0.25")
      .Attr("postsum_act", MX_ATTR_STRING, "")
      .Attr("postsum_act_slope", MX_ATTR_FLOAT, "0.25")
      .Attr("kernel", MX_ATTR_STRING)
      .Attr("stride", MX_ATTR_STRING, "()")
      .Attr("dilate", MX_ATTR_STRING, "()")
      .Attr("pad", MX_ATTR_STRING, "()")
      .Attr("num_filter", MX_ATTR_INT)
      .Attr("num_group", MX_ATTR_INT, "1")
      .Attr("no_bias", MX_ATTR_STRING, "False")
      .Attr("layout", MX_ATTR_STRING, "None")
      .Parse(Parse)
      .InferShape(InferShape)
      .MutateInputs([](const Attrs& a) {
        // The moving statistics stay auxiliary states, as under BatchNorm
        // (the op reads them only).
        const auto& f = a.parsed<ConvFusion>();
        return f.with_bn ? std::vector<int>{f.mean, f.var} : std::vector<int>{};
      })
      .Stateful(MX_DEVICE_CPU, FusedStateFactory<State, ConvFusion>(), Compute);
  plugin.RegisterOp(std::move(op));
}

}  // namespace mx_onednn
