// PartitionGraph: replaces the parts of a graph a backend claims with
// subgraph nodes.
//
// Each property of the backend runs in turn. Seeds are visited in
// topological order; a subgraph grows from a seed through the selector's
// SelectInput/SelectOutput. Cycles through nodes outside the subgraph are
// broken as MXNet breaks them (excluded nodes are reported; see
// partition_find.cc); the selector's Filter may drop nodes, and what
// remains is split into connected pieces. Each piece becomes one node made
// by the property, or stays as it is if the property returns null. The
// result lists the same inputs, arguments and auxiliary states in the same
// order as the original and computes the same outputs.
//
//   mx::SetSubgraphPropertyOpNames("default", {"exp", "sin"});
//   mx::PartitionReport report;
//   mx::Symbol part = mx::PartitionGraph(net, "default", {}, &report);
//   std::cerr << report.ToString() << mx::PartitionedToDOT(part);
//
// Also registered as graph pass "PartitionGraph": needs graph attribute
// "subgraph_backend" (std::string), reads "subgraph_need_grad" (bool) when
// present, provides "subgraph_report" (std::string). Cost: one growth per
// seed and one regrowth per excluded node (see partition_find.cc).
#ifndef MXCORE_SUBGRAPH_PARTITION_GRAPH_H_
#define MXCORE_SUBGRAPH_PARTITION_GRAPH_H_

#include <string>
#include <vector>

#include "graph/symbol.h"
#include "subgraph/subgraph_property.h"

namespace mx {

struct PartitionOptions {
  // Gradients will be taken: inference-only properties are skipped.
  bool need_grad = false;
  // Print the report to stderr. Default: MX_SUBGRAPH_VERBOSE (bool).
  bool verbose = false;
  // Whether `verbose` was set by the caller; otherwise the variable decides.
  bool verbose_from_env = true;
};

// What a partitioning did, for people.
struct PartitionReport {
  struct Subgraph {
    std::string property;
    std::string node;                   // The replacing node's name.
    std::vector<std::string> claimed;   // Node names, topological order.
    std::vector<std::string> excluded;  // Left out to break a cycle.
  };
  std::string backend;
  std::vector<Subgraph> subgraphs;
  std::vector<std::string> notes;  // Skipped properties, dissolved cycles.

  std::string ToString() const;
};

// Partitions with every property of `backend` ("NONE": returns `symbol`).
// Throws NotFound (unknown backend, listing the registered ones) and the
// errors of the properties. `symbol` itself is not modified.
Symbol PartitionGraph(const Symbol& symbol, const std::string& backend,
                      const PartitionOptions& options = {},
                      PartitionReport* report = nullptr);

// Partitions with one property.
Symbol PartitionGraph(const Symbol& symbol, const SubgraphProperty& property,
                      const PartitionOptions& options = {},
                      PartitionReport* report = nullptr);

// Graphviz DOT of a partitioned symbol: Symbol::ToDOT of the outer graph
// plus, as a dashed cluster per subgraph node, the graph it holds.
std::string PartitionedToDOT(const Symbol& symbol);

}  // namespace mx

#endif  // MXCORE_SUBGRAPH_PARTITION_GRAPH_H_
