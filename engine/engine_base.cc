// Bookkeeping shared by every engine: handle checks, the var pool, operation
// lifetime, and how errors travel from a failing op to the next wait.
#include <atomic>
#include <chrono>
#include <cstdio>
#include <utility>

#include "absl/strings/str_cat.h"
#include "base/error.h"
#include "base/float_mode.h"
#include "base/object_pool.h"
#include "engine/engine_impl.h"

namespace mx {
namespace engine {
namespace {

std::string OpLabel(std::string_view where, std::string_view name) {
  std::string label(where);
  if (!name.empty()) label.append("(op \"").append(name).append("\")");
  return label;
}

}  // namespace

EngineBase::EngineBase() = default;

EngineBase::~EngineBase() {
  // Derived engines have waited for all operations and stopped their workers.
  for (Opr* opr : live_oprs_) delete opr;
}

Var* EngineBase::Check(const VarHandle& h, std::string_view op_name) const {
  Var* var = h.var_;
  if (var == nullptr) {
    throw InvalidArgument(
        absl::StrCat(OpLabel("Engine", op_name), ": null var handle"));
  }
  if (var->owner != this) {
    throw InvalidArgument(absl::StrCat(OpLabel("Engine", op_name),
                                       ": var belongs to another engine"));
  }
  if (var->generation.load(std::memory_order_acquire) != h.generation_) {
    throw StateError(absl::StrCat(OpLabel("Engine", op_name),
                                  ": var was deleted by DeleteVariable"));
  }
  return var;
}

VarHandle EngineBase::NewVariable() {
  Var* var;
  {
    std::lock_guard<SpinLock> lock(vars_mu_);
    if (free_vars_.empty()) {
      all_vars_.push_back(std::make_unique<Var>());
      var = all_vars_.back().get();
      var->owner = this;
    } else {
      var = free_vars_.back();
      free_vars_.pop_back();
    }
  }
  var->version.store(0, std::memory_order_relaxed);
  // Ids are unique, not ordered: each thread takes them in blocks, which
  // keeps an atomic read-modify-write off every new array.
  constexpr uint64_t kIdBlock = 1024;
  static std::atomic<uint64_t> next_block{0};
  thread_local uint64_t next_id = 0, end_id = 0;
  if (next_id == end_id) {
    next_id = next_block.fetch_add(kIdBlock, std::memory_order_relaxed) + 1;
    end_id = next_id + kIdBlock;
  }
  var->id = next_id++;
  var->error.reset();
  return VarHandle(var, var->generation.load(std::memory_order_relaxed));
}

void EngineBase::FreeVar(Var* var) {
  {
    std::lock_guard<SpinLock> lock(var->fence_mu);
    var->write_fence.reset();
    var->read_fences.clear();
  }
  ReturnVar(var);
}

void EngineBase::ReturnVar(Var* var) {
  var->error.reset();
  std::lock_guard<SpinLock> lock(vars_mu_);
  free_vars_.push_back(var);
}

bool EngineBase::FreeIdleVar(Var* var) {
  {
    std::lock_guard<SpinLock> lock(var->fence_mu);
    if (var->write_fence != nullptr || !var->read_fences.empty()) return false;
  }
  // From here on every use of a handle to it is a StateError.
  var->generation.fetch_add(1, std::memory_order_acq_rel);
  ReturnVar(var);  // Without fences to drop.
  return true;
}

void EngineBase::FillOpr(Opr* opr, VarSpan const_vars, VarSpan mutable_vars,
                         FnProperty prop, std::string_view name) const {
  for (size_t i = 0; i < mutable_vars.size(); ++i) {
    Check(mutable_vars[i], name);
    for (size_t j = 0; j < i; ++j) {
      if (mutable_vars[j] == mutable_vars[i]) {
        throw InvalidArgument(absl::StrCat(
            OpLabel("Engine::Push", name), ": mutable_vars[", j,
            "] and mutable_vars[", i, "] are the same var; a var may be ",
            "written only once per operation"));
      }
    }
    opr->mutable_vars.push_back(mutable_vars[i]);
  }
  auto listed = [opr](const VarHandle& h) {
    for (const VarHandle& m : opr->mutable_vars) {
      if (m == h) return true;
    }
    for (const VarHandle& c : opr->const_vars) {
      if (c == h) return true;
    }
    return false;
  };
  for (const VarHandle& h : const_vars) {
    Check(h, name);
    // Read-and-written counts as written; repeated reads are merged.
    if (!listed(h)) opr->const_vars.push_back(h);
  }
  opr->prop = prop;
  opr->never_skip =
      prop == FnProperty::kDeleteVar || prop == FnProperty::kCollective;
  if (!name.empty()) opr->name.assign(name.data(), name.size());
}

OprHandle EngineBase::NewOperator(AsyncFn fn, VarSpan const_vars,
                                  VarSpan mutable_vars, FnProperty prop,
                                  std::string_view name) {
  if (!fn) {
    throw InvalidArgument(
        absl::StrCat(OpLabel("Engine::NewOperator", name), ": empty function"));
  }
  auto opr = std::make_unique<Opr>();
  FillOpr(opr.get(), const_vars, mutable_vars, prop, name);
  opr->fn = std::move(fn);
  std::lock_guard<std::mutex> lock(oprs_mu_);
  live_oprs_.insert(opr.get());
  return opr.release();
}

void EngineBase::DeleteOperator(OprHandle op) {
  {
    std::lock_guard<std::mutex> lock(oprs_mu_);
    if (live_oprs_.erase(op) == 0) {
      throw InvalidArgument(
          "Engine::DeleteOperator: not a live operator of this engine");
    }
  }
  ReleaseOpr(op);
}

void EngineBase::Push(OprHandle op, Context ctx, int priority) {
  {
    std::lock_guard<std::mutex> lock(oprs_mu_);
    if (!live_oprs_.contains(op)) {
      throw InvalidArgument(
          "Engine::Push: not a live operator of this engine (deleted?)");
    }
  }
  for (const VarHandle& h : op->const_vars) Check(h, op->name);
  for (const VarHandle& h : op->mutable_vars) Check(h, op->name);
  op->refs.fetch_add(1, std::memory_order_relaxed);
  OprBlock* block = NewBlock(ctx, priority);
  block->opr = op;
  Submit(block);
}

OprBlock* EngineBase::NewOneShotBlock(bool has_fn, Context ctx,
                                      VarSpan const_vars, VarSpan mutable_vars,
                                      FnProperty prop, int priority,
                                      std::string_view name) const {
  if (!has_fn) {
    throw InvalidArgument(
        absl::StrCat(OpLabel("Engine::Push", name), ": empty function"));
  }
  OprBlock* block = NewBlock(ctx, priority);
  try {
    FillOpr(block->opr, const_vars, mutable_vars, prop, name);
  } catch (...) {
    FreeBlock(block);
    throw;
  }
  return block;
}

void EngineBase::PushAsync(AsyncFn fn, Context ctx, VarSpan const_vars,
                           VarSpan mutable_vars, FnProperty prop, int priority,
                           std::string_view name) {
  OprBlock* block = NewOneShotBlock(static_cast<bool>(fn), ctx, const_vars,
                                    mutable_vars, prop, priority, name);
  block->opr->fn = std::move(fn);
  Submit(block);
}

void EngineBase::PushSync(SyncFn fn, Context ctx, VarSpan const_vars,
                          VarSpan mutable_vars, FnProperty prop, int priority,
                          std::string_view name) {
  OprBlock* block = NewOneShotBlock(static_cast<bool>(fn), ctx, const_vars,
                                    mutable_vars, prop, priority, name);
  block->opr->sync_fn = std::move(fn);
  Submit(block);
}

void EngineBase::DeleteVariable(SyncFn delete_fn, Context ctx, VarHandle h) {
  Var* var = Check(h, "DeleteVariable");
  // From here on every use of `h` (or a copy) is a StateError.
  var->generation.fetch_add(1, std::memory_order_acq_rel);
  OprBlock* block = NewBlock(ctx, 0);
  Opr* opr = block->opr;
  opr->sync_fn = delete_fn ? std::move(delete_fn) : [](RunContext) {};
  opr->mutable_vars.push_back(h);
  opr->prop = FnProperty::kDeleteVar;
  opr->never_skip = true;
  opr->frees_var = var;
  opr->name = "DeleteVariable";
  Submit(block);
}

ErrorRef EngineBase::UpstreamError(const Opr& opr) {
  for (const VarHandle& h : opr.const_vars) {
    if (IsLive(var_of(h)->error)) return var_of(h)->error;
  }
  for (const VarHandle& h : opr.mutable_vars) {
    if (IsLive(var_of(h)->error)) return var_of(h)->error;
  }
  return nullptr;
}

namespace {
// Operations running on this thread (nested: inline waits inside ops). A push
// made by a running operation is never throttled: the worker it would block
// may be the one that has to drain the queue.
thread_local int tls_running_ops = 0;
// The engine whose Execute this thread is in (innermost).
thread_local const EngineBase* tls_running_engine = nullptr;
class RunningOp {
 public:
  explicit RunningOp(const EngineBase* engine) : outer_(tls_running_engine) {
    ++tls_running_ops;
    tls_running_engine = engine;
  }
  ~RunningOp() {
    --tls_running_ops;
    tls_running_engine = outer_;
  }

