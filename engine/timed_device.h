// Test-only: a fake device whose streams keep time instead of running work,
// for engine tests and benchmarks without a GPU. Like a GPU's, a launch
// returns at once: the work occupies its stream for a given duration after
// the stream's earlier work. Events record when their stream's queued work
// ends; waiting for an event on a stream moves that stream's work behind
// it; waiting on the host spins until the time has passed.
//
//   TimedDevice device(Context::kFirstPluginDevice + 41);
//   engine->PushSync([](RunContext rctx) {
//     TimedDevice::Launch(rctx.stream, std::chrono::microseconds(250));
//   }, device.context(), {}, {var});
//   engine->WaitForVar(var);  // Returns once the 250 us have passed.
#ifndef MXCORE_ENGINE_TIMED_DEVICE_H_
#define MXCORE_ENGINE_TIMED_DEVICE_H_

#include <chrono>

#include "base/context.h"

namespace mx {
namespace engine {

class TimedDevice {
 public:
  using Clock = std::chrono::steady_clock;
  struct Span {
    Clock::time_point start, end;
  };

  // Registers streams (and events, unless `with_events` is false) for
  // `dev_type` with the engine, allowing launches on any thread
  // (DeviceStreamOps::launch_on_any_thread) unless told otherwise; the
  // destructor unregisters them.
  explicit TimedDevice(int dev_type, bool with_events = true,
                       bool launch_on_any_thread = true);
  ~TimedDevice();
  TimedDevice(const TimedDevice&) = delete;
  TimedDevice& operator=(const TimedDevice&) = delete;

  Context context(int dev_id = 0) const;

  // Queues `duration` of work on `stream` (a RunContext::stream of this
  // device) after its earlier work; returns when that work runs.
  static Span Launch(void* stream, std::chrono::nanoseconds duration);

 private:
  const int dev_type_;
};

}  // namespace engine
}  // namespace mx

#endif  // MXCORE_ENGINE_TIMED_DEVICE_H_
