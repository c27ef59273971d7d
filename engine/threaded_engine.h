// Internal: dependency tracking shared by the two threaded engines. Each var
// keeps a FIFO of operations waiting for it; an operation is dispatched to a
// worker pool when every one of its vars has granted it access (shared for
// reads, exclusive for writes). Subclasses decide which pool runs it.
#ifndef MXCORE_ENGINE_THREADED_ENGINE_H_
#define MXCORE_ENGINE_THREADED_ENGINE_H_

#include <mutex>

#include "engine/engine_impl.h"

namespace mx {
namespace engine {

class ThreadedEngine : public EngineBase {
 public:
  void WaitForVar(VarHandle var) override;
  void WaitForAll() override;
  bool DeleteVariableIfIdle(VarHandle var) override;

 protected:
  // Queues a ready block on a worker pool.
  virtual void Schedule(OprBlock* block) = 0;
  // Whether a device block that is ready at its push should run on the
  // pushing thread (see EngineOptions::launch_device_ops_on_pusher).
  virtual bool LaunchOnPusher(const OprBlock& block) {
    (void)block;
    return false;
  }

  void PushBlock(OprBlock* block) override;
  void ReleaseVars(OprBlock* block, const ErrorRef& error) override;

 private:
  void Dispatch(OprBlock* block);
  // Runs a ready device block on this thread, on a lent launch stream.
  void LaunchHere(OprBlock* block);

  // Makes the appends of one push atomic with respect to other pushes, so
  // that two ops sharing vars are queued in the same order on every var
  // (otherwise two threads pushing concurrently could deadlock them).
  std::mutex push_mu_;
};

}  // namespace engine
}  // namespace mx

#endif  // MXCORE_ENGINE_THREADED_ENGINE_H_
