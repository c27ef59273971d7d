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

// Frees `v`'s memory when its capacity exceeds `keep`, so that one call of
// huge arity does not pin memory in an object kept for reuse (a scratch
// object, a pooled record). The contents go too.
template <typename T>
void DropCapacityAbove(size_t keep, std::vector<T>* v) {
  if (v->capacity() > keep) std::vector<T>().swap(*v);
}

template <typename T>
class ScratchLease {
 public:
  ScratchLease() {
    if (pool_gone_) {  // During this thread's exit: a one-off object.
      owned_ = std::make_unique<T>();
      object_ = owned_.get();
      return;
    }
    std::vector<std::unique_ptr<T>>& pool = pool_.objects;
    if (depth_ == pool.size()) pool.push_back(std::make_unique<T>());
    object_ = pool[depth_++].get();
  }
  ~ScratchLease() {
    object_->Release();
    if (owned_ == nullptr) --depth_;
  }
  ScratchLease(const ScratchLease&) = delete;
  ScratchLease& operator=(const ScratchLease&) = delete;

  T& operator*() const { return *object_; }
  T* operator->() const { return object_; }

 private:
  struct Pool {
    std::vector<std::unique_ptr<T>> objects;
    ~Pool() { pool_gone_ = true; }
  };
  static thread_local Pool pool_;
  static thread_local size_t depth_;
  // Set when pool_ is destroyed; trivially destructible, so readable until
  // the thread ends (a lease taken by another thread_local's destructor).
  static thread_local bool pool_gone_;
  T* object_;
  std::unique_ptr<T> owned_;
};

template <typename T>
thread_local typename ScratchLease<T>::Pool ScratchLease<T>::pool_;
template <typename T>
thread_local size_t ScratchLease<T>::depth_ = 0;
template <typename T>
thread_local bool ScratchLease<T>::pool_gone_ = false;

}  // namespace mx

#endif  // MXCORE_BASE_THREAD_SCRATCH_H_
