// Weights prepared once for inference (folded, reordered to the layout a
// primitive prefers) and kept until an input they came from changes.
//
// The key is the (array id, version) of each input the preparation reads,
// from KernelContext::InputVersionOf: equal keys mean equal contents. An
// input whose version the host cannot tell disables caching (prepared on
// every call). Inputs the op itself mutates (MxOpDef.mutate_inputs) get
// their version bumped by the op's own write: `own_writes` says which, so
// the next call still hits.
//
//   WeightCache cache;
//   if (!cache.Fresh(ctx, {1, 2}, {false, false})) { prepare(); }
#ifndef MXCORE_BACKENDS_ONEDNN_WEIGHT_CACHE_H_
#define MXCORE_BACKENDS_ONEDNN_WEIGHT_CACHE_H_

#include <cstdint>
#include <vector>

#include "backends/plugin_api/mx_plugin_cpp.h"

namespace mx_onednn {

class WeightCache {
 public:
  // Whether what was prepared for `inputs` still holds; when not, the
  // caller prepares again and the new key is remembered. Not thread-safe:
  // callers hold their state's lock.
  bool Fresh(const mxplugin::KernelContext& ctx, const std::vector<int>& inputs,
             const std::vector<bool>& own_writes);

 private:
  bool valid_ = false;
  std::vector<mxplugin::KernelContext::InputVersion> expected_;
};

// Preparations so far (cache misses), for mx_onednn_weight_preparations.
void CountWeightPreparation();
int64_t WeightPreparations();

}  // namespace mx_onednn

#endif  // MXCORE_BACKENDS_ONEDNN_WEIGHT_CACHE_H_
