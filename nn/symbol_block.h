// SymbolBlock: a block made from a graph, such as one HybridBlock::Export
// wrote.
//
// Every graph input that is not one of the data inputs becomes a parameter
// named like the graph input (auxiliary states get no gradient). Calls run
// the graph through a CachedOp, so it trains like a hybridized block.
// Parameters whose shapes the graph does not declare are inferred from the
// graph and the first call's input shapes (deferred initialization, as
// Dense infers its input size): Initialize() first, then call.
//
//   net->Export("model");                      // after a hybridized call
//   auto loaded = nn::SymbolBlock::Import("model-symbol.json", {"data"},
//                                         "model-0000.params");
//   NDArray y = (*loaded)(x);                  // same outputs as net
#ifndef MXCORE_NN_SYMBOL_BLOCK_H_
#define MXCORE_NN_SYMBOL_BLOCK_H_

#include <memory>
#include <string>
#include <vector>

#include "graph/symbol.h"
#include "imperative/cached_op.h"
#include "nn/hybrid_block.h"

namespace mx {
namespace nn {

class SymbolBlock : public HybridBlock {
 public:
  // `input_names` name the graph inputs fed by the call's inputs, in call
  // order. Parameters are created uninitialized with the shapes the graph
  // declares (usually unknown). Throws InvalidArgument naming an input
  // name the graph lacks.
  SymbolBlock(Symbol symbol, std::vector<std::string> input_names);

  // Reads the symbol JSON and the parameter file, in mxcore's format or
  // MXNet's (told apart by magic; "arg:"/"aux:" prefixes dropped).
  // Throws NotFound / InvalidArgument naming the file; InvalidArgument
  // naming parameters the parameter file lacks or has in excess. An empty
  // `params_file` leaves the parameters uninitialized.
  static std::shared_ptr<SymbolBlock> Import(
      const std::string& symbol_file,
      const std::vector<std::string>& input_names,
      const std::string& params_file = "", Context ctx = Context::CPU());

  // Sets unknown parameter shapes by shape inference over the graph with
  // the inputs' shapes. ShapeError when the graph contradicts them.
  void InferShape(const std::vector<NDArray>& inputs) override;
  std::vector<NDArray> Forward(const std::vector<NDArray>& inputs) override;
  // Runs the graph (the block is already a graph; hybridizing changes
  // nothing). Cannot be inlined into another block's trace
  // (NotImplemented).
  std::vector<NDArray> Call(const std::vector<NDArray>& inputs) override;
  std::string TypeName() const override { return "SymbolBlock"; }

  const Symbol& graph() const { return symbol_; }
  // The graph itself (no trace needed).
  const Symbol& symbol() const override { return symbol_; }
  // Writes the graph and every parameter, under its graph input name.
  // Throws StateError naming a parameter that is not initialized yet (its
  // shape is known after the first call).
  void Export(const std::string& prefix, int epoch = 0,
              ParamsFormat format = ParamsFormat::kMxcore) const override;

 private:
  Symbol symbol_;
  std::vector<std::string> input_names_;
  // Per graph input: the call's input index, or -1 for a parameter.
  std::vector<int> input_index_;
  std::vector<ParameterPtr> params_by_input_;
  CachedOp op_;
};

}  // namespace nn
}  // namespace mx

#endif  // MXCORE_NN_SYMBOL_BLOCK_H_
