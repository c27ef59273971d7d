#include "engine/engine.h"

#include <unistd.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <deque>
#include <memory>
#include <mutex>
#include <random>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "base/error.h"
#include "gtest/gtest.h"

namespace mx {
namespace engine {
namespace {

using std::chrono::milliseconds;

struct Config {
  EngineType type;
  int threads;
  const char* name;
};

void PrintTo(const Config& c, std::ostream* os) { *os << c.name; }

std::unique_ptr<Engine> Make(const Config& c) {
  EngineOptions options;
  options.type = c.type;
  options.cpu_worker_threads = c.threads;
  return Engine::Create(options);
}

// Completes asynchronous ops from a thread of its own, so tests exercise
// completion callbacks that arrive from outside the engine's workers.
class AsyncCompleter {
 public:
  AsyncCompleter() : thread_([this] { Loop(); }) {}
  ~AsyncCompleter() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      stop_ = true;
    }
    cv_.notify_all();
    thread_.join();
  }
  void Post(std::function<void()> fn) {
    // Notified under the lock: once the posted function runs, the test may
    // end and destroy this completer, while a poster that notified after
    // unlocking could still be inside notify_all (TSan saw it).
    std::lock_guard<std::mutex> lock(mu_);
    queue_.push_back(std::move(fn));
    cv_.notify_all();
  }

