// Internal to the engine: fences, the events a device operation leaves on
// its vars when it completes before its device work has (see
// DeviceStreamOps in engine.h).
//
//   FenceRef f = RecordFence(ctx, stream, "Convolution");  // null: no events
//   ...
//   AwaitOnStream(*f, other_ctx, other_stream);  // GPU-side wait
//   AwaitOnHost(*f);                             // throws the device's error
#ifndef MXCORE_ENGINE_DEVICE_FENCE_H_
#define MXCORE_ENGINE_DEVICE_FENCE_H_

#include <atomic>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "base/context.h"

namespace mx {
namespace engine {

struct DeviceStreamOps;

// The point `stream` of `ctx` reached after operation `op`.
class DeviceFence {
 public:
  DeviceFence(Context ctx, void* stream, void* event, std::string op,
              std::shared_ptr<const DeviceStreamOps> ops);
  ~DeviceFence();
  DeviceFence(const DeviceFence&) = delete;
  DeviceFence& operator=(const DeviceFence&) = delete;

  Context ctx() const { return ctx_; }
  void* stream() const { return stream_; }
  // Whether the work is done; a device error is a RuntimeError naming the
  // operation.
  bool Done() const;
  // Blocks until the work is done (same errors).
  void AwaitOnHost() const;
  // Makes later work on (ctx, stream), a stream of the same device type,
  // wait for this fence on the device.
  void AwaitOnStream(Context ctx, void* stream) const;

 private:
  const Context ctx_;
  void* const stream_;
  void* const event_;
  const std::string op_;
  const std::shared_ptr<const DeviceStreamOps> ops_;
  mutable std::atomic<bool> done_{false};
};
using FenceRef = std::shared_ptr<const DeviceFence>;

// Whether ops of ctx's device type can complete before their work (the
// device has events and MX_ENGINE_SYNC_DEVICE_OPS is not 1).
bool HasDeviceEvents(Context ctx);

// Whether any fence was ever recorded (in this process): until then no var
// carries one, and operations skip looking (CPU-only programs pay
// nothing).
bool AnyFenceRecorded();

// A fence after the work queued so far on `stream`; null when the device
// has no events. Throws the device's error.
FenceRef RecordFence(Context ctx, void* stream, std::string_view op);

// The latest fence recorded on every stream, for WaitForAll.
std::vector<FenceRef> LatestFences();

// Whether a pushing thread may launch ctx's operations: the device has
// events (HasDeviceEvents) and allows launches on any thread
// (DeviceStreamOps::launch_on_any_thread).
bool LaunchesOnAnyThread(Context ctx);

// A stream of `ctx` lent to a pushing thread for one launch (see
// EngineOptions::launch_device_ops_on_pusher), from a small pool per device
// that lends each stream to one thread at a time and keeps it while the
// device type is registered (fences name streams by address), so that a
// pusher's launch leaves nothing behind with its thread. stream() is null
// when none can be lent (all lent, or the device failed to make one): the
// operation then goes to the workers. The destructor gives it back.
class LentStream {
 public:
  explicit LentStream(Context ctx);
  ~LentStream();
  LentStream(const LentStream&) = delete;
  LentStream& operator=(const LentStream&) = delete;
  void* stream() const { return stream_; }

 private:
  const Context ctx_;
  void* stream_ = nullptr;
  std::shared_ptr<const DeviceStreamOps> ops_;
};

}  // namespace engine
}  // namespace mx

#endif  // MXCORE_ENGINE_DEVICE_FENCE_H_
