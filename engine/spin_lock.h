// Internal: a test-and-test-and-set spin lock for critical sections of a few
// instructions (a var's wait queue). Pushers and workers contend on vars;
// std::mutex would put the loser to sleep through a futex, costing more than
// the critical section. Yields after a short spin so that an oversubscribed
// machine still makes progress.
#ifndef MXCORE_ENGINE_SPIN_LOCK_H_
#define MXCORE_ENGINE_SPIN_LOCK_H_

#include <atomic>
#include <thread>

namespace mx {
namespace engine {

inline void CpuRelax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#else
  std::this_thread::yield();
#endif
}

class SpinLock {
 public:
  void lock() {
    for (int spins = 0;; ++spins) {
      if (!locked_.exchange(true, std::memory_order_acquire)) return;
      while (locked_.load(std::memory_order_relaxed)) {
        if (spins++ < 64) {
          CpuRelax();
        } else {
          std::this_thread::yield();
        }
      }
    }
  }
  void unlock() { locked_.store(false, std::memory_order_release); }

 private:
  std::atomic<bool> locked_{false};
};

}  // namespace engine
}  // namespace mx

#endif  // MXCORE_ENGINE_SPIN_LOCK_H_