 private:
  void Loop() {
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
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::function<void()>> queue_;
  bool stop_ = false;
  std::thread thread_;
};

class EngineTest : public ::testing::TestWithParam<Config> {
 protected:
  void SetUp() override { engine_ = Make(GetParam()); }
  void TearDown() override { engine_.reset(); }
  bool naive() const { return GetParam().type == EngineType::kNaive; }
  std::unique_ptr<Engine> engine_;
};

const Context kCPU = Context::CPU();

TEST_P(EngineTest, VarVersionCountsWritesNotReads) {
  // Ten reads leave the version at 0.
  VarHandle var = engine_->NewVariable();
  EXPECT_EQ(var.version(), 0u);
  std::vector<OprHandle> oprs;
  std::atomic<int> runs{0};
  for (int i = 0; i < 10; ++i) {
    oprs.push_back(engine_->NewOperator(
        [&runs](RunContext, CallbackOnComplete done) {
          ++runs;
          done();
        },
        {var}, {}));
    engine_->Push(oprs.back(), kCPU);
  }
  engine_->WaitForAll();
  EXPECT_EQ(runs.load(), 10);
  EXPECT_EQ(var.version(), 0u);
  for (OprHandle op : oprs) engine_->DeleteOperator(op);
  engine_->DeleteVariable([](RunContext) {}, kCPU, var);
  engine_->WaitForAll();

  // Ten writes give version 10.
  var = engine_->NewVariable();
  EXPECT_EQ(var.version(), 0u);
  oprs.clear();
  for (int i = 0; i < 10; ++i) {
    oprs.push_back(engine_->NewOperator(
        [&runs](RunContext, CallbackOnComplete done) {
          ++runs;
          done();
        },
        {}, {var}));
    engine_->Push(oprs.back(), kCPU);
  }
  engine_->WaitForAll();
  EXPECT_EQ(runs.load(), 20);
  EXPECT_EQ(var.version(), 10u);
  for (OprHandle op : oprs) engine_->DeleteOperator(op);
  engine_->DeleteVariable([](RunContext) {}, kCPU, var);
  engine_->WaitForAll();
}

// Ops on a random DAG: each reads some vars and writes others, mixing a value
// derived from what it read into what it writes. Any ordering violation
// (read-after-write, write-after-read, write-after-write) changes the final
// values, which are compared with a sequential replay.
struct RandomOp {
  std::vector<int> reads, writes;
  Context ctx;
  FnProperty prop;
  int priority;
  bool async;
  int spin;
};

uint64_t Mix(uint64_t a, uint64_t b) {
  uint64_t h = a * 0x9E3779B97F4A7C15ull ^ (b + 0x632BE59BD9B4E019ull);
  h ^= h >> 29;
  return h * 0xBF58476D1CE4E5B9ull;
}

void Apply(const RandomOp& op, int id, std::vector<uint64_t>* values) {
  uint64_t acc = static_cast<uint64_t>(id);
  for (int r : op.reads) acc = Mix(acc, (*values)[r]);
  for (int w : op.writes) (*values)[w] = Mix(acc, (*values)[w]);
}

std::vector<RandomOp> RandomDag(int num_ops, int num_vars, uint32_t seed) {
  std::mt19937 rng(seed);
  const Context contexts[] = {Context::CPU(0), Context::CPU(1), Context::GPU(0),
                              Context::CPUPinned(0)};
  const FnProperty props[] = {
      FnProperty::kNormal, FnProperty::kNormal, FnProperty::kCPUPrioritized,
      FnProperty::kCopyToDevice, FnProperty::kCopyFromDevice};
  std::vector<RandomOp> ops(num_ops);
  for (RandomOp& op : ops) {
    std::vector<int> perm(num_vars);
    for (int i = 0; i < num_vars; ++i) perm[i] = i;
    std::shuffle(perm.begin(), perm.end(), rng);
    int nr = rng() % 4, nw = rng() % 3;
    op.reads.assign(perm.begin(), perm.begin() + nr);
    op.writes.assign(perm.begin() + nr, perm.begin() + nr + nw);
    op.ctx = contexts[rng() % 4];
    op.prop = props[rng() % 5];
    op.priority = static_cast<int>(rng() % 3);
    op.async = rng() % 4 == 0;
    op.spin = rng() % 8 == 0 ? static_cast<int>(rng() % 2000) : 0;
  }
  return ops;
}

TEST_P(EngineTest, RandomDagMatchesSequentialOrder) {
  const int kVars = 64, kOps = 3000;
  for (uint32_t seed : {1u, 2u, 3u}) {
    std::vector<RandomOp> ops = RandomDag(kOps, kVars, seed);
    std::vector<uint64_t> expected(kVars), actual(kVars);
    for (int v = 0; v < kVars; ++v) expected[v] = actual[v] = v;
    std::vector<uint64_t> expected_versions(kVars, 0);
    for (int i = 0; i < kOps; ++i) {
      Apply(ops[i], i, &expected);
      for (int w : ops[i].writes) ++expected_versions[w];
    }

    std::vector<VarHandle> vars;
    for (int v = 0; v < kVars; ++v) vars.push_back(engine_->NewVariable());
    AsyncCompleter completer;
    for (int i = 0; i < kOps; ++i) {
      const RandomOp& op = ops[i];
      std::vector<VarHandle> reads, writes;
      for (int r : op.reads) reads.push_back(vars[r]);
      for (int w : op.writes) writes.push_back(vars[w]);
      auto body = [&actual, &op, i] {
        volatile int sink = 0;
        for (int s = 0; s < op.spin; ++s) sink = sink + s;
        Apply(op, i, &actual);
      };
      if (op.async) {
        engine_->PushAsync(
            [body, &completer](RunContext, CallbackOnComplete done) {
              completer.Post([body, done] {
                body();
                done();
              });
            },
            op.ctx, reads, writes, op.prop, op.priority);
      } else {
        engine_->PushSync([body](RunContext) { body(); }, op.ctx, reads, writes,
                          op.prop, op.priority);
      }
    }
    engine_->WaitForAll();
    EXPECT_EQ(actual, expected) << "seed " << seed;
    for (int v = 0; v < kVars; ++v) {
      EXPECT_EQ(vars[v].version(), expected_versions[v]) << "var " << v;
      engine_->DeleteVariable(nullptr, kCPU, vars[v]);
    }
    engine_->WaitForAll();
  }
}

TEST_P(EngineTest, WaitForVarSeesEveryEarlierWrite) {
  VarHandle a = engine_->NewVariable();
  uint64_t value = 0;
  for (int i = 0; i < 200; ++i) {
    engine_->PushSync([&value](RunContext) { value = value * 3 + 1; }, kCPU, {},
                      {a});
  }
  engine_->WaitForVar(a);
  uint64_t expected = 0;  // Wraps modulo 2^64, like `value`.
  for (int i = 0; i < 200; ++i) expected = expected * 3 + 1;
  EXPECT_EQ(value, expected);
  EXPECT_EQ(a.version(), 200u);
}

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

TEST_P(EngineTest, ConcurrentPushersOnSharedReadVars) {
  // Four threads each own a chain of writes and all read one shared var.
  VarHandle shared = engine_->NewVariable();
  int base = 0;
  engine_->PushSync([&base](RunContext) { base = 7; }, kCPU, {}, {shared});
  std::vector<VarHandle> own(4);
  std::vector<int64_t> sums(4, 0);
  for (auto& v : own) v = engine_->NewVariable();
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 500; ++i) {
        engine_->PushSync([&, t](RunContext) { sums[t] += base; }, kCPU,
                          {shared}, {own[t]});
      }
      engine_->WaitForVar(own[t]);
    });
  }
  for (auto& th : threads) th.join();
  for (int t = 0; t < 4; ++t) {
    EXPECT_EQ(sums[t], 7 * 500);
    EXPECT_EQ(own[t].version(), 500u);
  }
  EXPECT_EQ(shared.version(), 1u);
}

