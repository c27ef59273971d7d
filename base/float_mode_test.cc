// The CPU float mode: denormals flushed inside a scope, the thread's own
// mode back after it, runtime threads keeping it, and ParallelFor's helper
// threads computing as their caller does.
#include "base/float_mode.h"

#include <atomic>
#include <cstdint>
#include <limits>
#include <thread>

#include "base/parallel.h"
#include "gtest/gtest.h"

namespace mx {
namespace {

#if defined(__x86_64__)

constexpr float kDenormal = 1e-39f;  // Below FLT_MIN (1.18e-38).

// Arithmetic the compiler cannot fold: a denormal input (DAZ reads it as
// 0) and a product of normal numbers whose result is denormal (FTZ gives 0).
float DenormalTimesOne() {
  volatile float tiny = kDenormal, one = 1.0f;
  return tiny * one;
}
float UnderflowingProduct() {
  volatile float a = 1e-30f, b = 1e-10f;
  return a * b;
}

TEST(FloatMode, FlushesByDefaultInsideAScopeOnly) {
  static_assert(kDenormal < std::numeric_limits<float>::min());
  ASSERT_TRUE(FlushDenormals());
  std::thread([] {
    EXPECT_EQ(DenormalTimesOne(), kDenormal);  // A new thread: IEEE.
    EXPECT_NE(UnderflowingProduct(), 0.0f);
    {
      const CpuFloatModeScope scope;
      EXPECT_NE(ThreadFloatMode(), 0u);
      EXPECT_EQ(DenormalTimesOne(), 0.0f);
      EXPECT_EQ(UnderflowingProduct(), 0.0f);
    }
    EXPECT_EQ(ThreadFloatMode(), 0u);  // The thread's own mode is back.
    EXPECT_EQ(DenormalTimesOne(), kDenormal);
  }).join();
}

TEST(FloatMode, SetFlushDenormalsReturnsThePreviousSetting) {
  EXPECT_TRUE(SetFlushDenormals(false));
  std::thread([] {
    const CpuFloatModeScope scope;
    EXPECT_EQ(ThreadFloatMode(), 0u);
    EXPECT_EQ(DenormalTimesOne(), kDenormal);
  }).join();
  EXPECT_FALSE(SetFlushDenormals(true));
  EXPECT_TRUE(FlushDenormals());
}

TEST(FloatMode, RuntimeThreadsKeepTheModeAndFollowChanges) {
  std::thread([] {
    CpuFloatModeScope::MarkRuntimeThread();
    { const CpuFloatModeScope scope; }
    EXPECT_EQ(DenormalTimesOne(), 0.0f);  // Kept after the scope.
    const bool was = SetFlushDenormals(false);
    { const CpuFloatModeScope scope; }
    EXPECT_EQ(DenormalTimesOne(), kDenormal);  // The next scope turned it off.
    SetFlushDenormals(was);
  }).join();
}

TEST(FloatMode, ParallelForChunksComputeInTheCallersMode) {
  // MX_CPU_KERNEL_NTHREADS=4 (BUILD): chunks run on the pool's threads too.
  ASSERT_EQ(KernelThreads(), 4);
  for (const bool flush : {true, false, true}) {
    std::thread([flush] {
      const bool was = SetFlushDenormals(flush);
      const CpuFloatModeScope scope;
      std::atomic<int> flushed{0}, kept{0}, chunks{0};
      std::atomic<bool> other_thread{false};
      const std::thread::id caller = std::this_thread::get_id();
      ParallelFor(64, 1, [&](int64_t b, int64_t e) {
        ++chunks;
        if (std::this_thread::get_id() != caller) other_thread = true;
        for (int64_t i = b; i < e; ++i) {
          (DenormalTimesOne() == 0.0f ? flushed : kept) += 1;
        }
        // Long enough for the pool's threads to take chunks.
        std::this_thread::sleep_for(std::chrono::milliseconds(2));
      });
      EXPECT_EQ(chunks.load(), 4);
      EXPECT_TRUE(other_thread.load());
      EXPECT_EQ(flushed.load(), flush ? 64 : 0);
      EXPECT_EQ(kept.load(), flush ? 0 : 64);
      SetFlushDenormals(was);
    }).join();
  }
}

#else

TEST(FloatMode, OnlyOnX86) {
  GTEST_SKIP() << "the float mode is applied on x86-64 only";
}

#endif

}  // namespace
}  // namespace mx
