// Engine selection and the small pieces of the public API that every engine
// shares.
#include <unistd.h>

#include <thread>

#include "base/env.h"
#include "base/error.h"
#include "base/float_mode.h"
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
  options.exit_wait_seconds =
      env::GetInt("MX_ENGINE_EXIT_WAIT_S", options.exit_wait_seconds, 0, 86400);
  options.launch_device_ops_on_pusher = env::GetBool(
      "MX_ENGINE_DEVICE_LAUNCH_ON_PUSHER", options.launch_device_ops_on_pusher);
  FlushDenormals();  // Reads (and checks) MX_CPU_FLUSH_DENORMALS.
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
  static_cast<EngineBase*>(engine.get())
      ->SetExitWait(options.exit_wait_seconds);
  return engine;
}

namespace {

// Leaving main (or calling exit on the main thread) with operations still
// queued: glibc runs the exiting thread's thread_local destructors before
// any static destructor, so waiting here lets those operations finish while
// what they use is alive. Without it the process engine is not destroyed
// before those statics (arrays hold it) and its workers went on running
// operations inside destroyed statics (oneDNN's primitive tables, a
// plugin's caches): returning from main with a fused oneDNN executor's
// forward queued crashed. Installed on the process's main thread only:
// other threads ending must not wait for everyone's work.
class WaitAtMainThreadExit {
 public:
  ~WaitAtMainThreadExit() {
    // A forked child copies this object but has no worker threads; an
    // exit() from inside an operation counts that operation as pending.
    if (getpid() != pid_ || EngineBase::InsideOperation()) return;
    static_cast<EngineBase*>(Engine::Get())->WaitAtExit();
  }

 private:
  const pid_t pid_ = getpid();
};

void InstallExitWait() {
  thread_local bool checked = false;
  if (checked) return;
  checked = true;
  if (gettid() == getpid()) {
    thread_local WaitAtMainThreadExit exit_wait;
    (void)exit_wait;
  }
}

}  // namespace

std::shared_ptr<Engine> Engine::GetShared() {
  // Initialization is retried on the next call if FromEnv throws.
  static std::shared_ptr<Engine> engine(Create(EngineOptions::FromEnv()));
  InstallExitWait();
  return engine;
}

Engine* Engine::Get() {
  static Engine* engine = GetShared().get();
  InstallExitWait();
  return engine;
}

}  // namespace engine
}  // namespace mx
