// Per-thread device streams (see DeviceStreamOps in engine.h).
#include <map>
#include <memory>
#include <mutex>
#include <utility>

#include "absl/strings/str_cat.h"
#include "base/error.h"
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

void UnregisterDeviceStreams(int dev_type) {
  std::lock_guard<std::mutex> lock(Mu());
  Registry().erase(dev_type);
}

void* ThreadStream(Context ctx) {
  if (ctx.is_host()) return nullptr;
  thread_local ThreadStreams streams;
  return streams.Get(ctx);
}

void SynchronizeStream(Context ctx, void* stream) {
  if (stream == nullptr || ctx.is_host()) return;
  std::shared_ptr<const DeviceStreamOps> ops = Find(ctx.dev_type);
  if (ops != nullptr && ops->synchronize) ops->synchronize(ctx.dev_id, stream);
}

}  // namespace engine
}  // namespace mx
