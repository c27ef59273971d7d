// Helpers shared by the engine's tests: the engine configurations a
// parameterized test runs under, and a thread that completes asynchronous
// operations from outside the engine's workers.
//
//   using mx::testing::EngineTest;
//   TEST_P(EngineTest, Runs) { engine_->PushSync(...); ... }
//   INSTANTIATE_TEST_SUITE_P(AllEngines, EngineTest,
//                            ::testing::ValuesIn(AllEngineConfigs()),
//                            EngineConfigName);
#ifndef MXCORE_TESTING_ENGINE_TEST_UTIL_H_
#define MXCORE_TESTING_ENGINE_TEST_UTIL_H_

#include <condition_variable>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <ostream>
#include <string>
#include <thread>
#include <vector>

#include "engine/engine.h"
#include "gtest/gtest.h"

namespace mx {
namespace testing {

// An engine type and its CPU worker thread count, named for test output.
struct EngineConfig {
  engine::EngineType type;
  int threads;
  const char* name;
};
void PrintTo(const EngineConfig& c, std::ostream* os);
std::string EngineConfigName(const ::testing::TestParamInfo<EngineConfig>& p);

// Naive; pooled with 1 and 2 workers; per-device with 1 and 2.
std::vector<EngineConfig> AllEngineConfigs();

// An engine of `c`'s type and threads, the other options from `options`.
std::unique_ptr<engine::Engine> MakeEngine(const EngineConfig& c,
                                           engine::EngineOptions options = {});

// A test run once per engine configuration, on a fresh engine each time.
class EngineTest : public ::testing::TestWithParam<EngineConfig> {
 protected:
  void SetUp() override { engine_ = MakeEngine(GetParam()); }
  void TearDown() override { engine_.reset(); }
  bool naive() const { return GetParam().type == engine::EngineType::kNaive; }
  std::unique_ptr<engine::Engine> engine_;
};

// Runs posted functions in order on a thread of its own, so tests exercise
// completion callbacks that arrive from outside the engine's workers.
// The destructor runs what is queued, then joins.
class AsyncCompleter {
 public:
  AsyncCompleter();
  ~AsyncCompleter();
  AsyncCompleter(const AsyncCompleter&) = delete;
  AsyncCompleter& operator=(const AsyncCompleter&) = delete;
  void Post(std::function<void()> fn);

 private:
  void Loop();
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::function<void()>> queue_;
  bool stop_ = false;
  std::thread thread_;  // Last: starts after the members it uses.
};

}  // namespace testing
}  // namespace mx

#endif  // MXCORE_TESTING_ENGINE_TEST_UTIL_H_
