// Internal: a graph with inferred shapes and a memory plan, run by pushing
// its ops on the engine. Shared by Executor (bound arrays) and CachedOp
// (fresh inputs per call).
//
// Bulk execution (as MXNet's): up to MX_EXEC_BULK_MAX_NODES (default 15;
// 0 or 1 turns it off) consecutive ops with plain kernels run as one
// engine operation, which reads the union of their inputs and writes the
// union of their outputs. Shapes, dtypes and in-place choices come from
// the plan, so each op skips Invoke's inference and its own engine push.
// Ops without a plain kernel (dynamic shape, stateful, random, FInvoke)
// and ops whose planned in-place write the op does not allow run alone
// through Invoke, as do all ops in deferred-compute mode.
#ifndef MXCORE_IMPERATIVE_GRAPH_RUNNER_H_
#define MXCORE_IMPERATIVE_GRAPH_RUNNER_H_

#include <atomic>
#include <memory>
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
  // With `rerun_from_node`, the nodes from that one on may run more than
  // once on one State (a CachedOp call's backward under retain_graph): the
  // memory plan keeps the earlier nodes' results they read whole.
  GraphRunner(const Symbol& symbol, Context ctx,
              const std::vector<TShape>& in_shapes,
              const std::vector<DType>& in_types, const std::string& who,
              uint32_t rerun_from_node = 0);

  // The arrays of one run: one per node entry, and the write requests of
  // outputs bound to the caller's arrays (BindOutput).
  struct State {
    std::vector<NDArray> entries;
    std::vector<std::pair<uint32_t, OpReqType>> bound;  // (entry, request)
  };

  // Runs every op: Prepare, RunNodes over all nodes, Outputs.
  std::vector<NDArray> Run(const std::vector<NDArray>& inputs, bool is_train,
                           bool fresh_blocks, bool fresh_outputs) const;

  // Places `inputs` (input_nodes() order; none entries may be set later
  // with SetInput) and one array per op output. With `fresh_blocks`,
  // intermediate storage is allocated for this run (from the pool) instead
  // of reusing the runner's blocks; with `fresh_outputs`, graph outputs get
  // new arrays rather than planned ones, so earlier results survive the
  // next run.
  State Prepare(const std::vector<NDArray>& inputs, bool fresh_blocks,
                bool fresh_outputs) const;
  void SetInput(State* state, size_t i, const NDArray& value) const;
  // Makes the op computing graph output `i` write it straight into
  // `target` under `req` (kWriteTo or kAddTo) when RunNodes runs it, as
  // MXNet's executors write gradients into the arrays of their grad_req:
  // no copy afterwards. Returns false, changing nothing, when that cannot
  // be done: another request; the output is a graph input, a dynamic-shape
  // op's, read by a node or listed twice (an added-to array would feed
  // them its sum); `target` is none, has another shape, dtype or context,
  // or is one of the graph's inputs. The binding holds for every later
  // RunNodes on `state` until UnbindOutputs.
  bool BindOutput(State* state, size_t i, const NDArray& target,
                  OpReqType req) const;
  // Gives bound outputs fresh arrays again (the targets keep what was
  // written into them) and forgets their requests.
  void UnbindOutputs(State* state) const;
  // Pushes the ops among nodes [begin, end) in topological order, in bulk
  // segments where it can. Nodes may run in several calls (forward, then
  // backward) on one state. Autograd does not record them.
  void RunNodes(State* state, uint32_t begin, uint32_t end,
                bool is_train) const;
  std::vector<NDArray> Outputs(const State& state) const;

  const Graph& graph() const { return graph_; }
  uint32_t num_nodes() const {
    return static_cast<uint32_t>(graph_.indexed_graph().num_nodes());
  }
  size_t planned_bytes() const;
  size_t bytes_without_reuse() const;
  // Engine operations the last RunNodes pushed for its ops (segments and
  // ops run alone).
  size_t last_pushes() const { return last_pushes_; }

 private:
  std::vector<NDArray> MakeBlocks() const;
  void CheckInput(size_t i, const NDArray& value) const;
  void InvokeNode(State* state, uint32_t nid) const;
  void PushSegment(State* state, const std::vector<uint32_t>& nids,
                   bool is_train) const;

  Context ctx_;
  Graph graph_;
  std::vector<NDArray> blocks_;
  // Per node, what a bulk segment needs of its op, found once.
  struct BulkNode {
    bool bulkable = false;  // May run inside a segment.
    bool temp_space = false;
    std::vector<int> mutated;  // Inputs the op writes.
  };
  std::vector<BulkNode> bulk_nodes_;
  // Per node: its outputs' write requests when one of them is unread
  // (kNullOp), empty otherwise (all kWriteTo).
  std::vector<std::vector<OpReqType>> output_reqs_;
  // Per node entry: how many node inputs and graph outputs read it.
  std::vector<int> readers_;
  // node `nid`'s output write requests in `state`.
  std::vector<OpReqType> OutputRequests(const State& state, uint32_t nid) const;
  // Keeps the nodes (their attributes) alive for segments still queued on
  // the engine when the runner goes away.
  std::shared_ptr<const Graph> nodes_alive_;
  int bulk_max_nodes_ = 0;
  // Per node, the state of a stateful op (its shapes are fixed for the
  // runner's life); slots are filled under Invoke's lock.
  mutable std::vector<OpStatePtr> node_states_;
  mutable std::atomic<size_t> last_pushes_{0};
};

// `symbol`'s outputs followed by the gradients of all of them with respect
// to `xs` (input nodes of `symbol`). Head gradient i is a new variable
// named HeadGradName(i); the symbol's own nodes come first in topological
// order, so running the first Graph(symbol) node count of nodes is the
// forward pass.
Symbol WithGradients(const Symbol& symbol, const std::vector<NodePtr>& xs);
std::string HeadGradName(size_t i);

}  // namespace mx

#endif  // MXCORE_IMPERATIVE_GRAPH_RUNNER_H_
