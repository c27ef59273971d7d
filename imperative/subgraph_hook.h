// Applying MX_SUBGRAPH_BACKEND to a symbol about to be bound or cached.
//
// The partitioner lives above this layer (//subgraph:partition_graph), so
// it is reached by pass name ("PartitionGraph"); a program that sets the
// variable without linking the pass gets a ConfigError saying what to link.
//
//   Symbol bound = ApplySubgraphBackendFromEnv(symbol, /*need_grad=*/false);
//
// Used by Executor::Bind (and so SimpleBind) and by HybridBlock before it
// builds a CachedOp (need_grad = whether autograd is recording).
#ifndef MXCORE_IMPERATIVE_SUBGRAPH_HOOK_H_
#define MXCORE_IMPERATIVE_SUBGRAPH_HOOK_H_

#include <map>
#include <string>
#include <utility>

#include "graph/symbol.h"
#include "ndarray/dtype.h"
#include "ndarray/shape.h"

namespace mx {

// `symbol` partitioned by the backend named in MX_SUBGRAPH_BACKEND, or
// `symbol` itself when the variable is unset, empty or NONE. Throws
// ConfigError naming the variable (unknown backend, pass not linked).
// `inputs` (by input name: shape and dtype of the bound arrays) are run
// through shape and type inference first, so that the backend's selectors
// see every node's output shapes and dtypes (subgraph/recorded_types.h);
// inference that fails leaves them unknown (binding reports the error).
Symbol ApplySubgraphBackendFromEnv(
    const Symbol& symbol, bool need_grad,
    const std::map<std::string, std::pair<TShape, DType>>& inputs = {});

}  // namespace mx

#endif  // MXCORE_IMPERATIVE_SUBGRAPH_HOOK_H_
