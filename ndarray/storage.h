// Storage: device memory for arrays, pooled per context.
//
// Freed blocks are kept in size classes and handed out again, so a training
// loop that allocates the same shapes every step stops calling the system
// allocator after the first step. CPU memory is built in; device plugins
// register an allocator for their device type.
//
//   mx::StorageHandle h = mx::Storage::Get()->Alloc(1024, mx::Context::CPU());
//   mx::Storage::Get()->Free(h);            // back to the pool
//   auto stats = mx::Storage::Get()->GetStats(mx::Context::CPU());
#ifndef MXCORE_NDARRAY_STORAGE_H_
#define MXCORE_NDARRAY_STORAGE_H_

#include <cstddef>
#include <cstdint>
#include <memory>

#include "base/context.h"

namespace mx {

struct StorageHandle {
  void* dptr = nullptr;
  size_t size = 0;  // Bytes requested.
  Context ctx;
};

// Raw memory of one device type. Implementations must be thread-safe.
class DeviceAllocator {
 public:
  virtual ~DeviceAllocator() = default;
  // Returns memory aligned to at least 64 bytes; throws RuntimeError.
  virtual void* Alloc(size_t bytes, int dev_id) = 0;
  virtual void Free(void* ptr, size_t bytes, int dev_id) = 0;
};

class Storage {
 public:
  struct Stats {
    size_t bytes_in_use = 0;        // Handed out and not freed.
    size_t peak_bytes_in_use = 0;   // Maximum of bytes_in_use.
    size_t bytes_pooled = 0;        // Freed, kept for reuse.
    int64_t num_device_allocs = 0;  // Calls that reached the device allocator.
    int64_t num_reuses = 0;         // Allocations served from the pool.
  };

  static Storage* Get();

  // Zero bytes gives a null pointer. Throws NotFound when no allocator
  // serves ctx's device type.
  StorageHandle Alloc(size_t bytes, Context ctx);
  void Free(const StorageHandle& handle);
  // Returns every pooled block of `ctx` to its device.
  void ReleasePooled(Context ctx);
  Stats GetStats(Context ctx) const;
  void ResetPeak(Context ctx);

  // Device plugins call this once per device type; a second registration
  // for the same type is an AlreadyExists error.
  void RegisterDevice(int dev_type, std::unique_ptr<DeviceAllocator> alloc);
  // Undoes RegisterDevice (a failed plugin load, before any allocation).
  // The host allocator is built in: InvalidArgument for the CPU types.
  void UnregisterDevice(int dev_type);
  bool HasDevice(int dev_type) const;

  // The size class a request of `bytes` is served from.
  static size_t RoundedSize(size_t bytes);

  Storage(const Storage&) = delete;
  Storage& operator=(const Storage&) = delete;
  ~Storage();

 private:
  Storage();
  class Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace mx

#endif  // MXCORE_NDARRAY_STORAGE_H_
