// NaiveEngine: runs every operation synchronously on the pushing thread, one
// at a time. The reference for the threaded engines and a debugging aid
// (MX_ENGINE_TYPE=NaiveEngine makes failures surface at the op that failed).
#include <condition_variable>
#include <mutex>

#include "engine/engine_impl.h"

namespace mx {
namespace engine {
namespace {

class NaiveEngine final : public EngineBase {
 public:
  ~NaiveEngine() override { WaitAllCompleted(); }

  const char* type_name() const override { return "NaiveEngine"; }

  void WaitForVar(VarHandle h) override {
    Var* var = Check(h, "WaitForVar");
    std::lock_guard<std::recursive_mutex> lock(exec_mu_);
    RethrowVarError(var);
  }

  bool DeleteVariableIfIdle(VarHandle h) override {
    Var* var = Check(h, "DeleteVariable");
    // Operations run one at a time under exec_mu_ and are complete when
    // their push returns. Holding the lock, a var is idle unless an op
    // running on this thread (recursively) uses it; deleting it then is
    // what DeleteVariable does too (a nested push runs at once).
    std::lock_guard<std::recursive_mutex> lock(exec_mu_);
    return FreeIdleVar(var);
  }

  void WaitForAll() override {
    WaitAllCompleted();
    std::lock_guard<std::recursive_mutex> lock(exec_mu_);
    RethrowFirstFailure();
  }

 protected:
  void PushBlock(OprBlock* block) override {
    // Recursive: an operation may push further operations while it runs.
    std::lock_guard<std::recursive_mutex> lock(exec_mu_);
    block->free_at_finish = false;
    Execute(block);
    if (!block->done.load(std::memory_order_acquire)) {
      // An asynchronous op completes on another thread: wait for it here, so
      // that ops still run strictly one after another.
      std::unique_lock<std::mutex> done_lock(done_mu_);
      done_cv_.wait(done_lock, [block] {
        return block->done.load(std::memory_order_acquire);
      });
    }
    FreeBlock(block);
  }

  void ReleaseVars(OprBlock* block, const ErrorRef& error) override {
    for (const VarHandle& h : block->opr->mutable_vars) {
      Var* var = var_of(h);
      var->error = error;
      var->version.fetch_add(1, std::memory_order_acq_rel);
      if (block->opr->frees_var == var) FreeVar(var);
    }
  }

  void OnBlockDone(OprBlock* block) override {
    if (ExecutingOnThisThread()) {
      // Completed on the thread that holds exec_mu_ and pushed it (other
      // threads cannot be inside Execute meanwhile): it reads `done`
      // after Execute returns, and nobody else waits for this block.
      block->done.store(true, std::memory_order_release);
      return;
    }
    std::lock_guard<std::mutex> lock(done_mu_);
    block->done.store(true, std::memory_order_release);
    done_cv_.notify_all();
  }

 private:
  std::recursive_mutex exec_mu_;
  std::mutex done_mu_;
  std::condition_variable done_cv_;
};

}  // namespace

std::unique_ptr<Engine> CreateNaiveEngine() {
  return std::make_unique<NaiveEngine>();
}

}  // namespace engine
}  // namespace mx
