// A test-only device plugin: device type "testdev" with 2 devices whose
// memory is host memory, and whose streams are real asynchronous queues
// (one worker thread each), so that stream order, events and the engine's
// synchronization are exercised without a GPU. Kernels for elemwise_add,
// relu and _mul_scalar run on the stream.
#include <condition_variable>
#include <cstdlib>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>

#include "backends/plugin_api/mx_plugin_cpp.h"

namespace {

using mxplugin::Error;

// One in-order queue of work, run by its own thread.
class Stream {
 public:
  Stream() : thread_([this] { Loop(); }) {}
  ~Stream() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      stop_ = true;
    }
    cv_.notify_all();
    thread_.join();
  }
  void Enqueue(std::function<void()> fn) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      queue_.push_back(std::move(fn));
      ++enqueued_;
    }
    cv_.notify_all();
  }
  void Synchronize() {
    std::unique_lock<std::mutex> lock(mu_);
    const uint64_t target = enqueued_;
    cv_.wait(lock, [&] { return done_ >= target; });
  }

 private:
  void Loop() {
    std::unique_lock<std::mutex> lock(mu_);
    while (true) {
      cv_.wait(lock, [&] { return stop_ || !queue_.empty(); });
      if (queue_.empty()) return;
      std::function<void()> fn = std::move(queue_.front());
      queue_.pop_front();
      lock.unlock();
      fn();
      lock.lock();
      ++done_;
      cv_.notify_all();
    }
  }

  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::function<void()>> queue_;
  uint64_t enqueued_ = 0, done_ = 0;
  bool stop_ = false;
  std::thread thread_;
};

struct Event {
  std::mutex mu;
  std::condition_variable cv;
  uint64_t recorded = 0, reached = 0;
};

class TestDevice : public mxplugin::Device {
 public:
  // Allocations above this fail, to test out-of-memory reporting.
  static constexpr size_t kMaxAlloc = size_t{1} << 32;

  std::string name() const override { return "testdev"; }
  int Count() override { return 2; }
  void* Alloc(int, size_t bytes) override {
    if (bytes > kMaxAlloc) {
      throw Error(MX_STATUS_OUT_OF_MEMORY, "testdev: out of memory (" +
                                               std::to_string(bytes) +
                                               " bytes asked for)");
    }
    void* p = std::aligned_alloc(64, (bytes + 63) / 64 * 64);
    if (p == nullptr)
      throw Error(MX_STATUS_OUT_OF_MEMORY, "testdev: no memory");
    return p;
  }
  void Free(int, void* ptr, size_t) override { std::free(ptr); }
  void* CreateStream(int) override { return new Stream(); }
  void DestroyStream(int, void* s) override { delete static_cast<Stream*>(s); }
  // Kernels only queue work on the stream they are given.
  bool LaunchesOnAnyThread() const override { return true; }
  void Synchronize(int, void* s) override {
    if (s != nullptr) static_cast<Stream*>(s)->Synchronize();
  }
  // Events are shared with the stream work that records or waits for them:
  // the engine may destroy an event whose work is still queued (as CUDA
  // allows), so that work keeps its own reference.
  using EventRef = std::shared_ptr<Event>;
  void* CreateEvent(int) override {
    return new EventRef(std::make_shared<Event>());
  }
  void DestroyEvent(int, void* e) override { delete static_cast<EventRef*>(e); }
  void RecordEvent(int, void* e, void* s) override {
    EventRef ev = *static_cast<EventRef*>(e);
    uint64_t n;
    {
      std::lock_guard<std::mutex> lock(ev->mu);
      n = ++ev->recorded;
    }
    Run(s, [ev, n] {
      std::lock_guard<std::mutex> lock(ev->mu);
      if (ev->reached < n) ev->reached = n;
      ev->cv.notify_all();
    });
  }
  void WaitEvent(int, void* e, void* s) override {
    EventRef ev = *static_cast<EventRef*>(e);
    uint64_t n;
    {
      std::lock_guard<std::mutex> lock(ev->mu);
      n = ev->recorded;
    }
    Run(s, [ev, n] {
      std::unique_lock<std::mutex> lock(ev->mu);
      ev->cv.wait(lock, [&] { return ev->reached >= n; });
    });
  }
  bool QueryEvent(int, void* e) override {
    Event* ev = static_cast<EventRef*>(e)->get();
    std::lock_guard<std::mutex> lock(ev->mu);
    return ev->reached >= ev->recorded;
  }
  void Copy(int, void* dst, const void* src, size_t bytes, int direction,
            void* s) override {
    if (direction < 0 || direction > 2) {
      throw Error(MX_STATUS_INVALID_ARGUMENT, "testdev: bad copy direction");
    }
    if (bytes == 0) return;  // dst or src may be null.
    Run(s, [dst, src, bytes] { std::memcpy(dst, src, bytes); });
  }
  void Memset(int, void* dst, int value, size_t bytes, void* s) override {
    if (bytes == 0) return;
    Run(s, [dst, value, bytes] { std::memset(dst, value, bytes); });
  }

