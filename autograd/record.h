// Internal to //autograd: what a recorded node keeps, and recording.
#ifndef MXCORE_AUTOGRAD_RECORD_H_
#define MXCORE_AUTOGRAD_RECORD_H_

#include <memory>
#include <vector>

#include "graph/node.h"
#include "ndarray/ndarray.h"

namespace mx {
namespace autograd {
namespace internal {

// Stored in Node::info of every node autograd creates.
struct AGInfo {
  // Output values the gradients of consumers need (detached, so a node
  // never owns itself); none where nothing needs them.
  std::vector<NDArray> values;
  // Every output's shape and dtype, for zero gradients of outputs nothing
  // saved (Gradient gives unused outputs zeros_like(output)).
  std::vector<TShape> shapes;
  std::vector<DType> types;
  Context ctx;
  // Arrays with a gradient attached (AttachGrad / MarkVariables): leaf
  // variables (variable nodes) and recorded intermediates (op nodes, which
  // keep their history and retain their gradient, as in MXNet 2). One
  // output per node: `marked_output`. The gradient buffer and its request.
  bool marked = false;
  uint32_t marked_output = 0;
  NDArray grad;
  OpReqType grad_req = OpReqType::kNullOp;
  // Set by Backward when it writes `grad`; cleared by SetGradFresh (the
  // Trainer, after an update used the gradient). MXNet's _fresh_grad.
  bool fresh_grad = false;
  // Set when a backward without retain_graph released the values.
  bool freed = false;
};

// The node's AGInfo, or null for nodes autograd did not create.
AGInfo* InfoOf(const Node& node);

// Records `attrs` applied to `inputs` giving `outputs` (sets the outputs'
// autograd entries) when any input has a history. `save_values` false
// keeps nothing for the gradient (user-defined functions keep their own).
void RecordOp(const NodeAttrs& attrs, const std::vector<NDArray>& inputs,
              std::vector<NDArray>* outputs, bool save_values = true);

}  // namespace internal
}  // namespace autograd
}  // namespace mx

#endif  // MXCORE_AUTOGRAD_RECORD_H_
