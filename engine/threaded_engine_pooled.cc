// ThreadedEngine: one shared pool of workers runs the operations of every
// device. Simple, and the right choice when there is one device.
#include <memory>

#include "engine/threaded_engine.h"
#include "engine/worker_pool.h"

namespace mx {
namespace engine {
namespace {

class ThreadedEnginePooled final : public ThreadedEngine {
 public:
  explicit ThreadedEnginePooled(const EngineOptions& options)
      : pool_(std::make_unique<WorkerPool>(
            options.cpu_worker_threads,
            [this](OprBlock* block) { Execute(block); })) {}

  ~ThreadedEnginePooled() override {
    WaitAllCompleted();
    pool_.reset();
  }

  const char* type_name() const override { return "ThreadedEngine"; }

 protected:
  void Schedule(OprBlock* block) override { pool_->Push(block); }

 private:
  std::unique_ptr<WorkerPool> pool_;
};

}  // namespace

std::unique_ptr<Engine> CreateThreadedEngine(const EngineOptions& options) {
  return std::make_unique<ThreadedEnginePooled>(options);
}

}  // namespace engine
}  // namespace mx
