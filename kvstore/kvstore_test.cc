// The KVStore's semantics in one process ("local"), its errors, and the
// grouping of arrays into messages. The cross-process store is tested under
// mpirun (dist_test.cc).
#include "kvstore/kvstore.h"

#include <cstdlib>

#include "base/error.h"
#include "gtest/gtest.h"
#include "imperative/nd.h"
#include "kvstore/comm.h"

namespace mx {
namespace kvstore {
namespace {

NDArray Floats(std::vector<float> v) {
  return NDArray::FromVector<float>({static_cast<int64_t>(v.size())}, v);
}

std::vector<float> Values(const NDArray& a) { return a.ToVector<float>(); }

TEST(KVStore, InitPushPull) {
  auto kv = KVStore::Create("local");
  EXPECT_EQ(kv->rank(), 0);
  EXPECT_EQ(kv->num_workers(), 1);
  EXPECT_EQ(kv->type(), "local");
  NDArray init = Floats({1, 2, 3});
  kv->Init({7}, {init});
  NDArray out = nd::zeros({3});
  kv->Pull({7}, {out});
  EXPECT_EQ(Values(out), (std::vector<float>{1, 2, 3}));
  // Two values for one key (one per device) are summed; the caller's
  // values are left alone.
  NDArray a = Floats({1, 1, 1}), b = Floats({10, 20, 30});
  kv->Push({7, 7}, {a, b});
  kv->Pull({7}, {out});
  EXPECT_EQ(Values(out), (std::vector<float>{11, 21, 31}));
  EXPECT_EQ(Values(a), (std::vector<float>{1, 1, 1}));
  // Init copied the value: changing it later changes nothing stored.
  init.SyncCopyFromCPU(std::vector<float>{0, 0, 0}.data(), 3);
  kv->Pull({7}, {out});
  EXPECT_EQ(Values(out), (std::vector<float>{11, 21, 31}));
}

// One process has no peer to tell: Abort changes nothing.
TEST(KVStore, AbortOfALocalStoreIsANoOp) {
  auto kv = KVStore::Create("local");
  kv->Abort("nothing to tell");
  NDArray a = Floats({1, 2});
  kv->PushPull({3}, {a}, {a});
  EXPECT_EQ(Values(a), (std::vector<float>{1, 2}));
}

TEST(KVStore, PushPullInPlaceAndIntoOutputs) {
  auto kv = KVStore::Create("device");
  NDArray g = Floats({1, 2});
  kv->PushPull({0}, {g}, {g});  // One worker: the identity, in place.
  EXPECT_EQ(Values(g), (std::vector<float>{1, 2}));
  NDArray x = Floats({1, 2}), y = Floats({3, 4});
  NDArray o1 = nd::zeros({2}), o2 = nd::zeros({2});
  kv->PushPull({1, 1}, {x, y}, {o1, o2});
  EXPECT_EQ(Values(o1), (std::vector<float>{4, 6}));
  EXPECT_EQ(Values(o2), (std::vector<float>{4, 6}));
  EXPECT_EQ(Values(x), (std::vector<float>{1, 2}));
  // An initialized key stores the sum, as Push does.
  kv->Init({2}, {nd::zeros({2})});
  kv->PushPull({2, 2}, {x, y}, {o1, o2});
  NDArray stored = nd::zeros({2});
  kv->Pull({2}, {stored});
  EXPECT_EQ(Values(stored), (std::vector<float>{4, 6}));
  // Outputs are checked before anything is pushed.
  EXPECT_THROW(kv->PushPull({3, 3}, {x, y}, {o1, Floats({1, 2, 3})}),
               ShapeError);
}

TEST(KVStore, BroadcastAndOptimizer) {
  auto kv = KVStore::Create("local");
  NDArray w = Floats({1, 2}), copy = nd::zeros({2});
  kv->Broadcast({3}, {w}, {copy});
  EXPECT_EQ(Values(copy), (std::vector<float>{1, 2}));
  std::vector<int> updated;
  kv->SetOptimizer([&](int key, const NDArray& merged, const NDArray& stored) {
    updated.push_back(key);
    nd::CallInto("_mul_scalar", {merged}, {{"scalar", "0.5"}}, stored);
  });
  EXPECT_TRUE(kv->has_optimizer());
  // With an optimizer, PushPull updates the stored value and pulls it.
  NDArray g = Floats({4, 8}), out = nd::zeros({2});
  kv->PushPull({3}, {g}, {out});
  EXPECT_EQ(Values(out), (std::vector<float>{2, 4}));
  EXPECT_EQ(updated, (std::vector<int>{3}));
}

TEST(KVStore, Errors) {
  auto kv = KVStore::Create("local");
  NDArray v = Floats({1, 2});
  kv->Init({1}, {v});
  EXPECT_THROW(kv->Init({1}, {v}), AlreadyExists);
  EXPECT_THROW(kv->Push({2}, {v}), NotFound);
  EXPECT_THROW(kv->Pull({2}, {v}), NotFound);
  EXPECT_THROW(kv->Push({1}, {Floats({1, 2, 3})}), ShapeError);
  EXPECT_THROW(kv->Push({1}, {NDArray::FromVector<int32_t>({2}, {1, 2})}),
               DTypeError);
  EXPECT_THROW(kv->Push({1, 2}, {v}), InvalidArgument);
  EXPECT_THROW(kv->PushPull({5}, {v}, {}), InvalidArgument);
  EXPECT_THROW(kv->PushPull({5}, {v}, {Floats({1})}), ShapeError);
  EXPECT_THROW(kv->Push({1}, {NDArray()}), InvalidArgument);
  EXPECT_THROW(KVStore::Create("dist_async"), NotFound);
  EXPECT_THROW(KVStore::Create("nccl"), NotImplemented);
}

// A Comm that refuses arrays of key 13 (as NCCL refuses host arrays),
// registered as a store type of its own.
class RefusingComm : public Comm {
 public:
  int rank() const override { return 0; }
  int size() const override { return 1; }
  void AllReduce(std::vector<Piece> pieces, int) override { Check(pieces); }
  void Broadcast(std::vector<Piece> pieces, int) override { Check(pieces); }
  void Barrier() override {}

