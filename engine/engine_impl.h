// Internal: the data structures and bookkeeping shared by all engines
// (variables and their pool, operations, error propagation). Not a public
// header; include engine/engine.h instead.
#ifndef MXCORE_ENGINE_ENGINE_IMPL_H_
#define MXCORE_ENGINE_ENGINE_IMPL_H_

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <exception>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/container/inlined_vector.h"
#include "engine/device_fence.h"
#include "engine/engine.h"
#include "engine/spin_lock.h"

namespace mx {
namespace engine {

// An error raised by one operation and shared by every var it reaches. It is
// reported (rethrown by a wait) at most once, after which the vars heal.
struct ErrorState {
  explicit ErrorState(std::exception_ptr e) : error(std::move(e)) {}
  const std::exception_ptr error;
  std::atomic<bool> reported{false};
};
using ErrorRef = std::shared_ptr<ErrorState>;

inline bool IsLive(const ErrorRef& e) {
  return e != nullptr && !e->reported.load(std::memory_order_acquire);
}

// A place in a var's queue of waiting operations. Each OprBlock owns one per
// var it uses, so queueing never allocates.
struct VarLink {
  OprBlock* block = nullptr;
  VarLink* next = nullptr;
  bool write = false;
};

struct Var {
  EngineBase* owner = nullptr;
  // Bumped by DeleteVariable, so stale handles are detected.
  std::atomic<uint32_t> generation{0};
  std::atomic<uint64_t> version{0};
  // Unique per NewVariable (never reused, unlike the Var object); set
  // before the handle is handed out.
  uint64_t id = 0;

  // Threaded engines: the queue of operations waiting for this var.
  SpinLock mu;
  VarLink* head = nullptr;
  VarLink* tail = nullptr;
  int running_reads = 0;
  bool running_write = false;
  // Outcome of the last completed write. Written only by that write's
  // completion and read by operations granted access after it, so the
  // dependency protocol (and `mu`) orders every access.
  ErrorRef error;

  // Device work of completed operations that may still be running (see
  // DeviceStreamOps): the last write's fence, and the fences of reads since
  // (at most one per stream: a later one on a stream covers an earlier).
  SpinLock fence_mu;
  FenceRef write_fence;
  absl::InlinedVector<FenceRef, 2> read_fences;
};

struct Opr {
  // Exactly one of the two is set. Sync functions are stored as they are
  // rather than wrapped, which would cost an allocation per push.
  Engine::AsyncFn fn;
  Engine::SyncFn sync_fn;
  // Validated and de-duplicated: no var appears twice across both lists.
  absl::InlinedVector<VarHandle, 4> const_vars;
  absl::InlinedVector<VarHandle, 4> mutable_vars;
  FnProperty prop = FnProperty::kNormal;
  std::string name;
  // Runs on the thread that makes it ready instead of a worker (waits).
  bool run_inline = false;
  // Runs even when its vars carry an error (deletes, waits).
  bool never_skip = false;
  // The var this op deletes (DeleteVariable): freed when the op completes.
  Var* frees_var = nullptr;
  // NewOperator ops: one reference for the owner plus one per pending push.
  std::atomic<int> refs{1};
};

// One pushed execution of an operation. Pool-allocated.
struct OprBlock {
  // Points at `one_shot` for PushAsync/PushSync, or at a NewOperator op.
  Opr* opr = nullptr;
  Opr one_shot;
  RunContext rctx;
  int priority = 0;
  // Vars still to be granted, plus one held by the push itself.
  std::atomic<int> wait{0};
  // Bits: kFnReturned | kCompleted. Whoever sets the second finishes the
  // block (releases the Opr, frees the block, counts it done).
  std::atomic<int> state{0};
  static constexpr int kFnReturned = 1;
  static constexpr int kCompleted = 2;
  // The naive engine frees its blocks itself, after `done`.
  bool free_at_finish = true;
  std::atomic<bool> done{false};
  absl::InlinedVector<VarLink, 4> links;
  // kCollective: the error a var it used carried when it started; its
  // written vars receive it at completion (unless it fails itself).
  ErrorRef inherited_error;
};

// Shared by all engine implementations.
class EngineBase : public Engine {
 public:
  EngineBase();
  ~EngineBase() override;

