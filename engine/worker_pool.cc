#include "engine/worker_pool.h"

#include "base/float_mode.h"
#include "engine/spin_lock.h"

namespace mx {
namespace engine {
namespace {

// The pool whose worker this thread is, and the block it runs next.
thread_local WorkerPool* tls_pool = nullptr;
thread_local OprBlock* tls_next = nullptr;

// Polling before sleeping: a few microseconds of pause, then yields, which
// hand the core to a pusher when threads outnumber cores.
constexpr int kPauseSpins = 256;
constexpr int kYieldSpins = 64;

}  // namespace

WorkerPool::WorkerPool(int num_threads, RunFn run)
    : run_(std::move(run)), num_threads_(num_threads) {
  threads_.reserve(num_threads);
  for (int i = 0; i < num_threads; ++i) {
    threads_.emplace_back([this] { Loop(); });
  }
}

WorkerPool::~WorkerPool() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  for (std::thread& t : threads_) t.join();
}

void WorkerPool::Push(OprBlock* block) {
  if (tls_pool == this && tls_next == nullptr) {
    tls_next = block;
    return;
  }
  {
    std::lock_guard<std::mutex> lock(mu_);
    queue_.push(Item{block->priority, next_seq_++, block});
    queued_.fetch_add(1, std::memory_order_release);
  }
  // A worker that went to sleep did so under mu_, so it is counted here.
  if (sleepers_.load(std::memory_order_acquire) > 0) cv_.notify_one();
}

bool WorkerPool::WakeOneIfAllAsleep() {
  if (sleepers_.load(std::memory_order_acquire) < num_threads_ ||
      queued_.load(std::memory_order_acquire) > 0) {
    return false;
  }
  bool wake;
  {
    std::lock_guard<std::mutex> lock(mu_);
    wake = !woken_;  // Else a worker is waking already.
    woken_ = true;
  }
  if (wake) cv_.notify_one();
  return true;
}

bool WorkerPool::SpinForWork() const {
  for (int i = 0; i < kPauseSpins + kYieldSpins; ++i) {
    if (queued_.load(std::memory_order_acquire) > 0) return true;
    if (i < kPauseSpins) {
      CpuRelax();
    } else {
      std::this_thread::yield();
    }
  }
  return false;
}

void WorkerPool::Loop() {
  tls_pool = this;
  CpuFloatModeScope::MarkRuntimeThread();  // Runs nothing but operations.
  while (true) {
    OprBlock* block;
    SpinForWork();
    {
      std::unique_lock<std::mutex> lock(mu_);
      if (!stop_ && queue_.empty()) {
        sleepers_.fetch_add(1, std::memory_order_acq_rel);
        cv_.wait(lock, [this] { return stop_ || !queue_.empty() || woken_; });
        sleepers_.fetch_sub(1, std::memory_order_acq_rel);
        woken_ = false;
      }
      if (queue_.empty()) {
        if (stop_) break;  // Stopping and drained.
        continue;          // Woken to spin for the work that follows.
      }
      block = queue_.top().block;
      queue_.pop();
      queued_.fetch_sub(1, std::memory_order_release);
    }
    while (block != nullptr) {
      run_(block);
      block = tls_next;
      tls_next = nullptr;
    }
  }
  tls_pool = nullptr;
}

}  // namespace engine
}  // namespace mx
