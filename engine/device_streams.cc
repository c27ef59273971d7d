// Per-thread device streams (see DeviceStreamOps in engine.h).
#include <atomic>
#include <map>
#include <memory>
#include <mutex>
#include <thread>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "base/env.h"
#include "base/error.h"
#include "engine/device_fence.h"
#include "engine/engine.h"

namespace mx {
namespace engine {
namespace {

std::mutex& Mu() {
  static auto* mu = new std::mutex();
  return *mu;
}

// Leaked: streams of threads that outlive static destruction still need it.
std::map<int, std::shared_ptr<const DeviceStreamOps>>& Registry() {
  static auto* registry =
      new std::map<int, std::shared_ptr<const DeviceStreamOps>>();
  return *registry;
}

std::shared_ptr<const DeviceStreamOps> Find(int dev_type) {
  std::lock_guard<std::mutex> lock(Mu());
  auto it = Registry().find(dev_type);
  return it == Registry().end() ? nullptr : it->second;
}

// The streams one thread created; destroyed when the thread ends.
class ThreadStreams {
 public:
  ~ThreadStreams() {
    for (auto& [ctx, entry] : streams_) {
      try {
        entry.ops->destroy(ctx.dev_id, entry.stream);
      } catch (...) {
        // A thread's end has nobody to report to; the stream is gone anyway.
      }
    }
  }
  void* Get(Context ctx) {
    auto it = streams_.find(ctx);
    if (it != streams_.end()) return it->second.stream;
    std::shared_ptr<const DeviceStreamOps> ops = Find(ctx.dev_type);
    if (ops == nullptr) return nullptr;
    void* stream = ops->create(ctx.dev_id);
    streams_.emplace(ctx, Entry{std::move(ops), stream});
    return stream;
  }

