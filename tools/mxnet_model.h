// Loading and running a model saved by MXNet (or exported here): the
// `-symbol.json` graph, an optional `.params` file (either format), input
// shapes and fills. Shared by tools/run_model and the corpus test
// (//tests:mxnet_models_test).
//
//   auto symbol = mxnet_model::LoadSymbolFile("model-symbol.json");
//   auto inputs = mxnet_model::ParseInputs("data:1,3,224,224");
//   auto model = mxnet_model::Bind(symbol, inputs,
//                                  nn::LoadArrays("model-0000.params"));
//   model->Forward();  // model->outputs()
#ifndef MXCORE_TOOLS_MXNET_MODEL_H_
#define MXCORE_TOOLS_MXNET_MODEL_H_

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "graph/symbol.h"
#include "imperative/executor.h"
#include "nn/params_file.h"

namespace mx {
namespace mxnet_model {

// One data input: its name, shape and how to fill it.
struct InputSpec {
  std::string name;
  TShape shape;
  // "uniform" (in [0, 1)), "intN" (integers in [0, N)) or "constV".
  std::string fill = "uniform";
};

// Parses "name:d0,d1,...[:fill]" specs separated by ';' (models.tsv's
// column). Throws InvalidArgument naming the bad spec.
std::vector<InputSpec> ParseInputs(const std::string& text);

// Reads and parses a symbol file (legacy layouts upgraded). Throws
// NotFound naming the file, InvalidArgument for malformed JSON and
// NotFound naming an op mxcore does not have.
Symbol LoadSymbolFile(const std::string& path);

// Binds `symbol` for inference on the CPU: the inputs get their specs'
// shapes and fills; an argument named *label that no spec names gets
// shape (1,) filled with 0 (MXNet's training graphs carry their loss's
// label); every other argument and auxiliary state is a weight. Weights
// come from `params` ("arg:"/"aux:" prefixes dropped) when given; then
// every weight of the graph must be in the file with the inferred shape
// and dtype, and the file must hold nothing else (InvalidArgument naming
// them). Without params, weights are random (seeded, scaled by fan-in so
// deep networks stay finite; variances positive).
std::unique_ptr<Executor> Bind(
    const Symbol& symbol, const std::vector<InputSpec>& inputs,
    const std::optional<nn::NamedArrays>& params = std::nullopt,
    uint32_t seed = 1);

// Bind's first half, for a caller that looks at the bound graph (its
// planned memory, its arguments) before deciding whether to run it: the
// inputs and labels are filled as Bind fills them, the weights are left
// unfilled (their values unspecified) until FillRandomWeights gives them
// Bind's random values (the same for the same seed).
//
//   auto exec = mxnet_model::BindUnfilled(symbol, inputs);
//   if (exec->bytes_without_reuse() < budget) {
//     mxnet_model::FillRandomWeights(*exec, inputs);
//     exec->Forward();
//   }
std::unique_ptr<Executor> BindUnfilled(const Symbol& symbol,
                                       const std::vector<InputSpec>& inputs,
                                       uint32_t seed = 1);
void FillRandomWeights(const Executor& exec,
                       const std::vector<InputSpec>& inputs, uint32_t seed = 1);

// Partitions `symbol` with subgraph backend `backend`. For "default",
// `op_names` are the ops its property claims (empty: every op of the
// graph).
Symbol Partition(const Symbol& symbol, const std::string& backend,
                 std::vector<std::string> op_names = {});

// Binds `symbol` (e.g. partitioned) to copies of `like`'s arguments and
// auxiliary states, by name.
std::unique_ptr<Executor> BindLike(const Symbol& symbol, const Executor& like);

// The values of an output as doubles (any dtype but float16, which
// throws NotImplemented).
std::vector<double> ToDoubles(const NDArray& a);

// The distinct op names of the graph, sorted.
std::vector<std::string> OpNames(const Symbol& symbol);

}  // namespace mxnet_model
}  // namespace mx

#endif  // MXCORE_TOOLS_MXNET_MODEL_H_
