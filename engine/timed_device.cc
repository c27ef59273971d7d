#include "engine/timed_device.h"

#include <algorithm>
#include <mutex>
#include <thread>

#include "engine/engine.h"

namespace mx {
namespace engine {
namespace {

using Clock = TimedDevice::Clock;

// When the stream's queued work ends. Streams belong to one engine thread,
// but events recorded on them are waited for from others.
struct Stream {
  std::mutex mu;
  Clock::time_point busy_until{};
};

struct Event {
  std::mutex mu;
  Clock::time_point at{};
};

Clock::time_point EventTime(void* event) {
  auto* e = static_cast<Event*>(event);
  std::lock_guard<std::mutex> lock(e->mu);
  return e->at;
}

void SpinUntil(Clock::time_point t) {
  while (Clock::now() < t) std::this_thread::yield();
}

}  // namespace

TimedDevice::TimedDevice(int dev_type, bool with_events,
                         bool launch_on_any_thread)
    : dev_type_(dev_type) {
  DeviceStreamOps ops;
  ops.launch_on_any_thread = launch_on_any_thread;
  ops.create = [](int) -> void* { return new Stream(); };
  ops.destroy = [](int, void* stream) { delete static_cast<Stream*>(stream); };
  ops.synchronize = [](int, void* stream) {
    auto* s = static_cast<Stream*>(stream);
    Clock::time_point until;
    {
      std::lock_guard<std::mutex> lock(s->mu);
      until = s->busy_until;
    }
    SpinUntil(until);
  };
  if (with_events) {
    ops.create_event = [](int) -> void* { return new Event(); };
    ops.destroy_event = [](int, void* event) {
      delete static_cast<Event*>(event);
    };
    ops.record_event = [](int, void* event, void* stream) {
      auto* s = static_cast<Stream*>(stream);
      auto* e = static_cast<Event*>(event);
      std::lock_guard<std::mutex> lock_s(s->mu);
      std::lock_guard<std::mutex> lock_e(e->mu);
      e->at = s->busy_until;
    };
    ops.wait_event = [](int, void* event, void* stream) {
      const Clock::time_point at = EventTime(event);
      auto* s = static_cast<Stream*>(stream);
      std::lock_guard<std::mutex> lock(s->mu);
      s->busy_until = std::max(s->busy_until, at);
    };
    ops.query_event = [](int, void* event) {
      return Clock::now() >= EventTime(event);
    };
    ops.synchronize_event = [](int, void* event) {
      SpinUntil(EventTime(event));
    };
  }
  RegisterDeviceStreams(dev_type, std::move(ops));
}

TimedDevice::~TimedDevice() { UnregisterDeviceStreams(dev_type_); }

Context TimedDevice::context(int dev_id) const {
  return Context{static_cast<Context::DeviceType>(dev_type_), dev_id};
}

TimedDevice::Span TimedDevice::Launch(void* stream,
                                      std::chrono::nanoseconds duration) {
  auto* s = static_cast<Stream*>(stream);
  std::lock_guard<std::mutex> lock(s->mu);
  Span span;
  span.start = std::max(Clock::now(), s->busy_until);
  span.end = span.start + duration;
  s->busy_until = span.end;
  return span;
}

}  // namespace engine
}  // namespace mx
