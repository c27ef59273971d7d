// Which thread launches a device operation in the per-device engine
// (EngineOptions::launch_device_ops_on_pusher), on a fake device whose
// streams keep time (timed_device.h): ready operations pushed while the
// device's workers sleep run on the pusher; everything else goes to the
// workers; either way every operation's device work starts after the work
// it depends on, across the pusher's and the workers' streams.
#include <atomic>
#include <chrono>
#include <future>
#include <memory>
#include <random>
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
const Context kCPU = Context::CPU();

class DeviceLaunchTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    device_ = new TimedDevice(kTimedType);
    no_events_ = new TimedDevice(kNoEventsType, /*with_events=*/false);
  }
  static void TearDownTestSuite() {
    delete device_;
    delete no_events_;
  }

  static std::unique_ptr<Engine> MakeEngine(bool on_pusher,
                                            int device_workers = 2) {
    EngineOptions options;
    options.type = EngineType::kThreadedPerDevice;
    options.device_worker_threads = device_workers;
    options.launch_device_ops_on_pusher = on_pusher;
    return Engine::Create(options);
  }

  // Pushes an operation on `ctx` writing `var` after the device workers
  // had time to fall asleep, waits for it, and returns whether it ran on
  // this thread (checking that it got this thread's stream then).
  static bool RanOnPusherAfterIdle(Engine* engine, Context ctx,
                                   VarHandle var) {
    std::this_thread::sleep_for(milliseconds(30));
    std::thread::id ran_on;
    void* stream = nullptr;
    engine->PushSync(
        [&](RunContext rctx) {
          ran_on = std::this_thread::get_id();
          stream = rctx.stream;
          TimedDevice::Launch(rctx.stream, microseconds(50));
        },
        ctx, {}, {var}, FnProperty::kNormal, 0, "probe");
    engine->WaitForVar(var);
    const bool here = ran_on == std::this_thread::get_id();
    if (here) {
      EXPECT_EQ(stream, ThreadStream(ctx));
    }
    EXPECT_NE(stream, nullptr);
    return here;
  }

  // RanOnPusherAfterIdle until it runs on the pusher (the first push
  // creates the device's workers, not asleep yet; retries allow for a
  // loaded machine that is slow to let them sleep).
  static bool EventuallyRunsOnPusher(Engine* engine, VarHandle var) {
    for (int i = 0; i < 20; ++i) {
      if (RanOnPusherAfterIdle(engine, device_->context(), var)) return true;
    }
    return false;
  }

  static void ExpectOnlyWorkersLaunch(bool on_pusher, Context ctx) {
    std::unique_ptr<Engine> engine = MakeEngine(on_pusher);
    VarHandle v = engine->NewVariable();
    for (int i = 0; i < 3; ++i) {
      EXPECT_FALSE(RanOnPusherAfterIdle(engine.get(), ctx, v));
    }
    engine->DeleteVariable(nullptr, kCPU, v);
    engine->WaitForAll();
  }

  static TimedDevice* device_;
  static TimedDevice* no_events_;
};

TimedDevice* DeviceLaunchTest::device_ = nullptr;
TimedDevice* DeviceLaunchTest::no_events_ = nullptr;

TEST_F(DeviceLaunchTest, ReadyOpPushedWhileWorkersSleepRunsOnThePusher) {
  std::unique_ptr<Engine> engine = MakeEngine(true);
  VarHandle v = engine->NewVariable();
  EXPECT_TRUE(EventuallyRunsOnPusher(engine.get(), v));
  // The launch returned before the device work ended; the wait waited.
  const auto t0 = TimedDevice::Clock::now();
  TimedDevice::Span span;
  engine->PushSync(
      [&](RunContext rctx) {
        span = TimedDevice::Launch(rctx.stream, milliseconds(20));
      },
      device_->context(), {}, {v});
  engine->WaitForVar(v);
  EXPECT_GE(TimedDevice::Clock::now(), span.end);
  EXPECT_GE(span.end - t0, milliseconds(20));
  engine->DeleteVariable(nullptr, kCPU, v);
  engine->WaitForAll();
}

