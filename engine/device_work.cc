// EngineBase's handling of device work that outlives its operation: the
// fences a device operation leaves on its vars when it completes as soon as
// its work is queued, what later operations wait for, and the var
// deletions that wait for the device before freeing memory.
#include <utility>
#include <vector>

#include "absl/container/inlined_vector.h"
#include "engine/device_fence.h"
#include "engine/engine_impl.h"

namespace mx {
namespace engine {

bool EngineBase::AwaitFences(OprBlock* block) {
  const Opr& opr = *block->opr;
  absl::InlinedVector<FenceRef, 8> fences;
  auto gather = [&fences](const VarHandle& h, bool write) {
    Var* v = var_of(h);
    std::lock_guard<SpinLock> lock(v->fence_mu);
    if (v->write_fence != nullptr) fences.push_back(v->write_fence);
    if (write) {
      for (const FenceRef& f : v->read_fences) fences.push_back(f);
    }
  };
  for (const VarHandle& h : opr.const_vars) gather(h, false);
  for (const VarHandle& h : opr.mutable_vars) gather(h, true);
  if (fences.empty()) return true;
  const Context ctx = block->rctx.ctx;
  void* stream = block->rctx.stream;
  if (opr.prop == FnProperty::kDeleteVar && opr.sync_fn) {
    // The memory goes back to a pool any stream allocates from: every
    // access must be done, whatever its stream. Rather than block this
    // worker, the deletion runs later (RunDeferredDeletes).
    std::vector<FenceRef> pending;
    for (FenceRef& f : fences) {
      bool done = true;
      try {
        done = f->Done();
      } catch (...) {
        // The device failed: the error surfaces at a wait; the memory is
        // not being used any more.
      }
      if (!done) pending.push_back(std::move(f));
    }
    if (pending.empty()) return true;
    std::lock_guard<std::mutex> lock(deferred_mu_);
    // Not run now (the block completes without it), so the function moves.
    deferred_.push_back(
        {std::move(pending), std::move(block->opr->sync_fn), block->rctx});
    has_deferred_.store(true, std::memory_order_release);
    return false;
  }
  for (const FenceRef& f : fences) {
    const Context fctx = f->ctx();
    if (!ctx.is_host() && fctx == ctx && f->stream() == stream) {
      continue;  // Same stream: ordered already.
    }
    if (!ctx.is_host() && fctx.dev_type == ctx.dev_type) {
      f->AwaitOnStream(ctx, stream);
    } else {
      f->AwaitOnHost();
    }
  }
  return true;
}

void EngineBase::AttachFence(const Opr& opr, const FenceRef& fence) {
  for (const VarHandle& h : opr.mutable_vars) {
    Var* v = var_of(h);
    std::lock_guard<SpinLock> lock(v->fence_mu);
    v->write_fence = fence;
    v->read_fences.clear();
  }
  for (const VarHandle& h : opr.const_vars) {
    Var* v = var_of(h);
    std::lock_guard<SpinLock> lock(v->fence_mu);
    auto& reads = v->read_fences;
    for (size_t i = 0; i < reads.size();) {
      if (reads[i]->ctx() == fence->ctx() &&
          reads[i]->stream() == fence->stream()) {
        reads.erase(reads.begin() + i);
      } else {
        ++i;
      }
    }
    reads.push_back(fence);
  }
}

void EngineBase::ClearFences(const Opr& opr) {
  for (const VarHandle& h : opr.mutable_vars) {
    Var* v = var_of(h);
    std::lock_guard<SpinLock> lock(v->fence_mu);
    v->write_fence.reset();
    v->read_fences.clear();
  }
}

void EngineBase::AwaitWriteFence(Var* var) {
  FenceRef fence;
  {
    std::lock_guard<SpinLock> lock(var->fence_mu);
    fence = var->write_fence;
  }
  if (fence != nullptr) fence->AwaitOnHost();
}

void EngineBase::RunDeferredDeletes(bool wait) {
  std::vector<DeferredDelete> ready;
  {
    std::unique_lock<std::mutex> lock(deferred_mu_, std::defer_lock);
    if (wait) {
      lock.lock();
    } else if (!lock.try_lock()) {
      return;  // Another thread is at it.
    }
    // Oldest first; fences of one stream are reached in order, so without
    // `wait` the scan stops at the first deletion still waiting (each call
    // costs a query or two, not one per waiting deletion).
    size_t taken = 0;
    for (; taken < deferred_.size(); ++taken) {
      DeferredDelete& d = deferred_[taken];
      bool done = true;
      for (const FenceRef& f : d.fences) {
        try {
          if (wait) {
            f->AwaitOnHost();
          } else if (!f->Done()) {
            done = false;
            break;
          }
        } catch (...) {
          // A device error: reported by the waits on the vars it reached.
        }
      }
      if (!done) break;
      ready.push_back(std::move(d));
    }
    deferred_.erase(deferred_.begin(), deferred_.begin() + taken);
    has_deferred_.store(!deferred_.empty(), std::memory_order_release);
  }
  for (DeferredDelete& d : ready) {
    try {
      d.fn(d.rctx);
    } catch (...) {
      RecordFailure(std::make_shared<ErrorState>(std::current_exception()));
    }
  }
}

void EngineBase::DrainDeviceWork() {
  std::exception_ptr first;
  for (const FenceRef& f : LatestFences()) {
    try {
      f->AwaitOnHost();
    } catch (...) {
      if (!first) first = std::current_exception();
    }
  }
  RunDeferredDeletes(/*wait=*/true);
  if (first) std::rethrow_exception(first);
}

}  // namespace engine
}  // namespace mx
