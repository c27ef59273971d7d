// ParallelFor on a chunk runner (SetChunkRunner), as a plugin's thread
// runtime provides one. A test binary of its own: the runner is set once
// per process. BUILD runs this with MX_CPU_KERNEL_NTHREADS=4.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <mutex>
#include <set>
#include <stdexcept>
#include <thread>
#include <vector>

#include "base/parallel.h"

namespace mx {
namespace {

std::atomic<int> runs{0};

// Chunk 0 on the caller, every other chunk on a thread of its own.
void RunOnThreads(void* user_data, int64_t chunks,
                  void (*body)(void* arg, int64_t begin, int64_t end),
                  void* arg) {
  ++runs;
  EXPECT_EQ(user_data, &runs);
  std::vector<std::thread> threads;
  for (int64_t c = 1; c < chunks; ++c) {
    threads.emplace_back(body, arg, c, c + 1);
  }
  body(arg, 0, 1);
  for (std::thread& t : threads) t.join();
}

void Unused(void*, int64_t, void (*)(void*, int64_t, int64_t), void*) {
  ADD_FAILURE() << "a second runner was used";
}

TEST(ChunkRunnerTest, ParallelForRunsItsChunksOnTheRunner) {
  ASSERT_TRUE(SetChunkRunner(RunOnThreads, &runs));
  EXPECT_FALSE(SetChunkRunner(Unused, nullptr));  // The first one wins.
  EXPECT_FALSE(SetChunkRunner(nullptr, nullptr));
  for (int64_t n : {1, 7, 1000, 4099}) {
    const int before = runs;
    std::vector<std::atomic<int>> hits(static_cast<size_t>(n));
    std::mutex mu;
    std::set<std::thread::id> ids;
    ParallelFor(n, 1, [&](int64_t b, int64_t e) {
      {
        std::lock_guard<std::mutex> lock(mu);
        ids.insert(std::this_thread::get_id());
      }
      for (int64_t i = b; i < e; ++i) hits[static_cast<size_t>(i)]++;
    });
    for (int64_t i = 0; i < n; ++i) {
      ASSERT_EQ(hits[static_cast<size_t>(i)].load(), 1) << n << " " << i;
    }
    // One element runs inline; more go to the runner, in 4 chunks at most.
    EXPECT_EQ(runs - before, n > 1 ? 1 : 0) << n;
    EXPECT_EQ(ids.size(), n > 1 ? std::min<size_t>(4, n) : 1u) << n;
  }
}

TEST(ChunkRunnerTest, ExceptionsAndNestedLoopsThroughTheRunner) {
  SetChunkRunner(RunOnThreads, &runs);  // Set by the test above, or here.
  std::atomic<int> finished{0};
  try {
    ParallelFor(8, 1, [&](int64_t b, int64_t e) {
      for (int64_t i = b; i < e; ++i) {
        if (i == 5) throw std::runtime_error("chunk 5");
        ++finished;
      }
    });
    ADD_FAILURE() << "no exception";
  } catch (const std::runtime_error& e) {
    EXPECT_STREQ(e.what(), "chunk 5");
  }
  EXPECT_EQ(finished.load(), 7);  // Chunks [0,2) [2,4) [4,6) [6,8).
  std::atomic<int64_t> sum{0};
  ParallelFor(4, 1, [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i) {
      ParallelFor(100, 1, [&](int64_t ib, int64_t ie) {
        for (int64_t j = ib; j < ie; ++j) sum += j;
      });
    }
  });
  EXPECT_EQ(sum.load(), 4 * 4950);
  {
    ScopedKernelThreads one(1);  // No runner for one thread.
    const int before = runs;
    ParallelFor(1000, 1, [](int64_t, int64_t) {});
    EXPECT_EQ(runs, before);
  }
}

}  // namespace
}  // namespace mx
