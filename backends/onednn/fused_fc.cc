// _sg_onednn_fc: FullyConnected [+ activation] as one oneDNN inner product
// with an eltwise post-op; the weights are reordered to the primitive's
// layout once per node (fused_conv.h).
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "backends/common/attr_parse.h"
#include "backends/onednn/dnnl_context.h"
#include "backends/onednn/fused_conv.h"
#include "backends/onednn/weight_cache.h"

namespace mx_onednn {
namespace {

using mxplugin::Attrs;
using mxplugin::Error;
using mxplugin::KernelContext;
using mxplugin::Tensors;

constexpr char kOp[] = "_sg_onednn_fc";

struct FcFusion {
  int num_inputs = 0, data = -1, weight = -1, bias = -1;
  int64_t num_hidden = 0;
  bool flatten = true;
  std::optional<PostOp> act;
};

std::shared_ptr<void> Parse(const Attrs& a) {
  auto f = std::make_shared<FcFusion>();
  f->num_inputs = static_cast<int>(a.GetInt("num_inputs", 0));
  f->data = static_cast<int>(a.GetInt("data_input", -1));
  f->weight = static_cast<int>(a.GetInt("weight_input", -1));
  f->bias = static_cast<int>(a.GetInt("bias_input", -1));
  f->num_hidden = a.GetInt("num_hidden", 0);
  f->flatten = mxplugin::ParseBool(a.Get("flatten", "True")).value_or(true);
  const std::string act = a.Get("act", "");
  if (!act.empty()) {
    f->act = ParsePostOp(act, a.GetFloat("act_slope", 0.25));
    if (!f->act) {
      throw Error(MX_STATUS_INVALID_ARGUMENT,
                  std::string(kOp) + ": unknown activation \"" + act + "\"");
    }
  }
  const int n = f->num_inputs;
  if (n < 2 || f->data < 0 || f->data >= n || f->weight < 0 || f->weight >= n ||
      f->bias < -1 || f->bias >= n || f->num_hidden < 1 || !f->flatten) {
    throw Error(MX_STATUS_INVALID_ARGUMENT,
                std::string(kOp) +
                    ": inconsistent attributes (input roles, num_hidden; "
                    "flatten=False is not fused)");
  }
  return f;
}

void InferShape(const Attrs& a, mxplugin::ShapeSlots& in,
                mxplugin::ShapeSlots& out) {
  const auto& f = a.parsed<FcFusion>();
  MergeInputShape(kOp, f.bias, {f.num_hidden}, in);
  if (!in[f.data]) {
    MergeInputShape(kOp, f.weight, {f.num_hidden, -1}, in);
    if (!out[0]) out[0] = mxplugin::Shape{-1, f.num_hidden};
    return;
  }
  const mxplugin::Shape& d = *in[f.data];
  if (d.empty()) {
    throw Error(MX_STATUS_SHAPE_ERROR, std::string(kOp) + ": scalar data");
  }
  int64_t k = 1;  // The flattened row length; -1 while a dimension is not.
  for (size_t i = 1; i < d.size() && k >= 0; ++i) k = d[i] < 0 ? -1 : k * d[i];
  MergeInputShape(kOp, f.weight, {f.num_hidden, k}, in);
  out[0] = mxplugin::Shape{d[0], f.num_hidden};
}

struct State {
  FcFusion f;
  std::vector<int> weight_inputs;  // Weight and bias.
  void Init() {
    weight_inputs = {f.weight};
    if (f.bias >= 0) weight_inputs.push_back(f.bias);
  }
  std::mutex mu;
  WeightCache cache;
  bool built = false;
  int team = 1;  // The OpenMP team size prim was made for.
  dnnl::inner_product_forward prim;
  dnnl::memory::desc src, dst, scratchpad;
  Dims weight_dims;
  dnnl::memory weights, bias;
};

void Build(State* s, Tensors in) {
  const FcFusion& f = s->f;
  const int64_t m = in[f.data].dim(0), k = in[f.data].size() / m;
  s->weight_dims = {f.num_hidden, k};
  dnnl::post_ops ops;
  if (f.act) ops.append_eltwise(1.0f, f.act->alg, f.act->alpha, 0.0f);
  dnnl::primitive_attr attr = UserScratchpadAttr();
  attr.set_post_ops(ops);
  const dnnl::memory::desc any_weights(s->weight_dims,
                                       dnnl::memory::data_type::f32,
                                       dnnl::memory::format_tag::any);
  dnnl::inner_product_forward::desc desc(
      dnnl::prop_kind::forward_inference, PlainDesc({m, k}), any_weights,
      f.bias >= 0 ? PlainDesc({f.num_hidden}) : dnnl::memory::desc(),
      PlainDesc({m, f.num_hidden}));
  dnnl::inner_product_forward::primitive_desc pd(desc, attr, Engine());
  s->src = pd.src_desc();
  s->dst = pd.dst_desc();
  s->scratchpad = pd.scratchpad_desc();
  s->prim = dnnl::inner_product_forward(pd);
  s->weights = dnnl::memory(pd.weights_desc(), Engine());
  if (f.bias >= 0) s->bias = dnnl::memory(pd.bias_desc(), Engine());
  s->built = true;
}

void PrepareWeights(State* s, Tensors in) {
  const FcFusion& f = s->f;
  dnnl::memory plain =
      Wrap(PlainDesc(s->weight_dims), in[f.weight].data<float>());
  dnnl::stream stream(Engine());
  dnnl::reorder(plain, s->weights).execute(stream, plain, s->weights);
  stream.wait();
  if (f.bias >= 0) {
    const float* b = in[f.bias].data<float>();
    std::copy(b, b + f.num_hidden,
              static_cast<float*>(s->bias.get_data_handle()));
  }
}

void Compute(void* state, const KernelContext& ctx, Tensors in,
             const int32_t* req, Tensors out) {
  auto* s = static_cast<State*>(state);
  const FcFusion& f = s->f;
  CheckFusedFloat32(kOp, in, out);
  OutputBuffer dst(out[0], req[0], {in[f.data].data<float>()});
  if (dst.skip()) return;
  std::lock_guard<std::mutex> lock(s->mu);
  if (!s->built) {
    s->team = UseCallThreads(ctx);
    Build(s, in);
  }
  UseTeamSize(s->team);
  if (!s->cache.Fresh(ctx, s->weight_inputs, {})) PrepareWeights(s, in);
  std::unordered_map<int, dnnl::memory> args{
      {DNNL_ARG_SRC, Wrap(s->src, in[f.data].data<float>())},
      {DNNL_ARG_WEIGHTS, s->weights},
      {DNNL_ARG_DST, Wrap(s->dst, dst.data())}};
  if (f.bias >= 0) args.emplace(DNNL_ARG_BIAS, s->bias);
  Execute(s->prim, s->scratchpad, std::move(args));
  dst.Finish();
}

}  // namespace

void RegisterFusedFc(mxplugin::Plugin& plugin) {
  mxplugin::OpDef op = FusedOpDef(
      kOp,
      "FullyConnected fused by the onednn subgraph property with the "
      "activation after it; weights reordered once per node. Inference "
      "only; float32.");
  op.Attr("num_hidden", MX_ATTR_INT)
      .Attr("flatten", MX_ATTR_BOOL, "True")
      .Attr("no_bias", MX_ATTR_STRING, "False")
      .Attr("act", MX_ATTR_STRING, "")
      .Attr("act_slope", MX_ATTR_FLOAT, "0.25")
      .Parse(Parse)
      .InferShape(InferShape)
      .Stateful(MX_DEVICE_CPU, FusedStateFactory<State, FcFusion>(), Compute);
  plugin.RegisterOp(std::move(op));
}

}  // namespace mx_onednn
