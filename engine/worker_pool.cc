#include "engine/worker_pool.h"

namespace mx {
namespace engine {
namespace {

// The pool whose worker this thread is, and the block it runs next.
thread_local WorkerPool* tls_pool = nullptr;
thread_local OprBlock* tls_next = nullptr;

}  // namespace

WorkerPool::WorkerPool(int num_threads, RunFn run) : run_(std::move(run)) {
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
  }
  cv_.notify_one();
}

void WorkerPool::Loop() {
  tls_pool = this;
  while (true) {
    OprBlock* block;
    {
      std::unique_lock<std::mutex> lock(mu_);
      cv_.wait(lock, [this] { return stop_ || !queue_.empty(); });
      if (queue_.empty()) break;  // Stopping and drained.
      block = queue_.top().block;
      queue_.pop();
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
