// Internal to PartitionGraph: finding subgraphs and rewriting the graph.
#ifndef MXCORE_SUBGRAPH_PARTITION_INTERNAL_H_
#define MXCORE_SUBGRAPH_PARTITION_INTERNAL_H_

#include <cstdint>
#include <vector>

#include "graph/graph.h"
#include "subgraph/partition_graph.h"

namespace mx {
namespace partition_internal {

// Adjacency of an IndexedGraph by node id; control dependencies count as
// edges (they order execution, so they can close cycles too).
struct Adjacency {
  explicit Adjacency(const IndexedGraph& idx);
  // Producers of node v (data inputs, then control deps), with repeats.
  std::vector<uint32_t> in_begin, in_list;
  // Consumers of node v, without repeats.
  std::vector<uint32_t> out_begin, out_list;
  std::vector<bool> is_var;
  // Data inputs only (SelectInput is asked about these).
  std::vector<uint32_t> data_in_end;
};

struct Found {
  // Node ids of each subgraph, increasing.
  std::vector<std::vector<uint32_t>> groups;
  // Group of each node, or -1.
  std::vector<int> label;
  // Per group: nodes excluded to break cycles while growing it.
  std::vector<std::vector<uint32_t>> excluded;
  std::vector<std::string> notes;
};

// One input of a subgraph node: an entry produced outside the subgraph, or
// (extra) a variable the node takes only to keep the input order.
struct InputItem {
  uint32_t node_id;
  uint32_t index;
  uint32_t version;
  bool extra;
};

// Per group, its inputs in the order that keeps Symbol::ListInputs() of
// the partitioned graph equal to the original's.
std::vector<std::vector<InputItem>> OrderSubgraphInputs(const IndexedGraph& idx,
                                                        const Found& found);

Found FindSubgraphs(const IndexedGraph& idx, const Adjacency& adj,
                    const SubgraphProperty& property);

// Replaces each group with property.CreateSubgraphNode; ids start at
// *next_id. A group whose node is null stays unpartitioned (its name in
// *node_names is empty). Returns the new outputs.
std::vector<NodeEntry> RewriteGraph(const std::vector<NodeEntry>& outputs,
                                    const IndexedGraph& idx, const Found& found,
                                    const SubgraphProperty& property,
                                    int* next_id,
                                    std::vector<std::string>* node_names);

}  // namespace partition_internal
}  // namespace mx

#endif  // MXCORE_SUBGRAPH_PARTITION_INTERNAL_H_
