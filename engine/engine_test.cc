// The engines' ordering of reads and writes, variable lifetimes and
// shutdown, under every engine configuration (errors:
// engine_errors_test.cc).
#include "engine/engine.h"

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <random>
#include <thread>
#include <vector>

#include "base/error.h"
#include "gtest/gtest.h"
#include "testing/engine_test_util.h"

namespace mx {
namespace engine {
namespace {

using std::chrono::milliseconds;
using testing::AsyncCompleter;
using testing::EngineTest;

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
    std::unique_ptr<Engine> eng = testing::MakeEngine(GetParam());
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

INSTANTIATE_TEST_SUITE_P(AllEngines, EngineTest,
                         ::testing::ValuesIn(testing::AllEngineConfigs()),
                         testing::EngineConfigName);

}  // namespace
}  // namespace engine
}  // namespace mx
