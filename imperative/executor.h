// Executor: a symbol bound to arrays, run through the engine.
//
// Binding infers every shape and dtype, plans memory (PlanMemory: in-place
// and dead-buffer reuse) and allocates one block per planned storage id;
// Forward then pushes each op, in topological order, writing into its
// planned block. Arguments, auxiliary states and gradients are reachable by
// name.
//
//   Symbol net = ...;  // arguments "data", "fc1_weight", ...
//   auto exec = Executor::SimpleBind(net, Context::CPU(), {{"data", {64,
//   784}}}); exec->arg_dict()["data"].SyncCopyFromCPU(batch.data(),
//   batch.size()); exec->Forward(/*is_train=*/false); std::vector<float> y =
//   exec->outputs()[0].ToVector<float>();
//
// When MX_SUBGRAPH_BACKEND names a backend (not NONE), Bind partitions the
// symbol first (imperative/subgraph_hook.h); arrays stay bound by the
// original names and symbol() returns the partitioned graph.
//
// With gradients requested, binding also builds the backward graph (the
// Gradient pass) and plans forward and backward together: Forward runs
// the forward nodes, Backward the rest, reusing the forward values it needs.
#ifndef MXCORE_IMPERATIVE_EXECUTOR_H_
#define MXCORE_IMPERATIVE_EXECUTOR_H_

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "graph/symbol.h"
#include "imperative/graph_runner.h"
#include "ndarray/ndarray.h"

namespace mx {

class Executor {
 public:
  // `args` in symbol.ListArguments() order, `aux` in ListAuxiliaryStates()
  // order; `arg_grads` empty or one per argument (none where not needed),
  // with `grad_reqs` alike. Throws InvalidArgument naming what is missing.
  static std::unique_ptr<Executor> Bind(const Symbol& symbol, Context ctx,
                                        std::vector<NDArray> args,
                                        std::vector<NDArray> arg_grads,
                                        std::vector<OpReqType> grad_reqs,
                                        std::vector<NDArray> aux);
  // Shapes (and dtypes, float32 unless given) of some inputs by name; the
  // others are inferred. Allocates zero-filled arguments and auxiliary
  // states, and gradients for every argument when grad_req is not kNullOp.
  static std::unique_ptr<Executor> SimpleBind(
      const Symbol& symbol, Context ctx,
      const std::map<std::string, TShape>& shapes,
      const std::map<std::string, DType>& dtypes = {},
      OpReqType grad_req = OpReqType::kWriteTo);

  // Runs the graph; ops see is_train (BatchNorm statistics, Dropout).
  void Forward(bool is_train = false);
  // Gradients of the outputs (weighted by `head_grads`, ones when empty)
  // written to the gradient arrays per request (write, add, null).
  // Runs in the mode of the last Forward (BatchNorm's gradient differs).
  // REQUIRES: Forward ran. Throws NotImplemented when an op on the path
  // has no gradient.
  void Backward(const std::vector<NDArray>& head_grads = {});

  // Empty before the first Forward; the same arrays after every Forward.
  const std::vector<NDArray>& outputs() const { return outputs_; }
  std::map<std::string, NDArray> arg_dict() const;
  std::map<std::string, NDArray> grad_dict() const;
  std::map<std::string, NDArray> aux_dict() const;
  const Symbol& symbol() const { return symbol_; }
  // From the memory plan.
  size_t planned_bytes() const;
  size_t bytes_without_reuse() const;

 private:
  Executor() = default;
  void Init();

  Symbol symbol_;
  Context ctx_;
  std::vector<std::string> arg_names_, aux_names_;
  std::vector<NDArray> args_, grads_, aux_;
  std::vector<OpReqType> grad_reqs_;
  std::vector<NDArray> inputs_;  // Bound arrays in input-node order.
  std::unique_ptr<GraphRunner> runner_;
  GraphRunner::State state_;
  std::vector<NDArray> outputs_;
  // Backward: head-gradient inputs, and where the forward part ends.
  std::vector<NDArray> head_grads_;
  std::vector<int> grad_args_;  // Argument index of each gradient output.
  uint32_t num_forward_nodes_ = 0;
  bool forward_ran_ = false;
  bool forward_is_train_ = false;
};

}  // namespace mx

#endif  // MXCORE_IMPERATIVE_EXECUTOR_H_
