// Which thread launches a device operation in the per-device engine
// (EngineOptions::launch_device_ops_on_pusher), on a fake device whose
// streams keep time (timed_device.h): ready operations pushed while the
// device's workers sleep run on the pusher; everything else goes to the
// workers; either way every operation's device work starts after the work
// it depends on, across the pusher's and the workers' streams.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <future>
#include <memory>
#include <mutex>
#include <random>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "base/error.h"
#include "engine/engine.h"
#include "engine/timed_device.h"
#include "gtest/gtest.h"

namespace mx {
namespace engine {
namespace {

using std::chrono::microseconds;
using std::chrono::milliseconds;

constexpr int kTimedType = Context::kFirstPluginDevice + 41;
constexpr int kNoEventsType = Context::kFirstPluginDevice + 42;
constexpr int kWorkersOnlyType = Context::kFirstPluginDevice + 44;
const Context kCPU = Context::CPU();

class DeviceLaunchTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    device_ = new TimedDevice(kTimedType);
    no_events_ = new TimedDevice(kNoEventsType, /*with_events=*/false);
    workers_only_ = new TimedDevice(kWorkersOnlyType, /*with_events=*/true,
                                    /*launch_on_any_thread=*/false);
  }
  static void TearDownTestSuite() {
    delete device_;
    delete no_events_;
    delete workers_only_;
  }

  static std::unique_ptr<Engine> MakeEngine(bool on_pusher,
                                            int device_workers = 2) {
    EngineOptions options;
    options.type = EngineType::kThreadedPerDevice;
    options.device_worker_threads = device_workers;
    options.launch_device_ops_on_pusher = on_pusher;
    return Engine::Create(options);
  }

  // How long the device is left idle before attempt `attempt` (from 0) to
  // launch on the pusher: 30 ms, doubling every second attempt up to
  // 960 ms. A worker polls (256 pauses, then 64 yields) before it sleeps,
  // and on a loaded machine each yield may give its core away for a whole
  // time slice: a fixed 30 ms was not always enough for it to fall asleep
  // (every attempt failed with two other builds running).
  static milliseconds IdleTime(int attempt) {
    return milliseconds(30 << std::min(attempt / 2, 5));
  }

  // Pushes an operation on `ctx` writing `var` after the device had been
  // idle for `idle` (for its workers to fall asleep), waits for it, and
  // returns whether it ran on this thread; `stream` (if not null) receives
  // the stream it ran on.
  static bool RanOnPusherAfterIdle(Engine* engine, Context ctx, VarHandle var,
                                   void** stream = nullptr,
                                   FnProperty prop = FnProperty::kNormal,
                                   milliseconds idle = milliseconds(30)) {
    std::this_thread::sleep_for(idle);
    std::thread::id ran_on;
    void* ran_stream = nullptr;
    engine->PushSync(
        [&](RunContext rctx) {
          ran_on = std::this_thread::get_id();
          ran_stream = rctx.stream;
          TimedDevice::Launch(rctx.stream, microseconds(50));
        },
        ctx, {}, {var}, prop, 0, "probe");
    engine->WaitForVar(var);
    EXPECT_NE(ran_stream, nullptr);
    if (stream != nullptr) *stream = ran_stream;
    return ran_on == std::this_thread::get_id();
  }

  // RanOnPusherAfterIdle with growing idle times until it runs on the
  // pusher (the first push creates the device's workers, not asleep yet);
  // returns the attempt that did, or -1 after 20.
  static int AttemptRunningOnPusher(Engine* engine, VarHandle var,
                                    void** stream = nullptr) {
    for (int i = 0; i < 20; ++i) {
      if (RanOnPusherAfterIdle(engine, device_->context(), var, stream,
                               FnProperty::kNormal, IdleTime(i))) {
        return i;
      }
    }
    return -1;
  }
  static bool EventuallyRunsOnPusher(Engine* engine, VarHandle var,
                                     void** stream = nullptr) {
    return AttemptRunningOnPusher(engine, var, stream) >= 0;
  }

