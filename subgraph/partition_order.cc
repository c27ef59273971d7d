// Keeping the input order. Symbol::ListInputs() lists variables in
// depth-first order, and a subgraph node visits all its inputs at once, so
// a variable the original graph reached between two inputs of a subgraph
// can come out of order. This simulates the depth-first walk of the
// partitioned graph (each subgraph a single unit) and orders every
// subgraph's inputs by their producers' original positions; before it
// descends into an input, the variables the original order expects first
// are made extra, unread inputs of the subgraph (variables only, so no
// cycle can form). One walk, linear in the graph.
#include <algorithm>

#include "subgraph/partition_internal.h"

namespace mx {
namespace partition_internal {

std::vector<std::vector<InputItem>> OrderSubgraphInputs(const IndexedGraph& idx,
                                                        const Found& found) {
  const uint32_t n = static_cast<uint32_t>(idx.num_nodes());
  const uint32_t num_groups = static_cast<uint32_t>(found.groups.size());
  auto unit_of = [&](uint32_t v) {
    return found.label[v] < 0 ? v : n + static_cast<uint32_t>(found.label[v]);
  };
  // External inputs of each group, by producer position, without repeats.
  std::vector<std::vector<IndexedGraph::EntryRef>> ext(num_groups);
  std::vector<std::vector<uint32_t>> ext_control(num_groups);
  for (uint32_t g = 0; g < num_groups; ++g) {
    for (uint32_t v : found.groups[g]) {
      for (const auto& e : idx[v].inputs) {
        if (found.label[e.node_id] != static_cast<int>(g)) ext[g].push_back(e);
      }
      for (uint32_t d : idx[v].control_deps) {
        if (found.label[d] != static_cast<int>(g)) ext_control[g].push_back(d);
      }
    }
    auto key = [&](const IndexedGraph::EntryRef& e) { return idx.entry_id(e); };
    std::stable_sort(
        ext[g].begin(), ext[g].end(),
        [&](const auto& a, const auto& b) { return key(a) < key(b); });
    ext[g].erase(std::unique(ext[g].begin(), ext[g].end(),
                             [&](const auto& a, const auto& b) {
                               return key(a) == key(b);
                             }),
                 ext[g].end());
  }

  const std::vector<uint32_t>& vars = idx.input_nodes();
  std::vector<bool> visited(n + num_groups, false);
  std::vector<std::vector<InputItem>> items(num_groups);
  size_t p = 0;
  auto advance = [&] {
    while (p < vars.size() && visited[vars[p]]) ++p;
  };
  // Frames: (unit, next child).
  std::vector<std::pair<uint32_t, size_t>> stack;
  auto push = [&](uint32_t unit) {
    if (visited[unit]) return;
    visited[unit] = true;
    stack.emplace_back(unit, 0);
  };
  for (const auto& head : idx.outputs()) {
    push(unit_of(head.node_id));
    while (!stack.empty()) {
      auto& [unit, next] = stack.back();
      if (unit < n) {
        const auto& info = idx[unit];
        const size_t total = info.inputs.size() + info.control_deps.size();
        if (next == total) {
          stack.pop_back();
          advance();
          continue;
        }
        const uint32_t child =
            next < info.inputs.size()
                ? info.inputs[next].node_id
                : info.control_deps[next - info.inputs.size()];
        ++next;
        push(unit_of(child));
        continue;
      }
      const uint32_t g = unit - n;
      const size_t total = ext[g].size() + ext_control[g].size();
      if (next == total) {
        stack.pop_back();
        continue;
      }
      const size_t k = next++;
      const uint32_t producer = k < ext[g].size()
                                    ? ext[g][k].node_id
                                    : ext_control[g][k - ext[g].size()];
      // Variables expected before this input's subtree come first.
      advance();
      while (p < vars.size() && vars[p] < producer) {
        items[g].push_back(InputItem{vars[p], 0, 0, /*extra=*/true});
        visited[vars[p]] = true;
        advance();
      }
      if (k < ext[g].size()) {
        const auto& e = ext[g][k];
        items[g].push_back(InputItem{e.node_id, e.index, e.version, false});
      }
      push(unit_of(producer));
    }
  }
  return items;
}

}  // namespace partition_internal
}  // namespace mx