TEST_P(EngineTest, ReadAndWriteOfOneVarCountsAsOneWrite) {
  VarHandle a = engine_->NewVariable();
  engine_->PushSync([](RunContext) {}, kCPU, {a, a}, {a});
  engine_->WaitForAll();
  EXPECT_EQ(a.version(), 1u);
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
  auto other = Make(GetParam());
  VarHandle foreign = other->NewVariable();
  EXPECT_THROW(engine_->WaitForVar(foreign), InvalidArgument);
}

TEST_P(EngineTest, DeleteVariableRunsAfterPendingOps) {
  VarHandle a = engine_->NewVariable();
  std::atomic<int> done{0};
  for (int i = 0; i < 20; ++i) {
    engine_->PushSync(
        [&done](RunContext) {
          std::this_thread::sleep_for(std::chrono::microseconds(200));
          ++done;
        },
        kCPU, {a}, {});
    engine_->PushSync([&done](RunContext) { ++done; }, kCPU, {}, {a});
  }
  int seen_at_delete = -1;
  engine_->DeleteVariable([&](RunContext) { seen_at_delete = done.load(); },
                          kCPU, a);
  engine_->WaitForAll();
  EXPECT_EQ(seen_at_delete, 40);
}

TEST_P(EngineTest, DeleteVariableIfIdleFreesOnlyAnIdleVar) {
  VarHandle a = engine_->NewVariable();
  engine_->PushSync([](RunContext) {}, kCPU, {}, {a});
  // (WaitForVar may return while its own read is being released.)
  engine_->WaitForAll();
  EXPECT_TRUE(engine_->DeleteVariableIfIdle(a));
  EXPECT_THROW(engine_->PushSync([](RunContext) {}, kCPU, {a}, {}), StateError);
  EXPECT_THROW(engine_->DeleteVariableIfIdle(a), StateError);
  if (naive()) return;  // Its ops never pend.

  // A var read or written by an op that has not run is not idle; the
  // deletion then goes through DeleteVariable and runs after that op.
  for (bool write : {false, true}) {
    VarHandle b = engine_->NewVariable();
    std::mutex mu;
    std::condition_variable cv;
    bool open = false, ran = false;
    auto gated = [&](RunContext) {
      std::unique_lock<std::mutex> lock(mu);
      cv.wait(lock, [&] { return open; });
      ran = true;
    };
    if (write) {
      engine_->PushSync(gated, kCPU, {}, {b});
    } else {
      engine_->PushSync(gated, kCPU, {b}, {});
    }
    EXPECT_FALSE(engine_->DeleteVariableIfIdle(b));
    bool ran_before_delete = false;
    engine_->DeleteVariable(
        [&](RunContext) {
          std::lock_guard<std::mutex> lock(mu);
          ran_before_delete = ran;
        },
        kCPU, b);
    {
      std::lock_guard<std::mutex> lock(mu);
      open = true;
    }
    cv.notify_all();
    engine_->WaitForAll();
    EXPECT_TRUE(ran_before_delete) << "write=" << write;
  }
}

