// ParallelFor on its persistent pool; BUILD runs this with
// MX_CPU_KERNEL_NTHREADS=4.
#include "base/parallel.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <mutex>
#include <set>
#include <stdexcept>
#include <thread>
#include <vector>

namespace mx {
namespace {

TEST(ParallelForTest, UsesTheConfiguredThreads) {
  EXPECT_EQ(KernelThreads(), 4);
}

TEST(ParallelForTest, ScopedKernelThreadsLimitsThisThreadOnly) {
  EXPECT_EQ(KernelThreadsHere(), 4);
  {
    ScopedKernelThreads two(2);
    EXPECT_EQ(KernelThreadsHere(), 2);
    {
      ScopedKernelThreads more(8);  // Never above an outer limit.
      EXPECT_EQ(KernelThreadsHere(), 2);
      ScopedKernelThreads one(1);
      EXPECT_EQ(KernelThreadsHere(), 1);
    }
    EXPECT_EQ(KernelThreadsHere(), 2);
    int other = 0;
    std::thread([&] { other = KernelThreadsHere(); }).join();
    EXPECT_EQ(other, 4);
  }
  EXPECT_EQ(KernelThreadsHere(), 4);
  {
    ScopedKernelThreads huge(1000);  // Never above KernelThreads().
    EXPECT_EQ(KernelThreadsHere(), 4);
  }
}

TEST(ParallelForTest, OneKernelThreadRunsEveryChunkOnTheCaller) {
  ScopedKernelThreads one(1);
  const std::thread::id me = std::this_thread::get_id();
  std::mutex mu;
  std::set<std::thread::id> ids;
  int64_t covered = 0;
  ParallelFor(4096, 1, [&](int64_t b, int64_t e) {
    std::lock_guard<std::mutex> lock(mu);
    ids.insert(std::this_thread::get_id());
    covered += e - b;
  });
  EXPECT_EQ(covered, 4096);
  EXPECT_EQ(ids, std::set<std::thread::id>{me});
}

TEST(ParallelForTest, CoversEveryIndexOnce) {
  for (int64_t n : {0, 1, 3, 4, 5, 1000, 4099}) {
    for (int64_t grain : {1, 7, 1024}) {
      std::vector<std::atomic<int>> hits(static_cast<size_t>(n));
      ParallelFor(n, grain, [&](int64_t b, int64_t e) {
        ASSERT_LE(0, b);
        ASSERT_LT(b, e);
        ASSERT_LE(e, n);
        for (int64_t i = b; i < e; ++i) hits[static_cast<size_t>(i)]++;
      });
      for (int64_t i = 0; i < n; ++i) {
        ASSERT_EQ(hits[static_cast<size_t>(i)].load(), 1)
            << "n=" << n << " grain=" << grain << " i=" << i;
      }
    }
  }
}

TEST(ParallelForTest, ChunksRunOnMoreThanOneThread) {
  // Each chunk waits (up to 10 s) until two threads have entered: true only
  // when the pool really runs chunks beside the caller.
  std::mutex mu;
  std::set<std::thread::id> ids;
  ParallelFor(4, 1, [&](int64_t, int64_t) {
    {
      std::lock_guard<std::mutex> lock(mu);
      ids.insert(std::this_thread::get_id());
    }
    const auto deadline =
        std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (std::chrono::steady_clock::now() < deadline) {
      {
        std::lock_guard<std::mutex> lock(mu);
        if (ids.size() >= 2) return;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
  });
  EXPECT_GE(ids.size(), 2u);
}

TEST(ParallelForTest, ThreadsPersistAcrossCalls) {
  // A thread started per call would never run chunks of two calls.
  thread_local int chunks_on_this_thread = 0;
  const std::thread::id caller = std::this_thread::get_id();
  std::atomic<int> most_on_a_worker{0};
  for (int call = 0; call < 200; ++call) {
    ParallelFor(4, 1, [&](int64_t, int64_t) {
      // Every chunk takes a while, so workers wake in time to claim some.
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
      if (std::this_thread::get_id() == caller) return;
      const int seen = ++chunks_on_this_thread;
      int prev = most_on_a_worker.load();
      while (seen > prev &&
             !most_on_a_worker.compare_exchange_weak(prev, seen)) {
      }
    });
  }
  EXPECT_GT(most_on_a_worker.load(), 1);
}

TEST(ParallelForTest, AChunksExceptionReachesTheCallerAfterEveryChunk) {
  for (int rep = 0; rep < 20; ++rep) {
    std::atomic<int> finished{0};
    try {
      ParallelFor(8, 1, [&](int64_t b, int64_t e) {
        for (int64_t i = b; i < e; ++i) {
          if (i == 5) throw std::runtime_error("chunk 5");
          std::this_thread::sleep_for(std::chrono::microseconds(100));
          ++finished;
        }
      });
      ADD_FAILURE() << "no exception";
    } catch (const std::runtime_error& e) {
      EXPECT_STREQ(e.what(), "chunk 5");
    }
    // 4 threads, grain 1: chunks [0,2) [2,4) [4,6) [6,8). Element 5 ends
    // its chunk; every other chunk still runs, so 7 elements finished.
    EXPECT_EQ(finished.load(), 7);
  }
}

TEST(ParallelForTest, ConcurrentAndNestedCallers) {
  std::vector<std::thread> callers;
  std::atomic<int64_t> total{0};
  for (int t = 0; t < 8; ++t) {
    callers.emplace_back([&] {
      for (int rep = 0; rep < 50; ++rep) {
        ParallelFor(64, 1, [&](int64_t b, int64_t e) {
          for (int64_t i = b; i < e; ++i) {
            ParallelFor(100, 10,
                        [&](int64_t ib, int64_t ie) { total += ie - ib; });
          }
        });
      }
    });
  }
  for (auto& c : callers) c.join();
  EXPECT_EQ(total.load(), int64_t{8} * 50 * 64 * 100);
}

}  // namespace
}  // namespace mx
