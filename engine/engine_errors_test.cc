// How the engines report failures: errors reach the waiters (on any
// thread) and the operations that depend on a failed one, once; misuse of
// variables and handles is a typed error; a device fault names the
// operation. Every engine configuration.
#include <atomic>
#include <chrono>
#include <memory>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "base/error.h"
#include "engine/engine.h"
#include "gtest/gtest.h"
#include "testing/engine_test_util.h"

namespace mx {
namespace engine {
namespace {

using std::chrono::milliseconds;
using testing::AsyncCompleter;
using testing::EngineTest;

const Context kCPU = Context::CPU();

// A device that reports a fault when its stream is synchronized (as CUDA
// reports an illegal address): the error reaches the wait and names the
// operation whose work faulted.
TEST_P(EngineTest, DeviceFaultAtSynchronizeNamesTheOperation) {
  const int type = Context::kFirstPluginDevice + 40;
  static int stream_token = 0;
  DeviceStreamOps ops;
  ops.create = [](int) -> void* { return &stream_token; };
  ops.destroy = [](int, void*) {};
  ops.synchronize = [](int, void*) {
    throw RuntimeError("fakedev: an illegal memory access was encountered");
  };
  RegisterDeviceStreams(type, ops);
  const Context dev{static_cast<Context::DeviceType>(type), 0};
  VarHandle a = engine_->NewVariable();
  engine_->PushSync([](RunContext) {}, dev, {}, {a}, FnProperty::kNormal, 0,
                    "faulting_kernel");
  try {
    engine_->WaitForVar(a);
    ADD_FAILURE() << "the fault did not reach the wait";
  } catch (const RuntimeError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("\"faulting_kernel\""), std::string::npos) << what;
    EXPECT_NE(what.find("illegal memory access"), std::string::npos) << what;
  }
  engine_->DeleteVariable(nullptr, kCPU, a);
  engine_->WaitForAll();
  UnregisterDeviceStreams(type);
}

TEST_P(EngineTest, VarWrittenTwiceIsInvalidArgument) {
  VarHandle a = engine_->NewVariable(), b = engine_->NewVariable();
  try {
    engine_->PushSync([](RunContext) {}, kCPU, {}, {a, b, a},
                      FnProperty::kNormal, 0, "dup");
    FAIL() << "expected InvalidArgument";
  } catch (const InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find("op \"dup\""), std::string::npos)
        << e.what();
    EXPECT_NE(std::string(e.what()).find("mutable_vars[0] and mutable_vars[2]"),
              std::string::npos)
        << e.what();
  }
  EXPECT_THROW(engine_->NewOperator(
                   [](RunContext, CallbackOnComplete d) { d(); }, {}, {b, b}),
               InvalidArgument);
  engine_->WaitForAll();
  EXPECT_EQ(a.version(), 0u);
}

TEST_P(EngineTest, DeletedVarUsedAgainIsStateError) {
  VarHandle a = engine_->NewVariable();
  OprHandle op = engine_->NewOperator(
      [](RunContext, CallbackOnComplete d) { d(); }, {a}, {});
  engine_->DeleteVariable(nullptr, kCPU, a);
  EXPECT_THROW(engine_->PushSync([](RunContext) {}, kCPU, {a}, {}), StateError);
  EXPECT_THROW(engine_->PushSync([](RunContext) {}, kCPU, {}, {a}), StateError);
  EXPECT_THROW(engine_->WaitForVar(a), StateError);
  EXPECT_THROW(engine_->DeleteVariable(nullptr, kCPU, a), StateError);
  EXPECT_THROW(engine_->Push(op, kCPU), StateError);
  engine_->DeleteOperator(op);
  engine_->WaitForAll();
  // The slot is recycled, yet the old handle stays invalid.
  VarHandle b = engine_->NewVariable();
  EXPECT_THROW(engine_->WaitForVar(a), StateError);
  engine_->WaitForVar(b);
}

TEST_P(EngineTest, NullAndForeignHandlesAreInvalidArgument) {
  EXPECT_THROW(engine_->PushSync([](RunContext) {}, kCPU, {VarHandle()}, {}),
               InvalidArgument);
  auto other = testing::MakeEngine(GetParam());
  VarHandle foreign = other->NewVariable();
  EXPECT_THROW(engine_->WaitForVar(foreign), InvalidArgument);
}

TEST_P(EngineTest, ErrorPropagatesToDependentsAndIsReportedOnce) {
  VarHandle x = engine_->NewVariable(), y = engine_->NewVariable(),
            z = engine_->NewVariable(), other = engine_->NewVariable();
  std::atomic<bool> downstream_ran{false}, independent_ran{false};
  engine_->PushSync(
      [](RunContext) { throw std::out_of_range("boom in producer"); }, kCPU, {},
      {x}, FnProperty::kNormal, 0, "producer");
  engine_->PushSync([&](RunContext) { downstream_ran = true; }, kCPU, {x}, {y});
  engine_->PushSync([&](RunContext) { downstream_ran = true; }, kCPU, {y}, {z});
  engine_->PushSync([&](RunContext) { independent_ran = true; }, kCPU, {},
                    {other});
  // The original exception type and message reach the waiter.
  EXPECT_THROW(
      {
        try {
          engine_->WaitForVar(z);
        } catch (const std::out_of_range& e) {
          EXPECT_STREQ(e.what(), "boom in producer");
          throw;
        }
      },
      std::out_of_range);
  EXPECT_FALSE(downstream_ran.load());
  engine_->WaitForVar(other);
  EXPECT_TRUE(independent_ran.load());
  // Versions still count the (skipped) writes.
  EXPECT_EQ(x.version(), 1u);
  EXPECT_EQ(z.version(), 1u);
  // Reported once: other waits on affected vars and WaitForAll are quiet.
  EXPECT_NO_THROW(engine_->WaitForVar(x));
  EXPECT_NO_THROW(engine_->WaitForAll());
  // The vars are usable again.
  int value = 0;
  engine_->PushSync([&value](RunContext) { value = 5; }, kCPU, {}, {x});
  engine_->PushSync([&value](RunContext) { value += 1; }, kCPU, {x}, {z});
  EXPECT_NO_THROW(engine_->WaitForVar(z));
  EXPECT_EQ(value, 6);
}

TEST_P(EngineTest, CollectiveRunsOnAFailedInputAndPassesTheErrorOn) {
  VarHandle x = engine_->NewVariable(), y = engine_->NewVariable(),
            z = engine_->NewVariable();
  std::atomic<int> collectives{0};
  std::atomic<bool> downstream_ran{false};
  engine_->PushSync([](RunContext) { throw std::out_of_range("boom"); }, kCPU,
                    {}, {x});
  // A collective step (all processes must take part) runs anyway, on both
  // its read and its written var...
  engine_->PushAsync(
      [&](RunContext rctx, CallbackOnComplete done) {
        EXPECT_TRUE(rctx.upstream_failed);
        ++collectives;
        done();
      },
      kCPU, {x}, {y}, FnProperty::kCollective);
  engine_->PushAsync(
      [&](RunContext, CallbackOnComplete done) {
        ++collectives;
        done();
      },
      kCPU, {}, {x}, FnProperty::kCollective);
  // ...and what it writes still carries the error: readers are skipped.
  engine_->PushSync([&](RunContext) { downstream_ran = true; }, kCPU, {y}, {z});
  EXPECT_THROW(engine_->WaitForVar(z), std::out_of_range);
  EXPECT_EQ(collectives.load(), 2);
  EXPECT_FALSE(downstream_ran.load());
  EXPECT_NO_THROW(engine_->WaitForAll());
  // Without an upstream error it completes cleanly.
  engine_->PushAsync(
      [&](RunContext rctx, CallbackOnComplete done) {
        EXPECT_FALSE(rctx.upstream_failed);
        ++collectives;
        done();
      },
      kCPU, {}, {y}, FnProperty::kCollective);
  EXPECT_NO_THROW(engine_->WaitForVar(y));
  EXPECT_EQ(collectives.load(), 3);
}

TEST_P(EngineTest, WaitForAllRethrowsFirstFailureOnce) {
  VarHandle a = engine_->NewVariable();
  engine_->PushSync([](RunContext) { throw InvalidArgument("first"); }, kCPU,
                    {}, {a});
  engine_->WaitForVar(VarHandle(engine_->NewVariable()));
  EXPECT_THROW(engine_->WaitForAll(), InvalidArgument);
  EXPECT_NO_THROW(engine_->WaitForAll());
  EXPECT_NO_THROW(engine_->WaitForVar(a));
}

TEST_P(EngineTest, FailureOfReadOnlyOpReachesWaitForAll) {
  VarHandle a = engine_->NewVariable();
  engine_->PushSync([](RunContext) { throw std::runtime_error("reader"); },
                    kCPU, {a}, {});
  EXPECT_NO_THROW(engine_->WaitForVar(a));
  EXPECT_THROW(engine_->WaitForAll(), std::runtime_error);
}

TEST_P(EngineTest, AsyncOpCanFailThroughItsCallback) {
  AsyncCompleter completer;
  VarHandle a = engine_->NewVariable(), b = engine_->NewVariable();
  engine_->PushAsync(
      [&completer](RunContext, CallbackOnComplete done) {
        completer.Post([done] {
          done(std::make_exception_ptr(RuntimeError("device fault")));
        });
      },
      kCPU, {}, {a});
  bool ran = false;
  engine_->PushSync([&ran](RunContext) { ran = true; }, kCPU, {a}, {b});
  EXPECT_THROW(engine_->WaitForVar(b), RuntimeError);
  EXPECT_FALSE(ran);
}

TEST_P(EngineTest, ErrorReachesWaiterOnAnotherThread) {
  VarHandle a = engine_->NewVariable();
  engine_->PushSync(
      [](RunContext) {
        std::this_thread::sleep_for(milliseconds(5));
        throw RuntimeError("late");
      },
      kCPU, {}, {a});
  std::atomic<bool> caught{false};
  std::thread waiter([&] {
    try {
      engine_->WaitForVar(a);
    } catch (const RuntimeError&) {
      caught = true;
    }
  });
  waiter.join();
  EXPECT_TRUE(caught.load());
}

INSTANTIATE_TEST_SUITE_P(AllEngines, EngineTest,
                         ::testing::ValuesIn(testing::AllEngineConfigs()),
                         testing::EngineConfigName);

}  // namespace
}  // namespace engine
}  // namespace mx
