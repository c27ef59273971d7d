// The pools of base/object_pool.h and the leases of base/thread_scratch.h.
#include "base/object_pool.h"

#include <memory>
#include <set>
#include <thread>
#include <vector>

#include "base/thread_scratch.h"
#include "gtest/gtest.h"

namespace mx {
namespace {

struct Record : RecyclingPool<Record>::Node {
  std::vector<int> values;
};

TEST(RecyclingPool, ObjectsStayConstructedBetweenUses) {
  Record* r = RecyclingPool<Record>::Take();
  r->values.assign(100, 7);
  r->values.clear();
  RecyclingPool<Record>::Return(r);
  // The pool hands out the last returned object first on this thread
  // (with AddressSanitizer it forwards to new/delete instead).
  Record* again = RecyclingPool<Record>::Take();
#ifndef MXCORE_OBJECT_POOL_DISABLED
  EXPECT_EQ(again, r);
  EXPECT_GE(again->values.capacity(), 100u);
#endif
  EXPECT_TRUE(again->values.empty());
  RecyclingPool<Record>::Return(again);
}

TEST(RecyclingPool, ObjectsTakenOnOneThreadReturnOnAnother) {
  // More than a thread keeps (two batches), so whole batches travel
  // through the global list.
  constexpr int kCount = 1000;
  std::vector<Record*> taken;
  for (int i = 0; i < kCount; ++i) {
    taken.push_back(RecyclingPool<Record>::Take());
    taken.back()->values.push_back(i);
  }
  EXPECT_EQ(std::set<Record*>(taken.begin(), taken.end()).size(),
            size_t{kCount});
  std::thread([&] {
    for (Record* r : taken) {
      r->values.clear();
      RecyclingPool<Record>::Return(r);
    }
  }).join();
  std::vector<Record*> again;
  for (int i = 0; i < kCount; ++i) {
    again.push_back(RecyclingPool<Record>::Take());
    EXPECT_TRUE(again.back()->values.empty());
  }
  for (Record* r : again) RecyclingPool<Record>::Return(r);
}

TEST(PoolAllocator, SharedObjectsLiveInPooledBlocks) {
  struct Counted {
    explicit Counted(int* live) : live(live) { ++*live; }
    ~Counted() { --*live; }
    int* live;
  };
  int live = 0;
  {
    std::vector<std::shared_ptr<Counted>> objects;
    for (int i = 0; i < 300; ++i) {
      objects.push_back(
          std::allocate_shared<Counted>(PoolAllocator<Counted>(), &live));
    }
    EXPECT_EQ(live, 300);
    // Dropped on another thread, as arrays are by engine workers.
    std::thread([moved = std::move(objects)]() mutable {
      moved.clear();
    }).join();
  }
  EXPECT_EQ(live, 0);
  std::vector<int, PoolAllocator<int>> many(1000, 3);  // n > 1: operator new
  EXPECT_EQ(many[999], 3);
}

struct Scratch {
  std::vector<int> values;
  int* releases = nullptr;
  void Release() {
    values.clear();
    if (releases != nullptr) ++*releases;
  }
};

TEST(ScratchLease, NestedLeasesGetTheirOwnObject) {
  int releases = 0;
  Scratch* outer_object = nullptr;
  {
    const ScratchLease<Scratch> outer;
    outer->releases = &releases;
    outer->values = {1, 2, 3};
    outer_object = &*outer;
    {
      const ScratchLease<Scratch> inner;
      EXPECT_NE(&*inner, outer_object);
      inner->values.push_back(9);
    }
    EXPECT_EQ(outer->values.size(), 3u);  // The inner lease left it alone.
  }
  EXPECT_EQ(releases, 1);
  const ScratchLease<Scratch> again;
  EXPECT_EQ(&*again, outer_object);  // Reused, released (cleared).
  EXPECT_TRUE(again->values.empty());
}

}  // namespace
}  // namespace mx
