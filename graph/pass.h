// Graph passes: named functions from graph to graph, run by name.
//
// Each pass declares the graph attributes it needs and those it provides;
// running a pass whose inputs are missing is an error naming the attribute
// and the pass that provides it. Built-in passes:
//   InferShape  needs nothing (reads "shape_inputs" and __shape__ hints,
//               and "shape_outputs", known output shapes aligned with the
//               graph's outputs), provides "shape",
//               "shape_num_unknown_nodes", "shape_unknown_report"
//   InferType   likewise with "dtype_inputs"/"dtype_outputs"/__dtype__,
//               provides "dtype",
//               "dtype_num_unknown_nodes", "dtype_unknown_report"
//   PlanMemory  needs "shape", "dtype"; provides "storage_id",
//               "storage_bytes", "memory_planned_bytes",
//               "memory_bytes_without_reuse"
//
//   Graph g(symbol);
//   g = ApplyPasses(std::move(g), {"InferShape", "InferType"});
#ifndef MXCORE_GRAPH_PASS_H_
#define MXCORE_GRAPH_PASS_H_

#include <functional>
#include <string>
#include <vector>

#include "graph/graph.h"

namespace mx {

struct PassInfo {
  std::string name;
  std::string description;
  std::vector<std::string> needs;     // Graph attributes read.
  std::vector<std::string> provides;  // Graph attributes written.
  std::function<Graph(Graph)> run;
};

class PassRegistry {
 public:
  static PassRegistry* Get();
  // Throws AlreadyExists.
  void Register(PassInfo info);
  // Throws NotFound listing the registered passes.
  const PassInfo& Lookup(const std::string& name) const;
  std::vector<std::string> ListNames() const;

 private:
  PassRegistry() = default;
  absl::flat_hash_map<std::string, PassInfo> passes_;
};

Graph ApplyPass(Graph graph, const std::string& name);
Graph ApplyPasses(Graph graph, const std::vector<std::string>& names);

}  // namespace mx

#define MX_REGISTER_PASS_CONCAT_(a, b) a##b
#define MX_REGISTER_PASS_VAR_(line) MX_REGISTER_PASS_CONCAT_(mx_pass_reg_, line)
// MX_REGISTER_PASS(PassInfo{...}); libraries defining passes need
// alwayslink = 1.
#define MX_REGISTER_PASS(info)                                         \
  static const bool MX_REGISTER_PASS_VAR_(__LINE__) [[maybe_unused]] = \
      (::mx::PassRegistry::Get()->Register(info), true)

#endif  // MXCORE_GRAPH_PASS_H_
