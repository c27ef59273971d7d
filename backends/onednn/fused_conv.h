// The ops the onednn subgraph property (fusion_property.h) puts in place of
// what it claims, inference only, float32:
//   _sg_onednn_conv: Convolution [+ BatchNorm folded into the weights]
//     [+ activation] [+ residual added as oneDNN's "sum" post-op]
//     [+ activation], with the weights folded and reordered once per node
//     and prepared again when an input they come from changes;
//   _sg_onednn_fc: FullyConnected [+ activation], weights likewise.
// Their attributes name which input plays which role ("weight_input": 1).
#ifndef MXCORE_BACKENDS_ONEDNN_FUSED_CONV_H_
#define MXCORE_BACKENDS_ONEDNN_FUSED_CONV_H_

#include <dnnl.hpp>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "backends/plugin_api/mx_plugin_cpp.h"

namespace mx_onednn {

// An activation applied as an eltwise post-op.
struct PostOp {
  dnnl::algorithm alg = dnnl::algorithm::eltwise_relu;
  float alpha = 0;
};

// "relu", "leaky" (slope), "sigmoid", "tanh", "softrelu"; nullopt for
// anything else.
std::optional<PostOp> ParsePostOp(const std::string& act, double slope);

// Throws `op`'s DTypeError unless every input and output is float32 (a
// fused op has no built-in kernel to decline to).
void CheckFusedFloat32(const char* op, mxplugin::Tensors in,
                       mxplugin::Tensors out);

// The state factory of a fused op (OpDef::Stateful): a new State holding
// the op's parsed attributes (`State::f`, of type Fusion) and the inputs
// its weights come from (`State::Init()` works them out once).
template <typename State, typename Fusion>
auto FusedStateFactory() {
  return [](const mxplugin::Attrs& a, int, int,
            const std::vector<mxplugin::Shape>&, const std::vector<int>&) {
    auto s = std::make_shared<State>();
    s->f = a.parsed<Fusion>();
    s->Init();
    return std::shared_ptr<void>(s);
  };
}

// Shape inference of a fused op's input `index` (-1: none): fills what is
// unknown (no shape yet, or -1 dimensions, as MXNet's "(128, 0)" weights
// arrive) from `needed`, whose own -1 dimensions are not known either.
// ShapeError naming `op` when a known dimension differs.
void MergeInputShape(const char* op, int index, const mxplugin::Shape& needed,
                     mxplugin::ShapeSlots& in);

// The schema every fused op starts with: `description`, num_inputs
// inputs, and the attributes naming the data, weight and bias inputs.
mxplugin::OpDef FusedOpDef(const char* op, const char* description);

void RegisterFusedConv(mxplugin::Plugin& plugin);
void RegisterFusedFc(mxplugin::Plugin& plugin);

}  // namespace mx_onednn

#endif  // MXCORE_BACKENDS_ONEDNN_FUSED_CONV_H_
