// Internal: a thread-caching pool for objects allocated on one thread and
// freed on another (engine op blocks: the pusher allocates, a worker frees).
// glibc's malloc takes an arena lock on every such cross-thread free; here
// each thread keeps a free list and trades whole batches with a global list
// under one mutex, so the lock is taken once per kBatch objects.
//
//   Foo* f = ObjectPool<Foo>::New(args...);
//   ObjectPool<Foo>::Delete(f);
//
// Under AddressSanitizer the pool forwards to new/delete so that use after
// free is still caught.
#ifndef MXCORE_ENGINE_OBJECT_POOL_H_
#define MXCORE_ENGINE_OBJECT_POOL_H_

#include <cstddef>
#include <memory>
#include <mutex>
#include <new>
#include <utility>
#include <vector>

#if defined(__SANITIZE_ADDRESS__)
#define MXCORE_OBJECT_POOL_DISABLED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define MXCORE_OBJECT_POOL_DISABLED 1
#endif
#endif

namespace mx {
namespace engine {

template <typename T>
class ObjectPool {
 public:
  template <typename... Args>
  static T* New(Args&&... args) {
#ifdef MXCORE_OBJECT_POOL_DISABLED
    return new T(std::forward<Args>(args)...);
#else
    Local& local = local_;
    if (local.head == nullptr) local.Refill();
    Slot* slot = local.head;
    local.head = slot->next;
    --local.count;
    return new (slot->storage) T(std::forward<Args>(args)...);
#endif
  }

  static void Delete(T* object) {
#ifdef MXCORE_OBJECT_POOL_DISABLED
    delete object;
#else
    object->~T();
    Slot* slot = reinterpret_cast<Slot*>(object);
    Local& local = local_;
    slot->next = local.head;
    local.head = slot;
    if (++local.count >= 2 * kBatch) local.GiveBack(kBatch);
#endif
  }

 private:
  static constexpr int kBatch = 64;

  union Slot {
    Slot* next;
    alignas(T) unsigned char storage[sizeof(T)];
  };

  struct Batch {
    Slot* head;
    int count;
  };

  // Shared by all threads; never destroyed (threads may exit after main).
  struct Global {
    std::mutex mu;
    std::vector<Batch> batches;
    std::vector<std::unique_ptr<Slot[]>> slabs;
  };
  static Global& global() {
    static Global* g = new Global();
    return *g;
  }

  struct Local {
    Slot* head = nullptr;
    int count = 0;

    void Refill() {
      Global& g = global();
      std::lock_guard<std::mutex> lock(g.mu);
      if (!g.batches.empty()) {
        head = g.batches.back().head;
        count = g.batches.back().count;
        g.batches.pop_back();
        return;
      }
      g.slabs.emplace_back(new Slot[kBatch]);
      Slot* slab = g.slabs.back().get();
      for (int i = 0; i < kBatch; ++i) {
        slab[i].next = i + 1 < kBatch ? &slab[i + 1] : nullptr;
      }
      head = slab;
      count = kBatch;
    }

    // Moves `n` slots (or all, if fewer) to the global list.
    void GiveBack(int n) {
      if (head == nullptr) return;
      Slot* first = head;
      Slot* last = head;
      int taken = 1;
      while (taken < n && last->next != nullptr) {
        last = last->next;
        ++taken;
      }
      head = last->next;
      last->next = nullptr;
      count -= taken;
      Global& g = global();
      std::lock_guard<std::mutex> lock(g.mu);
      g.batches.push_back(Batch{first, taken});
    }

    ~Local() {
      while (head != nullptr) GiveBack(kBatch);
    }
  };

  static thread_local Local local_;
};

template <typename T>
thread_local typename ObjectPool<T>::Local ObjectPool<T>::local_;

}  // namespace engine
}  // namespace mx

#endif  // MXCORE_ENGINE_OBJECT_POOL_H_
