// HybridBlock: a Block whose Forward can be traced into a graph and run as
// a CachedOp.
//
// Forward is written imperatively, exactly as for a Block. After
// Hybridize(), the next call traces Forward under deferred compute: the
// inputs become variables "data" (one input) or "data0", "data1", ...,
// every parameter read becomes a variable named by its structured name,
// and the recorded Symbol is compiled into a CachedOp, which runs the call
// and all later calls with the same input shapes and dtypes. Another input
// signature is traced again (Forward may bake shapes into the graph). Child
// blocks called inside a trace are inlined: a hybridized child just runs its
// Forward there. Under autograd recording the CachedOp call is recorded as
// one node, so gradients reach the parameters as they do imperatively.
//
//   auto net = std::make_shared<nn::HybridSequential>();
//   net->Add(std::make_shared<nn::Dense>(64, "relu"));
//   net->Add(std::make_shared<nn::Dense>(10));
//   net->Initialize();
//   net->Hybridize();
//   NDArray y = (*net)(x);            // traced, then run by the CachedOp
//   net->Export("model");             // model-symbol.json, model-0000.params
//
// Forward must use traceable ops only: reading values (ToVector) or
// writing into existing arrays inside Forward fails while tracing. The
// training flag is read when the graph runs, not when it is traced.
// Registering or replacing a child or parameter anywhere in the tree, or a
// parameter's shape changing, drops the traced graphs: the next call
// traces again (MXNet's _clear_cached_op).
#ifndef MXCORE_NN_HYBRID_BLOCK_H_
#define MXCORE_NN_HYBRID_BLOCK_H_

#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "graph/symbol.h"
#include "imperative/cached_op.h"
#include "nn/block.h"

namespace mx {
namespace nn {

class HybridBlock : public Block {
 public:
  // Turns tracing on (or off) for this block and every child.
  void Hybridize(bool active = true) override;
  void Hybridize(bool active, CachedOp::Options options);
  bool hybridized() const { return active_; }

  // Hybridized and outside any trace: runs the CachedOp of the inputs'
  // signature, tracing first when there is none. Otherwise Block::Call.
  std::vector<NDArray> Call(const std::vector<NDArray>& inputs) override;

  // Writes `prefix`-symbol.json (the latest trace) and `prefix`-NNNN.params
  // (NNNN = epoch, 4 digits) with the parameters the graph reads, under
  // their structured names. With ParamsFormat::kMXNet the parameter file
  // is MXNet's, names prefixed "arg:" / "aux:" as MXNet's export writes
  // them, so mx.gluon.SymbolBlock.imports loads the pair; with kNpz the
  // same names in MXNet 2's .npz (npz_file.h). Throws
  // StateError unless the block was hybridized and called once (since its
  // tree last changed).
  virtual void Export(const std::string& prefix, int epoch = 0,
                      ParamsFormat format = ParamsFormat::kMxcore) const;

  // Traces made so far (one per input signature).
  int num_traces() const { return num_traces_; }
  // The latest traced graph (StateError when there is none, or when the
  // tree changed since).
  virtual const Symbol& symbol() const;
  // The graph the latest trace's CachedOp runs: symbol(), partitioned when
  // MX_SUBGRAPH_BACKEND is set.
  const Symbol& cached_symbol() const;

  // Input variable names for `n` inputs: {"data"} or {"data0", ...}.
  static std::vector<std::string> InputNames(size_t n);

 protected:
  // Writes `graph` and `arrays` as Export does; `who` names the caller in
  // errors.
  static void WriteModel(
      const std::string& who, const std::string& prefix, int epoch,
      const Symbol& graph,
      const std::vector<std::pair<std::string, NDArray>>& arrays,
      ParamsFormat format);

 private:
  struct Trace;
  std::shared_ptr<Trace> MakeTrace(const std::vector<NDArray>& inputs);
  // Drops cached graphs (hybridize settings changed).
  void ClearTraces();

  bool active_ = false;
  CachedOp::Options options_;
  std::map<std::string, std::shared_ptr<Trace>> traces_;
  std::shared_ptr<Trace> latest_;
  int num_traces_ = 0;
  // The tree the traces were made from (TreeStamp).
  std::vector<intptr_t> stamp_;
};

}  // namespace nn
}  // namespace mx

#endif  // MXCORE_NN_HYBRID_BLOCK_H_
