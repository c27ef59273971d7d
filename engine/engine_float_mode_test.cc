// Operations compute in the process's CPU float mode (denormals flushed by
// default) under every engine configuration, with ParallelFor's helper
// threads following, and a pushing thread that ran one inline gets its own
// mode back.
#include <atomic>
#include <cstdint>
#include <thread>

#include "base/float_mode.h"
#include "base/parallel.h"
#include "engine/engine.h"
#include "gtest/gtest.h"
#include "testing/engine_test_util.h"

namespace mx {
namespace engine {
namespace {

using testing::EngineTest;

TEST_P(EngineTest, OperationsRunInTheProcessFloatMode) {
#if !defined(__x86_64__)
  GTEST_SKIP() << "the float mode is applied on x86-64 only";
#endif
  const uint32_t own_mode = ThreadFloatMode();
  VarHandle var = engine_->NewVariable();
  for (const bool flush : {true, false, true}) {
    const bool was = SetFlushDenormals(flush);
    for (const FnProperty prop :
         {FnProperty::kNormal, FnProperty::kInlineIfReady}) {
      std::atomic<uint32_t> op_mode{~0u};
      std::atomic<int> chunks_in_other_modes{0};
      engine_->PushSync(
          [&](RunContext) {
            op_mode = ThreadFloatMode();
            // MX_CPU_KERNEL_NTHREADS=2 (BUILD): a worker's loop uses the
            // pool's thread too.
            ParallelFor(1 << 16, 1, [&](int64_t, int64_t) {
              if (ThreadFloatMode() != op_mode.load()) ++chunks_in_other_modes;
            });
          },
          Context::CPU(), {}, {var}, prop);
      engine_->WaitForAll();
      EXPECT_EQ(op_mode.load() != 0, flush);
      EXPECT_EQ(chunks_in_other_modes.load(), 0);
      EXPECT_EQ(ThreadFloatMode(), own_mode);
    }
    SetFlushDenormals(was);
  }
  engine_->DeleteVariable([](RunContext) {}, Context::CPU(), var);
  engine_->WaitForAll();
}

INSTANTIATE_TEST_SUITE_P(AllEngines, EngineTest,
                         ::testing::ValuesIn(testing::AllEngineConfigs()),
                         testing::EngineConfigName);

}  // namespace
}  // namespace engine
}  // namespace mx
