// Thread-caching pools for objects allocated on one thread and freed on
// another (engine op blocks and kernel launch records: the pusher
// allocates, a worker frees). glibc's malloc takes an arena lock on every
// such cross-thread free; here each thread keeps a free list and trades
// whole batches with a global list under one mutex, so the lock is taken
// once per kBatch objects.
//
//   Foo* f = ObjectPool<Foo>::New(args...);   // constructed each time
//   ObjectPool<Foo>::Delete(f);
//
//   struct Bar : RecyclingPool<Bar>::Node { std::vector<int> v; };
//   Bar* b = RecyclingPool<Bar>::Take();   // as its last user left it
//   b->v.clear();                          // (capacity kept)
//   RecyclingPool<Bar>::Return(b);
//
// Under AddressSanitizer the pools forward to new/delete so that use after
// free is still caught.
#ifndef MXCORE_BASE_OBJECT_POOL_H_
#define MXCORE_BASE_OBJECT_POOL_H_

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
namespace pool_internal {

// A free list of `Node`s (any default-constructible type with a
// `Node* pool_next` member), cached per thread. Nodes come in slabs of
// kBatch that are never freed (threads may exit after main).
template <typename Node>
class FreeList {
 public:
  static Node* Take() {
    if (local_gone_) return TakeShared();
    Local& local = local_;
    if (local.head == nullptr) local.Refill();
    Node* node = local.head;
    local.head = node->pool_next;
    --local.count;
    return node;
  }

  static void Put(Node* node) {
    if (local_gone_) {
      // This thread's cache is destroyed (a pooled object freed by another
      // thread_local's destructor, or at exit): straight to the shared list.
      Global& g = global();
      node->pool_next = nullptr;
      std::lock_guard<std::mutex> lock(g.mu);
      g.batches.push_back(Batch{node, 1});
      return;
    }
    Local& local = local_;
    node->pool_next = local.head;
    local.head = node;
    if (++local.count >= 2 * kBatch) local.GiveBack(kBatch);
  }

 private:
  static constexpr int kBatch = 64;

  struct Batch {
    Node* head;
    int count;
  };

  struct Global {
    std::mutex mu;
    std::vector<Batch> batches;
    std::vector<std::unique_ptr<Node[]>> slabs;
  };
  static Global& global() {
    static Global* g = new Global();
    return *g;
  }

  struct Local {
    Node* head = nullptr;
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
      g.slabs.emplace_back(new Node[kBatch]);
      Node* slab = g.slabs.back().get();
      for (int i = 0; i < kBatch; ++i) {
        slab[i].pool_next = i + 1 < kBatch ? &slab[i + 1] : nullptr;
      }
      head = slab;
      count = kBatch;
    }

    // Moves `n` nodes (or all, if fewer) to the global list.
    void GiveBack(int n) {
      if (head == nullptr) return;
      Node* first = head;
      Node* last = head;
      int taken = 1;
      while (taken < n && last->pool_next != nullptr) {
        last = last->pool_next;
        ++taken;
      }
      head = last->pool_next;
      last->pool_next = nullptr;
      count -= taken;
      Global& g = global();
      std::lock_guard<std::mutex> lock(g.mu);
      g.batches.push_back(Batch{first, taken});
    }

    ~Local() {
      while (head != nullptr) GiveBack(kBatch);
      local_gone_ = true;
    }
  };

  // One node from the shared list (or a new slab), for a thread whose cache
  // is destroyed.
  static Node* TakeShared() {
    Local spare;  // Refill's logic, then the rest goes back.
    spare.Refill();
    Node* node = spare.head;
    spare.head = node->pool_next;
    --spare.count;
    spare.GiveBack(kBatch);  // Restores the shared list; local_gone_ stays.
    return node;
  }

  static thread_local Local local_;
  // Set when this thread's local_ is destroyed; trivially destructible, so
  // readable until the thread ends.
  static thread_local bool local_gone_;
};

template <typename Node>
thread_local typename FreeList<Node>::Local FreeList<Node>::local_;
template <typename Node>
thread_local bool FreeList<Node>::local_gone_ = false;

}  // namespace pool_internal

// Objects constructed by New and destroyed by Delete, in pooled memory.
template <typename T>
class ObjectPool {
 public:
  template <typename... Args>
  static T* New(Args&&... args) {
#ifdef MXCORE_OBJECT_POOL_DISABLED
    return new T(std::forward<Args>(args)...);
#else
    Slot* slot = pool_internal::FreeList<Slot>::Take();
    if constexpr (sizeof...(Args) == 0) {
      // Default-initialized: value-initialization would zero the whole
      // object first (for a PoolAllocator block, hundreds of bytes).
      return new (slot->storage) T;
    } else {
      return new (slot->storage) T(std::forward<Args>(args)...);
    }
#endif
  }

  static void Delete(T* object) {
#ifdef MXCORE_OBJECT_POOL_DISABLED
    delete object;
#else
    object->~T();
    pool_internal::FreeList<Slot>::Put(reinterpret_cast<Slot*>(object));
#endif
  }

 private:
  union Slot {
    Slot* pool_next;
    alignas(T) unsigned char storage[sizeof(T)];
  };
};

// Objects that stay constructed between uses, so that what they own (a
// vector's capacity) is reused: T derives from RecyclingPool<T>::Node and
// is default-constructible; Take returns it as the last Return left it.
template <typename T>
class RecyclingPool {
 public:
  struct Node {
    T* pool_next = nullptr;
  };

  static T* Take() {
#ifdef MXCORE_OBJECT_POOL_DISABLED
    return new T();
#else
    return pool_internal::FreeList<T>::Take();
#endif
  }

  static void Return(T* object) {
#ifdef MXCORE_OBJECT_POOL_DISABLED
    delete object;
#else
    pool_internal::FreeList<T>::Put(object);
#endif
  }
};

// A standard allocator taking single objects from a pool (larger requests
// go to operator new): std::allocate_shared<T>(PoolAllocator<T>()) puts the
// object and its reference count in one pooled block.
template <typename T>
class PoolAllocator {
 public:
  using value_type = T;
  PoolAllocator() = default;
  template <typename U>
  PoolAllocator(const PoolAllocator<U>&) {}  // NOLINT: rebinding

  T* allocate(size_t n) {
    if (n != 1) return static_cast<T*>(::operator new(n * sizeof(T)));
    return reinterpret_cast<T*>(ObjectPool<Raw>::New());
  }
  void deallocate(T* p, size_t n) {
    if (n != 1) return ::operator delete(p);
    ObjectPool<Raw>::Delete(reinterpret_cast<Raw*>(p));
  }
  template <typename U>
  bool operator==(const PoolAllocator<U>&) const {
    return true;
  }
  template <typename U>
  bool operator!=(const PoolAllocator<U>&) const {
    return false;
  }

 private:
  // Uninitialized memory for one T.
  struct Raw {
    alignas(T) unsigned char bytes[sizeof(T)];
  };
};

}  // namespace mx

#endif  // MXCORE_BASE_OBJECT_POOL_H_