  VarHandle NewVariable() override;
  OprHandle NewOperator(AsyncFn fn, VarSpan const_vars, VarSpan mutable_vars,
                        FnProperty prop, std::string_view name) override;
  void DeleteOperator(OprHandle op) override;
  void Push(OprHandle op, Context ctx, int priority) override;
  void PushAsync(AsyncFn fn, Context ctx, VarSpan const_vars,
                 VarSpan mutable_vars, FnProperty prop, int priority,
                 std::string_view name) override;
  void PushSync(SyncFn fn, Context ctx, VarSpan const_vars,
                VarSpan mutable_vars, FnProperty prop, int priority,
                std::string_view name) override;
  void DeleteVariable(SyncFn delete_fn, Context ctx, VarHandle var) override;

  // Called through CallbackOnComplete.
  void Complete(OprBlock* block, std::exception_ptr error);

  // Back-pressure limit (EngineOptions::max_pending_ops); 0 = none. Set
  // before the first push.
  void SetMaxPending(int64_t limit) { max_pending_ = limit; }
  // How long WaitAtExit waits (EngineOptions::exit_wait_seconds).
  void SetExitWait(int64_t seconds) { exit_wait_seconds_ = seconds; }
  // At process exit (engine.cc): waits up to the exit wait for pending
  // operations, and says on stderr when some are still pending after it.
  void WaitAtExit();
  // Whether this thread is inside an operation of any engine.
  static bool InsideOperation();
  // Lets synchronous device operations complete once their work is queued
  // (fences, see DeviceStreamOps). Set before the first push.
  void EnableDeviceFences() { device_fences_ = true; }

 protected:
  static Var* var_of(const VarHandle& h) { return h.var_; }

  // Schedules a block whose operation is validated.
  virtual void PushBlock(OprBlock* block) = 0;
  // Releases the vars of a completed operation; `error` is what its writes
  // carry on (null on success).
  virtual void ReleaseVars(OprBlock* block, const ErrorRef& error) = 0;

  // Checks a handle: non-null, of this engine, not deleted.
  Var* Check(const VarHandle& h, std::string_view op_name) const;

  // Runs `block` now on this thread: skips it when an input is poisoned,
  // otherwise calls its function and turns a throw into a failure.
  // `stream`: the device stream to run on; null for the thread's own
  // (ThreadStream).
  void Execute(OprBlock* block, void* stream = nullptr);
  // Called when a block with free_at_finish == false is finished.
  virtual void OnBlockDone(OprBlock* /*block*/) {}
  // Whether this thread is inside Execute of this engine (an operation of
  // it runs here, possibly nested).
  bool ExecutingOnThisThread() const;
  // Returns a deleted var to the pool.
  void FreeVar(Var* var);
  // The same for a var without fences.
  void ReturnVar(Var* var);
  // DeleteVariableIfIdle once the engine found `var` idle (the caller holds
  // what keeps it so): false when device work it left may still run.
  bool FreeIdleVar(Var* var);

  // Rethrows `var`'s unreported error, marking it reported.
  static void RethrowVarError(Var* var);
  // Blocks until the device work of var's last write is done; throws the
  // device's error naming that operation.
  static void AwaitWriteFence(Var* var);
  // Waits for every fence recorded so far and runs the var deletions that
  // waited for theirs; throws the first device error.
  void DrainDeviceWork();
  // Rethrows the first unreported failure since the last call, marking all.
  void RethrowFirstFailure();
  // Keeps an error for WaitForAll.
  void RecordFailure(const ErrorRef& error);

  // Pending operations (pushed, not yet completed).
  void AddPending() { pending_.fetch_add(1, std::memory_order_relaxed); }
  void WaitAllCompleted();

