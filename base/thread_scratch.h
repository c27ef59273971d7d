// Per-thread scratch objects for hot paths that would otherwise allocate
// on every call (vectors of arguments, shapes): a lease hands out this
// thread's object for the current nesting level, so a call made while
// another lease is held (an op invoking ops) gets its own.
//
//   struct Args {
//     std::vector<NDArray> in;
//     void Release() { in.clear(); }  // Called when the lease ends.
//   };
//   const ScratchLease<Args> args;
//   args->in.push_back(x);  // Capacity kept from the last call.
//
// T::Release() drops what must not outlive the call (references to
// arrays) and may trim capacity; the object itself is kept for reuse.
#ifndef MXCORE_BASE_THREAD_SCRATCH_H_
#define MXCORE_BASE_THREAD_SCRATCH_H_

#include <cstddef>
#include <memory>
#include <vector>

namespace mx {

template <typename T>
class ScratchLease {
 public:
  ScratchLease() {
    std::vector<std::unique_ptr<T>>& pool = Pool();
    if (depth_ == pool.size()) pool.push_back(std::make_unique<T>());
    object_ = pool[depth_++].get();
  }
  ~ScratchLease() {
    object_->Release();
    --depth_;
  }
  ScratchLease(const ScratchLease&) = delete;
  ScratchLease& operator=(const ScratchLease&) = delete;

  T& operator*() const { return *object_; }
  T* operator->() const { return object_; }

 private:
  static std::vector<std::unique_ptr<T>>& Pool() {
    static thread_local std::vector<std::unique_ptr<T>> pool;
    return pool;
  }
  static thread_local size_t depth_;
  T* object_;
};

template <typename T>
thread_local size_t ScratchLease<T>::depth_ = 0;

}  // namespace mx

#endif  // MXCORE_BASE_THREAD_SCRATCH_H_