TEST_F(DeviceLaunchTest, TurnedOffTheWorkersLaunch) {
  ExpectOnlyWorkersLaunch(/*on_pusher=*/false, device_->context());
}

TEST_F(DeviceLaunchTest, DevicesWithoutEventsLaunchOnTheWorkers) {
  // A launch would wait for the device's work there (no fences).
  ExpectOnlyWorkersLaunch(/*on_pusher=*/true, no_events_->context());
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
  VarHandle v = engine->NewVariable();
  ASSERT_TRUE(EventuallyRunsOnPusher(engine.get(), v));
  std::this_thread::sleep_for(milliseconds(30));
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
    EXPECT_NE(std::string(e.what()).find("launch rejected"), std::string::npos);
  }
  EXPECT_EQ(ran_on, std::this_thread::get_id());
  engine->DeleteVariable(nullptr, kCPU, v);
  EXPECT_NO_THROW(engine->WaitForAll());  // Reported at the wait already.
}

// Random chains over a few vars, pushed with and without pauses (so some
// launch on the pusher, some on the workers, on different streams): each
// op's device work must start after the device work of the op that last
// wrote what it reads, and host readers must see that work done.
TEST_F(DeviceLaunchTest, DeviceWorkIsOrderedAcrossPusherAndWorkerStreams) {
  for (bool on_pusher : {true, false}) {
    SCOPED_TRACE(on_pusher ? "launch on pusher" : "workers launch");
    std::unique_ptr<Engine> engine = MakeEngine(on_pusher);
    constexpr int kVars = 3;
    std::vector<VarHandle> vars(kVars);
    // Written only by ops holding the var for writing; read by its readers.
    std::vector<TimedDevice::Clock::time_point> ready(kVars);
    for (VarHandle& h : vars) h = engine->NewVariable();
    std::atomic<int> launched_here{0}, launched_by_workers{0}, late{0};
    const std::thread::id main_thread = std::this_thread::get_id();
    std::mt19937 rng(7);
    for (int i = 0; i < 300; ++i) {
      const int in = rng() % kVars, out = rng() % kVars;
      if (rng() % 8 == 0) std::this_thread::sleep_for(milliseconds(2));
      if (rng() % 5 == 0) {
        // A host reader: the device work it reads must be done.
        engine->PushSync(
            [&, in](RunContext) {
              if (TimedDevice::Clock::now() < ready[in]) ++late;
            },
            kCPU, {vars[in]}, {});
        continue;
      }
      const auto duration = microseconds(20 + rng() % 200);
      auto fn = [&, in, out, duration](RunContext rctx) {
        (std::this_thread::get_id() == main_thread ? launched_here
                                                   : launched_by_workers)++;
        const TimedDevice::Span span =
            TimedDevice::Launch(rctx.stream, duration);
        if (span.start < ready[in] || span.start < ready[out]) ++late;
        ready[out] = span.end;
      };
      if (in == out) {
        engine->PushSync(fn, device_->context(), {}, {vars[out]});
      } else {
        engine->PushSync(fn, device_->context(), {vars[in]}, {vars[out]});
      }
    }
    for (VarHandle h : vars) engine->WaitForVar(h);
    const auto now = TimedDevice::Clock::now();
    for (const auto& t : ready) EXPECT_GE(now, t);
    EXPECT_EQ(late.load(), 0);
    EXPECT_GT(launched_by_workers.load(), 0);
    if (on_pusher) {
      EXPECT_GT(launched_here.load(), 0);
    } else {
      EXPECT_EQ(launched_here.load(), 0);
    }
    for (VarHandle h : vars) engine->DeleteVariable(nullptr, kCPU, h);
    engine->WaitForAll();
  }
}

}  // namespace
}  // namespace engine
}  // namespace mx