 private:
  struct Entry {
    std::shared_ptr<const DeviceStreamOps> ops;
    void* stream;
  };
  std::map<Context, Entry> streams_;
};

}  // namespace

void RegisterDeviceStreams(int dev_type, DeviceStreamOps ops) {
  std::lock_guard<std::mutex> lock(Mu());
  auto ptr = std::make_shared<const DeviceStreamOps>(std::move(ops));
  if (!Registry().emplace(dev_type, std::move(ptr)).second) {
    throw AlreadyExists(absl::StrCat("RegisterDeviceStreams: device type ",
                                     dev_type, " already has streams"));
  }
}

namespace {

// Streams lent to pushing threads that launch device operations, per
// device: a stream serves one launch at a time and then goes back. At most
// kMaxLaunchStreams per device exist (each may carry a plugin's handles and
// scratch memory; a launch finding none free goes to the workers), and
// they live until their device type is unregistered: a fence names its
// stream by address, which another stream must not take over while a fence
// may name it.
constexpr int kMaxLaunchStreams = 2;
struct LaunchStreams {
  struct Device {
    std::shared_ptr<const DeviceStreamOps> ops;  // The registration's.
    std::vector<void*> idle;
    int lent = 0;
  };
  std::mutex mu;
  std::map<Context, Device> devices;
};

LaunchStreams& Launch() {
  static auto* pool = new LaunchStreams();  // Leaked, as the registry.
  return *pool;
}

void DestroyStreams(const DeviceStreamOps& ops,
                    const std::vector<std::pair<int, void*>>& streams) {
  for (const auto& [dev_id, stream] : streams) {
    try {
      ops.destroy(dev_id, stream);
    } catch (...) {
      // Gone with its device; nothing to report to.
    }
  }
}

}  // namespace

void UnregisterDeviceStreams(int dev_type) {
  std::shared_ptr<const DeviceStreamOps> ops;
  {
    std::lock_guard<std::mutex> lock(Mu());
    auto it = Registry().find(dev_type);
    if (it == Registry().end()) return;
    ops = std::move(it->second);
    Registry().erase(it);
  }
  // Idle launch streams go now; lent ones when given back (their device
  // entry is gone, so they are not pooled again).
  std::vector<std::pair<int, void*>> streams;
  {
    std::lock_guard<std::mutex> lock(Launch().mu);
    auto& devices = Launch().devices;
    for (auto it = devices.begin(); it != devices.end();) {
      if (it->first.dev_type != dev_type) {
        ++it;
        continue;
      }
      for (void* s : it->second.idle) streams.emplace_back(it->first.dev_id, s);
      it = devices.erase(it);
    }
  }
  DestroyStreams(*ops, streams);
}

void* ThreadStream(Context ctx) {
  if (ctx.is_host()) return nullptr;
  thread_local ThreadStreams streams;
  return streams.Get(ctx);
}

LentStream::LentStream(Context ctx) : ctx_(ctx) {
  if (ctx.is_host()) return;
  std::shared_ptr<const DeviceStreamOps> ops = Find(ctx.dev_type);
  if (ops == nullptr) return;
  std::vector<std::pair<int, void*>> stale;
  std::shared_ptr<const DeviceStreamOps> stale_ops;
  bool create = false;
  {
    std::lock_guard<std::mutex> lock(Launch().mu);
    LaunchStreams::Device& d = Launch().devices[ctx];
    if (d.ops != ops) {  // The device type was registered anew.
      for (void* s : d.idle) stale.emplace_back(ctx.dev_id, s);
      stale_ops = std::move(d.ops);
      d = LaunchStreams::Device{ops, {}, 0};
    }
    if (!d.idle.empty()) {
      stream_ = d.idle.back();
      d.idle.pop_back();
      ++d.lent;
      ops_ = ops;
    } else if (d.lent < kMaxLaunchStreams) {
      ++d.lent;  // Reserved; made below, outside the lock.
      create = true;
    }
  }
  if (stale_ops != nullptr) DestroyStreams(*stale_ops, stale);
  if (!create) return;
  try {
    stream_ = ops->create(ctx.dev_id);
    ops_ = ops;
  } catch (...) {
    stream_ = nullptr;  // The launch goes to the workers instead.
  }
  if (stream_ == nullptr) {
    std::lock_guard<std::mutex> lock(Launch().mu);
    auto it = Launch().devices.find(ctx);
    if (it != Launch().devices.end() && it->second.ops == ops)
      --it->second.lent;
  }
}

LentStream::~LentStream() {
  if (stream_ == nullptr) return;
  {
    std::lock_guard<std::mutex> lock(Launch().mu);
    auto it = Launch().devices.find(ctx_);
    if (it != Launch().devices.end() && it->second.ops == ops_) {
      it->second.idle.push_back(stream_);
      --it->second.lent;
      return;
    }
  }
  DestroyStreams(*ops_, {{ctx_.dev_id, stream_}});  // Unregistered since.
}

void SynchronizeStream(Context ctx, void* stream) {
  if (stream == nullptr || ctx.is_host()) return;
  std::shared_ptr<const DeviceStreamOps> ops = Find(ctx.dev_type);
  if (ops != nullptr && ops->synchronize) ops->synchronize(ctx.dev_id, stream);
}

// ---- Fences. ----

namespace {

bool SyncDeviceOps() {
  static const bool sync = env::GetBool("MX_ENGINE_SYNC_DEVICE_OPS", false);
  return sync;
}

struct StreamKey {
  Context ctx;
  void* stream;
  bool operator==(const StreamKey& o) const {
    return ctx == o.ctx && stream == o.stream;
  }
  template <typename H>
  friend H AbslHashValue(H h, const StreamKey& k) {
    return H::combine(std::move(h), k.ctx, k.stream);
  }
};

std::mutex& LatestMu() {
  static auto* mu = new std::mutex();
  return *mu;
}

// Leaked, as the stream registry: fences may outlive static destruction.
absl::flat_hash_map<StreamKey, FenceRef>& Latest() {
  static auto* latest = new absl::flat_hash_map<StreamKey, FenceRef>();
  return *latest;
}

std::atomic<bool> g_fence_recorded{false};

std::string FenceError(const std::string& op, Context ctx, const Error& e) {
  return absl::StrCat("operation \"", op, "\" on ", ctx.ToString(), ": ",
                      e.what());
}

}  // namespace

DeviceFence::DeviceFence(Context ctx, void* stream, void* event, std::string op,
                         std::shared_ptr<const DeviceStreamOps> ops)
    : ctx_(ctx),
      stream_(stream),
      event_(event),
      op_(std::move(op)),
      ops_(std::move(ops)) {}

// Events are reused: creating and destroying one per operation costs a
// driver call each. A pooled event may still be pending (an earlier fence
// dropped before its work ran): recording it again moves its point, which
// CUDA and the plugin ABI allow.
class EventPool {
 public:
  void* Take(Context ctx, const DeviceStreamOps& ops) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      std::vector<void*>& free = free_[ctx];
      if (!free.empty()) {
        void* e = free.back();
        free.pop_back();
        return e;
      }
    }
    return ops.create_event(ctx.dev_id);
  }
  void Give(Context ctx, void* event, const DeviceStreamOps& ops) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      std::vector<void*>& free = free_[ctx];
      if (free.size() < kMaxPooled) {
        free.push_back(event);
        return;
      }
    }
    ops.destroy_event(ctx.dev_id, event);
  }

 private:
  static constexpr size_t kMaxPooled = 1024;
  std::mutex mu_;
  absl::flat_hash_map<Context, std::vector<void*>> free_;
};

