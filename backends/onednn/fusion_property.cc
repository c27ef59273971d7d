#include "backends/onednn/fusion_property.h"

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "backends/common/attr_parse.h"
#include "backends/onednn/fused_conv.h"
#include "backends/onednn/fused_region.h"

namespace mx_onednn {
namespace {

using mxplugin::NodeView;

bool IsSum(std::string_view op) {
  return op == "elemwise_add" || op == "_Plus" || op == "_plus";
}

// The activation a node applies as a post-op name ("relu", "leaky", ...),
// or "" when it is not one oneDNN fuses.
std::string ActivationOf(const NodeView& n, std::string* slope) {
  *slope = "0.25";
  if (n.op() == "relu") return "relu";
  if (n.op() == "Activation") {
    const std::string act = n.attrs().Get("act_type", "");
    return ParsePostOp(act, 0) ? act : "";
  }
  if (n.op() == "LeakyReLU" && n.attrs().Get("act_type", "leaky") == "leaky") {
    *slope = n.attrs().Get("slope", "0.25");
    return "leaky";
  }
  return "";
}

bool Float32OrUnknown(const NodeView& n) {
  const MxNodeView* c = n.c();
  for (int i = 0; i < c->num_outputs; ++i) {
    const int32_t t = c->output_dtypes[i];
    if (t != MX_DTYPE_UNKNOWN && t != MX_DTYPE_FLOAT32) return false;
  }
  return true;
}

bool FusableConv(const NodeView& n) {
  const std::string layout = n.attrs().Get("layout", "None");
  return n.op() == "Convolution" && Float32OrUnknown(n) &&
         (layout == "None" || layout == "NCW" || layout == "NCHW" ||
          layout == "NCDHW");
}

bool FusableFc(const NodeView& n) {
  return n.op() == "FullyConnected" && Float32OrUnknown(n) &&
         mxplugin::ParseBool(n.attrs().Get("flatten", "True")).value_or(false);
}

bool FusableBatchNorm(const NodeView& n) {
  return n.op() == "BatchNorm" && n.attrs().GetInt("axis", 1) == 1 &&
         !mxplugin::ParseBool(n.attrs().Get("output_mean_var", "False"))
              .value_or(true);
}

// Grows conv -> [BatchNorm] -> [act] -> [sum] -> [act], or FC -> [act],
// along single edges from the last claimed node (MXNet's fusion order).
class FusionSelector : public mxplugin::Selector {
 public:
  bool Select(const NodeView& seed) override {
    if (FusableConv(seed)) {
      stage_ = kConv;
    } else if (FusableFc(seed)) {
      stage_ = kFc;
    } else {
      return false;
    }
    last_ = std::string(seed.name());
    return true;
  }
  bool SelectInput(const NodeView&, const NodeView&) override { return false; }
  bool SelectOutput(const NodeView& cur, const NodeView& out) override {
    if (cur.name() != last_ || !Float32OrUnknown(out)) return false;
    std::string slope;
    const bool act = !ActivationOf(out, &slope).empty();
    Stage next = kDone;
    switch (stage_) {
      case kConv:
        next = FusableBatchNorm(out) ? kBn
               : act                 ? kAct
               : IsSum(out.op())     ? kSum
                                     : kDone;
        break;
      case kBn:
        next = act ? kAct : IsSum(out.op()) ? kSum : kDone;
        break;
      case kAct:
        next = IsSum(out.op()) ? kSum : kDone;
        break;
      case kSum:
        next = act ? kPostAct : kDone;
        break;
      case kFc:
        next = act ? kFcAct : kDone;
        break;
      default:
        break;
    }
    if (next == kDone) return false;
    stage_ = next;
    last_ = std::string(out.name());
    return true;
  }

 private:
  enum Stage { kDone, kConv, kBn, kAct, kSum, kPostAct, kFc, kFcAct };
  Stage stage_ = kDone;
  std::string last_;
};

// Reads the claimed chain back from the graph view and describes the
// fused node; an empty op leaves the chain unfused.
class FusedNodeBuilder {
 public:
  explicit FusedNodeBuilder(const MxGraphView& g) : g_(g) {}

