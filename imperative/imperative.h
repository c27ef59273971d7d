// Imperative execution: run any registered op on arrays, asynchronously.
//
// Invoke infers output shapes and dtypes, allocates outputs, picks the
// kernel for the inputs' device and pushes it to the engine with the right
// read and write vars; it returns before the kernel runs. Thread-local
// modes (training, autograd recording, deferred compute) are set with RAII
// scopes and read by Invoke and the layers above it.
//
//   std::vector<mx::NDArray> out =
//       mx::imperative::Invoke("add", {a, b});          // out[0] = a + b
//   {
//     mx::imperative::TrainingScope train(true);        // Dropout is active
//     y = mx::imperative::Invoke("Dropout", {x}, {{"p", "0.5"}})[0];
//   }
//   mx::random::Seed(42);                               // reproducible
#ifndef MXCORE_IMPERATIVE_IMPERATIVE_H_
#define MXCORE_IMPERATIVE_IMPERATIVE_H_

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "graph/op.h"
#include "ndarray/ndarray.h"

namespace mx {
namespace imperative {

// ---- Thread-local modes. Each setter returns the previous value. ----
bool IsTraining();
bool SetTraining(bool on);
bool IsRecording();
bool SetRecording(bool on);
bool IsDeferredCompute();
bool SetDeferredCompute(bool on);

// Sets a mode for the scope's lifetime and restores the previous value.
template <bool (*Set)(bool)>
class ModeScope {
 public:
  explicit ModeScope(bool on) : previous_(Set(on)) {}
  ~ModeScope() { Set(previous_); }
  ModeScope(const ModeScope&) = delete;
  ModeScope& operator=(const ModeScope&) = delete;

 private:
  bool previous_;
};
using TrainingScope = ModeScope<SetTraining>;
using RecordingScope = ModeScope<SetRecording>;
using DeferredComputeScope = ModeScope<SetDeferredCompute>;

struct InvokeOptions {
  // Where ops without inputs (zeros, random_uniform, ...) run.
  Context ctx = Context::CPU();
  // Per output; empty means kWriteTo for all.
  std::vector<OpReqType> req;
  int priority = 0;
  // Stateful ops run again and again as one graph node (GraphRunner):
  // where the node's state lives. Created on the first call (while null)
  // and reused, as the plugin ABI promises ("once per node"); without a
  // slot every call creates a fresh state.
  OpStatePtr* state_slot = nullptr;
  // The caller promises `attrs` outlive every operation this call pushes
  // (a static, as the nd:: functions without attributes keep): the kernel
  // then reads them in place instead of from a copy.
  bool attrs_outlive_ops = false;
};

// Runs attrs.op on `inputs`. `outputs` may be empty (allocated here) or hold
// one array per output (none entries are allocated); given outputs must have
// the inferred shape, dtype and the inputs' context. Outputs that alias an
// input are written in place when the op allows it, else through a
// temporary. Throws InvalidArgument / ShapeError / DTypeError / NotFound /
// StateError naming the op and argument on bad input; kernel errors reach
// the caller at the next wait.
void Invoke(const NodeAttrs& attrs, const std::vector<NDArray>& inputs,
            std::vector<NDArray>* outputs, const InvokeOptions& options = {});

// By name, with string attributes; returns the outputs.
std::vector<NDArray> Invoke(const std::string& op_name,
                            const std::vector<NDArray>& inputs,
                            const AttrDict& attrs = {},
                            const InvokeOptions& options = {});

// ---- Extension points for the layers above. ----

// Op attribute "FInvoke": the op runs on the calling thread by invoking
// other ops (a CachedOp call, a user-defined autograd function) instead of
// as one engine kernel. Invoke calls it after checking arity; it fills
// `outputs` as Invoke promises: none entries are to be created, given ones
// receive the results under `req` (per output; empty: kWriteTo), e.g. with
// DeliverOutputs.
using FInvoke = std::function<void(
    const NodeAttrs& attrs, const std::vector<NDArray>& inputs,
    std::vector<NDArray>* outputs, const std::vector<OpReqType>& req)>;

// For FInvoke ops: puts `results` into `outputs`. A none output becomes
// its result; a given one receives a copy under req[i] (kWriteTo when
// `req` is empty; nothing for kNullOp, or for a write request when it is
// the result itself). An FInvoke that wrote a given output itself passes
// kNullOp for it.
void DeliverOutputs(const std::vector<NDArray>& results,
                    const std::vector<OpReqType>& req,
                    std::vector<NDArray>* outputs);

// Installed by //autograd and //imperative:deferred_compute at start-up.
struct InvokeHooks {
  // While recording, before anything runs: may reject the call (an
  // in-place write into a recorded graph).
  void (*check_record)(const NodeAttrs& attrs,
                       const std::vector<NDArray>& inputs,
                       const std::vector<NDArray>& outputs) = nullptr;
  // While recording, after the op was pushed: records it.
  void (*record)(const NodeAttrs& attrs, const std::vector<NDArray>& inputs,
                 std::vector<NDArray>* outputs) = nullptr;
  // In deferred-compute mode, instead of running the op: records it. Shapes
  // and dtypes are inferred (unknown shapes for dynamic-shape ops).
  void (*defer)(const NodeAttrs& attrs, const std::vector<NDArray>& inputs,
                std::vector<NDArray>* outputs,
                const std::vector<TShape>& out_shapes,
                const std::vector<DType>& out_types, Context ctx) = nullptr;
};
// Sets the non-null members of `hooks`.
void InstallInvokeHooks(const InvokeHooks& hooks);

}  // namespace imperative

namespace random {
// Reseeds the generators of every context (those created later too); each
// device gets its own stream (the device id is mixed in, as MXNet does).
void Seed(uint64_t seed);
// Reseeds the generator of one context with `seed` alone (MXNet's
// per-device seeding): devices of one type seeded alike draw the same
// sequence, so multi-device runs reproduce.
void Seed(uint64_t seed, Context ctx);
}  // namespace random

}  // namespace mx

#endif  // MXCORE_IMPERATIVE_IMPERATIVE_H_
