#include "subgraph/partition_graph.h"

#include <iostream>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "base/env.h"
#include "graph/pass.h"
#include "subgraph/partition_internal.h"
#include "subgraph/recorded_types.h"

namespace mx {
namespace {

using partition_internal::Adjacency;
using partition_internal::Found;

bool Verbose(const PartitionOptions& options) {
  if (!options.verbose_from_env) return options.verbose;
  return env::GetBool("MX_SUBGRAPH_VERBOSE", options.verbose);
}

Symbol PartitionOne(const Symbol& symbol, const SubgraphProperty& property,
                    int* next_id, PartitionReport* report) {
  Graph g(symbol);
  const IndexedGraph& idx = g.indexed_graph();
  const Adjacency adj(idx);
  const Found found = partition_internal::FindSubgraphs(idx, adj, property);
  if (found.groups.empty()) {
    report->notes.insert(report->notes.end(), found.notes.begin(),
                         found.notes.end());
    return symbol;
  }
  std::vector<std::string> node_names;
  Symbol out;
  out.outputs = partition_internal::RewriteGraph(
      symbol.outputs, idx, found, property, next_id, &node_names);
  for (size_t i = 0; i < found.groups.size(); ++i) {
    if (node_names[i].empty()) {
      report->notes.push_back(absl::StrCat(
          "subgraph starting at \"", idx[found.groups[i][0]].source->name(),
          "\" rejected: property \"", property.name(),
          "\" created no node for it"));
      continue;
    }
    PartitionReport::Subgraph s;
    s.property = property.name();
    s.node = node_names[i];
    for (uint32_t v : found.groups[i])
      s.claimed.push_back(idx[v].source->name());
    for (uint32_t v : found.excluded[i]) {
      s.excluded.push_back(idx[v].source->name());
    }
    report->subgraphs.push_back(std::move(s));
  }
  report->notes.insert(report->notes.end(), found.notes.begin(),
                       found.notes.end());
  return out;
}

Symbol Partition(const Symbol& symbol,
                 const std::vector<SubgraphPropertyPtr>& properties,
                 const std::string& backend, const PartitionOptions& options,
                 PartitionReport* report) {
  PartitionReport local;
  PartitionReport& r = report != nullptr ? *report : local;
  r = PartitionReport();
  r.backend = backend;
  Symbol result = symbol;
  int next_id = 0;
  for (const SubgraphPropertyPtr& p : properties) {
    if (p->inference_only() && options.need_grad) {
      r.notes.push_back(absl::StrCat("property \"", p->name(),
                                     "\" skipped: inference only and "
                                     "gradients are requested"));
      continue;
    }
    result = PartitionOne(result, *p, &next_id, &r);
  }
  if (Verbose(options)) std::cerr << r.ToString();
  return result;
}

Graph PartitionGraphPass(Graph g) {
  const std::string& backend = g.GetAttr<std::string>("subgraph_backend");
  PartitionOptions options;
  if (g.HasAttr("subgraph_need_grad")) {
    options.need_grad = g.GetAttr<bool>("subgraph_need_grad");
  }
  Symbol s;
  s.outputs = g.outputs;
  PartitionReport report;
  Graph out;
  // Shapes and dtypes the caller inferred (the executor, from the bound
  // arrays) are what selectors see.
  const ScopedRecordedTypes recorded(g);
  out.outputs = PartitionGraph(s, backend, options, &report).outputs;
  out.SetAttr("subgraph_report", report.ToString());
  return out;
}

MX_REGISTER_PASS((PassInfo{
    "PartitionGraph",
    "Replaces the subgraphs a backend claims with subgraph nodes.",
    {"subgraph_backend"},
    {"subgraph_report"},
    PartitionGraphPass}));

}  // namespace

std::string PartitionReport::ToString() const {
  std::string out = absl::StrCat("PartitionGraph(backend \"", backend,
                                 "\"): ", subgraphs.size(), " subgraph(s)\n");
  for (const Subgraph& s : subgraphs) {
    absl::StrAppend(&out, "  ", s.node, " [", s.property, "] claims ",
                    s.claimed.size(), ": ", absl::StrJoin(s.claimed, ", "),
                    "\n");
    if (!s.excluded.empty()) {
      absl::StrAppend(&out, "    excluded to break cycles: ",
                      absl::StrJoin(s.excluded, ", "), "\n");
    }
  }
  for (const std::string& note : notes)
    absl::StrAppend(&out, "  note: ", note, "\n");
  return out;
}

Symbol PartitionGraph(const Symbol& symbol, const std::string& backend,
                      const PartitionOptions& options,
                      PartitionReport* report) {
  if (backend == "NONE") {
    if (report != nullptr) {
      *report = PartitionReport();
      report->backend = backend;
    }
    return symbol;
  }
  return Partition(symbol, SubgraphBackendRegistry::Get()->Lookup(backend),
                   backend, options, report);
}

Symbol PartitionGraph(const Symbol& symbol, const SubgraphProperty& property,
                      const PartitionOptions& options,
                      PartitionReport* report) {
  // A non-owning pointer: the property outlives the call.
  SubgraphPropertyPtr p(const_cast<SubgraphProperty*>(&property),
                        [](SubgraphProperty*) {});
  return Partition(symbol, {p}, property.name(), options, report);
}

}  // namespace mx
