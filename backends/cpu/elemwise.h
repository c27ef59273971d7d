// Internal: shared between the elementwise kernels and their gradients.
#ifndef MXCORE_BACKENDS_CPU_ELEMWISE_H_
#define MXCORE_BACKENDS_CPU_ELEMWISE_H_

#include "graph/params.h"

namespace mx {
namespace cpu {

// Parameter of the scalar forms (_plus_scalar, _rdiv_scalar, ...).
struct ScalarParam {
  double scalar = 0;
  static void Declare(ParamSchema<ScalarParam>* s) {
    s->Field("scalar", &ScalarParam::scalar).Required();
  }
};

// Sets "FGradient" on the unary, binary, scalar and comparison ops and on
// clip. Called by elemwise_ops.cc once they are registered.
void RegisterElemwiseGradients();

}  // namespace cpu
}  // namespace mx

#endif  // MXCORE_BACKENDS_CPU_ELEMWISE_H_
