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
#include "backends/onednn/fused_conv_primitive.h"
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

void MergeInputShape(const char* op, int index, const mxplugin::Shape& needed,
                     mxplugin::ShapeSlots& in) {
  if (index < 0) return;
  if (!in[index]) {
    in[index] = needed;
    return;
  }
  mxplugin::Shape& given = *in[index];
  const mxplugin::Shape as_given = given;  // For the message.
  bool fits = given.size() == needed.size();
  for (size_t i = 0; fits && i < needed.size(); ++i) {
    if (needed[i] < 0) continue;  // Not known from the data either.
    if (given[i] < 0) given[i] = needed[i];
    fits = given[i] == needed[i];
  }
  if (!fits) {
    auto text = [](const mxplugin::Shape& s) {
      std::string t = "(";
      for (size_t i = 0; i < s.size(); ++i) {
        t += (i ? ", " : "") + std::to_string(s[i]);
      }
      return t + ")";
    };
    throw Error(MX_STATUS_SHAPE_ERROR,
                std::string(op) + ": input " + std::to_string(index) +
                    " has shape " + text(given) + ", needs " + text(needed));
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

std::shared_ptr<void> Parse(const Attrs& a) {
  return std::make_shared<ConvFusion>(ParseConvFusion(a, kOp));
}

void InferShape(const Attrs& a, mxplugin::ShapeSlots& in,
                mxplugin::ShapeSlots& out) {
  InferConvFusionShapes(a.parsed<ConvFusion>(), kOp, in, out);
}

struct State {
  ConvFusion f;
  // The inputs the prepared weights come from, and which of them the op
  // writes itself (BatchNorm's moving statistics: their version bumps are
  // its own).
  std::vector<int> weight_inputs;
  std::vector<bool> own_writes;
  void Init() {
    weight_inputs = ConvWeightInputs(f);
    own_writes = ConvOwnWrites(f);
  }
  std::mutex mu;
  WeightCache cache;
  // Built at the first call, for its shapes. The op's arrays stay NCHW
  // and are reordered to and from the primitive's layouts through
  // per-thread scratch buffers.
  std::optional<FusedConvPrimitive> prim;
  int team = 1;                    // The OpenMP team size prim was made for.
  std::vector<int64_t> built_for;  // The data shape `prim` is for.
  Relayout src, dst;
};

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
  OutputBuffer dst(out[0], req[0], {data});
  if (dst.skip()) return;
  std::lock_guard<std::mutex> lock(s->mu);
  if (!s->prim || s->built_for != in[f.data].shape()) {
    s->team = UseCallThreads(ctx);
    const std::vector<int64_t> src_dims = in[f.data].shape(),
                               dst_dims = out[0].shape();
    s->cache = WeightCache();  // The new primitive's weights are empty.
    s->built_for = src_dims;
    s->prim.emplace(f, Dims(src_dims.begin(), src_dims.end()),
                    Dims(dst_dims.begin(), dst_dims.end()));
    s->src =
        Relayout(PlainDesc(s->prim->src_desc().dims()), s->prim->src_desc());
    s->dst =
        Relayout(PlainDesc(s->prim->dst_desc().dims()), s->prim->dst_desc());
  }
  UseTeamSize(s->team);
  if (!s->cache.Fresh(ctx, s->weight_inputs, s->own_writes)) {
    s->prim->PrepareWeights([&](int i) { return in[i].data<float>(); });
  }
  const dnnl::memory src = s->src.Input(data, 0);
  const dnnl::memory result = s->dst.Output(dst.data(), 1);
  // The "sum" post-op adds to what the destination holds.
  if (f.sum >= 0) s->dst.InputTo(in[f.sum].data<float>(), result);
  s->prim->Run(src, result);
  s->dst.Finish(result, dst.data());
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
