// Autograd: record imperative computation, then differentiate it.
//
// Arrays marked as variables (AttachGrad / MarkVariables) carry a gradient
// buffer. While recording, every op with a marked or recorded input is
// recorded as a graph node that keeps only the values its gradient needs.
// Backward builds the gradient graph (the Gradient pass over each op's
// FGradient) and runs it imperatively.
//
//   NDArray x = NDArray::FromVector<float>({3}, {1, 2, 3});
//   autograd::AttachGrad(&x);
//   NDArray y;
//   {
//     autograd::RecordScope record;          // training mode too
//     y = nd::sum(nd::square(x));
//   }
//   autograd::Backward({y});
//   x.grad();                                // [2, 4, 6]
#ifndef MXCORE_AUTOGRAD_AUTOGRAD_H_
#define MXCORE_AUTOGRAD_AUTOGRAD_H_

#include <memory>
#include <vector>

#include "graph/op.h"
#include "graph/symbol.h"
#include "imperative/imperative.h"
#include "ndarray/ndarray.h"

namespace mx {
namespace autograd {

// ---- Modes (thread-local; see imperative.h for the setters) ----
inline bool IsRecording() { return imperative::IsRecording(); }
inline bool IsTraining() { return imperative::IsTraining(); }

// Records ops for the scope's lifetime; sets training mode as well unless
// `train_mode` is false.
class RecordScope {
 public:
  explicit RecordScope(bool train_mode = true)
      : record_(true), train_(train_mode) {}

 private:
  imperative::RecordingScope record_;
  imperative::TrainingScope train_;
};
// Stops recording (and sets the training mode) inside a RecordScope.
class PauseScope {
 public:
  explicit PauseScope(bool train_mode = false)
      : record_(false), train_(train_mode) {}

 private:
  imperative::RecordingScope record_;
  imperative::TrainingScope train_;
};
class TrainModeScope : public imperative::TrainingScope {
 public:
  TrainModeScope() : imperative::TrainingScope(true) {}
};
class PredictModeScope : public imperative::TrainingScope {
 public:
  PredictModeScope() : imperative::TrainingScope(false) {}
};

// ---- Variables ----
// Makes each array a variable with the given gradient buffer (same shape
// and dtype) and request: kWriteTo overwrites the buffer on each backward,
// kAddTo accumulates into it, kNullOp computes nothing for it.
void MarkVariables(const std::vector<NDArray*>& variables,
                   const std::vector<NDArray>& gradients,
                   const std::vector<OpReqType>& reqs);
// An array that is the output of a recorded op (an intermediate) keeps its
// history: gradients still flow through it to the variables before it,
// and Backward also writes its own gradient into its buffer (MXNet 2).
// Only one output of a multi-output op can be marked (NotImplemented).
//
//   y = nd::square(x);  AttachGrad(&y);  z = nd::sum(y * y);   // recorded
//   Backward({z});      // y.grad() == 2y, x.grad() == 4x^3
// MarkVariables with a zero-filled buffer of x's shape, dtype and context.
void AttachGrad(NDArray* x, OpReqType req = OpReqType::kWriteTo);
// Detaches x's gradient buffer: backward no longer computes or writes it.
// A leaf becomes a plain array (ops on it are no longer recorded); an
// intermediate keeps its history. Throws StateError when x has none.
void DropGrad(NDArray* x);

// Whether Backward wrote x's gradient buffer since the flag was last
// cleared (MXNet's NDArray._fresh_grad); false for an array without one.
// nn::Trainer::Step refuses stale gradients and clears the flag after an
// update.
bool IsGradFresh(const NDArray& x);
// Sets or clears the flag, e.g. after filling x.grad() by hand (MXNet's
// MXNDArraySetGradState). StateError when x has no gradient attached.
void SetGradFresh(NDArray* x, bool fresh);

// ---- Inspection ----
// The recorded graph that computes `x`, as a Symbol (MXNet's
// autograd.get_symbol): arrays with AttachGrad become variables "var<N>",
// other arrays the graph read become variables "constant<K>", recorded ops
// keep their names and attributes. Throws StateError when x was not
// recorded; NotImplemented when the graph holds a call that is not an op
// (a recorded CachedOp or autograd::Function call).
Symbol GetSymbol(const NDArray& x);

// ---- Differentiation ----
struct BackwardOptions {
  // Keep the recorded values so the graph can be differentiated again.
  bool retain_graph = false;
  // Run the gradient ops in training mode.
  bool train_mode = true;
};

// Accumulates d(heads)/d(variable) into every variable reachable from
// `heads` per its request. `head_grads`: one per head (none = ones), or
// empty for all ones. Throws StateError when a head was not recorded, when
// no variable is reachable, or when the graph was already freed by a
// backward without retain_graph; NotImplemented naming the op when one on
// the path has no gradient.
void Backward(const std::vector<NDArray>& heads,
              const std::vector<NDArray>& head_grads = {},
              const BackwardOptions& options = {});

struct GradOptions {
  bool retain_graph = false;
  // Record the gradient computation itself, so the returned gradients can
  // be differentiated again (higher order). Implies retain_graph.
  bool create_graph = false;
  bool train_mode = true;
};

// The gradients of `heads` with respect to `variables` (which must be
// marked), as new arrays; attached gradient buffers are left alone.
std::vector<NDArray> Grad(const std::vector<NDArray>& heads,
                          const std::vector<NDArray>& variables,
                          const std::vector<NDArray>& head_grads = {},
                          const GradOptions& options = {});

// ---- User-defined differentiable functions ----
// Subclass and implement Forward and Backward with array ops; call the
// object. Forward runs unrecorded; while recording, the call is recorded as
// one node whose gradient calls Backward with the output gradients, which
// must return one gradient per input (none for no gradient). State needed
// by Backward is kept in members.
//
//   class Sigmoid : public autograd::Function {
//     std::vector<NDArray> Forward(const std::vector<NDArray>& in) override {
//       y_ = nd::sigmoid(in[0]);
//       return {y_};
//     }
//     std::vector<NDArray> Backward(const std::vector<NDArray>& g) override {
//       return {g[0] * y_ * (1 - y_)};
//     }
//     NDArray y_;
//   };
//   auto f = std::make_shared<Sigmoid>();
//   NDArray y = (*f)({x})[0];
class Function : public std::enable_shared_from_this<Function> {
 public:
  virtual ~Function() = default;
  virtual std::vector<NDArray> Forward(const std::vector<NDArray>& inputs) = 0;
  virtual std::vector<NDArray> Backward(
      const std::vector<NDArray>& output_grads) = 0;

  // REQUIRES: the object is owned by a std::shared_ptr.
  std::vector<NDArray> operator()(const std::vector<NDArray>& inputs);
};

}  // namespace autograd
}  // namespace mx

#endif  // MXCORE_AUTOGRAD_AUTOGRAD_H_