  // A block for a one-shot op; fill block->one_shot, then Submit it.
  static OprBlock* NewBlock(Context ctx, int priority);
  static void FreeBlock(OprBlock* block);
  void Submit(OprBlock* block) {
    if (max_pending_ > 0) Throttle();
    AddPending();
    PushBlock(block);
  }

 private:
  // A block for a PushAsync/PushSync op with validated vars; the caller
  // sets the function. Throws (and frees the block) on bad input.
  OprBlock* NewOneShotBlock(bool has_fn, Context ctx, VarSpan const_vars,
                            VarSpan mutable_vars, FnProperty prop, int priority,
                            std::string_view name) const;
  // Validates and de-duplicates the var lists into `opr`.
  void FillOpr(Opr* opr, VarSpan const_vars, VarSpan mutable_vars,
               FnProperty prop, std::string_view name) const;
  void Finish(OprBlock* block);
  // Blocks a push from outside the engine's operations while max_pending_
  // operations are pending, until no more than half of them are.
  void Throttle();
  static void ReleaseOpr(Opr* opr);
  static ErrorRef UpstreamError(const Opr& opr);

  std::atomic<int64_t> pending_{0};
  std::mutex idle_mu_;
  // Signalled when pending_ reaches 0, and when it falls to the throttle's
  // low mark while a pusher is throttled.
  std::condition_variable idle_cv_;
  int64_t max_pending_ = 0;
  int64_t exit_wait_seconds_ = EngineOptions::kDefaultExitWaitSeconds;
  std::atomic<int> throttled_{0};     // Pushers blocked in Throttle.
  std::atomic<int> idle_waiters_{0};  // Threads in WaitAllCompleted.

  std::mutex failures_mu_;
  std::vector<ErrorRef> failures_;

  // Held for a push or pop (rarely a new Var): cheaper than a mutex.
  SpinLock vars_mu_;
  std::vector<std::unique_ptr<Var>> all_vars_;
  std::vector<Var*> free_vars_;

  std::mutex oprs_mu_;
  absl::flat_hash_set<Opr*> live_oprs_;  // NewOperator ops not yet deleted.

  // ---- Device fences (device_fence.h). ----
  // Makes `block`'s device work (or its host thread, for host operations)
  // wait for the fences on its vars from other streams; false when it is a
  // deletion that must wait for device work and was deferred instead.
  bool AwaitFences(OprBlock* block);
  // After an operation's work is queued: later users of its vars wait for
  // it (a fence on them, or the stream synchronized where the device has
  // no events; then `clear_fences` drops the fences the operation waited
  // for, all done).
  void OrderAfterDeviceWork(const OprBlock& block, bool clear_fences);
  // The same for an operation that failed: the device work it queued
  // before failing still runs and may read or write its vars (or the
  // memory of a var deleted next). Errors here are dropped.
  void OrderAfterFailedDeviceWork(const OprBlock& block) noexcept;
  // After a device operation's work is queued: its fence on its vars.
  static void AttachFence(const Opr& opr, const FenceRef& fence);
  // After an operation that finished its work synchronously: every earlier
  // access to the vars it wrote is done.
  static void ClearFences(const Opr& opr);
  // Runs the deferred deletions whose fences are done (all: `wait`).
  void RunDeferredDeletes(bool wait);

  bool device_fences_ = false;
  struct DeferredDelete {
    std::vector<FenceRef> fences;
    Engine::SyncFn fn;
    RunContext rctx;
  };
  std::mutex deferred_mu_;
  std::deque<DeferredDelete> deferred_;  // Oldest first.
  std::atomic<bool> has_deferred_{false};
};

std::unique_ptr<Engine> CreateNaiveEngine();
std::unique_ptr<Engine> CreateThreadedEngine(const EngineOptions& options);
std::unique_ptr<Engine> CreateThreadedEnginePerDevice(
    const EngineOptions& options);

}  // namespace engine
}  // namespace mx

#endif  // MXCORE_ENGINE_ENGINE_IMPL_H_
