// User-defined functions: recorded as one node whose gradient node calls
// the user's Backward on the calling thread.
#include <string>

#include "absl/strings/str_cat.h"
#include "autograd/autograd.h"
#include "autograd/record.h"
#include "base/error.h"

namespace mx {
namespace autograd {
namespace {

// Shared by a call's forward node and its gradient node.
struct CallState {
  std::shared_ptr<Function> fn;
  std::vector<TShape> in_shapes;
  std::vector<DType> in_types;
  Context ctx;
  int num_outputs = 0;
};
using CallStatePtr = std::shared_ptr<CallState>;

const CallState& StateOf(const NodeAttrs& attrs) {
  const auto* state = std::any_cast<CallStatePtr>(&attrs.parsed);
  if (state == nullptr) {
    throw InvalidArgument(absl::StrCat("op \"", attrs.op->name(),
                                       "\" is created by autograd::Function "
                                       "calls only"));
  }
  return **state;
}

NodeAttrs CallAttrs(const char* op, const CallStatePtr& state) {
  NodeAttrs attrs;
  attrs.op = &OpRegistry::Get()->Lookup(op);
  attrs.parsed = state;
  return attrs;
}

// Runs Backward; inputs are the output gradients, outputs one gradient per
// forward input (zeros where Backward returns none).
void RunBackward(const NodeAttrs& attrs, const std::vector<NDArray>& ograds,
                 std::vector<NDArray>* outputs,
                 const std::vector<OpReqType>& req) {
  const CallState& s = StateOf(attrs);
  std::vector<NDArray> grads = s.fn->Backward(ograds);
  if (grads.size() != s.in_shapes.size()) {
    throw InvalidArgument(absl::StrCat("autograd::Function::Backward returned ",
                                       grads.size(), " gradients for ",
                                       s.in_shapes.size(), " inputs"));
  }
  for (size_t i = 0; i < grads.size(); ++i) {
    if (grads[i].is_none()) {
      imperative::InvokeOptions on;
      on.ctx = s.ctx;
      grads[i] = imperative::Invoke("_zeros", {},
                                    {{"shape", s.in_shapes[i].ToString()},
                                     {"dtype", DTypeName(s.in_types[i])}},
                                    on)[0];
    } else if (grads[i].shape() != s.in_shapes[i]) {
      throw ShapeError(absl::StrCat("autograd::Function::Backward: gradient ",
                                    i, " has shape ",
                                    grads[i].shape().ToString(), " but input ",
                                    i, " has ", s.in_shapes[i].ToString()));
    }
  }
  imperative::DeliverOutputs(grads, req, outputs);
}

[[maybe_unused]] const bool kRegistered = [] {
  OpRegistry::Get()
      ->Register("_autograd_function")
      .Describe("A call of a user-defined autograd::Function (recorded only).")
      .SetNumInputs([](const NodeAttrs& a) {
        return static_cast<int>(StateOf(a).in_shapes.size());
      })
      .SetNumOutputs([](const NodeAttrs& a) { return StateOf(a).num_outputs; })
      .SetAttr<FGradient>(
          "FGradient",
          [](const NodePtr& n, const std::vector<NodeEntry>& ograds) {
            auto bwd = std::make_shared<Node>();
            bwd->attrs =
                CallAttrs("_autograd_function_backward",
                          std::any_cast<const CallStatePtr&>(n->attrs.parsed));
            bwd->attrs.name = n->name() + "_backward";
            bwd->inputs = ograds;
            std::vector<NodeEntry> grads;
            for (uint32_t i = 0; i < n->inputs.size(); ++i) {
              grads.push_back(NodeEntry{bwd, i, 0});
            }
            return grads;
          });
  OpRegistry::Get()
      ->Register("_autograd_function_backward")
      .Describe("Calls autograd::Function::Backward.")
      .SetNumInputs([](const NodeAttrs& a) { return StateOf(a).num_outputs; })
      .SetNumOutputs([](const NodeAttrs& a) {
        return static_cast<int>(StateOf(a).in_shapes.size());
      })
      .SetAttr<imperative::FInvoke>("FInvoke", RunBackward);
  return true;
}();

}  // namespace

std::vector<NDArray> Function::operator()(const std::vector<NDArray>& inputs) {
  std::vector<NDArray> outputs;
  {
    imperative::RecordingScope pause(false);
    outputs = Forward(inputs);
  }
  for (NDArray& out : outputs) out = out.Detach();
  if (!imperative::IsRecording()) return outputs;
  auto state = std::make_shared<CallState>();
  state->fn = shared_from_this();
  for (const NDArray& in : inputs) {
    state->in_shapes.push_back(in.shape());
    state->in_types.push_back(in.dtype());
  }
  state->ctx = inputs.empty() ? Context::CPU() : inputs[0].ctx();
  state->num_outputs = static_cast<int>(outputs.size());
  internal::RecordOp(CallAttrs("_autograd_function", state), inputs, &outputs,
                     /*save_values=*/false);
  return outputs;
}

}  // namespace autograd
}  // namespace mx
