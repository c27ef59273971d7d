// The dependency engine: every computation in mxcore runs through it.
//
// Work is pushed as an operation together with the variables (Vars) it reads
// and the ones it writes. The engine runs an operation once every earlier
// operation that writes what it reads, or touches what it writes, has
// completed; independent operations run concurrently on worker threads.
// Pushing returns at once; WaitForVar / WaitForAll block.
//
//   mx::engine::Engine* eng = mx::engine::Engine::Get();
//   mx::engine::VarHandle a = eng->NewVariable(), b = eng->NewVariable();
//   eng->PushSync([&](mx::engine::RunContext) { x = 1; }, mx::Context::CPU(),
//                 /*const_vars=*/{}, /*mutable_vars=*/{a});
//   eng->PushSync([&](mx::engine::RunContext) { y = x + 1; },
//   mx::Context::CPU(),
//                 {a}, {b});
//   eng->WaitForVar(b);  // y == 2; b.version() == 1
//
// Errors: an exception thrown by an operation (or passed to its completion
// callback) poisons the vars it writes; operations that later read or write
// a poisoned var are skipped and pass the error on. The next WaitForVar on an
// affected var, or the next WaitForAll, rethrows it once; after that the vars
// are usable again.
#ifndef MXCORE_ENGINE_ENGINE_H_
#define MXCORE_ENGINE_ENGINE_H_

#include <cstdint>
#include <exception>
#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include "absl/functional/any_invocable.h"
#include "absl/types/span.h"
#include "base/context.h"

namespace mx {
namespace engine {

struct Var;  // Internal; see engine_impl.h.
struct Opr;  // Internal; see engine_impl.h.
struct OprBlock;
class EngineBase;

// A handle to a dependency variable. Cheap to copy. Using a handle after
// DeleteVariable is a StateError, not undefined behaviour.
class VarHandle {
 public:
  VarHandle() = default;
  bool valid() const { return var_ != nullptr; }
  // Number of completed operations that wrote this var (run, failed or
  // skipped because of an upstream error). Reads never change it.
  uint64_t version() const;
  // A number no other variable of this process shares (0 for an invalid
  // handle): with version(), identifies the contents a reader sees, e.g. to
  // cache something derived from them.
  uint64_t id() const;

  friend bool operator==(const VarHandle& a, const VarHandle& b) {
    return a.var_ == b.var_ && a.generation_ == b.generation_;
  }
  friend bool operator!=(const VarHandle& a, const VarHandle& b) {
    return !(a == b);
  }

 private:
  friend class EngineBase;
  VarHandle(Var* var, uint32_t generation)
      : var_(var), generation_(generation) {}
  Var* var_ = nullptr;
  uint32_t generation_ = 0;
};

// A reusable operation created by NewOperator.
using OprHandle = Opr*;

// How an operation is scheduled.
enum class FnProperty {
  // Compute on the context's workers; a synchronous device operation may
  // run on the pushing thread (EngineOptions::launch_device_ops_on_pusher).
  kNormal,
  kCopyToDevice,    // Host-to-device copy: the device's copy workers.
  kCopyFromDevice,  // Device-to-host copy: the device's copy workers.
  kCPUPrioritized,  // Small latency-critical CPU work: a dedicated worker.
  kDeleteVar,       // Frees resources: runs even when its vars are poisoned.
  // Cheap CPU work (a kernel on a few KiB): when every var it uses is free
  // at push time, the pushing thread runs it at once, as TensorFlow runs
  // inexpensive kernels inline, because handing it to a worker costs more
  // than running it. Otherwise it is queued like kNormal. Non-host contexts
  // treat it as kNormal.
  kInlineIfReady,
  // One step of a collective across processes (the kvstore's reductions):
  // runs even when a var it uses carries an error, so every process issues
  // the same sequence of collectives; the vars it writes still receive that
  // error (RunContext::upstream_failed tells the op). Scheduled like
  // kNormal.
  kCollective,
  // Device work that must run on the device's own workers, never on the
  // pushing thread (EngineOptions::launch_device_ops_on_pusher): a call
  // that may block until work the pusher has yet to issue arrives, as a
  // collective over several GPUs of one process, or that should not keep
  // the pusher waiting (an NCCL communicator's first call sets it up).
  // Otherwise as kNormal.
  kOnDeviceWorkers,
};

// What an operation sees when it runs.
struct RunContext {
  Context ctx;
  // The device stream the op runs on (its worker's, or one lent to the
  // pushing thread that launches it); null on the CPU.
  void* stream = nullptr;
  // kCollective only: a var the op uses carries an error (the op runs
  // anyway; what it writes receives that error).
  bool upstream_failed = false;
};

// Passed to asynchronous operations, which must call it exactly once when
// their work is done, from any thread; with an exception on failure.
class CallbackOnComplete {
 public:
  void operator()() const;
  void operator()(std::exception_ptr error) const;

