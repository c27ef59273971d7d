// Internal: a fixed set of worker threads draining one priority queue of
// ready operations (highest priority first, FIFO among equals).
#ifndef MXCORE_ENGINE_WORKER_POOL_H_
#define MXCORE_ENGINE_WORKER_POOL_H_

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <queue>
#include <string>
#include <thread>
#include <vector>

#include "engine/engine_impl.h"

namespace mx {
namespace engine {

class WorkerPool {
 public:
  using RunFn = std::function<void(OprBlock*)>;

  // `run` executes one ready block on a worker thread. (Device pools will
  // give each worker its own stream here when device plugins arrive.)
  WorkerPool(int num_threads, RunFn run);
  // Stops the workers. REQUIRES: the queue is empty (the engine waited).
  ~WorkerPool();

  WorkerPool(const WorkerPool&) = delete;
  WorkerPool& operator=(const WorkerPool&) = delete;

  // Queues a ready block. Called from one of this pool's own workers, the
  // block is handed to that worker to run next, skipping the queue: a chain
  // of dependent ops then runs on one thread without wake-ups.
  void Push(OprBlock* block);

  // When every worker is asleep and nothing is queued, wakes one worker to
  // spin for work that is about to come, and returns true: the caller runs
  // the block at hand itself rather than wait for a wake-up. Otherwise
  // returns false. A hint: a worker may fall asleep right after the check.
  bool WakeOneIfAllAsleep();

 private:
  struct Item {
    int priority;
    uint64_t seq;
    OprBlock* block;
    bool operator<(const Item& o) const {
      return priority != o.priority ? priority < o.priority : seq > o.seq;
    }
  };

  void Loop();
  // Spins briefly for work before a worker sleeps: waking a sleeping thread
  // costs microseconds, more than most small ops take to run.
  bool SpinForWork() const;

  RunFn run_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::priority_queue<Item> queue_;
  std::atomic<int> queued_{0};    // queue_.size(), readable without mu_.
  std::atomic<int> sleepers_{0};  // Workers blocked on cv_.
  uint64_t next_seq_ = 0;
  bool stop_ = false;
  bool woken_ = false;  // WakeOneIfAllAsleep: one sleeper is to spin.
  int num_threads_;
  std::vector<std::thread> threads_;
};

}  // namespace engine
}  // namespace mx

#endif  // MXCORE_ENGINE_WORKER_POOL_H_
