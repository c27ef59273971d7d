#include "subgraph/recorded_types.h"

namespace mx {
namespace {

thread_local const ScopedRecordedTypes* tls_current = nullptr;

}  // namespace

ScopedRecordedTypes::ScopedRecordedTypes(const Graph& g) : saved_(tls_current) {
  tls_current = this;
  if (!g.HasAttr("shape") || !g.HasAttr("dtype")) return;
  const auto& shapes = g.GetAttr<std::vector<TShape>>("shape");
  const auto& dtypes = g.GetAttr<std::vector<DType>>("dtype");
  const IndexedGraph& idx = g.indexed_graph();
  if (shapes.size() != idx.num_node_entries() ||
      dtypes.size() != idx.num_node_entries()) {
    return;  // Not this graph's (a stale attribute): record nothing.
  }
  for (uint32_t nid = 0; nid < idx.num_nodes(); ++nid) {
    const Node* node = idx[nid].source;
    NodeOutputTypes& t = types_[node];
    const uint32_t outputs = node->num_outputs();
    for (uint32_t k = 0; k < outputs; ++k) {
      const uint32_t eid = idx.entry_id(nid, k);
      t.shapes.push_back(shapes[eid]);
      t.dtypes.push_back(dtypes[eid]);
    }
  }
}

ScopedRecordedTypes::~ScopedRecordedTypes() { tls_current = saved_; }

const NodeOutputTypes* RecordedOutputTypes(const Node& node) {
  if (tls_current == nullptr) return nullptr;
  auto it = tls_current->types_.find(&node);
  return it == tls_current->types_.end() ? nullptr : &it->second;
}

}  // namespace mx