 private:
  friend class EngineBase;
  CallbackOnComplete(EngineBase* engine, OprBlock* block)
      : engine_(engine), block_(block) {}
  EngineBase* engine_;
  OprBlock* block_;
};

enum class EngineType { kNaive, kThreaded, kThreadedPerDevice };

// Engine configuration. FromEnv() reads MX_ENGINE_TYPE,
// MX_CPU_WORKER_NTHREADS, MX_ENGINE_MAX_PENDING, MX_ENGINE_EXIT_WAIT_S and
// MX_ENGINE_DEVICE_LAUNCH_ON_PUSHER (see README) and throws ConfigError on
// bad values.
struct EngineOptions {
  EngineType type = EngineType::kThreadedPerDevice;
  // Worker threads for CPU compute (per CPU device in the per-device engine,
  // shared by all devices in the pooled engine).
  int cpu_worker_threads = 1;
  // Compute workers per non-CPU device (per-device engine only).
  int device_worker_threads = 2;
  // Back-pressure (threaded engines): once this many operations are pending
  // (pushed, not completed), a push from outside the engine's operations
  // blocks until half of them have completed, so a loop that never waits
  // cannot run arbitrarily far ahead of the workers and hold the memory of
  // every array it dropped. 0: unbounded. Pushes made by a running
  // operation never block (they would deadlock a worker).
  int64_t max_pending_ops = kDefaultMaxPendingOps;
  static constexpr int64_t kDefaultMaxPendingOps = 128;
  // Per-device engine, devices with events that allow it
  // (DeviceStreamOps::launch_on_any_thread): a synchronous device operation
  // pushed from outside any engine operation, whose vars are all free, is
  // launched by the pushing thread when every compute worker of its device
  // is asleep, as PyTorch launches on the calling thread; it runs on a
  // stream lent to the pusher for the launch, and one worker is woken
  // meanwhile for the operations that follow. Waking a sleeping worker
  // costs more than a launch (tens of microseconds once its core idles
  // through a long device operation), and a single call waits for it.
  // Otherwise the workers launch, overlapping launches with the pusher's
  // work. The push then returns once the work is queued (and may block
  // as a launch does: a device's first algorithm search, a synchronizing
  // allocation).
  bool launch_device_ops_on_pusher = true;
  // The process engine (Get) at exit: leaving main, or calling exit on the
  // main thread, waits up to this long for pending operations before any
  // static destructor runs (what they use may be destroyed then). 0: no
  // wait.
  int64_t exit_wait_seconds = kDefaultExitWaitSeconds;
  static constexpr int64_t kDefaultExitWaitSeconds = 60;

  static EngineOptions FromEnv();
};

class Engine {
 public:
  // Move-only: a function capturing up to 16 bytes (a pointer, a
  // shared_ptr) is stored without an allocation.
  using SyncFn = absl::AnyInvocable<void(RunContext)>;
  using AsyncFn = absl::AnyInvocable<void(RunContext, CallbackOnComplete)>;
  using VarSpan = absl::Span<const VarHandle>;

  // The process-wide engine, created from EngineOptions::FromEnv() on first
  // use. Throws ConfigError when the environment is bad.
  static Engine* Get();
  // The same engine, shared: hold it to keep the engine alive while objects
  // that own vars (arrays) are destroyed during static destruction.
  static std::shared_ptr<Engine> GetShared();
  // A new, independent engine (tests, benchmarks).
  static std::unique_ptr<Engine> Create(const EngineOptions& options);

  // Waits for all pending operations (errors are dropped), then stops.
  virtual ~Engine() = default;

  // "NaiveEngine", "ThreadedEngine" or "ThreadedEnginePerDevice".
  virtual const char* type_name() const = 0;

  virtual VarHandle NewVariable() = 0;
  // Runs `delete_fn` after every operation pushed so far on `var`, then frees
  // the var. The handle is invalid from this call on.
  virtual void DeleteVariable(SyncFn delete_fn, Context ctx, VarHandle var) = 0;
  // Frees `var` now and returns true when no operation pushed on it is
  // pending (nor device work it left): the caller may then release what the
  // var guarded at once, without the operation DeleteVariable costs (an
  // array dropped right after its last use). Otherwise does nothing and
  // returns false. The handle is invalid after a true return.
  virtual bool DeleteVariableIfIdle(VarHandle var) = 0;

