#include "testing/engine_test_util.h"

#include <utility>

namespace mx {
namespace testing {

void PrintTo(const EngineConfig& c, std::ostream* os) { *os << c.name; }

std::string EngineConfigName(const ::testing::TestParamInfo<EngineConfig>& p) {
  return p.param.name;
}

std::vector<EngineConfig> AllEngineConfigs() {
  using engine::EngineType;
  return {{EngineType::kNaive, 1, "Naive"},
          {EngineType::kThreaded, 1, "Threaded1"},
          {EngineType::kThreaded, 2, "Threaded2"},
          {EngineType::kThreadedPerDevice, 1, "PerDevice1"},
          {EngineType::kThreadedPerDevice, 2, "PerDevice2"}};
}

std::unique_ptr<engine::Engine> MakeEngine(const EngineConfig& c,
                                           engine::EngineOptions options) {
  options.type = c.type;
  options.cpu_worker_threads = c.threads;
  return engine::Engine::Create(options);
}

AsyncCompleter::AsyncCompleter() : thread_([this] { Loop(); }) {}

AsyncCompleter::~AsyncCompleter() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  thread_.join();
}

void AsyncCompleter::Post(std::function<void()> fn) {
  // Notified under the lock: once the posted function runs, the test may
  // end and destroy this completer, while a poster that notified after
  // unlocking could still be inside notify_all (TSan saw it).
  std::lock_guard<std::mutex> lock(mu_);
  queue_.push_back(std::move(fn));
  cv_.notify_all();
}

void AsyncCompleter::Loop() {
  while (true) {
    std::function<void()> fn;
    {
      std::unique_lock<std::mutex> lock(mu_);
      cv_.wait(lock, [this] { return stop_ || !queue_.empty(); });
      if (queue_.empty()) return;
      fn = std::move(queue_.front());
      queue_.pop_front();
    }
    fn();
  }
}

}  // namespace testing
}  // namespace mx