  mxplugin::SubgraphNode Build() {
    std::vector<int> ops;
    for (int i = 0; i < g_.num_nodes; ++i) {
      if (!NodeView(&g_.nodes[i]).is_variable()) ops.push_back(i);
    }
    // One output, the last node's first: an intermediate result used
    // outside would need a second output.
    if (ops.empty() || g_.num_outputs != 1 ||
        g_.output_nodes[0] != ops.back() || g_.output_indices[0] != 0) {
      return {};
    }
    const NodeView first(&g_.nodes[ops[0]]);
    node_.attrs.emplace_back("num_inputs", std::to_string(g_.num_inputs));
    size_t next = 1;
    if (first.op() == "Convolution") {
      node_.op = "_sg_onednn_conv";
      for (const char* key : {"kernel", "stride", "dilate", "pad", "num_filter",
                              "num_group", "no_bias", "layout"}) {
        const std::string v = first.attrs().Get(key, "");
        if (!v.empty()) node_.attrs.emplace_back(key, v);
      }
    } else {
      node_.op = "_sg_onednn_fc";
      for (const char* key : {"num_hidden", "no_bias", "flatten"}) {
        const std::string v = first.attrs().Get(key, "");
        if (!v.empty()) node_.attrs.emplace_back(key, v);
      }
    }
    const bool no_bias =
        mxplugin::ParseBool(first.attrs().Get("no_bias", "False"))
            .value_or(false);
    if (first.num_inputs() != (no_bias ? 2 : 3) ||
        !Role(first, 0, "data_input") || !Role(first, 1, "weight_input") ||
        (!no_bias && !Role(first, 2, "bias_input"))) {
      return {};
    }
    int prev = ops[0];
    if (next < ops.size() && node_.op == "_sg_onednn_conv") {
      const NodeView bn(&g_.nodes[ops[next]]);
      if (bn.op() == "BatchNorm") {
        if (bn.num_inputs() != 5 || !From(bn, 0, prev) ||
            !Role(bn, 1, "gamma_input") || !Role(bn, 2, "beta_input") ||
            !Role(bn, 3, "mean_input") || !Role(bn, 4, "var_input")) {
          return {};
        }
        node_.attrs.emplace_back("bn_eps", bn.attrs().Get("eps", "0.001"));
        node_.attrs.emplace_back("bn_fix_gamma",
                                 bn.attrs().Get("fix_gamma", "True"));
        prev = ops[next++];
      }
    }
    if (!Activation(ops, &next, &prev, "act")) return {};
    if (next < ops.size() && node_.op == "_sg_onednn_conv") {
      const NodeView sum(&g_.nodes[ops[next]]);
      if (!IsSum(sum.op()) || sum.num_inputs() != 2) return {};
      // The residual is the input that is not the chain.
      const int chain = From(sum, 0, prev) ? 0 : From(sum, 1, prev) ? 1 : -1;
      if (chain < 0 || !Role(sum, 1 - chain, "sum_input")) return {};
      prev = ops[next++];
      if (!Activation(ops, &next, &prev, "postsum_act")) return {};
    }
    if (next != ops.size()) return {};
    return node_;
  }

 private:
  // Whether input `i` of `n` is node `node`'s first output.
  bool From(const NodeView& n, int i, int node) const {
    return n.input_node(i) == node && n.input_output(i) == 0;
  }

  // Records which input of the fused node feeds input `i` of `n` (it
  // must be one of the subgraph's inputs) as attribute `key`.
  bool Role(const NodeView& n, int i, const char* key) {
    const int node = n.input_node(i);
    for (int k = 0; k < g_.num_inputs; ++k) {
      if (g_.input_nodes[k] == node) {
        node_.attrs.emplace_back(key, std::to_string(k));
        return true;
      }
    }
    return false;
  }

  // An optional activation at ops[*next] fed by *prev.
  bool Activation(const std::vector<int>& ops, size_t* next, int* prev,
                  const std::string& key) {
    if (*next >= ops.size()) return true;
    const NodeView n(&g_.nodes[ops[*next]]);
    std::string slope;
    const std::string act = ActivationOf(n, &slope);
    if (act.empty()) return true;
    if (n.num_inputs() != 1 || !From(n, 0, *prev)) return false;
    node_.attrs.emplace_back(key, act);
    node_.attrs.emplace_back(key + "_slope", slope);
    *prev = ops[(*next)++];
    return true;
  }

  const MxGraphView& g_;
  mxplugin::SubgraphNode node_;
};

class FusionProperty : public mxplugin::Property {
 public:
  std::string name() const override { return "onednn"; }
  bool inference_only() const override { return true; }
  std::unique_ptr<mxplugin::Selector> CreateSelector() override {
    return std::make_unique<FusionSelector>();
  }
  mxplugin::SubgraphNode CreateNode(const MxGraphView& graph, int) override {
    return FusedNodeBuilder(graph).Build();
  }
};

// Second: fused convolutions feeding one another, and the poolings between
// them, become one region whose activations stay in oneDNN's layouts
// (fused_region.h).
class RegionProperty : public mxplugin::Property {
 public:
  std::string name() const override { return "onednn_region"; }
  bool inference_only() const override { return true; }
  std::unique_ptr<mxplugin::Selector> CreateSelector() override {
    return std::make_unique<mxplugin::PredicateSelector>(
        [](const NodeView& n) { return RegionClaims(n); });
  }
  mxplugin::SubgraphNode CreateNode(const MxGraphView& graph, int) override {
    return BuildRegionNode(graph);
  }
};

}  // namespace

void RegisterFusionProperty(mxplugin::Plugin& plugin) {
  RegisterFusedConv(plugin);
  RegisterFusedFc(plugin);
  RegisterFusedRegion(plugin);
  plugin.RegisterSubgraphProperty("onednn", std::make_shared<FusionProperty>());
  plugin.RegisterSubgraphProperty("onednn", std::make_shared<RegionProperty>());
}

}  // namespace mx_onednn
