// The subgraph property "onednn" (inference only), as MXNet's oneDNN
// backend fuses: Convolution followed, along single edges, by BatchNorm
// (folded into the weights), an activation (relu, sigmoid, tanh, softrelu,
// leaky), the addition of a residual (elemwise_add: oneDNN's "sum"
// post-op) and an activation after it becomes one _sg_onednn_conv;
// FullyConnected (flatten) with an activation one _sg_onednn_fc
// (fused_conv.h). Chains whose intermediate results are used elsewhere
// stay unfused, as do known dtypes other than float32. A second property
// of the backend ("onednn_region") then joins fused convolutions that feed
// one another, and the poolings between them, into one _sg_onednn_region
// (fused_region.h), which keeps activations in oneDNN's layouts.
//
//   mx::Symbol fused = mx::PartitionGraph(net, "onednn");  // plugin loaded
#ifndef MXCORE_BACKENDS_ONEDNN_FUSION_PROPERTY_H_
#define MXCORE_BACKENDS_ONEDNN_FUSION_PROPERTY_H_

#include "backends/plugin_api/mx_plugin_cpp.h"

namespace mx_onednn {

// Registers the fused ops and both properties.
void RegisterFusionProperty(mxplugin::Plugin& plugin);

}  // namespace mx_onednn

#endif  // MXCORE_BACKENDS_ONEDNN_FUSION_PROPERTY_H_
