// Back-pressure in the threaded engines (EngineOptions::max_pending_ops): a
// pusher that never waits is held back, and nothing deadlocks under it.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "base/error.h"
#include "engine/engine.h"
#include "gtest/gtest.h"
#include "testing/engine_test_util.h"

namespace mx {
namespace engine {
namespace {

const Context kCPU = Context::CPU();

using testing::EngineConfig;

std::unique_ptr<Engine> Make(const EngineConfig& c, int64_t max_pending) {
  EngineOptions options;
  options.max_pending_ops = max_pending;
  return testing::MakeEngine(c, options);
}

class BackPressureTest : public ::testing::TestWithParam<EngineConfig> {};

// Ops that are slow to run: without back-pressure the pusher would queue all
// of them at once. With a limit, pushed-but-not-finished stays bounded.
TEST_P(BackPressureTest, PendingOpsStayBelowTheLimit) {
  constexpr int64_t kLimit = 16;
  auto eng = Make(GetParam(), kLimit);
  std::atomic<int64_t> in_flight{0}, max_in_flight{0};
  std::vector<VarHandle> vars;
  for (int i = 0; i < 8; ++i) vars.push_back(eng->NewVariable());
  for (int i = 0; i < 400; ++i) {
    const int64_t now = in_flight.fetch_add(1) + 1;
    int64_t seen = max_in_flight.load();
    while (now > seen && !max_in_flight.compare_exchange_weak(seen, now)) {
    }
    eng->PushSync(
        [&in_flight](RunContext) {
          std::this_thread::sleep_for(std::chrono::microseconds(50));
          in_flight.fetch_sub(1);
        },
        kCPU, {}, {vars[i % vars.size()]});
  }
  eng->WaitForAll();
  // The push that reaches the limit is counted before it blocks.
  EXPECT_LE(max_in_flight.load(), kLimit + 1);
  EXPECT_GE(max_in_flight.load(), kLimit / 2);
  for (VarHandle v : vars) eng->DeleteVariable(nullptr, kCPU, v);
}

// An op that pushes many ops itself must not block on the limit: its worker
// is the one that drains the queue.
TEST_P(BackPressureTest, PushesFromInsideAnOpAreNotThrottled) {
  auto eng = Make(GetParam(), 2);
  VarHandle v = eng->NewVariable();
  VarHandle w = eng->NewVariable();
  std::atomic<int> ran{0};
  Engine* raw = eng.get();
  eng->PushSync(
      [&, raw](RunContext) {
        for (int i = 0; i < 100; ++i) {
          raw->PushSync([&ran](RunContext) { ran.fetch_add(1); }, kCPU, {},
                        {w});
        }
      },
      kCPU, {}, {v});
  eng->WaitForAll();
  EXPECT_EQ(ran.load(), 100);
  eng->DeleteVariable(nullptr, kCPU, v);
  eng->DeleteVariable(nullptr, kCPU, w);
}

// Several pushers, each throttled, and a thread waiting on a var the whole
// time: every op runs once and the waiter sees the last write.
TEST_P(BackPressureTest, ConcurrentPushersAndWaitersFinish) {
  auto eng = Make(GetParam(), 8);
  constexpr int kPushers = 4, kOps = 500;
  VarHandle shared = eng->NewVariable();
  std::atomic<int> ran{0};
  std::vector<std::thread> pushers;
  for (int p = 0; p < kPushers; ++p) {
    pushers.emplace_back([&] {
      VarHandle own = eng->NewVariable();
      for (int i = 0; i < kOps; ++i) {
        eng->PushSync([&ran](RunContext) { ran.fetch_add(1); }, kCPU, {shared},
                      {own});
      }
      eng->WaitForVar(own);
      eng->DeleteVariable(nullptr, kCPU, own);
    });
  }
  std::thread writer([&] {
    for (int i = 0; i < 50; ++i) {
      eng->PushSync([](RunContext) {}, kCPU, {}, {shared});
      eng->WaitForVar(shared);
    }
  });
  for (std::thread& t : pushers) t.join();
  writer.join();
  eng->WaitForAll();
  EXPECT_EQ(ran.load(), kPushers * kOps);
  EXPECT_EQ(shared.version(), 50u);
  eng->DeleteVariable(nullptr, kCPU, shared);
}

// A failing op under the limit poisons what it writes and reaches the next
// wait, as without back-pressure; the engine stays usable.
TEST_P(BackPressureTest, ErrorsStillReachTheNextWait) {
  auto eng = Make(GetParam(), 4);
  VarHandle v = eng->NewVariable();
  eng->PushSync([](RunContext) { throw std::runtime_error("boom"); }, kCPU, {},
                {v});
  for (int i = 0; i < 50; ++i) {
    eng->PushSync([](RunContext) {}, kCPU, {}, {v});
  }
  EXPECT_THROW(eng->WaitForVar(v), std::runtime_error);
  int x = 0;
  eng->PushSync([&x](RunContext) { x = 1; }, kCPU, {}, {v});
  eng->WaitForVar(v);
  EXPECT_EQ(x, 1);
  eng->DeleteVariable(nullptr, kCPU, v);
}

INSTANTIATE_TEST_SUITE_P(
    Engines, BackPressureTest,
    ::testing::Values(
        EngineConfig{EngineType::kThreaded, 1, "Pooled1"},
        EngineConfig{EngineType::kThreaded, 3, "Pooled3"},
        EngineConfig{EngineType::kThreadedPerDevice, 1, "PerDevice1"},
        EngineConfig{EngineType::kThreadedPerDevice, 2, "PerDevice2"}),
    testing::EngineConfigName);

TEST(BackPressureOptions, ReadFromEnvWithTypedErrors) {
  unsetenv("MX_ENGINE_MAX_PENDING");
  EXPECT_EQ(EngineOptions::FromEnv().max_pending_ops,
            EngineOptions::kDefaultMaxPendingOps);
  setenv("MX_ENGINE_MAX_PENDING", "0", 1);
  EXPECT_EQ(EngineOptions::FromEnv().max_pending_ops, 0);
  setenv("MX_ENGINE_MAX_PENDING", "4096", 1);
  EXPECT_EQ(EngineOptions::FromEnv().max_pending_ops, 4096);
  for (const char* bad : {"-1", "many", "1.5"}) {
    setenv("MX_ENGINE_MAX_PENDING", bad, 1);
    try {
      EngineOptions::FromEnv();
      ADD_FAILURE() << bad;
    } catch (const ConfigError& e) {
      EXPECT_NE(std::string(e.what()).find("MX_ENGINE_MAX_PENDING"),
                std::string::npos)
          << e.what();
    }
  }
  unsetenv("MX_ENGINE_MAX_PENDING");
  EngineOptions options;
  options.max_pending_ops = -1;
  EXPECT_THROW(Engine::Create(options), InvalidArgument);
}

}  // namespace
}  // namespace engine
}  // namespace mx
