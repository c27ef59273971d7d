// What the engine adds to device operations, on a fake device whose streams
// keep time (timed_device.h), so it runs without a GPU: each operation
// spends `launch_us` of host time (a kernel launch with its library's host
// work) and queues `device_us` of device work.
//   RawLaunchAndWait:  the launch and a stream synchronize, no engine.
//   OpAndWait:         one operation and WaitForVar (a single call's
//                      latency), the per-device engine with the pusher
//                      launching (on_pusher=1) or the workers only (0).
//   Queued/<n>:        n operations on one var, then one wait.
// Run with:
//   bazel run --config=opt //engine:device_launch_benchmark
#include <chrono>
#include <memory>

#include "benchmark/benchmark.h"
#include "engine/engine.h"
#include "engine/timed_device.h"

namespace mx {
namespace engine {
namespace {

using std::chrono::microseconds;

const TimedDevice& Device() {
  static const auto* device = new TimedDevice(Context::kFirstPluginDevice + 43);
  return *device;
}

void SpinFor(microseconds host_work) {
  const auto until = TimedDevice::Clock::now() + host_work;
  while (TimedDevice::Clock::now() < until) {
  }
}

void Launch(RunContext rctx, microseconds launch, microseconds work) {
  SpinFor(launch);
  TimedDevice::Launch(rctx.stream, work);
}

void BM_RawLaunchAndWait(benchmark::State& state) {
  const Context ctx = Device().context();
  RunContext rctx{ctx, ThreadStream(ctx)};
  const microseconds work(state.range(0)), launch(state.range(1));
  for (auto _ : state) {
    Launch(rctx, launch, work);
    SynchronizeStream(ctx, rctx.stream);
  }
}
BENCHMARK(BM_RawLaunchAndWait)
    ->Args({250, 10})
    ->Args({5, 10})
    ->ArgNames({"device_us", "launch_us"})
    ->Unit(benchmark::kMicrosecond)
    ->UseRealTime();

std::unique_ptr<Engine> MakeEngine(bool on_pusher) {
  EngineOptions options;
  options.type = EngineType::kThreadedPerDevice;
  options.launch_device_ops_on_pusher = on_pusher;
  return Engine::Create(options);
}

void BM_OpAndWait(benchmark::State& state) {
  std::unique_ptr<Engine> engine = MakeEngine(state.range(0) != 0);
  const microseconds work(state.range(1)), launch(state.range(2));
  const Context ctx = Device().context();
  VarHandle var = engine->NewVariable();
  for (auto _ : state) {
    engine->PushSync([=](RunContext rctx) { Launch(rctx, launch, work); }, ctx,
                     {}, {var});
    engine->WaitForVar(var);
  }
  engine->DeleteVariable(nullptr, Context::CPU(), var);
  engine->WaitForAll();
}
BENCHMARK(BM_OpAndWait)
    ->ArgsProduct({{0, 1}, {250, 5}, {10}})
    ->ArgNames({"on_pusher", "device_us", "launch_us"})
    ->Unit(benchmark::kMicrosecond)
    ->UseRealTime();

void BM_Queued(benchmark::State& state) {
  std::unique_ptr<Engine> engine = MakeEngine(state.range(0) != 0);
  const int count = static_cast<int>(state.range(1));
  const microseconds work(state.range(2)), launch(state.range(3));
  const Context ctx = Device().context();
  VarHandle var = engine->NewVariable();
  for (auto _ : state) {
    for (int i = 0; i < count; ++i) {
      engine->PushSync([=](RunContext rctx) { Launch(rctx, launch, work); },
                       ctx, {}, {var});
    }
    engine->WaitForVar(var);
  }
  state.SetItemsProcessed(state.iterations() * count);
  engine->DeleteVariable(nullptr, Context::CPU(), var);
  engine->WaitForAll();
}
BENCHMARK(BM_Queued)
    ->ArgsProduct({{0, 1}, {20}, {250, 5}, {10}})
    ->ArgNames({"on_pusher", "ops", "device_us", "launch_us"})
    ->Unit(benchmark::kMicrosecond)
    ->UseRealTime();

}  // namespace
}  // namespace engine
}  // namespace mx

BENCHMARK_MAIN();
