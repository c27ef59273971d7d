// Tests of the threaded engines only (concurrency, priorities, inline
// launches, the per-device copy worker), of EngineOptions::FromEnv, of the
// global engine and of shutdown. engine_test.cc holds the tests every
// engine passes.
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <initializer_list>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "base/error.h"
#include "base/parallel.h"
#include "engine/engine.h"
#include "gtest/gtest.h"

namespace mx {
namespace engine {
namespace {

const Context kCPU = Context::CPU();

std::unique_ptr<Engine> Make(EngineType type, int threads) {
  EngineOptions options;
  options.type = type;
  options.cpu_worker_threads = threads;
  return Engine::Create(options);
}

TEST(ThreadedEngine, IndependentOpsRunConcurrently) {
  for (EngineType type :
       {EngineType::kThreaded, EngineType::kThreadedPerDevice}) {
    std::unique_ptr<Engine> eng = Make(type, 2);
    // Each op waits (bounded) for the other to start: only possible if both
    // run at the same time.
    std::atomic<int> started{0};
    std::atomic<int> met{0};
    auto body = [&](RunContext) {
      ++started;
      auto deadline =
          std::chrono::steady_clock::now() + std::chrono::seconds(10);
      while (started.load() < 2 &&
             std::chrono::steady_clock::now() < deadline) {
        std::this_thread::yield();
      }
      if (started.load() == 2) ++met;
    };
    VarHandle a = eng->NewVariable(), b = eng->NewVariable();
    eng->PushSync(body, kCPU, {}, {a});
    eng->PushSync(body, kCPU, {}, {b});
    eng->WaitForAll();
    EXPECT_EQ(met.load(), 2) << eng->type_name();
  }
}

TEST(ThreadedEngine, HigherPriorityReadyOpRunsFirst) {
  for (EngineType type :
       {EngineType::kThreaded, EngineType::kThreadedPerDevice}) {
    std::unique_ptr<Engine> eng = Make(type, 1);
    // Hold the only worker, queue ops of mixed priority, then release it.
    std::mutex mu;
    std::condition_variable cv;
    bool release = false, holding = false;
    VarHandle gate = eng->NewVariable();
    eng->PushSync(
        [&](RunContext) {
          std::unique_lock<std::mutex> lock(mu);
          holding = true;
          cv.notify_all();
          cv.wait(lock, [&] { return release; });
        },
        kCPU, {}, {gate});
    {
      std::unique_lock<std::mutex> lock(mu);
      cv.wait(lock, [&] { return holding; });
    }
    std::vector<int> order;
    std::mutex order_mu;
    const int priorities[] = {0, 5, 1, 9, 0};
    for (int i = 0; i < 5; ++i) {
      VarHandle v = eng->NewVariable();
      eng->PushSync(
          [&, i](RunContext) {
            std::lock_guard<std::mutex> lock(order_mu);
            order.push_back(i);
          },
          kCPU, {}, {v}, FnProperty::kNormal, priorities[i]);
    }
    {
      std::lock_guard<std::mutex> lock(mu);
      release = true;
    }
    cv.notify_all();
    eng->WaitForAll();
    EXPECT_EQ(order, (std::vector<int>{3, 1, 2, 0, 4})) << eng->type_name();
  }
}

TEST(ThreadedEngine, InlineIfReadyRunsOnThePushingThreadOnlyWhenReady) {
  for (EngineType type :
       {EngineType::kThreaded, EngineType::kThreadedPerDevice}) {
    std::unique_ptr<Engine> eng = Make(type, 1);
    const std::thread::id me = std::this_thread::get_id();
    // Free vars: run before PushSync returns, on this thread.
    // With one kernel thread (BUILD sets MX_CPU_KERNEL_NTHREADS=2): a team
    // started on the pushing thread would compete with the workers.
    std::thread::id ran_on;
    int threads_inline = 0;
    VarHandle a = eng->NewVariable();
    eng->PushSync(
        [&](RunContext) {
          ran_on = std::this_thread::get_id();
          threads_inline = KernelThreadsHere();
        },
        kCPU, {}, {a}, FnProperty::kInlineIfReady);
    EXPECT_EQ(ran_on, me) << eng->type_name();
    EXPECT_EQ(threads_inline, 1) << eng->type_name();
    EXPECT_EQ(KernelThreadsHere(), 2) << eng->type_name();
    EXPECT_EQ(a.version(), 1u);

    // A var still being written: queued, run later by a worker, in order.
    std::mutex mu;
    std::condition_variable cv;
    bool release = false;
    std::vector<int> order;
    eng->PushSync(
        [&](RunContext) {
          std::unique_lock<std::mutex> lock(mu);
          cv.wait(lock, [&] { return release; });
          order.push_back(1);
        },
        kCPU, {}, {a});
    std::thread::id later_on;
    int threads_later = 0;
    VarHandle b = eng->NewVariable();
    eng->PushSync(
        [&](RunContext) {
          later_on = std::this_thread::get_id();
          threads_later = KernelThreadsHere();
          std::lock_guard<std::mutex> lock(mu);
          order.push_back(2);
        },
        kCPU, {a}, {b}, FnProperty::kInlineIfReady);
    {
      std::lock_guard<std::mutex> lock(mu);
      EXPECT_TRUE(order.empty());
      release = true;
    }
    cv.notify_all();
    eng->WaitForVar(b);
    EXPECT_EQ(order, (std::vector<int>{1, 2})) << eng->type_name();
    EXPECT_NE(later_on, me) << eng->type_name();
    EXPECT_EQ(threads_later, 2) << eng->type_name();

    // An error of an inline op reaches the next wait, not the push.
    VarHandle c = eng->NewVariable();
    EXPECT_NO_THROW(eng->PushSync(
        [](RunContext) { throw InvalidArgument("inline op failed"); }, kCPU, {},
        {c}, FnProperty::kInlineIfReady));
    EXPECT_THROW(eng->WaitForVar(c), InvalidArgument);
  }
}

TEST(PerDeviceEngine, CopyOpsRunOnTheirOwnWorker) {
  std::unique_ptr<Engine> eng = Make(EngineType::kThreadedPerDevice, 1);
  std::thread::id compute_thread, copy_thread;
  VarHandle a = eng->NewVariable(), b = eng->NewVariable();
  eng->PushSync(
      [&](RunContext) { compute_thread = std::this_thread::get_id(); },
      Context::GPU(0), {}, {a});
  eng->PushSync([&](RunContext) { copy_thread = std::this_thread::get_id(); },
                Context::GPU(0), {a}, {b}, FnProperty::kCopyFromDevice);
  eng->WaitForVar(b);
  EXPECT_NE(compute_thread, copy_thread);
}

TEST(EngineOptions, ReadsEngineTypeAndThreadsFromEnv) {
  setenv("MX_ENGINE_TYPE", "NaiveEngine", 1);
  unsetenv("MX_CPU_WORKER_NTHREADS");
  EXPECT_STREQ(Engine::Create(EngineOptions::FromEnv())->type_name(),
               "NaiveEngine");
  setenv("MX_ENGINE_TYPE", "ThreadedEngine", 1);
  setenv("MX_CPU_WORKER_NTHREADS", "3", 1);
  EngineOptions options = EngineOptions::FromEnv();
  EXPECT_EQ(options.type, EngineType::kThreaded);
  EXPECT_EQ(options.cpu_worker_threads, 3);
  EXPECT_STREQ(Engine::Create(options)->type_name(), "ThreadedEngine");
  unsetenv("MX_ENGINE_TYPE");
  unsetenv("MX_CPU_WORKER_NTHREADS");
  EXPECT_EQ(EngineOptions::FromEnv().type, EngineType::kThreadedPerDevice);
}

TEST(EngineOptions, BadEnvValuesNameTheVariable) {
  // FromEnv throws a ConfigError whose message holds each of `parts`.
  auto expect_config_error = [](std::vector<std::string> parts) {
    try {
      EngineOptions::FromEnv();
      ADD_FAILURE() << "expected ConfigError naming " << parts[0];
    } catch (const ConfigError& e) {
      for (const std::string& part : parts) {
        EXPECT_NE(std::string(e.what()).find(part), std::string::npos)
            << e.what();
      }
    }
  };
  setenv("MX_ENGINE_TYPE", "TurboEngine", 1);
  expect_config_error({"MX_ENGINE_TYPE", "ThreadedEnginePerDevice"});
  unsetenv("MX_ENGINE_TYPE");
  setenv("MX_CPU_WORKER_NTHREADS", "0", 1);
  expect_config_error({"MX_CPU_WORKER_NTHREADS"});
  unsetenv("MX_CPU_WORKER_NTHREADS");
  setenv("MX_ENGINE_EXIT_WAIT_S", "-1", 1);
  expect_config_error({"MX_ENGINE_EXIT_WAIT_S"});
  setenv("MX_ENGINE_EXIT_WAIT_S", "5", 1);
  EXPECT_EQ(EngineOptions::FromEnv().exit_wait_seconds, 5);
  unsetenv("MX_ENGINE_EXIT_WAIT_S");
  EXPECT_EQ(EngineOptions::FromEnv().exit_wait_seconds,
            EngineOptions::kDefaultExitWaitSeconds);
  setenv("MX_ENGINE_DEVICE_LAUNCH_ON_PUSHER", "sometimes", 1);
  expect_config_error({"MX_ENGINE_DEVICE_LAUNCH_ON_PUSHER"});
  setenv("MX_ENGINE_DEVICE_LAUNCH_ON_PUSHER", "0", 1);
  EXPECT_FALSE(EngineOptions::FromEnv().launch_device_ops_on_pusher);
  unsetenv("MX_ENGINE_DEVICE_LAUNCH_ON_PUSHER");
  EXPECT_TRUE(EngineOptions::FromEnv().launch_device_ops_on_pusher);
}

TEST(Engine, GlobalEngineIsSharedAndUsable) {
  Engine* eng = Engine::Get();
  EXPECT_EQ(eng, Engine::GetShared().get());
  VarHandle v = eng->NewVariable();
  int x = 0;
  eng->PushSync([&x](RunContext) { x = 42; }, kCPU, {}, {v});
  eng->WaitForVar(v);
  EXPECT_EQ(x, 42);
  eng->DeleteVariable(nullptr, kCPU, v);
}

// What operations use may be a static constructed after the engine (a
// library's tables, a plugin's caches); static destructors run in reverse
// order, so such a static goes before the engine's. Leaving main with work
// queued must let that work finish first. Checked in a fresh process (the
// threadsafe death-test style re-runs this test alone), on the process
// engine.
namespace shutdown {

std::atomic<bool> resource_destroyed{false};

struct Resource {
  ~Resource() { resource_destroyed = true; }
};

Resource& LateResource() {
  static Resource r;  // Constructed after the engine below.
  return r;
}

}  // namespace shutdown

TEST(EngineShutdownDeathTest, QueuedWorkFinishesBeforeLaterStaticsGo) {
  if (std::string(Engine::Get()->type_name()) == "NaiveEngine") {
    GTEST_SKIP() << "NaiveEngine queues nothing";
  }
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(
      {
        Engine* engine = Engine::Get();
        shutdown::LateResource();
        VarHandle v = engine->NewVariable();
        engine->PushSync(
            [](RunContext) {
              std::this_thread::sleep_for(std::chrono::milliseconds(200));
              if (shutdown::resource_destroyed) {
                std::fprintf(stderr, "ran after a static it uses was gone\n");
                std::_Exit(3);
              }
            },
            Context::CPU(), {}, {v});
        std::exit(0);  // With the operation queued or running.
      },
      ::testing::ExitedWithCode(0), "");
}

// exit() from inside an operation running on the main thread (NaiveEngine
// runs every operation there) must not wait for that operation itself.
TEST(EngineShutdownDeathTest, ExitInsideAnOperationDoesNotWaitForIt) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(
      {
        alarm(20);  // A hang becomes a death by SIGALRM.
        setenv("MX_ENGINE_TYPE", "NaiveEngine", 1);
        // Kept alive past exit, as live arrays keep it (its destructor,
        // run at exit otherwise, would wait for the operation too).
        static auto* keep = new std::shared_ptr<Engine>(Engine::GetShared());
        (void)keep;
        Engine* engine = Engine::Get();
        VarHandle v = engine->NewVariable();
        engine->PushSync([](RunContext) { std::exit(0); }, Context::CPU(), {},
                         {v});
        std::exit(4);  // Not reached.
      },
      ::testing::ExitedWithCode(0), "");
}

// A pending operation that does not finish within MX_ENGINE_EXIT_WAIT_S:
// the exit wait gives up and says so (here the engine's own destructor,
// run later, then waits for the operation).
TEST(EngineShutdownDeathTest, ExitWaitIsBounded) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(
      {
        alarm(20);
        setenv("MX_ENGINE_TYPE", "ThreadedEnginePerDevice", 1);
        setenv("MX_ENGINE_EXIT_WAIT_S", "1", 1);
        Engine* engine = Engine::Get();
        VarHandle v = engine->NewVariable();
        engine->PushSync(
            [](RunContext) {
              std::this_thread::sleep_for(std::chrono::seconds(3));
            },
            Context::CPU(), {}, {v});
        std::exit(0);
      },
      ::testing::ExitedWithCode(0),
      "1 operations still pending after waiting 1 s at exit");
}

}  // namespace
}  // namespace engine
}  // namespace mx
