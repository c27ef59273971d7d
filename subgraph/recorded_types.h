// The shapes and dtypes of nodes' outputs while a graph is partitioned, for
// subgraph selectors: a property whose ops take only some dtypes (onednn's
// fused convolution: float32) leaves other nodes alone. The executor
// infers them from the bound arrays before it partitions
// (imperative/subgraph_hook.h); the PartitionGraph pass records the graph's
// "shape" and "dtype" attributes for the calling thread while it runs, and
// the plugin layer fills the node views a plugin's selectors see from them.
//
//   const NodeOutputTypes* t = RecordedOutputTypes(node);
//   if (t != nullptr && t->dtypes[0] != DType::kFloat32) return false;
#ifndef MXCORE_SUBGRAPH_RECORDED_TYPES_H_
#define MXCORE_SUBGRAPH_RECORDED_TYPES_H_

#include <vector>

#include "absl/container/flat_hash_map.h"
#include "graph/graph.h"
#include "graph/node.h"
#include "ndarray/dtype.h"
#include "ndarray/shape.h"

namespace mx {

// One entry per output; unknown ones are TShape() and DType::kUnknown.
struct NodeOutputTypes {
  std::vector<TShape> shapes;
  std::vector<DType> dtypes;
};

// What the innermost live ScopedRecordedTypes of this thread recorded for
// `node`; nullptr when none is live or the node is not in its graph.
const NodeOutputTypes* RecordedOutputTypes(const Node& node);

// Records, for the calling thread and while alive, the outputs of every
// node of `g` from its "shape" and "dtype" attributes (entry-indexed, as
// the InferShape and InferType passes leave them); nothing when `g` lacks
// either.
class ScopedRecordedTypes {
 public:
  explicit ScopedRecordedTypes(const Graph& g);
  ~ScopedRecordedTypes();
  ScopedRecordedTypes(const ScopedRecordedTypes&) = delete;
  ScopedRecordedTypes& operator=(const ScopedRecordedTypes&) = delete;

 private:
  absl::flat_hash_map<const Node*, NodeOutputTypes> types_;
  const ScopedRecordedTypes* saved_;
  friend const NodeOutputTypes* RecordedOutputTypes(const Node& node);
};

}  // namespace mx

#endif  // MXCORE_SUBGRAPH_RECORDED_TYPES_H_
