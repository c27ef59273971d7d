// PlanMemory: assigns every op output a storage block, reusing an input's
// block in place where the op allows it and that input dies here, and
// otherwise the smallest free block that fits (blocks free up when their
// last reader has run).
//
// Optional "memory_rerun_from_node" (uint32_t N): nodes from N on may run
// again on the same arrays (a CachedOp call's backward under retain_graph),
// so the earlier nodes' results they read are kept whole to the end, as
// graph outputs are.
//
// Needs "shape" and "dtype". Provides
//   "storage_id"   per entry: -1 for graph inputs (variables), else a block
//   "storage_bytes" per block
//   "memory_planned_bytes", "memory_bytes_without_reuse" (size_t)
#include <map>

#include "absl/strings/str_cat.h"
#include "graph/pass.h"

namespace mx {
namespace {

Graph PlanMemory(Graph g) {
  const IndexedGraph& idx = g.indexed_graph();
  const auto& shapes = g.GetAttr<std::vector<TShape>>("shape");
  const auto& dtypes = g.GetAttr<std::vector<DType>>("dtype");
  const size_t num_entries = idx.num_node_entries();

  auto bytes_of = [&](uint32_t eid) -> size_t {
    const int64_t n = shapes[eid].Size();
    if (n < 0 || dtypes[eid] == DType::kUnknown) {
      throw InvalidArgument(
          absl::StrCat("PlanMemory: entry ", eid,
                       " has unknown shape or dtype; run "
                       "InferShape/InferType with complete inputs first"));
    }
    return static_cast<size_t>(n) * DTypeSize(dtypes[eid]);
  };

  // Readers left per entry; graph outputs are pinned with one extra.
  std::vector<int> readers = idx.EntryReaders();
  if (g.HasAttr("memory_rerun_from_node")) {
    const uint32_t rerun = g.GetAttr<uint32_t>("memory_rerun_from_node");
    std::vector<bool> pinned(num_entries, false);
    for (uint32_t nid = rerun; nid < idx.num_nodes(); ++nid) {
      for (const auto& e : idx[nid].inputs) {
        if (e.node_id < rerun) pinned[idx.entry_id(e)] = true;
      }
    }
    for (uint32_t eid = 0; eid < num_entries; ++eid)
      readers[eid] += pinned[eid];
  }

  std::vector<int> storage_id(num_entries, -1);
  std::vector<size_t> storage_bytes;
  std::multimap<size_t, int> free_blocks;  // bytes -> block
  size_t without_reuse = 0;

  auto release = [&](uint32_t eid) {
    const int sid = storage_id[eid];
    if (sid >= 0) free_blocks.emplace(storage_bytes[sid], sid);
  };

  for (uint32_t nid = 0; nid < idx.num_nodes(); ++nid) {
    const Node& node = *idx[nid].source;
    if (node.is_variable()) continue;
    const auto& inputs = idx[nid].inputs;
    std::vector<bool> input_taken(inputs.size(), false);
    const auto inplace = node.op()->InplaceOptions(node.attrs);
    for (uint32_t i = 0; i < node.num_outputs(); ++i) {
      const uint32_t eid = idx.entry_id(nid, i);
      const size_t bytes = bytes_of(eid);
      without_reuse += bytes;
      int sid = -1;
      for (const auto& [in, out] : inplace) {
        if (out != static_cast<int>(i) ||
            in >= static_cast<int>(inputs.size()) || input_taken[in]) {
          continue;
        }
        const uint32_t in_eid = idx.entry_id(inputs[in]);
        // The input must die here (this node is its only remaining reader,
        // once for each time it appears) and own a block of the same size.
        int uses_here = 0;
        for (const auto& other : inputs)
          uses_here += idx.entry_id(other) == in_eid;
        if (storage_id[in_eid] >= 0 && readers[in_eid] == uses_here &&
            bytes_of(in_eid) == bytes) {
          sid = storage_id[in_eid];
          input_taken[in] = true;
          break;
        }
      }
      if (sid < 0) {
        auto it = free_blocks.lower_bound(bytes);
        if (it != free_blocks.end()) {
          sid = it->second;
          free_blocks.erase(it);
        } else {
          sid = static_cast<int>(storage_bytes.size());
          storage_bytes.push_back(bytes);
        }
      }
      storage_id[eid] = sid;
    }
    // Inputs whose last reader this was free their blocks, unless an output
    // took the block over in place.
    for (size_t k = 0; k < inputs.size(); ++k) {
      const uint32_t in_eid = idx.entry_id(inputs[k]);
      if (--readers[in_eid] == 0 && !input_taken[k]) {
        bool handed_on = false;
        for (size_t j = 0; j < inputs.size(); ++j) {
          handed_on |= input_taken[j] && idx.entry_id(inputs[j]) == in_eid;
        }
        if (!handed_on) release(in_eid);
      }
    }
    // Outputs nobody reads are dead as soon as the op has run.
    for (uint32_t i = 0; i < node.num_outputs(); ++i) {
      const uint32_t eid = idx.entry_id(nid, i);
      if (readers[eid] == 0) release(eid);
    }
  }
  size_t planned = 0;
  for (size_t b : storage_bytes) planned += b;
  g.SetAttr("storage_id", std::move(storage_id));
  g.SetAttr("storage_bytes", std::move(storage_bytes));
  g.SetAttr("memory_planned_bytes", planned);
  g.SetAttr("memory_bytes_without_reuse", without_reuse);
  return g;
}

MX_REGISTER_PASS((PassInfo{
    "PlanMemory",
    "Assigns storage blocks to op outputs with in-place and dead-block reuse.",
    {"shape", "dtype"},
    {"storage_id", "storage_bytes", "memory_planned_bytes",
     "memory_bytes_without_reuse"},
    PlanMemory}));

}  // namespace
}  // namespace mx