TEST_P(EngineTest, WaitForAllOnAnotherThreadWhileOpsCompleteInline) {
  // Ops completed inside the engine's own Execute skip the idle lock unless
  // a thread waits: a waiter arriving at any moment must still wake (a
  // lost wake-up hangs this test).
  VarHandle v = engine_->NewVariable();
  std::atomic<bool> started{false}, stop{false};
  std::atomic<int> waits{0};
  std::thread waiter([&] {
    started = true;
    while (!stop.load()) {
      engine_->WaitForAll();
      ++waits;
    }
  });
  // The ops are pushed while the waiter loops (3000 take about a
  // millisecond, less than starting a thread may).
  while (!started.load()) std::this_thread::yield();
  constexpr int kOps = 3000;
  for (int i = 0; i < kOps; ++i) {
    engine_->PushSync([](RunContext) {}, kCPU, {}, {v},
                      FnProperty::kInlineIfReady);
  }
  engine_->WaitForAll();
  while (waits.load() == 0) std::this_thread::yield();  // At least one.
  stop = true;
  waiter.join();
  EXPECT_EQ(v.version(), static_cast<uint64_t>(kOps));
}

TEST_P(EngineTest, DeleteOperatorWaitsForItsPendingPushes) {
  VarHandle a = engine_->NewVariable();
  std::atomic<int> runs{0};
  OprHandle op = engine_->NewOperator(
      [&runs](RunContext, CallbackOnComplete d) {
        std::this_thread::sleep_for(std::chrono::microseconds(100));
        ++runs;
        d();
      },
      {}, {a});
  for (int i = 0; i < 10; ++i) engine_->Push(op, kCPU);
  engine_->DeleteOperator(op);
  EXPECT_THROW(engine_->Push(op, kCPU), InvalidArgument);
  engine_->WaitForAll();
  EXPECT_EQ(runs.load(), 10);
  EXPECT_EQ(a.version(), 10u);
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

TEST_P(EngineTest, OpPushedFromInsideAnOpRuns) {
  VarHandle a = engine_->NewVariable(), b = engine_->NewVariable();
  std::atomic<int> inner{0};
  Engine* eng = engine_.get();
  engine_->PushSync(
      [eng, b, &inner](RunContext) {
        eng->PushSync([&inner](RunContext) { inner = 1; }, Context::CPU(), {},
                      {b});
      },
      kCPU, {}, {a});
  engine_->WaitForAll();
  EXPECT_EQ(inner.load(), 1);
  EXPECT_EQ(b.version(), 1u);
}

TEST_P(EngineTest, ShutdownWithPendingWorkRunsItAll) {
  std::atomic<int> runs{0};
  {
    std::unique_ptr<Engine> eng = Make(GetParam());
    std::vector<VarHandle> vars;
    for (int i = 0; i < 8; ++i) vars.push_back(eng->NewVariable());
    for (int i = 0; i < 400; ++i) {
      eng->PushSync(
          [&runs](RunContext) {
            std::this_thread::sleep_for(std::chrono::microseconds(20));
            ++runs;
          },
          kCPU, {vars[(i + 1) % 8]}, {vars[i % 8]});
    }
    // A failure nobody waits for is dropped at shutdown.
    eng->PushSync([](RunContext) { throw RuntimeError("ignored"); }, kCPU, {},
                  {vars[0]});
    OprHandle leaked = eng->NewOperator(
        [](RunContext, CallbackOnComplete d) { d(); }, {}, {vars[1]});
    eng->Push(leaked, kCPU);
    // Destroyed with ops pending, vars and an operator never deleted.
  }
  EXPECT_EQ(runs.load(), 400);
}

INSTANTIATE_TEST_SUITE_P(
    AllEngines, EngineTest,
    ::testing::Values(Config{EngineType::kNaive, 1, "Naive"},
                      Config{EngineType::kThreaded, 1, "Threaded1"},
                      Config{EngineType::kThreaded, 2, "Threaded2"},
                      Config{EngineType::kThreadedPerDevice, 1, "PerDevice1"},
                      Config{EngineType::kThreadedPerDevice, 2, "PerDevice2"}),
    [](const ::testing::TestParamInfo<Config>& info) {
      return std::string(info.param.name);
    });

}  // namespace
}  // namespace engine
}  // namespace mx
