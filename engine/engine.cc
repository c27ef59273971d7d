// Engine selection and the small pieces of the public API that every engine
// shares.
#include <sys/syscall.h>
#include <unistd.h>

#include <cstdio>
#include <exception>
#include <thread>

#include "base/env.h"
#include "base/error.h"
#include "engine/engine_impl.h"

namespace mx {
namespace engine {

uint64_t VarHandle::version() const {
  return var_ == nullptr ? 0 : var_->version.load(std::memory_order_acquire);
}

uint64_t VarHandle::id() const { return var_ == nullptr ? 0 : var_->id; }

void CallbackOnComplete::operator()() const {
  engine_->Complete(block_, nullptr);
}

void CallbackOnComplete::operator()(std::exception_ptr error) const {
  engine_->Complete(block_, std::move(error));
}

EngineOptions EngineOptions::FromEnv() {
  EngineOptions options;
  const std::string type = env::GetChoice(
      "MX_ENGINE_TYPE", "ThreadedEnginePerDevice",
      {"NaiveEngine", "ThreadedEngine", "ThreadedEnginePerDevice"});
  if (type == "NaiveEngine") {
    options.type = EngineType::kNaive;
  } else if (type == "ThreadedEngine") {
    options.type = EngineType::kThreaded;
    // The shared pool serves every device: default to one worker per core.
    options.cpu_worker_threads =
        std::max(1u, std::thread::hardware_concurrency());
  }
  options.cpu_worker_threads = static_cast<int>(env::GetInt(
      "MX_CPU_WORKER_NTHREADS", options.cpu_worker_threads, 1, 1024));
  options.max_pending_ops = env::GetInt(
      "MX_ENGINE_MAX_PENDING", options.max_pending_ops, 0, int64_t{1} << 40);
  return options;
}

std::unique_ptr<Engine> Engine::Create(const EngineOptions& options) {
  if (options.cpu_worker_threads < 1 || options.device_worker_threads < 1) {
    throw InvalidArgument("Engine::Create: worker thread counts must be >= 1");
  }
  if (options.max_pending_ops < 0) {
    throw InvalidArgument("Engine::Create: max_pending_ops must be >= 0");
  }
  std::unique_ptr<Engine> engine;
  switch (options.type) {
    case EngineType::kNaive:
      // Runs each op inside its push: nothing is ever pending.
      return CreateNaiveEngine();
    case EngineType::kThreaded:
      engine = CreateThreadedEngine(options);
      break;
    case EngineType::kThreadedPerDevice:
      engine = CreateThreadedEnginePerDevice(options);
      break;
  }
  if (engine == nullptr) {
    throw InvalidArgument("Engine::Create: unknown engine type");
  }
  static_cast<EngineBase*>(engine.get())
      ->SetMaxPending(options.max_pending_ops);
  return engine;
}

std::shared_ptr<Engine> Engine::GetShared() {
  // Initialization is retried on the next call if FromEnv throws.
  static std::shared_ptr<Engine> engine(Create(EngineOptions::FromEnv()));
  return engine;
}

namespace {

// Leaving main (or calling exit) with operations still queued: glibc runs
// the exiting thread's thread_local destructors before any static
// destructor, so waiting here lets those operations finish while what they
// use is alive. Otherwise the engine waits only when its own static is
// destroyed, after the statics of everything first used after it (oneDNN's
// primitive tables, a plugin's caches), and an operation still running then
// crashed inside them. Installed on the process's main thread only: other
// threads ending must not wait for everyone's work.
struct WaitAtMainThreadExit {
  ~WaitAtMainThreadExit() {
    try {
      Engine::Get()->WaitForAll();
    } catch (const std::exception& e) {
      // Nobody waited for this operation's result; say so once.
      std::fprintf(stderr, "mxcore: an operation failed before exit: %s\n",
                   e.what());
    } catch (...) {
      std::fprintf(stderr, "mxcore: an operation failed before exit\n");
    }
  }
};

}  // namespace

Engine* Engine::Get() {
  static Engine* engine = GetShared().get();
  thread_local bool exit_wait_checked = false;
  if (!exit_wait_checked) {
    exit_wait_checked = true;
    if (getpid() == static_cast<pid_t>(syscall(SYS_gettid))) {
      thread_local WaitAtMainThreadExit exit_wait;
      (void)exit_wait;
    }
  }
  return engine;
}

}  // namespace engine
}  // namespace mx
