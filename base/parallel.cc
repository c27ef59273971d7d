#include "base/parallel.h"

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <deque>
#include <exception>
#include <mutex>
#include <thread>
#include <vector>

#include "base/env.h"
#include "base/float_mode.h"

namespace mx {
namespace {

// One ParallelFor call: chunks are claimed through `next`, by the calling
// thread and by pool workers alike, so a caller never waits for a chunk
// nobody took.
struct Batch {
  explicit Batch(absl::FunctionRef<void(int64_t, int64_t)> f) : fn(f) {}
  absl::FunctionRef<void(int64_t, int64_t)> fn;
  int64_t n, step, chunks;
  // The caller's float mode (denormal handling), which helper threads
  // take on: a chunk computes as the caller would.
  uint32_t float_mode = ThreadFloatMode();
  std::atomic<int64_t> next{0};
  int users = 0;  // Pool workers inside RunChunks; guarded by the pool mutex.
  // The first exception a chunk threw (say, std::bad_alloc inside a GEMM),
  // rethrown to the caller once every chunk is done.
  std::mutex error_mu;
  std::exception_ptr error;
};

// Chunk c of `b`; the first exception is kept for the caller.
void RunChunk(Batch* b, int64_t c) {
  const int64_t begin = c * b->step, end = std::min(b->n, begin + b->step);
  if (begin >= end) return;
  try {
    b->fn(begin, end);
  } catch (...) {
    std::lock_guard<std::mutex> lock(b->error_mu);
    if (!b->error) b->error = std::current_exception();
  }
}

void RunChunks(Batch* b) {
  for (int64_t c = b->next.fetch_add(1, std::memory_order_relaxed);
       c < b->chunks; c = b->next.fetch_add(1, std::memory_order_relaxed)) {
    RunChunk(b, c);
  }
}

// KernelThreads() - 1 threads started once, on the first parallel loop,
// and kept for the life of the process (never joined: the pool is never
// destroyed, so no thread outlives the objects it uses). Callers from any
// thread (engine workers, nested loops inside a chunk) may run at once.
class KernelPool {
 public:
  explicit KernelPool(int workers) {
    for (int i = 0; i < workers; ++i) {
      std::thread([this] { WorkerLoop(); }).detach();
    }
  }

  void Run(Batch* b) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      queue_.push_back(b);
    }
    work_cv_.notify_all();
    RunChunks(b);  // Every chunk is claimed when this returns.
    std::unique_lock<std::mutex> lock(mu_);
    Remove(b);
    // Workers holding `b` finish their chunks; `b` lives on our stack.
    done_cv_.wait(lock, [b] { return b->users == 0; });
  }

 private:
  void Remove(Batch* b) {
    auto it = std::find(queue_.begin(), queue_.end(), b);
    if (it != queue_.end()) queue_.erase(it);
  }

  void WorkerLoop() {
    std::unique_lock<std::mutex> lock(mu_);
    for (;;) {
      work_cv_.wait(lock, [this] { return !queue_.empty(); });
      Batch* b = queue_.front();
      ++b->users;
      lock.unlock();
      SetThreadFloatMode(b->float_mode);
      RunChunks(b);
      lock.lock();
      Remove(b);  // All of its chunks are claimed.
      if (--b->users == 0) done_cv_.notify_all();
    }
  }

  std::mutex mu_;
  std::condition_variable work_cv_, done_cv_;
  std::deque<Batch*> queue_;
};

struct Runner {
  ChunkRunner run;
  void* user_data;
};
std::atomic<const Runner*> chunk_runner{nullptr};

// Chunks [begin, end) of `b` on a chunk runner's thread.
// The runner's threads are its own (or the caller), so they keep the mode.
void RunChunkRange(void* arg, int64_t begin, int64_t end) {
  Batch* b = static_cast<Batch*>(arg);
  SetThreadFloatMode(b->float_mode);
  for (int64_t c = begin; c < end; ++c) RunChunk(b, c);
}

KernelPool& Pool() {
  static KernelPool* pool = new KernelPool(KernelThreads() - 1);
  return *pool;
}

}  // namespace

bool SetChunkRunner(ChunkRunner runner, void* user_data) {
  if (runner == nullptr) return false;
  auto* r = new Runner{runner, user_data};  // Kept for the process's life.
  const Runner* none = nullptr;
  if (chunk_runner.compare_exchange_strong(none, r,
                                           std::memory_order_acq_rel)) {
    return true;
  }
  delete r;
  return false;
}

int KernelThreads() {
  static const int kThreads =
      static_cast<int>(env::GetInt("MX_CPU_KERNEL_NTHREADS", 1, 1, 256));
  return kThreads;
}

namespace {
thread_local int tls_thread_limit = 0;  // 0: no ScopedKernelThreads.
}  // namespace

int KernelThreadsHere() {
  const int all = KernelThreads();
  return tls_thread_limit > 0 ? std::min(all, tls_thread_limit) : all;
}

ScopedKernelThreads::ScopedKernelThreads(int n) : saved_(tls_thread_limit) {
  n = std::max(1, n);
  tls_thread_limit = saved_ > 0 ? std::min(saved_, n) : n;
}

ScopedKernelThreads::~ScopedKernelThreads() { tls_thread_limit = saved_; }

void ParallelFor(int64_t n, int64_t min_chunk,
                 absl::FunctionRef<void(int64_t, int64_t)> fn) {
  const int64_t chunks = std::min<int64_t>(
      KernelThreadsHere(),
      std::max<int64_t>(1, n / std::max<int64_t>(1, min_chunk)));
  if (chunks <= 1) {
    if (n > 0) fn(0, n);
    return;
  }
  Batch batch(fn);
  batch.n = n;
  batch.step = (n + chunks - 1) / chunks;
  batch.chunks = chunks;
  if (const Runner* r = chunk_runner.load(std::memory_order_acquire)) {
    r->run(r->user_data, chunks, RunChunkRange, &batch);
  } else {
    Pool().Run(&batch);
  }
  if (batch.error) std::rethrow_exception(batch.error);
}

}  // namespace mx
