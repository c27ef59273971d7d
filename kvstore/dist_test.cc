// The dist_sync KVStore across processes: run by mpirun_test.sh as
// `mpirun -np N dist_test` (N = 2 and 3). Every rank runs every test; a
// failure on any rank fails the run.
#include <cmath>
#include <cstdlib>
#include <random>

#include "autograd/autograd.h"
#include "base/error.h"
#include "engine/engine.h"
#include "gtest/gtest.h"
#include "imperative/nd.h"
#include "kvstore/kvstore.h"
#include "nn/nn.h"

namespace mx {
namespace kvstore {
namespace {

std::shared_ptr<KVStore> Dist() {
  return std::shared_ptr<KVStore>(KVStore::Create("dist_sync"));
}

TEST(DistSync, RanksAndWorkers) {
  auto kv = Dist();
  const char* size = std::getenv("OMPI_COMM_WORLD_SIZE");
  ASSERT_NE(size, nullptr) << "run under mpirun";
  EXPECT_EQ(kv->num_workers(), std::atoi(size));
  EXPECT_GE(kv->rank(), 0);
  EXPECT_LT(kv->rank(), kv->num_workers());
  kv->Barrier();
}

TEST(DistSync, IntegersSumExactly) {
  auto kv = Dist();
  const int r = kv->rank(), n = kv->num_workers();
  NDArray a = NDArray::FromVector<int32_t>({3}, {r + 1, -7 * r, 1 << 28});
  NDArray b = NDArray::FromVector<int64_t>(
      {2}, {(int64_t{1} << 40) + r, -(int64_t{1} << 50)});
  kv->PushPull({0, 1}, {a, b}, {a, b});
  EXPECT_EQ(a.ToVector<int32_t>(),
            (std::vector<int32_t>{n * (n + 1) / 2, -7 * n * (n - 1) / 2,
                                  n * (1 << 28)}));
  EXPECT_EQ(b.ToVector<int64_t>(),
            (std::vector<int64_t>{n * (int64_t{1} << 40) + n * (n - 1) / 2,
                                  -n * (int64_t{1} << 50)}));
}

TEST(DistSync, FloatsSumWithinRounding) {
  auto kv = Dist();
  const int r = kv->rank(), n = kv->num_workers();
  auto value = [](int rank, int i) {
    return static_cast<float>(std::sin(0.37 * i * (rank + 1)));
  };
  std::vector<float> mine(1000);
  for (int i = 0; i < 1000; ++i) mine[i] = value(r, i);
  NDArray f32 = NDArray::FromVector<float>({10, 100}, mine);
  NDArray f64 = nd::cast(f32, DType::kFloat64);
  NDArray f16 = nd::cast(f32, DType::kFloat16);
  NDArray out32 = nd::zeros({10, 100});
  kv->PushPull({5, 6, 7}, {f32, f64, f16},
               {out32, f64, f16});  // f32 into another array
  const std::vector<float> got = out32.ToVector<float>();
  const std::vector<double> got64 = f64.ToVector<double>();
  const std::vector<float> got16 =
      nd::cast(f16, DType::kFloat32).ToVector<float>();
  for (int i = 0; i < 1000; ++i) {
    double want = 0;
    for (int k = 0; k < n; ++k) want += value(k, i);
    ASSERT_NEAR(got[i], want, 1e-5 * n) << i;
    ASSERT_NEAR(got64[i], want, 1e-6 * n) << i;
    ASSERT_NEAR(got16[i], want, 4e-3 * n) << i;  // float16 rounding
  }
  EXPECT_EQ(f32.ToVector<float>(), mine);  // The input stays.
}

TEST(DistSync, BroadcastGivesRankZerosValue) {
  auto kv = Dist();
  const int r = kv->rank();
  NDArray v = NDArray::FromVector<float>({2}, {1.5f * r, 2.0f + r});
  NDArray out = nd::zeros({2});
  kv->Broadcast({11}, {v}, {out});
  EXPECT_EQ(out.ToVector<float>(), (std::vector<float>{0, 2}));
  // Init stores rank 0's value too: a Pull sees it.
  NDArray pulled = nd::zeros({2});
  kv->Pull({11}, {pulled});
  EXPECT_EQ(pulled.ToVector<float>(), (std::vector<float>{0, 2}));
}

TEST(DistSync, ManySmallKeysInBuckets) {
  setenv("MX_KVSTORE_BUCKET_BYTES", "64", 1);
  auto kv = Dist();
  unsetenv("MX_KVSTORE_BUCKET_BYTES");
  const int r = kv->rank(), n = kv->num_workers();
  std::vector<int> keys;
  std::vector<NDArray> values;
  for (int k = 0; k < 24; ++k) {
    const int64_t size = 1 + (k * 7) % 40;
    std::vector<float> v(size);
    for (int64_t i = 0; i < size; ++i) v[i] = static_cast<float>(k + i + r);
    NDArray a = NDArray::FromVector<float>({size}, v);
    keys.push_back(k);
    values.push_back(k % 5 == 4 ? nd::cast(a, DType::kInt32) : a);
  }
  kv->PushPull(keys, values, values);
  for (int k = 0; k < 24; ++k) {
    const NDArray got = nd::cast(values[k], DType::kFloat32);
    const std::vector<float> g = got.ToVector<float>();
    for (size_t i = 0; i < g.size(); ++i) {
      ASSERT_EQ(g[i], n * static_cast<float>(k + i) + n * (n - 1) / 2.0f)
          << "key " << k << " element " << i;
    }
  }
}

TEST(DistSync, DisagreementIsAnErrorOnEveryRank) {
  auto kv = Dist();
  const int r = kv->rank(), n = kv->num_workers();
  // Rank 1 pushes another shape.
  NDArray a = nd::ones({r == 1 ? 4 : 3});
  kv->PushPull({0}, {a}, {a});
  try {
    a.WaitToRead();
    ADD_FAILURE() << "no error";
  } catch (const InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find("rank(s) 1"), std::string::npos)
        << e.what();
  }
  // The last rank pushes another key.
  NDArray b = nd::ones({2});
  kv->PushPull({r == n - 1 ? 9 : 8}, {b}, {b});
  EXPECT_THROW(b.WaitToRead(), InvalidArgument);
  // The store goes on working.
  NDArray c = nd::ones({2});
  kv->PushPull({8}, {c}, {c});
  EXPECT_EQ(c.ToVector<float>(), (std::vector<float>{1.0f * n, 1.0f * n}));
}

TEST(DistSync, AFailedInputFailsTheCollectiveOnEveryRank) {
  auto kv = Dist();
  const int r = kv->rank(), n = kv->num_workers();
  NDArray g = nd::ones({4});
  g.WaitToRead();
  if (r == 1) {  // The computation of rank 1's gradient fails.
    engine::Engine::Get()->PushSync(
        [](engine::RunContext) { throw RuntimeError("injected failure"); },
        Context::CPU(), {}, {g.var()});
  }
  kv->PushPull({0}, {g}, {g});
  try {
    g.WaitToRead();
    ADD_FAILURE() << "no error on rank " << r;
  } catch (const RuntimeError& e) {
    // Rank 1 keeps its own error; the others learn which rank failed
    // instead of summing its garbage.
    const std::string want =
        r == 1 ? "injected failure" : "an input failed on rank(s) 1";
    EXPECT_NE(std::string(e.what()).find(want), std::string::npos) << e.what();
  }
  // Every rank ran the same collectives: the next one works everywhere.
  NDArray h = nd::ones({3});
  kv->PushPull({1}, {h}, {h});
  EXPECT_EQ(h.ToVector<float>(), std::vector<float>(3, 1.0f * n));
}

TEST(DistSync, PushPullStoresTheSumOfAnInitializedKey) {
  auto kv = Dist();
  const int r = kv->rank(), n = kv->num_workers();
  kv->Init({4}, {nd::zeros({2})});
  NDArray g = NDArray::FromVector<float>({2}, {1.0f + r, 2});
  kv->PushPull({4}, {g}, {g});
  NDArray pulled = nd::zeros({2});
  kv->Pull({4}, {pulled});
  EXPECT_EQ(pulled.ToVector<float>(), g.ToVector<float>());
  EXPECT_EQ(pulled.ToVector<float>()[1], 2.0f * n);
}

TEST(DistSync, OptimizerOnTheStore) {
  auto kv = Dist();
  const int r = kv->rank(), n = kv->num_workers();
  kv->Init({0}, {NDArray::FromVector<float>({2}, {1.0f + r, 2})});
  kv->SetOptimizer([](int, const NDArray& merged, const NDArray& stored) {
    // stored -= 0.5 * merged
    nd::CallInto(
        "elemwise_sub",
        {stored, nd::Call("_mul_scalar", {merged}, {{"scalar", "0.5"}})}, {},
        stored);
  });
  kv->Push({0}, {NDArray::FromVector<float>({2}, {1.0f * r, 2})});
  NDArray out = nd::zeros({2});
  kv->Pull({0}, {out});
  const float sum = n * (n - 1) / 2.0f;
  EXPECT_EQ(out.ToVector<float>(),
            (std::vector<float>{1.0f - 0.5f * sum, 2.0f - 0.5f * 2 * n}));
}

// ---- Training: the same weights as one process on the global batch. ----

std::shared_ptr<nn::HybridSequential> Mlp(uint64_t seed) {
  auto net = std::make_shared<nn::HybridSequential>();
  nn::Dense::Options o1, o2, o3;
  o1.activation = o2.activation = "relu";
  o1.in_units = 784;
  o2.in_units = o3.in_units = 256;
  net->Add(std::make_shared<nn::Dense>(256, o1));
  net->Add(std::make_shared<nn::Dense>(256, o2));
  net->Add(std::make_shared<nn::Dense>(10, o3));
  random::Seed(seed);
  net->Initialize(nn::init::Xavier());
  return net;
}

// Rows [begin, begin + count) of a fixed synthetic data set (the same on
// every rank).
void Batch(int64_t begin, int64_t count, NDArray* x, NDArray* y) {
  std::vector<float> xs(count * 784), ys(count);
  for (int64_t i = 0; i < count; ++i) {
    std::mt19937 gen(static_cast<uint32_t>(begin + i));
    std::uniform_real_distribution<float> u(0, 1);
    for (int j = 0; j < 784; ++j) xs[i * 784 + j] = u(gen);
    ys[i] = static_cast<float>((begin + i) % 10);
  }
  *x = NDArray::FromVector<float>({count, 784}, xs);
  *y = NDArray::FromVector<float>({count}, ys);
}

double MaxDiff(const NDArray& a, const NDArray& b) {
  return nd::max(nd::abs(a - b)).ToVector<float>()[0];
}

void TrainLikeOneProcess(bool update_on_kvstore) {
  auto kv = Dist();
  const int r = kv->rank(), n = kv->num_workers();
  const int per_rank = 64 / n, global = per_rank * n;
  nn::SGDOptions sgd;
  sgd.learning_rate = 0.1;
  sgd.momentum = 0.9;
  // Different initial weights per rank: the Trainer broadcasts rank 0's.
  auto net = Mlp(100 + r);
  auto reference = Mlp(100);  // What rank 0 starts from.
  nn::Trainer trainer(net->CollectParams(), nn::MakeSGD(sgd), kv,
                      update_on_kvstore);
  nn::Trainer one_process(reference->CollectParams(), nn::MakeSGD(sgd));
  nn::SoftmaxCrossEntropyLoss loss_fn;
  auto checker = Dist();  // Compares the ranks' weights after each step.
  const nn::ParameterList params = net->CollectParams();
  const nn::ParameterList ref_params = reference->CollectParams();
  for (int step = 0; step < 5; ++step) {
    NDArray x, y, gx, gy;
    Batch(step * global + r * per_rank, per_rank, &x, &y);
    Batch(step * global, global, &gx, &gy);
    for (auto [model, t, bx, by, b] :
         {std::make_tuple(net.get(), &trainer, x, y, per_rank),
          std::make_tuple(reference.get(), &one_process, gx, gy, global)}) {
      NDArray loss;
      {
        autograd::RecordScope record;
        loss = loss_fn({(*model)(bx), by})[0];
      }
      autograd::Backward({loss});
      t->Step(b);
    }
    for (size_t i = 0; i < params.size(); ++i) {
      const NDArray w = params[i].second->data();
      NDArray rank0 = nd::zeros_like(w);
      checker->Broadcast({step * 100 + static_cast<int>(i)}, {w}, {rank0});
      ASSERT_EQ(MaxDiff(w, rank0), 0.0)
          << params[i].first << " differs from rank 0's after step " << step;
      // Sums in another order than one process's GEMM: rounding only.
      ASSERT_LT(MaxDiff(w, ref_params[i].second->data()), 1e-4)
          << params[i].first << " after step " << step;
    }
  }
}

TEST(DistSync, TrainerMatchesOneProcessOnTheGlobalBatch) {
  TrainLikeOneProcess(false);
}

TEST(DistSync, TrainerWithUpdateOnKVStore) { TrainLikeOneProcess(true); }

}  // namespace
}  // namespace kvstore
}  // namespace mx
