#include "engine/threaded_engine.h"

#include <condition_variable>

#include "absl/container/inlined_vector.h"
#include "base/parallel.h"
#include "engine/device_fence.h"

namespace mx {
namespace engine {
namespace {

using ReadyList = absl::InlinedVector<OprBlock*, 4>;

void Enqueue(Var* var, VarLink* link) {
  if (var->tail == nullptr) {
    var->head = var->tail = link;
  } else {
    var->tail->next = link;
    var->tail = link;
  }
}

VarLink* Dequeue(Var* var) {
  VarLink* link = var->head;
  var->head = link->next;
  if (var->head == nullptr) var->tail = nullptr;
  link->next = nullptr;
  return link;
}

// Returns true when the read is granted at once.
bool AppendRead(Var* var, VarLink* link) {
  std::lock_guard<SpinLock> lock(var->mu);
  if (!var->running_write && var->head == nullptr) {
    ++var->running_reads;
    return true;
  }
  Enqueue(var, link);
  return false;
}

// Returns true when the write is granted at once.
bool AppendWrite(Var* var, VarLink* link) {
  std::lock_guard<SpinLock> lock(var->mu);
  if (!var->running_write && var->running_reads == 0 && var->head == nullptr) {
    var->running_write = true;
    return true;
  }
  Enqueue(var, link);
  return false;
}

// Grants the head of the queue: one write, or every read up to the next write.
void GrantNext(Var* var, ReadyList* ready) {
  if (var->head == nullptr) return;
  if (var->head->write) {
    if (var->running_reads == 0) {
      var->running_write = true;
      ready->push_back(Dequeue(var)->block);
    }
    return;
  }
  while (var->head != nullptr && !var->head->write) {
    ++var->running_reads;
    ready->push_back(Dequeue(var)->block);
  }
}

}  // namespace

void ThreadedEngine::PushBlock(OprBlock* block) {
  Opr* opr = block->opr;
  const size_t num_vars = opr->const_vars.size() + opr->mutable_vars.size();
  block->links.resize(num_vars);
  block->wait.store(static_cast<int>(num_vars) + 1, std::memory_order_relaxed);
  int granted = 0;
  {
    std::lock_guard<std::mutex> lock(push_mu_);
    size_t i = 0;
    for (const VarHandle& h : opr->const_vars) {
      VarLink* link = &block->links[i++];
      link->block = block;
      granted += AppendRead(var_of(h), link);
    }
    for (const VarHandle& h : opr->mutable_vars) {
      VarLink* link = &block->links[i++];
      link->block = block;
      link->write = true;
      granted += AppendWrite(var_of(h), link);
    }
  }
  if (block->wait.fetch_sub(granted + 1, std::memory_order_acq_rel) ==
      granted + 1) {
    // Ready at push: cheap host work and deletes run here, on one kernel
    // thread (a thread team of the pusher's would compete with the workers
    // for the cores). A block readied later by a completion goes to a
    // worker (running it on the completing thread could recurse down a long
    // chain of small ops).
    const FnProperty prop = opr->prop;
    const bool host = block->rctx.ctx.is_host();
    if (host && (prop == FnProperty::kInlineIfReady ||
                 prop == FnProperty::kDeleteVar)) {
      ScopedKernelThreads one_thread(1);
      Execute(block);
    } else if (!host &&
               (prop == FnProperty::kNormal ||
                prop == FnProperty::kInlineIfReady) &&
               LaunchOnPusher(*block)) {
      LaunchHere(block);
    } else {
      Dispatch(block);
    }
  }
}

void ThreadedEngine::LaunchHere(OprBlock* block) {
  const LentStream lent(block->rctx.ctx);
  if (lent.stream() == nullptr) return Dispatch(block);
  Execute(block, lent.stream());  // Queues the device work and returns.
}

void ThreadedEngine::ReleaseVars(OprBlock* block, const ErrorRef& error) {
  ReadyList ready;
  Opr* opr = block->opr;
  for (const VarHandle& h : opr->const_vars) {
    Var* var = var_of(h);
    std::lock_guard<SpinLock> lock(var->mu);
    if (--var->running_reads == 0) GrantNext(var, &ready);
  }
  for (const VarHandle& h : opr->mutable_vars) {
    Var* var = var_of(h);
    {
      std::lock_guard<SpinLock> lock(var->mu);
      var->running_write = false;
      var->error = error;
      var->version.fetch_add(1, std::memory_order_acq_rel);
      GrantNext(var, &ready);
    }
    // A deleted var has no later ops (its handles are invalid), so it can go.
    if (opr->frees_var == var) FreeVar(var);
  }
  for (OprBlock* next : ready) {
    if (next->wait.fetch_sub(1, std::memory_order_acq_rel) == 1) {
      Dispatch(next);
    }
  }
}

void ThreadedEngine::Dispatch(OprBlock* block) {
  if (block->opr->run_inline) {
    Execute(block);
  } else {
    Schedule(block);
  }
}

void ThreadedEngine::WaitForVar(VarHandle h) {
  Var* var = Check(h, "WaitForVar");
  {
    std::unique_lock<SpinLock> lock(var->mu);
    if (!var->running_write && var->head == nullptr) {
      RethrowVarError(var);
      lock.unlock();
      AwaitWriteFence(var);
      return;
    }
  }
  // Queue a read that signals this thread; it runs right after the last
  // write pushed so far, on whichever thread completes that write.
  struct Waiter {
    std::mutex mu;
    std::condition_variable cv;
    bool done = false;
  } waiter;
  OprBlock* block = NewBlock(Context::CPU(), 0);
  Opr* opr = block->opr;
  opr->sync_fn = [&waiter](RunContext) {
    std::lock_guard<std::mutex> lock(waiter.mu);
    waiter.done = true;
    waiter.cv.notify_all();
  };
  opr->const_vars.push_back(h);
  opr->run_inline = true;
  opr->never_skip = true;
  opr->name = "WaitForVar";
  Submit(block);
  {
    std::unique_lock<std::mutex> lock(waiter.mu);
    waiter.cv.wait(lock, [&waiter] { return waiter.done; });
  }
  {
    std::lock_guard<SpinLock> lock(var->mu);
    RethrowVarError(var);
  }
  // The write completed when its device work was queued: wait for that.
  AwaitWriteFence(var);
}

bool ThreadedEngine::DeleteVariableIfIdle(VarHandle h) {
  Var* var = Check(h, "DeleteVariable");
  // Nothing queued or running on it: no operation can reach it any more
  // (pushing on a var while deleting it is the caller's error, as for
  // DeleteVariable). The lock is held until the var is freed.
  std::lock_guard<SpinLock> lock(var->mu);
  if (var->running_write || var->running_reads != 0 || var->head != nullptr) {
    return false;
  }
  return FreeIdleVar(var);
}

void ThreadedEngine::WaitForAll() {
  WaitAllCompleted();
  try {
    DrainDeviceWork();
  } catch (...) {
    RecordFailure(std::make_shared<ErrorState>(std::current_exception()));
  }
  RethrowFirstFailure();
}

}  // namespace engine
}  // namespace mx
