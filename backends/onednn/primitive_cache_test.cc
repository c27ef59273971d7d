#include "backends/onednn/primitive_cache.h"

#include <atomic>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "backends/common/attr_parse.h"
#include "gtest/gtest.h"

namespace mx_onednn {
namespace {

std::shared_ptr<const int> Get(PrimitiveCache& cache, const std::string& key,
                               int value, int* created) {
  return cache.GetOrCreate<int>(key, [&] {
    ++*created;
    return std::make_shared<int>(value);
  });
}

TEST(PrimitiveCache, CreatesOncePerKey) {
  PrimitiveCache cache(4);
  int created = 0;
  EXPECT_EQ(*Get(cache, "a", 1, &created), 1);
  EXPECT_EQ(*Get(cache, "a", 2, &created), 1);
  EXPECT_EQ(*Get(cache, "b", 3, &created), 3);
  EXPECT_EQ(created, 2);
  EXPECT_EQ(cache.hits(), 1u);
  EXPECT_EQ(cache.misses(), 2u);
}

TEST(PrimitiveCache, DropsTheLeastRecentlyUsedEntryWhenFull) {
  PrimitiveCache cache(2);
  int created = 0;
  Get(cache, "a", 1, &created);
  Get(cache, "b", 2, &created);
  Get(cache, "a", 1, &created);  // b is now the least recently used.
  Get(cache, "c", 3, &created);
  EXPECT_EQ(cache.size(), 2u);
  EXPECT_EQ(created, 3);
  Get(cache, "a", 1, &created);  // Still cached.
  EXPECT_EQ(created, 3);
  Get(cache, "b", 2, &created);  // Was dropped: created again.
  EXPECT_EQ(created, 4);
}

TEST(PrimitiveCache, AnEvictedEntryStaysAliveWhileHeld) {
  PrimitiveCache cache(1);
  int created = 0;
  std::shared_ptr<const int> held = Get(cache, "a", 7, &created);
  Get(cache, "b", 8, &created);
  EXPECT_EQ(cache.size(), 1u);
  EXPECT_EQ(*held, 7);
}

TEST(PrimitiveCache, ConcurrentCallersAgreeOnOneEntryPerKey) {
  PrimitiveCache cache(8);
  std::atomic<int> created{0};
  std::vector<std::thread> threads;
  std::vector<const int*> seen(8);
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&, t] {
      for (int round = 0; round < 200; ++round) {
        auto p = cache.GetOrCreate<int>("k" + std::to_string(round % 4), [&] {
          ++created;
          return std::make_shared<int>(round % 4);
        });
        EXPECT_EQ(*p, round % 4);
        if (round == 0) seen[t] = p.get();
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(cache.size(), 4u);
  // Every caller of k0 after the race got the same object.
  EXPECT_EQ(*cache.GetOrCreate<int>("k0", [] { return nullptr; }), 0);
}

TEST(AttrParse, ReadsMxnetAttributeStrings) {
  EXPECT_EQ(mxplugin::ParseBool("True"), true);
  EXPECT_EQ(mxplugin::ParseBool("0"), false);
  EXPECT_EQ(mxplugin::ParseBool("yes"), std::nullopt);
  EXPECT_EQ(mxplugin::ParseInt(" 12 "), 12);
  EXPECT_EQ(mxplugin::ParseInt("1.5"), std::nullopt);
  EXPECT_EQ(mxplugin::ParseFloat("0.25"), 0.25);
  EXPECT_EQ(mxplugin::ParseTuple("(3, 3)"), (std::vector<int64_t>{3, 3}));
  EXPECT_EQ(mxplugin::ParseTuple("[2,1]"), (std::vector<int64_t>{2, 1}));
  EXPECT_EQ(mxplugin::ParseTuple("(3,)"), (std::vector<int64_t>{3}));
  EXPECT_EQ(mxplugin::ParseTuple("None"), (std::vector<int64_t>{}));
  EXPECT_EQ(mxplugin::ParseTuple("(3, x)"), std::nullopt);
}

}  // namespace
}  // namespace mx_onednn