  // With the launch on the pusher turned on, first checks that ordinary
  // ops of the timed device do launch there in the same engine, then
  // that ops on `ctx` (with `prop`) never do after as long an idle time.
  static void ExpectOnlyWorkersLaunch(bool on_pusher, Context ctx,
                                      FnProperty prop = FnProperty::kNormal) {
    std::unique_ptr<Engine> engine = MakeEngine(on_pusher);
    VarHandle v = engine->NewVariable();
    int attempt = 0;
    if (on_pusher) {
      attempt = AttemptRunningOnPusher(engine.get(), v);
      EXPECT_GE(attempt, 0);
    }
    for (int i = 0; i < 3; ++i) {
      EXPECT_FALSE(RanOnPusherAfterIdle(engine.get(), ctx, v, nullptr, prop,
                                        IdleTime(std::max(attempt, 0))));
    }
    engine->DeleteVariable(nullptr, kCPU, v);
    engine->WaitForAll();
  }

  static TimedDevice* device_;
  static TimedDevice* no_events_;
  static TimedDevice* workers_only_;
};

TimedDevice* DeviceLaunchTest::device_ = nullptr;
TimedDevice* DeviceLaunchTest::no_events_ = nullptr;
TimedDevice* DeviceLaunchTest::workers_only_ = nullptr;

TEST_F(DeviceLaunchTest, ReadyOpPushedWhileWorkersSleepRunsOnThePusher) {
  std::unique_ptr<Engine> engine = MakeEngine(true);
  VarHandle v = engine->NewVariable();
  EXPECT_TRUE(EventuallyRunsOnPusher(engine.get(), v));
  // The push returned once the work was queued, before it ended; the wait
  // waited for it.
  TimedDevice::Span span;
  engine->PushSync(
      [&](RunContext rctx) {
        span = TimedDevice::Launch(rctx.stream, milliseconds(200));
      },
      device_->context(), {}, {v});
  const auto pushed = TimedDevice::Clock::now();
  engine->WaitForVar(v);
  EXPECT_LT(pushed, span.end);
  EXPECT_GE(TimedDevice::Clock::now(), span.end);
  engine->DeleteVariable(nullptr, kCPU, v);
  engine->WaitForAll();
}

// A launch on the pusher borrows a stream, which outlives the thread (fences
// name streams by address) and serves the next pusher: TimedDevice's
// streams are heap objects, so a stream that ended with its thread would
// be a use after free here.
TEST_F(DeviceLaunchTest, LaunchStreamsAreLentAndOutliveTheirThreads) {
  std::unique_ptr<Engine> engine = MakeEngine(true);
  VarHandle v = engine->NewVariable();
  void* streams[2] = {nullptr, nullptr};
  bool on_pusher[2] = {false, false};
  for (int t = 0; t < 2; ++t) {
    std::thread([&, t] {
      on_pusher[t] = EventuallyRunsOnPusher(engine.get(), v, &streams[t]);
      EXPECT_NE(streams[t], ThreadStream(device_->context()));
    }).join();
  }
  ASSERT_TRUE(on_pusher[0] && on_pusher[1]);
  EXPECT_EQ(streams[0], streams[1]);  // One pusher at a time: one stream.
  // The workers still order work after the fence of the first thread's
  // launch stream, and so does the main thread's next launch.
  TimedDevice::Span span;
  engine->PushSync(
      [&](RunContext rctx) {
        span = TimedDevice::Launch(rctx.stream, milliseconds(1));
      },
      device_->context(), {}, {v});
  engine->WaitForVar(v);
  EXPECT_GE(TimedDevice::Clock::now(), span.end);
  engine->DeleteVariable(nullptr, kCPU, v);
  engine->WaitForAll();
}

// Threads pushing at once while the workers sleep launch on their own
// threads, each on a stream of its own while the others' launches still
// run; at most two per device at once (the pool's bound: a third goes to
// the workers).
TEST_F(DeviceLaunchTest, ConcurrentLaunchesOnPushersGetTheirOwnStreams) {
  constexpr int kPushers = 4, kMaxLent = 2;
  std::unique_ptr<Engine> engine = MakeEngine(true);
  VarHandle vars[kPushers];
  for (VarHandle& v : vars) v = engine->NewVariable();
  ASSERT_TRUE(EventuallyRunsOnPusher(engine.get(), vars[0]));
  // Every attempt (each may exceed the bound), and until the bound is
  // reached once.
  int most_on_pushers = 0;
  for (int attempt = 0;
       attempt < 10 || (attempt < 30 && most_on_pushers < kMaxLent);
       ++attempt) {
    std::this_thread::sleep_for(IdleTime(std::max(0, attempt - 10)));
    std::atomic<int> arrived{0}, running{0};
    bool here[kPushers] = {};
    void* streams[kPushers] = {};
    std::vector<std::thread> pushers;
    for (int t = 0; t < kPushers; ++t) {
      pushers.emplace_back([&, t] {
        const std::thread::id me = std::this_thread::get_id();
        ++arrived;
        while (arrived.load() < kPushers) std::this_thread::yield();
        engine->PushSync(
            [&, t, me](RunContext rctx) {
              here[t] = std::this_thread::get_id() == me;
              streams[t] = rctx.stream;
              ++running;
              // Overlap with the other launches (a bounded wait: one may
              // have gone to a worker that runs it later).
              const auto until = TimedDevice::Clock::now() + milliseconds(50);
              while (running.load() < kPushers &&
                     TimedDevice::Clock::now() < until) {
                std::this_thread::yield();
              }
              TimedDevice::Launch(rctx.stream, microseconds(10));
            },
            device_->context(), {}, {vars[t]});
        engine->WaitForVar(vars[t]);
      });
    }
    for (std::thread& t : pushers) t.join();
    std::set<void*> lent;
    int on_pushers = 0;
    for (int t = 0; t < kPushers; ++t) {
      if (!here[t]) continue;
      ++on_pushers;
      EXPECT_TRUE(lent.insert(streams[t]).second) << "a stream lent twice";
    }
    most_on_pushers = std::max(most_on_pushers, on_pushers);
  }
  EXPECT_EQ(most_on_pushers, kMaxLent);
  for (VarHandle h : vars) engine->DeleteVariable(nullptr, kCPU, h);
  engine->WaitForAll();
}

TEST_F(DeviceLaunchTest, TurnedOffTheWorkersLaunch) {
  ExpectOnlyWorkersLaunch(/*on_pusher=*/false, device_->context());
}

TEST_F(DeviceLaunchTest, DevicesWithoutEventsLaunchOnTheWorkers) {
  // A launch would wait for the device's work there (no fences).
  ExpectOnlyWorkersLaunch(/*on_pusher=*/true, no_events_->context());
}

TEST_F(DeviceLaunchTest, DevicesThatDoNotAllowItLaunchOnTheWorkers) {
  // DeviceStreamOps::launch_on_any_thread false (a plugin device before ABI
  // 1.5, or one whose kernels keep per-thread state).
  ExpectOnlyWorkersLaunch(/*on_pusher=*/true, workers_only_->context());
}

TEST_F(DeviceLaunchTest, OpsForTheDeviceWorkersLaunchThere) {
  ExpectOnlyWorkersLaunch(/*on_pusher=*/true, device_->context(),
                          FnProperty::kOnDeviceWorkers);
}

TEST_F(DeviceLaunchTest, OpWaitingForAVarRunsOnAWorker) {
  std::unique_ptr<Engine> engine = MakeEngine(true);
  VarHandle v = engine->NewVariable(), out = engine->NewVariable();
  RanOnPusherAfterIdle(engine.get(), device_->context(), out);
  std::this_thread::sleep_for(milliseconds(30));
  std::promise<void> release;
  std::shared_future<void> released = release.get_future().share();
  engine->PushSync([released](RunContext) { released.wait(); }, kCPU, {}, {v});
  std::thread::id ran_on;
  engine->PushSync(
      [&](RunContext rctx) {
        ran_on = std::this_thread::get_id();
        TimedDevice::Launch(rctx.stream, microseconds(10));
      },
      device_->context(), {v}, {out});
  release.set_value();
  engine->WaitForVar(out);
  EXPECT_NE(ran_on, std::this_thread::get_id());
  engine->DeleteVariable(nullptr, kCPU, v);
  engine->DeleteVariable(nullptr, kCPU, out);
  engine->WaitForAll();
}

TEST_F(DeviceLaunchTest, PushFromInsideAnOperationStaysWithTheWorkers) {
  std::unique_ptr<Engine> engine = MakeEngine(true);
  VarHandle v = engine->NewVariable(), token = engine->NewVariable();
  RanOnPusherAfterIdle(engine.get(), device_->context(), v);
  std::this_thread::sleep_for(milliseconds(30));
  std::thread::id cpu_thread, device_thread;
  Engine* e = engine.get();
  const Context dev = device_->context();
  engine->PushSync(
      [&, e, dev](RunContext) {
        cpu_thread = std::this_thread::get_id();
        e->PushSync(
            [&](RunContext rctx) {
              device_thread = std::this_thread::get_id();
              TimedDevice::Launch(rctx.stream, microseconds(10));
            },
            dev, {}, {v});
      },
      kCPU, {}, {token});
  engine->WaitForVar(token);
  engine->WaitForVar(v);
  EXPECT_NE(device_thread, cpu_thread);
  EXPECT_NE(device_thread, std::this_thread::get_id());
  engine->DeleteVariable(nullptr, kCPU, v);
  engine->DeleteVariable(nullptr, kCPU, token);
  engine->WaitForAll();
}

TEST_F(DeviceLaunchTest, BusyWorkersKeepTheLaunches) {
  std::unique_ptr<Engine> engine = MakeEngine(true, /*device_workers=*/1);
  VarHandle gate = engine->NewVariable(), a = engine->NewVariable(),
            b = engine->NewVariable();
  RanOnPusherAfterIdle(engine.get(), device_->context(), a);
  std::promise<void> release;
  std::shared_future<void> released = release.get_future().share();
  std::promise<void> started;
  engine->PushSync([](RunContext) {}, kCPU, {}, {gate});
  engine->WaitForVar(gate);
  std::this_thread::sleep_for(milliseconds(30));
  // `a`'s op waits for a CPU op, so the device's only worker runs it; it
  // holds the worker until released.
  std::promise<void> cpu_release;
  std::shared_future<void> cpu_released = cpu_release.get_future().share();
  engine->PushSync([cpu_released](RunContext) { cpu_released.wait(); }, kCPU,
                   {}, {gate});
  std::thread::id a_thread, b_thread;
  engine->PushSync(
      [&](RunContext) {
        a_thread = std::this_thread::get_id();
        started.set_value();
        released.wait();
      },
      device_->context(), {gate}, {a});
  cpu_release.set_value();
  started.get_future().wait();
  // The worker is busy: a ready op queues behind it instead of launching
  // here.
  engine->PushSync(
      [&](RunContext rctx) {
        b_thread = std::this_thread::get_id();
        TimedDevice::Launch(rctx.stream, microseconds(10));
      },
      device_->context(), {}, {b});
  release.set_value();
  engine->WaitForVar(b);
  EXPECT_EQ(b_thread, a_thread);
  EXPECT_NE(b_thread, std::this_thread::get_id());
  for (VarHandle h : {gate, a, b}) engine->DeleteVariable(nullptr, kCPU, h);
  engine->WaitForAll();
}

TEST_F(DeviceLaunchTest, ErrorOfALaunchOnThePusherReachesTheWait) {
  std::unique_ptr<Engine> engine = MakeEngine(true);
  VarHandle probe = engine->NewVariable();
  ASSERT_TRUE(EventuallyRunsOnPusher(engine.get(), probe));
  // Until one failing launch ran here (each on a fresh var: an error stays
  // with its var); every error reaches its wait, wherever it ran.
  bool failed_here = false;
  for (int attempt = 0; attempt < 20 && !failed_here; ++attempt) {
    VarHandle v = engine->NewVariable();
    std::this_thread::sleep_for(IdleTime(attempt));
    std::thread::id ran_on;
    EXPECT_NO_THROW(engine->PushSync(
        [&](RunContext) {
          ran_on = std::this_thread::get_id();
          throw InvalidArgument("timed device: launch rejected");
        },
        device_->context(), {}, {v}, FnProperty::kNormal, 0, "bad_launch"));
    try {
      engine->WaitForVar(v);
      ADD_FAILURE() << "the error did not reach the wait";
    } catch (const InvalidArgument& e) {
      EXPECT_NE(std::string(e.what()).find("launch rejected"),
                std::string::npos);
    }
    failed_here = ran_on == std::this_thread::get_id();
    engine->DeleteVariable(nullptr, kCPU, v);
  }
  EXPECT_TRUE(failed_here);
  engine->DeleteVariable(nullptr, kCPU, probe);
  EXPECT_NO_THROW(engine->WaitForAll());  // Reported at the waits already.
}

// An operation that queued device work and then failed: its work still
// runs, so what comes after it waits for that work as after a success: a
// host writer of a var it read, and the deletion (the freeing of the
// memory) of the var it wrote, wherever the operation ran.
TEST_F(DeviceLaunchTest, WorkQueuedBeforeAFailureIsWaitedFor) {
  using Clock = TimedDevice::Clock;
  for (bool on_pusher : {true, false}) {
    SCOPED_TRACE(on_pusher ? "launch on pusher" : "workers launch");
    std::unique_ptr<Engine> engine = MakeEngine(on_pusher);
    for (int attempt = 0; attempt < 3; ++attempt) {
      VarHandle read = engine->NewVariable(), written = engine->NewVariable();
      std::this_thread::sleep_for(IdleTime(attempt));
      std::atomic<int64_t> work_end{0};
      engine->PushSync(
          [&](RunContext rctx) {
            const TimedDevice::Span span =
                TimedDevice::Launch(rctx.stream, milliseconds(20));
            work_end = span.end.time_since_epoch().count();
            throw InvalidArgument("timed device: failed after launching");
          },
          device_->context(), {read}, {written}, FnProperty::kNormal, 0,
          "fails_after_launch");
      std::atomic<int64_t> host_write_at{0}, deleted_at{0};
      engine->PushSync(
          [&](RunContext) {
            host_write_at = Clock::now().time_since_epoch().count();
          },
          kCPU, {}, {read});
      engine->DeleteVariable(
          [&](RunContext) {
            deleted_at = Clock::now().time_since_epoch().count();
          },
          kCPU, written);
      engine->WaitForVar(read);
      EXPECT_THROW(engine->WaitForAll(), InvalidArgument);
      EXPECT_GE(host_write_at.load(), work_end.load())
          << "a host op wrote what the failed op's device work still read";
      EXPECT_GE(deleted_at.load(), work_end.load())
          << "a var was deleted while the failed op's device work wrote it";
      engine->DeleteVariable(nullptr, kCPU, read);
    }
    engine->WaitForAll();
  }
}

// Random ops over a few vars from three pushing threads, with and without
// pauses (so some launch on their pusher, some on the workers, on
// different streams). Each op's device work must start after the device
// work of the op that last wrote what it uses (read after write) and, for
// a write, after the device work of the reads before it (write after
// read); host readers must see that work done; no stream may serve two
// threads at once.
TEST_F(DeviceLaunchTest, DeviceWorkIsOrderedAcrossPusherAndWorkerStreams) {
  using Clock = TimedDevice::Clock;
  for (bool on_pusher : {true, false}) {
    SCOPED_TRACE(on_pusher ? "launch on pusher" : "workers launch");
    std::unique_ptr<Engine> engine = MakeEngine(on_pusher);
    constexpr int kVars = 4, kThreads = 3;
    std::vector<VarHandle> vars(kVars);
    for (VarHandle& h : vars) h = engine->NewVariable();
    // When each var's last write ends (written by its writers only) and
    // when the reads since then end (raised by concurrent readers).
    std::vector<Clock::time_point> written(kVars);
    std::vector<std::atomic<int64_t>> read_until(kVars);
    for (auto& r : read_until) r = 0;
    auto ticks = [](Clock::time_point t) {
      return static_cast<int64_t>(t.time_since_epoch().count());
    };
    std::atomic<int> on_their_pusher{0}, by_workers{0}, late{0}, shared{0};
    std::mutex streams_mu;
    std::set<void*> streams_in_use;
    auto run = [&](std::thread::id pusher, int in, int out,
                   microseconds duration, void* stream) {
      {
        std::lock_guard<std::mutex> lock(streams_mu);
        if (!streams_in_use.insert(stream).second) ++shared;
      }
      (std::this_thread::get_id() == pusher ? on_their_pusher : by_workers)++;
      const TimedDevice::Span span = TimedDevice::Launch(stream, duration);
      if (span.start < written[in] || span.start < written[out] ||
          ticks(span.start) < read_until[out].load()) {
        ++late;
      }
      if (in != out) {
        int64_t seen = read_until[in].load();
        while (seen < ticks(span.end) &&
               !read_until[in].compare_exchange_weak(seen, ticks(span.end))) {
        }
      }
      written[out] = span.end;
      read_until[out] = 0;  // Later writers wait for this write instead.
      std::lock_guard<std::mutex> lock(streams_mu);
      streams_in_use.erase(stream);
    };
    // `count` random ops; `pause` the chance in 8 of a 2 ms pause first.
    auto push_ops = [&](unsigned seed, int count, int pause) {
      std::mt19937 rng(seed);
      const std::thread::id me = std::this_thread::get_id();
      for (int i = 0; i < count; ++i) {
        const int in = rng() % kVars, out = rng() % kVars;
        if (static_cast<int>(rng() % 8) < pause) {
          std::this_thread::sleep_for(milliseconds(2));
        }
        if (rng() % 5 == 0) {
          // A host reader: the device work it reads must be done.
          engine->PushSync(
              [&, in](RunContext) {
                if (Clock::now() < written[in]) ++late;
              },
              kCPU, {vars[in]}, {});
          continue;
        }
        const microseconds duration(20 + rng() % 200);
        auto fn = [&, me, in, out, duration](RunContext rctx) {
          run(me, in, out, duration, rctx.stream);
        };
        if (in == out) {
          engine->PushSync(fn, device_->context(), {}, {vars[out]});
        } else {
          engine->PushSync(fn, device_->context(), {vars[in]}, {vars[out]});
        }
      }
    };
    std::vector<std::thread> pushers;
    for (int t = 0; t < kThreads; ++t) {
      pushers.emplace_back(push_ops, 7 + t, 150, 1);
    }
    for (std::thread& t : pushers) t.join();
    // Three pushers seldom leave the workers asleep: then one pusher, with
    // long pauses, until one op it pushed ran on it (for ops launched on
    // the pusher after work of the workers' streams).
    for (int i = 0; i < 20 && on_pusher && on_their_pusher.load() == 0; ++i) {
      std::this_thread::sleep_for(IdleTime(i));
      push_ops(100 + i, 10, 8);
    }
    for (VarHandle h : vars) engine->WaitForVar(h);
    const auto now = Clock::now();
    for (const auto& t : written) EXPECT_GE(now, t);
    EXPECT_EQ(late.load(), 0);
    EXPECT_EQ(shared.load(), 0);
    EXPECT_GT(by_workers.load(), 0);
    if (on_pusher) {
      EXPECT_GT(on_their_pusher.load(), 0);
    } else {
      EXPECT_EQ(on_their_pusher.load(), 0);
    }
    for (VarHandle h : vars) engine->DeleteVariable(nullptr, kCPU, h);
    engine->WaitForAll();
  }
}

}  // namespace
}  // namespace engine
}  // namespace mx
