// TEMPORARY stand-in for //imperative:deferred_compute on branch nn, so the
// nn package builds before the real implementation lands on main. Replaced
// by main's target at the merge.
#include "base/error.h"
#include "imperative/deferred_compute.h"

namespace mx {
namespace dc {

void SetVariable(const std::vector<NDArray*>&, const std::vector<Symbol>&) {
  throw NotImplemented("deferred compute is not implemented yet");
}

Symbol GetSymbol(const std::vector<NDArray>&) {
  throw NotImplemented("deferred compute is not implemented yet");
}

}  // namespace dc
}  // namespace mx