 private:
  const EngineBase* const outer_;
};
}  // namespace

bool EngineBase::ExecutingOnThisThread() const {
  return tls_running_engine == this;
}

void EngineBase::Throttle() {
  if (tls_running_ops > 0 ||
      pending_.load(std::memory_order_relaxed) < max_pending_) {
    return;
  }
  const int64_t low = max_pending_ / 2;
  std::unique_lock<std::mutex> lock(idle_mu_);
  // Counted before pending_ is read (both sequentially consistent), so a
  // completion that brings pending_ to `low` either sees this thread and
  // notifies, or happened before the read below and lets it pass.
  throttled_.fetch_add(1);
  idle_cv_.wait(lock, [&] { return pending_.load() <= low; });
  throttled_.fetch_sub(1);
}

namespace {

// A device reports an asynchronous failure of its work (a kernel fault)
// when the stream is synchronized: the error names the operation whose
// work it was, as a failing CPU kernel's does.
void SynchronizeDeviceWork(const Opr& opr, const RunContext& rctx) {
  try {
    SynchronizeStream(rctx.ctx, rctx.stream);
  } catch (const Error& e) {
    throw RuntimeError(absl::StrCat("operation \"", opr.name, "\" on ",
                                    rctx.ctx.ToString(), ": ", e.what()));
  }
}

}  // namespace

void EngineBase::Execute(OprBlock* block, void* stream) {
  RunningOp running(this);
  Opr* opr = block->opr;
  if (!opr->never_skip) {
    ErrorRef upstream = UpstreamError(*opr);
    if (upstream != nullptr) {
      ReleaseVars(block, upstream);
      block->state.store(OprBlock::kFnReturned | OprBlock::kCompleted,
                         std::memory_order_relaxed);
      Finish(block);
      return;
    }
  } else if (opr->prop == FnProperty::kCollective) {
    block->inherited_error = UpstreamError(*opr);
    block->rctx.upstream_failed = block->inherited_error != nullptr;
  }
  if (has_deferred_.load(std::memory_order_acquire)) RunDeferredDeletes(false);
  try {
    // CPU kernels (and the host side of device ones) compute in the
    // process's float mode (denormals flushed by default, as in MXNet).
    const CpuFloatModeScope float_mode;
    if (!block->rctx.ctx.is_host()) {
      block->rctx.stream =
          stream != nullptr ? stream : ThreadStream(block->rctx.ctx);
    }
    // Waits (run inline on a completing thread) wait for device work
    // themselves, on their own thread (WaitForVar).
    const bool fences = AnyFenceRecorded();
    const bool run = opr->run_inline || !fences || AwaitFences(block);
    if (!run) {
      Complete(block, nullptr);  // A deletion deferred until its fences.
    } else if (opr->sync_fn) {
      opr->sync_fn(block->rctx);
      OrderAfterDeviceWork(*block, /*clear_fences=*/fences);
      Complete(block, nullptr);
    } else {
      opr->fn(block->rctx, CallbackOnComplete(this, block));
    }
  } catch (...) {
    std::exception_ptr error = std::current_exception();
    if (block->state.load(std::memory_order_acquire) & OprBlock::kCompleted) {
      // Threw after signalling completion: its outputs are already released,
      // so the error can only be reported by WaitForAll.
      RecordFailure(std::make_shared<ErrorState>(std::move(error)));
    } else {
      if (block->rctx.stream != nullptr) OrderAfterFailedDeviceWork(*block);
      Complete(block, std::move(error));
    }
  }
  if (block->state.fetch_or(OprBlock::kFnReturned, std::memory_order_acq_rel) &
      OprBlock::kCompleted) {
    Finish(block);
  }
}

void EngineBase::OrderAfterDeviceWork(const OprBlock& block,
                                      bool clear_fences) {
  const Opr& opr = *block.opr;
  FenceRef fence;
  if (device_fences_ && block.rctx.stream != nullptr) {
    fence = RecordFence(block.rctx.ctx, block.rctx.stream, opr.name);
  }
  if (fence != nullptr) {
    AttachFence(opr, fence);
  } else {
    SynchronizeDeviceWork(opr, block.rctx);
    if (clear_fences) ClearFences(opr);
  }
}

void EngineBase::OrderAfterFailedDeviceWork(const OprBlock& block) noexcept {
  // The operation's own error is the one reported; a device error here
  // (the device already failing) would only repeat it.
  try {
    // Its earlier fences stay: it may have failed before waiting for them.
    OrderAfterDeviceWork(block, /*clear_fences=*/false);
    return;
  } catch (...) {
  }
  try {
    SynchronizeDeviceWork(*block.opr, block.rctx);
  } catch (...) {
  }
}

void EngineBase::Complete(OprBlock* block, std::exception_ptr error) {
  ErrorRef ref;
  if (error) {
    ref = std::make_shared<ErrorState>(std::move(error));
    RecordFailure(ref);
  } else if (block->inherited_error != nullptr) {
    ref = std::move(block->inherited_error);  // Recorded where it arose.
  }
  ReleaseVars(block, ref);
  if (block->state.fetch_or(OprBlock::kCompleted, std::memory_order_acq_rel) &
      OprBlock::kFnReturned) {
    Finish(block);
  }
}

void EngineBase::Finish(OprBlock* block) {
  if (block->opr != &block->one_shot) ReleaseOpr(block->opr);
  if (block->free_at_finish) {
    FreeBlock(block);
  } else {
    OnBlockDone(block);
  }
  // Counted done last. The decrement to zero happens under the lock that
  // waiters read the count under, so a waiter that sees zero (and may then
  // destroy the engine) never races with this thread; other decrements
  // touch nothing after the atomic.
  if (ExecutingOnThisThread()) {
    // Inside this engine's Execute, so the engine cannot be destroyed
    // meanwhile (its caller is using it): the count may reach zero without
    // the lock, which is taken only to wake waiters there are. Waiters
    // count themselves before reading the count (all sequentially
    // consistent), so either one sees the other or the waiter sees zero.
    const int64_t left = pending_.fetch_sub(1) - 1;
    if ((left == 0 && idle_waiters_.load() > 0) ||
        (left == max_pending_ / 2 && throttled_.load() > 0)) {
      std::lock_guard<std::mutex> lock(idle_mu_);
      idle_cv_.notify_all();
    }
    return;
  }
  int64_t pending = pending_.load(std::memory_order_relaxed);
  while (pending > 1) {
    if (pending_.compare_exchange_weak(pending, pending - 1)) {
      // Every count is passed through once, so exactly one completion
      // brings it to the low mark; it wakes throttled pushers.
      if (pending - 1 == max_pending_ / 2 && throttled_.load() > 0) {
        std::lock_guard<std::mutex> lock(idle_mu_);
        idle_cv_.notify_all();
      }
      return;
    }
  }
  std::lock_guard<std::mutex> lock(idle_mu_);
  // (A nested push may have raised the count since it was read.)
  const int64_t left = pending_.fetch_sub(1) - 1;
  if (left == 0 || (left == max_pending_ / 2 && throttled_.load() > 0)) {
    idle_cv_.notify_all();
  }
}

void EngineBase::ReleaseOpr(Opr* opr) {
  if (opr->refs.fetch_sub(1, std::memory_order_acq_rel) == 1) delete opr;
}

void EngineBase::WaitAllCompleted() {
  std::unique_lock<std::mutex> lock(idle_mu_);
  idle_waiters_.fetch_add(1);  // Before reading the count (see Finish).
  idle_cv_.wait(lock, [this] { return pending_.load() == 0; });
  idle_waiters_.fetch_sub(1);
}

bool EngineBase::InsideOperation() { return tls_running_ops > 0; }

void EngineBase::WaitAtExit() {
  if (exit_wait_seconds_ <= 0) return;
  std::unique_lock<std::mutex> lock(idle_mu_);
  idle_waiters_.fetch_add(1);  // Before reading the count (see Finish).
  const bool idle =
      idle_cv_.wait_for(lock, std::chrono::seconds(exit_wait_seconds_),
                        [this] { return pending_.load() == 0; });
  idle_waiters_.fetch_sub(1);
  if (!idle) {
    std::fprintf(stderr,
                 "mxcore: %lld operations still pending after waiting %lld s "
                 "at exit (MX_ENGINE_EXIT_WAIT_S); exiting without them\n",
                 static_cast<long long>(pending_.load()),
                 static_cast<long long>(exit_wait_seconds_));
  }
}

void EngineBase::RecordFailure(const ErrorRef& error) {
  std::lock_guard<std::mutex> lock(failures_mu_);
  // Failures already reported through WaitForVar need not wait for
  // WaitForAll; drop them so the list stays short.
  if (failures_.size() >= 64) {
    std::vector<ErrorRef> live;
    for (ErrorRef& e : failures_) {
      if (IsLive(e)) live.push_back(std::move(e));
    }
    failures_.swap(live);
  }
  failures_.push_back(error);
}

void EngineBase::RethrowVarError(Var* var) {
  ErrorRef error = var->error;
  if (error != nullptr &&
      !error->reported.exchange(true, std::memory_order_acq_rel)) {
    std::rethrow_exception(error->error);
  }
}

void EngineBase::RethrowFirstFailure() {
  std::vector<ErrorRef> failures;
  {
    std::lock_guard<std::mutex> lock(failures_mu_);
    failures.swap(failures_);
  }
  std::exception_ptr first;
  for (const ErrorRef& e : failures) {
    if (!e->reported.exchange(true, std::memory_order_acq_rel) && !first) {
      first = e->error;
    }
  }
  if (first) std::rethrow_exception(first);
}

OprBlock* EngineBase::NewBlock(Context ctx, int priority) {
  OprBlock* block = ObjectPool<OprBlock>::New();
  block->opr = &block->one_shot;
  block->rctx.ctx = ctx;
  block->priority = priority;
  return block;
}

void EngineBase::FreeBlock(OprBlock* block) {
  ObjectPool<OprBlock>::Delete(block);
}

}  // namespace engine
}  // namespace mx
