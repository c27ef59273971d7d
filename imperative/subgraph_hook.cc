#include "imperative/subgraph_hook.h"

#include <algorithm>
#include <optional>
#include <string>
#include <vector>

#include "base/env.h"
#include "base/error.h"
#include "graph/pass.h"

namespace mx {

Symbol ApplySubgraphBackendFromEnv(const Symbol& symbol, bool need_grad) {
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
