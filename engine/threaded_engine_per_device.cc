// ThreadedEnginePerDevice: separate worker pools per device, so a slow device
// never holds up another. Per CPU device: compute workers and one worker for
// CPU-prioritized ops. Per other device: compute workers and one copy worker
// for each direction of host<->device transfers, so copies overlap compute.
// Each worker has its own stream per device; device operations complete once
// their work is queued where the device has events (fences, see
// DeviceStreamOps), and a ready one pushed while the device's workers sleep
// is launched by the pusher (EngineOptions::launch_device_ops_on_pusher).
#include <memory>
#include <mutex>

#include "absl/container/flat_hash_map.h"
#include "engine/device_fence.h"
#include "engine/threaded_engine.h"
#include "engine/worker_pool.h"

namespace mx {
namespace engine {
namespace {

// Copies to and from a device have a worker (and stream) each: with fences
// a stream waits on the device for what its copies read, and a copy back
// waiting for compute must not hold up the next batch's copy in.
enum class PoolKind { kCompute, kPrioritized, kCopyIn, kCopyOut };

struct PoolKey {
  Context ctx;
  PoolKind kind;
  bool operator==(const PoolKey& o) const {
    return ctx == o.ctx && kind == o.kind;
  }
  template <typename H>
  friend H AbslHashValue(H h, const PoolKey& k) {
    return H::combine(std::move(h), k.ctx, static_cast<int>(k.kind));
  }
};

class ThreadedEnginePerDevice final : public ThreadedEngine {
 public:
  explicit ThreadedEnginePerDevice(const EngineOptions& options)
      : options_(options) {
    cpu0_ = GetPool({Context::CPU(0), PoolKind::kCompute});
    EnableDeviceFences();
  }

  ~ThreadedEnginePerDevice() override {
    WaitAllCompleted();
    try {
      DrainDeviceWork();  // Frees the memory of deferred deletions.
    } catch (...) {
      // Device errors nobody waited for: nothing left to report them to.
    }
    std::lock_guard<std::mutex> lock(pools_mu_);
    pools_.clear();
  }

  const char* type_name() const override { return "ThreadedEnginePerDevice"; }

 protected:
  void Schedule(OprBlock* block) override {
    const Context ctx = block->rctx.ctx;
    const FnProperty prop = block->opr->prop;
    if (ctx == Context::CPU(0) &&
        (prop == FnProperty::kNormal || prop == FnProperty::kInlineIfReady)) {
      cpu0_->Push(block);  // The common case, without a map lookup.
      return;
    }
    PoolKind kind = PoolKind::kCompute;
    if (ctx.is_host()) {
      if (prop == FnProperty::kCPUPrioritized) kind = PoolKind::kPrioritized;
    } else if (prop == FnProperty::kCopyToDevice) {
      kind = PoolKind::kCopyIn;
    } else if (prop == FnProperty::kCopyFromDevice) {
      kind = PoolKind::kCopyOut;
    }
    // Pinned host memory is still host memory: run on the CPU's workers.
    Context pool_ctx =
        ctx.dev_type == Context::kCPUPinned ? Context::CPU(ctx.dev_id) : ctx;
    GetPool({pool_ctx, kind})->Push(block);
  }

  bool LaunchOnPusher(const OprBlock& block) override {
    // A push from inside an operation (of any engine) stays with the
    // workers: the thread is an engine's. Only synchronous operations:
    // an asynchronous one could use the lent stream after it went back.
    if (!options_.launch_device_ops_on_pusher || InsideOperation() ||
        !block.opr->sync_fn) {
      return false;
    }
    const Context ctx = block.rctx.ctx;
    // Without events the launch would wait for the device's work.
    if (!LaunchesOnAnyThread(ctx)) return false;
    return GetPool({ctx, PoolKind::kCompute})->WakeOneIfAllAsleep();
  }

 private:
  WorkerPool* GetPool(const PoolKey& key) {
    std::lock_guard<std::mutex> lock(pools_mu_);
    std::unique_ptr<WorkerPool>& pool = pools_[key];
    if (pool == nullptr) {
      int threads = 1;
      if (key.kind == PoolKind::kCompute) {
        threads = key.ctx.is_host() ? options_.cpu_worker_threads
                                    : options_.device_worker_threads;
      }
      pool = std::make_unique<WorkerPool>(
          threads, [this](OprBlock* block) { Execute(block); });
    }
    return pool.get();
  }

  const EngineOptions options_;
  std::mutex pools_mu_;
  absl::flat_hash_map<PoolKey, std::unique_ptr<WorkerPool>> pools_;
  WorkerPool* cpu0_;
};

}  // namespace

std::unique_ptr<Engine> CreateThreadedEnginePerDevice(
    const EngineOptions& options) {
  return std::make_unique<ThreadedEnginePerDevice>(options);
}

}  // namespace engine
}  // namespace mx
