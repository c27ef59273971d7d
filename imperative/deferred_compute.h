// Deferred compute: trace imperative code into a graph.
//
// Inside a DeferredComputeScope, invoking an op records a node instead of
// running it; its outputs are arrays with known shapes (unknown for
// dynamic-shape ops) whose values are computed only when read. Arrays the
// traced code starts from are associated with symbol variables first;
// GetSymbol then returns the recorded computation as a Symbol, which is
// how HybridBlock turns a Forward written imperatively into a graph.
//
//   NDArray x = ...;                      // real data
//   NDArray y;
//   {
//     dc::DeferredComputeScope trace;
//     dc::SetVariable({&x}, {Symbol::Variable("data")});
//     y = nd::relu(x * 2);                // recorded, not computed
//   }
//   Symbol s = dc::GetSymbol({y});        // relu(_mul_scalar(data))
//   y.ToVector<float>();                  // computes y's history once
//
// Rules: every input of a traced op must be associated with a variable or
// be a traced output (InvalidArgument otherwise); writing into an array
// that already has a history is NotImplemented; autograd recording while
// tracing is a StateError.
#ifndef MXCORE_IMPERATIVE_DEFERRED_COMPUTE_H_
#define MXCORE_IMPERATIVE_DEFERRED_COMPUTE_H_

#include <vector>

#include "graph/symbol.h"
#include "imperative/imperative.h"
#include "ndarray/ndarray.h"

namespace mx {
namespace dc {

inline bool IsDeferredCompute() { return imperative::IsDeferredCompute(); }
using imperative::DeferredComputeScope;

// Associates each array with a variable symbol (a single variable). An
// array already associated with a different variable is InvalidArgument;
// the same variable again is fine.
void SetVariable(const std::vector<NDArray*>& arrays,
                 const std::vector<Symbol>& variables);

// The Symbol computing `outputs` from the variables. Outputs may be
// variables themselves. Throws InvalidArgument for an output that was
// neither traced nor associated with a variable.
Symbol GetSymbol(const std::vector<NDArray>& outputs);

}  // namespace dc
}  // namespace mx

#endif  // MXCORE_IMPERATIVE_DEFERRED_COMPUTE_H_
