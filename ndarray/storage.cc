#include "ndarray/storage.h"

#include <algorithm>
#include <cstdlib>
#include <map>
#include <mutex>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "base/error.h"

namespace mx {
namespace {

class CPUAllocator final : public DeviceAllocator {
 public:
  void* Alloc(size_t bytes, int) override {
    void* p = std::aligned_alloc(64, (bytes + 63) / 64 * 64);
    if (p == nullptr) {
      throw RuntimeError(
          absl::StrCat("out of CPU memory allocating ", bytes, " bytes"));
    }
    return p;
  }
  void Free(void* ptr, size_t, int) override { std::free(ptr); }
};

}  // namespace

// One pool per context, each with its own lock.
class Storage::Impl {
 public:
  struct Pool {
    mutable std::mutex mu;
    absl::flat_hash_map<size_t, std::vector<void*>> free_blocks;
    Stats stats;
  };

  Pool* GetPool(Context ctx) {
    if (ctx == Context::CPU()) return &cpu_pool_;  // Most arrays: no lock.
    std::lock_guard<std::mutex> lock(mu_);
    std::unique_ptr<Pool>& pool = pools_[ctx];
    if (pool == nullptr) pool = std::make_unique<Pool>();
    return pool.get();
  }

  DeviceAllocator* GetAllocator(Context ctx) {
    const int type =
        ctx.dev_type == Context::kCPUPinned ? Context::kCPU : ctx.dev_type;
    if (type == Context::kCPU) return cpu_allocator_;
    std::lock_guard<std::mutex> lock(mu_);
    auto it = allocators_.find(type);
    if (it == allocators_.end()) {
      throw NotFound(
          absl::StrCat("no device plugin provides memory for ", ctx.ToString(),
                       "; load one with MX_PLUGINS or mx::LoadPlugin"));
    }
    return it->second.get();
  }

  std::mutex mu_;
  Pool cpu_pool_;  // Context::CPU(), outside `pools_`.
  std::map<Context, std::unique_ptr<Pool>> pools_;
  absl::flat_hash_map<int, std::unique_ptr<DeviceAllocator>> allocators_;
  DeviceAllocator* cpu_allocator_ = nullptr;  // Built in, never removed.
};

Storage::Storage() : impl_(std::make_unique<Impl>()) {
  auto cpu = std::make_unique<CPUAllocator>();
  impl_->cpu_allocator_ = cpu.get();
  impl_->allocators_[Context::kCPU] = std::move(cpu);
}

Storage::~Storage() = default;

Storage* Storage::Get() {
  // Never destroyed: arrays in static objects may free memory at exit.
  static Storage* storage = new Storage();
  return storage;
}

size_t Storage::RoundedSize(size_t bytes) {
  constexpr size_t kMinBlock = 64;
  constexpr size_t kLarge = size_t{1} << 20;
  if (bytes <= kMinBlock) return kMinBlock;
  if (bytes >= kLarge) return (bytes + kLarge - 1) / kLarge * kLarge;
  size_t size = kMinBlock;
  while (size < bytes) size <<= 1;
  return size;
}

StorageHandle Storage::Alloc(size_t bytes, Context ctx) {
  StorageHandle handle;
  handle.ctx = ctx;
  handle.size = bytes;
  if (bytes == 0) return handle;
  const size_t rounded = RoundedSize(bytes);
  Impl::Pool* pool = impl_->GetPool(ctx);
  {
    std::lock_guard<std::mutex> lock(pool->mu);
    auto it = pool->free_blocks.find(rounded);
    if (it != pool->free_blocks.end() && !it->second.empty()) {
      handle.dptr = it->second.back();
      it->second.pop_back();
      pool->stats.bytes_pooled -= rounded;
      pool->stats.num_reuses++;
      pool->stats.bytes_in_use += rounded;
      pool->stats.peak_bytes_in_use =
          std::max(pool->stats.peak_bytes_in_use, pool->stats.bytes_in_use);
      return handle;
    }
  }
  DeviceAllocator* alloc = impl_->GetAllocator(ctx);
  try {
    handle.dptr = alloc->Alloc(rounded, ctx.dev_id);
  } catch (const RuntimeError&) {
    // Out of memory: give the pool back to the device and try once more.
    ReleasePooled(ctx);
    handle.dptr = alloc->Alloc(rounded, ctx.dev_id);
  }
  std::lock_guard<std::mutex> lock(pool->mu);
  pool->stats.num_device_allocs++;
  pool->stats.bytes_in_use += rounded;
  pool->stats.peak_bytes_in_use =
      std::max(pool->stats.peak_bytes_in_use, pool->stats.bytes_in_use);
  return handle;
}

void Storage::Free(const StorageHandle& handle) {
  if (handle.dptr == nullptr) return;
  const size_t rounded = RoundedSize(handle.size);
  Impl::Pool* pool = impl_->GetPool(handle.ctx);
  std::lock_guard<std::mutex> lock(pool->mu);
  pool->free_blocks[rounded].push_back(handle.dptr);
  pool->stats.bytes_in_use -= rounded;
  pool->stats.bytes_pooled += rounded;
}

void Storage::ReleasePooled(Context ctx) {
  Impl::Pool* pool = impl_->GetPool(ctx);
  DeviceAllocator* alloc = impl_->GetAllocator(ctx);
  std::lock_guard<std::mutex> lock(pool->mu);
  for (auto& [size, blocks] : pool->free_blocks) {
    for (void* p : blocks) alloc->Free(p, size, ctx.dev_id);
  }
  pool->free_blocks.clear();
  pool->stats.bytes_pooled = 0;
}

Storage::Stats Storage::GetStats(Context ctx) const {
  Impl::Pool* pool = impl_->GetPool(ctx);
  std::lock_guard<std::mutex> lock(pool->mu);
  return pool->stats;
}

void Storage::ResetPeak(Context ctx) {
  Impl::Pool* pool = impl_->GetPool(ctx);
  std::lock_guard<std::mutex> lock(pool->mu);
  pool->stats.peak_bytes_in_use = pool->stats.bytes_in_use;
}

void Storage::RegisterDevice(int dev_type,
                             std::unique_ptr<DeviceAllocator> alloc) {
  if (dev_type == Context::kCPU || dev_type == Context::kCPUPinned) {
    throw AlreadyExists(
        "Storage::RegisterDevice: the host allocator is built in");
  }
  std::lock_guard<std::mutex> lock(impl_->mu_);
  if (!impl_->allocators_.emplace(dev_type, std::move(alloc)).second) {
    throw AlreadyExists(absl::StrCat("Storage::RegisterDevice: device type ",
                                     dev_type, " already has an allocator"));
  }
}

void Storage::UnregisterDevice(int dev_type) {
  if (dev_type == Context::kCPU || dev_type == Context::kCPUPinned) {
    throw InvalidArgument(
        "Storage::UnregisterDevice: the host allocator is built in");
  }
  std::lock_guard<std::mutex> lock(impl_->mu_);
  impl_->allocators_.erase(dev_type);
}

bool Storage::HasDevice(int dev_type) const {
  if (dev_type == Context::kCPU || dev_type == Context::kCPUPinned) {
    return true;  // Built in.
  }
  std::lock_guard<std::mutex> lock(impl_->mu_);
  return impl_->allocators_.contains(dev_type);
}

}  // namespace mx
