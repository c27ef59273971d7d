// Internal: what subgraph ops need to know about their nested graph, and a
// synchronous interpreter that runs it inside one kernel.
//
// A kernel runs on an engine worker and may not wait on the engine, so a
// subgraph op cannot drive a CachedOp or Executor from its kernel. Instead
// SubgraphInfo keeps, like CachedOp, one inferred plan per input signature,
// and Run calls the inner kernels directly on the outer op's memory.
#ifndef MXCORE_SUBGRAPH_SUBGRAPH_EXEC_H_
#define MXCORE_SUBGRAPH_SUBGRAPH_EXEC_H_

#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "graph/graph.h"
#include "graph/op.h"
#include "graph/symbol.h"

namespace mx {
namespace subgraph_internal {

class SubgraphInfo {
 public:
  // Cheap: the analysis runs on first use (partitioning creates many).
  explicit SubgraphInfo(Symbol symbol) : symbol_(std::move(symbol)) {}

  const Symbol& symbol() const { return symbol_; }
  // The subgraph's inputs in SubgraphInputs() order (= the op's inputs).
  const std::vector<NodePtr>& inputs() const { return Analyzed().inputs; }
  size_t num_outputs() const { return symbol_.outputs.size(); }
  // Input positions some inner op writes (auxiliary states).
  const std::vector<int>& mutate_inputs() const {
    return Analyzed().mutate_inputs;
  }
  const std::vector<ResourceRequest>& resources() const {
    return Analyzed().resources;
  }

  // Shape/dtype inference through the subgraph in both directions: what is
  // known of `in` and of `out` fills what it can of both; throws on
  // contradictions, naming `who`.
  void InferShape(const std::string& who, std::vector<TShape>* in,
                  std::vector<TShape>* out) const;
  void InferType(const std::string& who, std::vector<DType>* in,
                 std::vector<DType>* out) const;

  // Runs the subgraph on `in`, writing `out` per `req`, with the inner ops'
  // kernels for ctx's device (on its stream: a device op then waits for
  // that stream before its scratch memory is reused).
  void Run(const OpContext& ctx, const std::vector<TBlob>& in,
           const std::vector<OpReqType>& req,
           const std::vector<TBlob>& out) const;

 private:
  struct Plan {
    Graph graph;  // With "shape" and "dtype".
  };
  struct Analysis {
    std::vector<NodePtr> inputs;
    // Op input position of each graph input in depth-first order.
    std::vector<int> dfs_to_op;
    std::vector<int> mutate_inputs;
    std::vector<ResourceRequest> resources;
  };
  const Analysis& Analyzed() const;
  std::shared_ptr<const Plan> GetPlan(const std::vector<TBlob>& in) const;
  // Op-order values reordered for the graph passes (depth-first order).
  template <typename T>
  std::vector<T> ToDFS(const std::vector<T>& op_order) const {
    std::vector<T> dfs;
    for (int i : Analyzed().dfs_to_op) dfs.push_back(op_order[i]);
    return dfs;
  }

  Symbol symbol_;
  mutable std::once_flag once_;
  mutable Analysis analysis_;
  mutable std::mutex mu_;
  mutable std::map<std::string, std::shared_ptr<const Plan>> plans_;
};

// The info cached in attrs.parsed by subgraph ops, or a fresh one built
// from attrs.subgraphs[0]. Throws InvalidArgument when there is none.
std::shared_ptr<const SubgraphInfo> GetSubgraphInfo(const NodeAttrs& attrs);

// Sets attrs.parsed to a SubgraphInfo for attrs.subgraphs[0].
void AttachSubgraphInfo(NodeAttrs* attrs);

}  // namespace subgraph_internal
}  // namespace mx

#endif  // MXCORE_SUBGRAPH_SUBGRAPH_EXEC_H_
