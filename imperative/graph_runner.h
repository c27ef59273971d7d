// Internal: a graph with inferred shapes and a memory plan, run op by op
// through Invoke. Shared by Executor (bound arrays) and CachedOp (fresh
// inputs per call).
#ifndef MXCORE_IMPERATIVE_GRAPH_RUNNER_H_
#define MXCORE_IMPERATIVE_GRAPH_RUNNER_H_

#include <string>
#include <vector>

#include "graph/graph.h"
#include "graph/symbol.h"
#include "ndarray/ndarray.h"

namespace mx {

class GraphRunner {
 public:
  // Shapes and dtypes of the graph's inputs in IndexedGraph::input_nodes()
  // order. Throws ShapeError / DTypeError with the inference report when
  // something stays unknown. `who` prefixes messages.
  GraphRunner(const Symbol& symbol, Context ctx,
              const std::vector<TShape>& in_shapes,
              const std::vector<DType>& in_types, const std::string& who);

  // Runs every op: Prepare, RunNodes over all nodes, Outputs.
  std::vector<NDArray> Run(const std::vector<NDArray>& inputs, bool is_train,
                           bool fresh_blocks, bool fresh_outputs);

  // Places `inputs` (input_nodes() order) and one array per op output. With
  // `fresh_blocks`, intermediate storage is allocated for this run (from
  // the pool) instead of reusing the runner's blocks; with `fresh_outputs`,
  // graph outputs get new arrays rather than planned ones, so earlier
  // results survive the next run.
  void Prepare(const std::vector<NDArray>& inputs, bool fresh_blocks,
               bool fresh_outputs);
  // Pushes the ops among nodes [begin, end) in topological order. Nodes
  // may run in several calls (forward, then backward) on one Prepare.
  void RunNodes(uint32_t begin, uint32_t end, bool is_train);
  std::vector<NDArray> Outputs() const;

  const Graph& graph() const { return graph_; }
  size_t planned_bytes() const;
  size_t bytes_without_reuse() const;

 private:
  std::vector<NDArray> MakeBlocks() const;

  Context ctx_;
  Graph graph_;
  std::vector<NDArray> blocks_;
  std::vector<NDArray> entries_;  // One array per entry, set by Prepare.
};

}  // namespace mx

#endif  // MXCORE_IMPERATIVE_GRAPH_RUNNER_H_