  // Reusable operations: create once, push many times. A var listed as both
  // read and written counts as written; duplicate reads are merged; a var
  // written twice is an InvalidArgument.
  virtual OprHandle NewOperator(AsyncFn fn, VarSpan const_vars,
                                VarSpan mutable_vars,
                                FnProperty prop = FnProperty::kNormal,
                                std::string_view name = "") = 0;
  // Frees `op` once the pushes already made have run.
  virtual void DeleteOperator(OprHandle op) = 0;
  // Higher priority runs first among ready operations of one worker pool.
  virtual void Push(OprHandle op, Context ctx, int priority = 0) = 0;

  // One-shot operations.
  virtual void PushAsync(AsyncFn fn, Context ctx, VarSpan const_vars,
                         VarSpan mutable_vars,
                         FnProperty prop = FnProperty::kNormal,
                         int priority = 0, std::string_view name = "") = 0;
  virtual void PushSync(SyncFn fn, Context ctx, VarSpan const_vars,
                        VarSpan mutable_vars,
                        FnProperty prop = FnProperty::kNormal, int priority = 0,
                        std::string_view name = "") = 0;

  // Blocks until every operation pushed so far that writes `var` completed;
  // rethrows an unreported error that reached `var`.
  // REQUIRES: not called from inside an operation.
  virtual void WaitForVar(VarHandle var) = 0;
  // Blocks until every pushed operation completed; rethrows the first
  // unreported error and marks all errors reported.
  virtual void WaitForAll() = 0;
};

// Device streams. A device plugin says how to create and destroy streams of
// its device type; every engine thread that runs operations for such a
// device (compute or copy worker, or NaiveEngine's pushing thread) gets its
// own stream per device id (launches on a pushing thread borrow a stream
// from a pool instead, see launch_device_ops_on_pusher), passed as
// RunContext::stream, created on first use and destroyed when the thread ends.
// The engine synchronizes the stream when a synchronous operation returns, so
// the operation's writes are complete when its vars are released; asynchronous
// operations synchronize their stream before calling their completion
// callback (the engine attaches no fence for them).
//
// With events (all five event functions set), the per-device engine instead
// completes a device operation as soon as its work is queued: it records an
// event on the stream and attaches it to the operation's vars as a fence.
// A later operation on the same stream needs nothing (stream order); one
// on another stream of the device waits for the fence on the GPU
// (wait_event); a host operation, WaitForVar, WaitForAll and the freeing of
// a var's memory wait for it on the host. MX_ENGINE_SYNC_DEVICE_OPS=1 turns
// this off (a stream synchronize per operation, as without events).
struct DeviceStreamOps {
  std::function<void*(int dev_id)> create;  // May throw an mx::Error.
  std::function<void(int dev_id, void* stream)> destroy;
  // Waits for the stream's work; throws the device's error.
  std::function<void(int dev_id, void* stream)> synchronize;
  // Optional events; each may throw an mx::Error.
  std::function<void*(int dev_id)> create_event;
  std::function<void(int dev_id, void* event)> destroy_event;
  std::function<void(int dev_id, void* event, void* stream)> record_event;
  // Makes later work on `stream` wait for the event.
  std::function<void(int dev_id, void* event, void* stream)> wait_event;
  // Whether the event's work is done (throws the device's error).
  std::function<bool(int dev_id, void* event)> query_event;
  // Optional: blocks until the event's work is done (else query_event is
  // polled).
  std::function<void(int dev_id, void* event)> synchronize_event;
  // Whether operations may run on any thread, one at a time per stream, on
  // streams lent to threads in turn: the per-device engine may then launch
  // an operation on the thread that pushed it (with events only; see
  // EngineOptions::launch_device_ops_on_pusher).
  bool launch_on_any_thread = false;
};
// Throws AlreadyExists when `dev_type` has streams.
void RegisterDeviceStreams(int dev_type, DeviceStreamOps ops);
void UnregisterDeviceStreams(int dev_type);
// The calling thread's stream for `ctx` (null for host contexts and for
// device types without streams).
void* ThreadStream(Context ctx);
// Synchronizes `stream` of `ctx` (no-op for host contexts or null streams).
void SynchronizeStream(Context ctx, void* stream);

}  // namespace engine
}  // namespace mx

#endif  // MXCORE_ENGINE_ENGINE_H_
