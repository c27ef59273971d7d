#include "backends/onednn/primitive_cache.h"

#include <algorithm>
#include <cstdlib>

#include "backends/common/attr_parse.h"

namespace mx_onednn {

PrimitiveCache::PrimitiveCache(size_t capacity)
    : capacity_(std::max<size_t>(1, capacity)) {}

PrimitiveCache& PrimitiveCache::Global() {
  static PrimitiveCache* cache = [] {
    size_t capacity = 1024;
    if (const char* env = std::getenv("MX_ONEDNN_CACHE_CAPACITY")) {
      const std::optional<int64_t> v = mxplugin::ParseInt(env);
      // A bad value keeps the default: the plugin has no way to report a
      // configuration error before a kernel runs.
      if (v && *v >= 1) capacity = static_cast<size_t>(*v);
    }
    return new PrimitiveCache(capacity);
  }();
  return *cache;
}

std::shared_ptr<const void> PrimitiveCache::Find(const std::string& key) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = index_.find(key);
  if (it == index_.end()) {
    ++misses_;
    return nullptr;
  }
  ++hits_;
  lru_.splice(lru_.begin(), lru_, it->second);
  return it->second->second;
}

std::shared_ptr<const void> PrimitiveCache::Insert(
    const std::string& key, std::shared_ptr<const void> value) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = index_.find(key);
  if (it != index_.end()) {
    lru_.splice(lru_.begin(), lru_, it->second);
    return it->second->second;
  }
  lru_.emplace_front(key, std::move(value));
  index_[key] = lru_.begin();
  while (lru_.size() > capacity_) {
    index_.erase(lru_.back().first);
    lru_.pop_back();
  }
  return lru_.front().second;
}

size_t PrimitiveCache::size() const {
  std::lock_guard<std::mutex> lock(mu_);
  return lru_.size();
}

size_t PrimitiveCache::hits() const {
  std::lock_guard<std::mutex> lock(mu_);
  return hits_;
}

size_t PrimitiveCache::misses() const {
  std::lock_guard<std::mutex> lock(mu_);
  return misses_;
}

}  // namespace mx_onednn