  // Work on a stream runs asynchronously; without one, now.
  static void Run(void* s, std::function<void()> fn) {
    if (s == nullptr) {
      fn();
    } else {
      static_cast<Stream*>(s)->Enqueue(std::move(fn));
    }
  }
};

void RequireFloat(const mxplugin::Tensor& t) {
  if (t.dtype() != MX_DTYPE_FLOAT32) {
    throw Error(MX_STATUS_DTYPE_ERROR, "testdev kernels take float32");
  }
}

// out = f(i) for every element, on the kernel's stream.
template <typename F>
void Elementwise(const mxplugin::KernelContext& ctx, const int32_t* req,
                 mxplugin::Tensor out, F f) {
  RequireFloat(out);
  float* y = out.data<float>();
  const int64_t n = out.size();
  const int32_t r = req[0];
  if (r == MX_REQ_NULL) return;
  TestDevice::Run(ctx.stream(), [=] {
    for (int64_t i = 0; i < n; ++i) y[i] = r == MX_REQ_ADD ? y[i] + f(i) : f(i);
  });
}

void Register(mxplugin::Plugin& p) {
  const int dev = p.RegisterDevice(std::make_shared<TestDevice>());
  p.RegisterKernel(
      "elemwise_add", dev,
      [](const mxplugin::KernelContext& ctx, const mxplugin::Attrs&,
         mxplugin::Tensors in, const int32_t* req, mxplugin::Tensors out) {
        RequireFloat(in[0]);
        const float* a = in[0].data<float>();
        const float* b = in[1].data<float>();
        Elementwise(ctx, req, out[0], [=](int64_t i) { return a[i] + b[i]; });
      });
  p.RegisterKernel(
      "relu", dev,
      [](const mxplugin::KernelContext& ctx, const mxplugin::Attrs&,
         mxplugin::Tensors in, const int32_t* req, mxplugin::Tensors out) {
        RequireFloat(in[0]);
        const float* x = in[0].data<float>();
        Elementwise(ctx, req, out[0],
                    [=](int64_t i) { return x[i] > 0 ? x[i] : 0.0f; });
      });
  p.RegisterKernel(
      "_mul_scalar", dev,
      [](const mxplugin::KernelContext& ctx, const mxplugin::Attrs& attrs,
         mxplugin::Tensors in, const int32_t* req, mxplugin::Tensors out) {
        RequireFloat(in[0]);
        const float* x = in[0].data<float>();
        const float s = static_cast<float>(attrs.GetFloat("scalar", 1.0));
        Elementwise(ctx, req, out[0], [=](int64_t i) { return x[i] * s; });
      });
}

}  // namespace

MX_PLUGIN("testdev", Register)