 private:
  static void Check(const std::vector<Piece>& pieces) {
    for (const Piece& p : pieces) {
      if (p.key == 13) throw InvalidArgument("refusing key 13");
    }
  }
};

TEST(KVStore, CommTypesRegisteredByOtherTargetsAndRefusedInits) {
  RegisterCommType("_test_refusing",
                   [] { return std::make_unique<RefusingComm>(); });
  auto kv = KVStore::Create("_test_refusing");
  EXPECT_EQ(kv->type(), "_test_refusing");
  // A refused Init stores nothing: the keys stay free.
  EXPECT_THROW(kv->Init({12, 13}, {Floats({1}), Floats({2})}), InvalidArgument);
  NDArray out = Floats({0});
  EXPECT_THROW(kv->Pull({12}, {out}), NotFound);
  kv->Init({12}, {Floats({5})});
  kv->Pull({12}, {out});
  EXPECT_EQ(Values(out), (std::vector<float>{5}));
}

TEST(Buckets, GroupsConsecutiveArraysOfOneDtypeUpToTheLimit) {
  auto piece = [](int64_t n, DType t) {
    return Piece{0, NDArray({n}, Context::CPU(), t)};
  };
  std::vector<Piece> p = {piece(10, DType::kFloat32),    // 40 bytes
                          piece(10, DType::kFloat32),    // 40
                          piece(30, DType::kFloat32),    // 120: too much
                          piece(5, DType::kFloat64),     // another dtype
                          piece(100, DType::kFloat64)};  // alone: 800
  const auto b = Buckets(p, 100);
  ASSERT_EQ(b.size(), 4u);
  EXPECT_EQ(b[0], std::make_pair(size_t{0}, size_t{2}));
  EXPECT_EQ(b[1], std::make_pair(size_t{2}, size_t{3}));
  EXPECT_EQ(b[2], std::make_pair(size_t{3}, size_t{4}));
  EXPECT_EQ(b[3], std::make_pair(size_t{4}, size_t{5}));
  EXPECT_TRUE(Buckets({}, 100).empty());
  EXPECT_EQ(Buckets(p, 1 << 20).size(), 2u);  // Split by dtype only.
}

TEST(Buckets, BucketBytesFromEnv) {
  setenv("MX_KVSTORE_BUCKET_BYTES", "4096", 1);
  EXPECT_EQ(BucketBytesFromEnv(), 4096);
  setenv("MX_KVSTORE_BUCKET_BYTES", "0", 1);
  EXPECT_THROW(BucketBytesFromEnv(), ConfigError);
  setenv("MX_KVSTORE_BUCKET_BYTES", "big", 1);
  EXPECT_THROW(BucketBytesFromEnv(), ConfigError);
  unsetenv("MX_KVSTORE_BUCKET_BYTES");
  EXPECT_EQ(BucketBytesFromEnv(), 1 << 20);
}

}  // namespace
}  // namespace kvstore
}  // namespace mx
