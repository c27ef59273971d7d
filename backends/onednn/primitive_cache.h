// A bounded, thread-safe cache of oneDNN primitives (and whatever a kernel
// keeps with them: descriptors of scratchpad and workspace memory), keyed
// by a string naming the op, shapes, dtypes and attributes. Creating a
// primitive costs tens of microseconds to milliseconds (JIT code
// generation); a training step reuses the same few dozen every iteration.
//
//   std::shared_ptr<const ConvPrims> p = CachedPrimitive<ConvPrims>(
//       key, [&] { return std::make_shared<ConvPrims>(...); });
#ifndef MXCORE_BACKENDS_ONEDNN_PRIMITIVE_CACHE_H_
#define MXCORE_BACKENDS_ONEDNN_PRIMITIVE_CACHE_H_

#include <cstddef>
#include <functional>
#include <list>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <utility>

#include "backends/onednn/dnnl_context.h"

namespace mx_onednn {

class PrimitiveCache {
 public:
  // Holds at most `capacity` entries (>= 1); the least recently used one
  // is dropped first (kernels running with it keep their shared_ptr).
  explicit PrimitiveCache(size_t capacity);

  // The process-wide cache; its capacity is MX_ONEDNN_CACHE_CAPACITY
  // (default 1024).
  static PrimitiveCache& Global();

  // The entry of `key`, created by `create` when absent. Keys must name
  // the entry's type (they start with the op). `create` runs without the
  // lock held, so two threads missing at once may both create; one wins.
  template <typename T, typename Create>
  std::shared_ptr<const T> GetOrCreate(const std::string& key,
                                       Create&& create) {
    if (std::shared_ptr<const void> hit = Find(key)) {
      return std::static_pointer_cast<const T>(hit);
    }
    std::shared_ptr<const T> made = create();
    return std::static_pointer_cast<const T>(Insert(key, made));
  }

  size_t size() const;
  size_t capacity() const { return capacity_; }
  // Counters since construction.
  size_t hits() const;
  size_t misses() const;

 private:
  using Entry = std::pair<std::string, std::shared_ptr<const void>>;
  std::shared_ptr<const void> Find(const std::string& key);
  // Returns the entry now cached under key (an earlier insert wins).
  std::shared_ptr<const void> Insert(const std::string& key,
                                     std::shared_ptr<const void> value);

  const size_t capacity_;
  mutable std::mutex mu_;
  std::list<Entry> lru_;  // Most recently used first.
  std::unordered_map<std::string, std::list<Entry>::iterator> index_;
  size_t hits_ = 0, misses_ = 0;
};

// The global cache's entry for `key` made for this thread's OpenMP team
// size (TeamSize()): oneDNN fixes some primitives' thread count when they
// are created, so one made for a small op run on the pushing thread (a team
// of 1) is not reused by a worker with more threads, nor the other way.
template <typename T, typename Create>
std::shared_ptr<const T> CachedPrimitive(const std::string& key,
                                         Create&& create) {
  return PrimitiveCache::Global().GetOrCreate<T>(
      key + "|threads=" + std::to_string(TeamSize()),
      std::forward<Create>(create));
}

}  // namespace mx_onednn

#endif  // MXCORE_BACKENDS_ONEDNN_PRIMITIVE_CACHE_H_
