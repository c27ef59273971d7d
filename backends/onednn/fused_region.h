// _sg_onednn_region: fused convolutions (_sg_onednn_conv, fused_conv.h)
// that feed one another, run as one op whose intermediate activations stay
// in the layouts oneDNN chose (nChw16c, nhwc, ...). A single fused
// convolution reorders its input from and its result to mxcore's plain
// NCHW arrays; in ResNet-18 at batch 32 those reorders took a fifth of the
// fused network's time. A region reorders only where data enters or
// leaves it, as MXNet's MKLDNN arrays kept their layout between ops.
//
// The "onednn" backend's second property makes regions: after the first
// has fused each convolution with what follows it, every connected group
// of two or more steps, fused convolutions and the poolings between them,
// one feeding another's data or residual, becomes a region. Inference
// only, float32, like its steps.
//
// Attributes: num_inputs, num_outputs, and `steps`, JSON:
//   {"steps": [{"op": "_sg_onednn_conv" or "Pooling", "name": "...",
//               "inputs": ["i0", "i1", ...], "attrs": {<the node's>}}, ...],
//    "outputs": [3]}
// where "iK" is the region's input K and "sK" step K's result (only as a
// step's data or residual input; weights come from the region's inputs),
// and `outputs` lists the steps whose results the region returns.
#ifndef MXCORE_BACKENDS_ONEDNN_FUSED_REGION_H_
#define MXCORE_BACKENDS_ONEDNN_FUSED_REGION_H_

#include <dnnl.hpp>
#include <optional>
#include <vector>

#include "backends/onednn/pool_attrs.h"
#include "backends/plugin_api/mx_plugin_cpp.h"

namespace mx_onednn {

// A Pooling node as a region step: max or average, global or with the
// "valid" convention, channels second, every window overlapping the data
// (pad < kernel), so oneDNN computes what the built-in kernel does for
// any input shape. Unless global, stride and pad are filled in (1s, 0s).
using PoolStep = PoolAttrs;

// A Pooling's attributes as a step; nullopt when a region cannot run it.
std::optional<PoolStep> ParsePoolStep(const mxplugin::Attrs& attrs);

// Whether the region property claims `node`: a fused convolution, or a
// Pooling a region step can run (max or avg; global, or "valid" with
// pad < kernel).
bool RegionClaims(const mxplugin::NodeView& node);

// The region replacing `graph` (fused convolutions only); an empty op
// leaves it as it is (one convolution, an edge into a weight, ...).
mxplugin::SubgraphNode BuildRegionNode(const MxGraphView& graph);

void RegisterFusedRegion(mxplugin::Plugin& plugin);

}  // namespace mx_onednn

#endif  // MXCORE_BACKENDS_ONEDNN_FUSED_REGION_H_
