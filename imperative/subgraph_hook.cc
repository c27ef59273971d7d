#include "imperative/subgraph_hook.h"

#include <algorithm>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "base/env.h"
#include "base/error.h"
#include "graph/graph.h"
#include "graph/pass.h"

namespace mx {

namespace {

// g with the "shape" and "dtype" attributes inferred from `inputs`, or g
// as it is when the passes are not linked or inference fails.
Graph WithInferredTypes(
    Graph g, const std::map<std::string, std::pair<TShape, DType>>& inputs) {
  const std::vector<std::string> passes = PassRegistry::Get()->ListNames();
  for (const char* pass : {"InferShape", "InferType"}) {
    if (std::find(passes.begin(), passes.end(), pass) == passes.end()) {
      return g;
    }
  }
  const IndexedGraph& idx = g.indexed_graph();
  std::vector<TShape> shapes;
  std::vector<DType> dtypes;
  for (uint32_t nid : idx.input_nodes()) {
    auto it = inputs.find(idx[nid].source->name());
    shapes.push_back(it == inputs.end() ? TShape() : it->second.first);
    dtypes.push_back(it == inputs.end() ? DType::kUnknown : it->second.second);
  }
  Graph inferred = g;
  inferred.SetAttr("shape_inputs", shapes);
  inferred.SetAttr("dtype_inputs", dtypes);
  try {
    return ApplyPasses(std::move(inferred), {"InferShape", "InferType"});
  } catch (const Error&) {
    return g;  // Bind reports it with the bound arrays.
  }
}

}  // namespace

Symbol ApplySubgraphBackendFromEnv(
    const Symbol& symbol, bool need_grad,
    const std::map<std::string, std::pair<TShape, DType>>& inputs) {
  const std::optional<std::string> backend = env::Get("MX_SUBGRAPH_BACKEND");
  if (!backend.has_value() || *backend == "NONE") return symbol;
  const std::string var = "MX_SUBGRAPH_BACKEND=" + *backend;
  const std::vector<std::string> passes = PassRegistry::Get()->ListNames();
  if (std::find(passes.begin(), passes.end(), "PartitionGraph") ==
      passes.end()) {
    throw ConfigError(var +
                      " is set but the PartitionGraph pass is not linked "
                      "into this program; add //subgraph:partition_graph to "
                      "its deps");
  }
  Graph g(symbol);
  if (!inputs.empty()) g = WithInferredTypes(std::move(g), inputs);
  g.SetAttr("subgraph_backend", *backend);
  g.SetAttr("subgraph_need_grad", need_grad);
  try {
    g = ApplyPass(std::move(g), "PartitionGraph");
  } catch (const NotFound& e) {
    throw ConfigError(var + ": " + e.what());
  }
  Symbol out;
  out.outputs = g.outputs;
  return out;
}

}  // namespace mx
