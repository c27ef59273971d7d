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

#include "graph/symbol.h"

namespace mx {

// `symbol` partitioned by the backend named in MX_SUBGRAPH_BACKEND, or
// `symbol` itself when the variable is unset, empty or NONE. Throws
// ConfigError naming the variable (unknown backend, pass not linked).
Symbol ApplySubgraphBackendFromEnv(const Symbol& symbol, bool need_grad);

}  // namespace mx

#endif  // MXCORE_IMPERATIVE_SUBGRAPH_HOOK_H_
