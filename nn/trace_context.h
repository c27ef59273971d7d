// Internal: how Parameter::data() learns that a HybridBlock is tracing.
//
// While a HybridBlock traces its Forward under deferred compute, every
// parameter read must become a symbol variable named by the parameter's
// structured name in the traced block. The tracing block installs a
// TraceContext (thread-local, for the object's lifetime); Parameter::data()
// asks it for the variable. The interface keeps //nn:parameter free of
// deferred compute, which only //nn:hybrid_block uses.
#ifndef MXCORE_NN_TRACE_CONTEXT_H_
#define MXCORE_NN_TRACE_CONTEXT_H_

#include "ndarray/ndarray.h"

namespace mx {
namespace nn {

class Parameter;

namespace internal {

class TraceContext {
 public:
  TraceContext();
  virtual ~TraceContext();
  TraceContext(const TraceContext&) = delete;
  TraceContext& operator=(const TraceContext&) = delete;

  // The innermost live context of this thread, or nullptr.
  static TraceContext* Current();

  // The traced variable standing for `param`, whose real array is `value`.
  virtual NDArray VariableFor(const Parameter& param, const NDArray& value) = 0;

 private:
  TraceContext* previous_;
};

}  // namespace internal
}  // namespace nn
}  // namespace mx

#endif  // MXCORE_NN_TRACE_CONTEXT_H_
