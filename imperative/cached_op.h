// CachedOp: a graph called like an op, planned once per input signature.
//
// The first call with given input shapes, dtypes and context infers the
// graph and plans its memory; later calls with the same signature reuse
// that plan, and a new signature gets a plan of its own.
//   static_alloc  intermediate buffers are allocated once per plan and
//                 reused by every call (otherwise drawn from the storage
//                 pool per call).
//   static_shape  output arrays are reused too: each call overwrites the
//                 arrays the previous call returned.
//
//   CachedOp op(symbol, {.static_alloc = true});
//   std::vector<NDArray> y = op.Forward({x, w});   // inputs in
//                                                  // ListInputNames() order
// Ops see imperative::IsTraining(). While autograd records and some input
// has a history, a call is recorded as one node ("_CachedOp"): the call
// runs the forward part of a plan that also holds the gradients with
// respect to the recorded inputs, keeps its intermediate values, and the
// node's gradient runs the backward part on them. Differentiating that
// gradient again (higher order) is not supported. A graph with a
// dynamic-shape op (boolean_mask, flatnonzero) runs op by op instead: each
// op is recorded, and every output is tied to every recorded input, so
// Backward from any output works and reaches all of them, as for a call
// recorded as one node.
#ifndef MXCORE_IMPERATIVE_CACHED_OP_H_
#define MXCORE_IMPERATIVE_CACHED_OP_H_

#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "graph/symbol.h"
#include "imperative/graph_runner.h"

namespace mx {

class CachedOp {
 public:
  struct Options {
    bool static_alloc = false;
    bool static_shape = false;
  };

  explicit CachedOp(Symbol symbol, Options options);
  explicit CachedOp(Symbol symbol) : CachedOp(std::move(symbol), Options()) {}

  // Throws InvalidArgument on a wrong number of inputs (naming them), and
  // the inference errors of the graph.
  std::vector<NDArray> Forward(const std::vector<NDArray>& inputs);

  const Symbol& symbol() const { return symbol_; }
  const std::vector<std::string>& input_names() const { return input_names_; }
  // Plans made so far (one per distinct input signature; calls recorded
  // by autograd have plans of their own).
  size_t num_plans() const;

  struct TrainingPlan;  // Internal.

 private:
  std::string Signature(const std::vector<NDArray>& inputs) const;
  std::vector<NDArray> RecordedForward(const std::vector<NDArray>& inputs,
                                       std::string signature);

  std::vector<NDArray> RunOpByOp(const std::vector<NDArray>& inputs) const;

  const Symbol symbol_;
  const Options options_;
  bool dynamic_shape_ = false;
  const std::vector<std::string> input_names_;
  mutable std::mutex mu_;
  std::map<std::string, std::unique_ptr<GraphRunner>> plans_;
  std::map<std::string, std::shared_ptr<const TrainingPlan>> training_plans_;
};

}  // namespace mx

#endif  // MXCORE_IMPERATIVE_CACHED_OP_H_