EventPool& Events() {
  static auto* pool = new EventPool();  // Leaked, as the registries.
  return *pool;
}

DeviceFence::~DeviceFence() {
  try {
    Events().Give(ctx_, event_, *ops_);
  } catch (...) {
    // Nothing to report to; the event is gone with its device context.
  }
}

bool DeviceFence::Done() const {
  if (done_.load(std::memory_order_acquire)) return true;
  bool done;
  try {
    done = ops_->query_event(ctx_.dev_id, event_);
  } catch (const Error& e) {
    throw RuntimeError(FenceError(op_, ctx_, e));
  }
  if (done) done_.store(true, std::memory_order_release);
  return done;
}

void DeviceFence::AwaitOnHost() const {
  if (Done()) return;
  if (ops_->synchronize_event) {
    try {
      ops_->synchronize_event(ctx_.dev_id, event_);
    } catch (const Error& e) {
      throw RuntimeError(FenceError(op_, ctx_, e));
    }
    done_.store(true, std::memory_order_release);
    return;
  }
  // Device work of one operation is short; spin a little, then yield.
  for (int spins = 0; !Done(); ++spins) {
    if (spins > 64) std::this_thread::yield();
  }
}

void DeviceFence::AwaitOnStream(Context ctx, void* stream) const {
  if (Done()) return;
  try {
    ops_->wait_event(ctx.dev_id, event_, stream);
  } catch (const Error& e) {
    throw RuntimeError(FenceError(op_, ctx_, e));
  }
}

namespace {

// Whether a device of these streams completes ops through fences (see
// HasDeviceEvents): null for host contexts and without events.
std::shared_ptr<const DeviceStreamOps> EventOps(Context ctx) {
  if (ctx.is_host() || SyncDeviceOps()) return nullptr;
  std::shared_ptr<const DeviceStreamOps> ops = Find(ctx.dev_type);
  if (ops == nullptr || !ops->create_event || !ops->destroy_event ||
      !ops->record_event || !ops->wait_event || !ops->query_event) {
    return nullptr;
  }
  return ops;
}

}  // namespace

bool HasDeviceEvents(Context ctx) { return EventOps(ctx) != nullptr; }

bool LaunchesOnAnyThread(Context ctx) {
  // One registry lookup: this runs on every ready device push.
  std::shared_ptr<const DeviceStreamOps> ops = EventOps(ctx);
  return ops != nullptr && ops->launch_on_any_thread;
}

FenceRef RecordFence(Context ctx, void* stream, std::string_view op) {
  if (stream == nullptr) return nullptr;
  // One lookup: the device may be unregistered between two.
  std::shared_ptr<const DeviceStreamOps> ops = EventOps(ctx);
  if (ops == nullptr) return nullptr;
  void* event = Events().Take(ctx, *ops);
  auto fence = std::make_shared<const DeviceFence>(ctx, stream, event,
                                                   std::string(op), ops);
  ops->record_event(ctx.dev_id, event, stream);
  // Released before the fence reaches a var, so an operation that finds
  // the fence on a var (after the dependency protocol's handover) sees it.
  g_fence_recorded.store(true, std::memory_order_release);
  std::lock_guard<std::mutex> lock(LatestMu());
  Latest()[StreamKey{ctx, stream}] = fence;
  return fence;
}

bool AnyFenceRecorded() {
  return g_fence_recorded.load(std::memory_order_acquire);
}

std::vector<FenceRef> LatestFences() {
  std::lock_guard<std::mutex> lock(LatestMu());
  std::vector<FenceRef> fences;
  for (const auto& [key, fence] : Latest()) fences.push_back(fence);
  return fences;
}

}  // namespace engine
}  // namespace mx
