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

  // Runs every op. `inputs` follow input_nodes() order. With
  // `fresh_blocks`, intermediate storage is allocated for this run (from
  // the pool) instead of reusing the runner's blocks; with
  // `fresh_outputs`, graph outputs get new arrays rather than planned
  // ones, so earlier results survive the next run.
  std::vector<NDArray> Run(const std::vector<NDArray>& inputs, bool is_train,
                           bool fresh_blocks, bool fresh_outputs);

  const Graph& graph() const { return graph_; }
  size_t planned_bytes() const;
  size_t bytes_without_reuse() const;

 private:
  std::vector<NDArray> MakeBlocks() const;

  Context ctx_;
  Graph graph_;
  std::vector<NDArray> blocks_;
};

}  // namespace mx

#endif  // MXCORE_IMPERATIVE_GRAPH_RUNNER_H_
