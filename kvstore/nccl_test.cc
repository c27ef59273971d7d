// The "nccl" KVStore (//kvstore:nccl_comm). Without a GPU its creation is a
// ConfigError saying why, and the GPU tests skip with that line. On a GPU
// (arrays from the CUDA plugin) PushPull, Init/Push/Pull and Broadcast run
// through NCCL on the GPU's stream (one process: the collectives are the
// identity, run end to end), and a Trainer with the store trains exactly
// as without one.
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "autograd/autograd.h"
#include "base/error.h"
#include "gtest/gtest.h"
#include "imperative/nd.h"
#include "kvstore/kvstore.h"
#include "nn/nn.h"
#include "plugin/plugin.h"
#include "testing/op_test_util.h"
#include "tools/models.h"

namespace mx {
namespace kvstore {
namespace {

using testing::RandomArray;
using testing::ToDouble;

// "" when an "nccl" store can be made here, else its error.
const std::string& NoStoreReason() {
  static const std::string* reason = [] {
    LoadPlugin(std::getenv("MX_CUDA_PLUGIN"));
    try {
      KVStore::Create("nccl");
      return new std::string();
    } catch (const ConfigError& e) {
      return new std::string(e.what());
    }
  }();
  return *reason;
}

#define SKIP_WITHOUT_GPU()                                \
  if (!NoStoreReason().empty()) {                         \
    GTEST_SKIP() << "no usable GPU: " << NoStoreReason(); \
  }

TEST(NcclKVStore, IsLinkedAndSaysWhyItCannotRunWithoutAGpu) {
  const std::string& reason = NoStoreReason();
  if (!reason.empty()) {
    std::printf("%s: the GPU tests skip\n", reason.c_str());
    EXPECT_TRUE(testing::Contains(reason, "KVStore \"nccl\"")) << reason;
    EXPECT_TRUE(testing::Contains(reason, "no usable GPU")) << reason;
    return;
  }
  auto kv = KVStore::Create("nccl");
  EXPECT_EQ(kv->type(), "nccl");
  EXPECT_EQ(kv->rank(), 0);
  EXPECT_EQ(kv->num_workers(), 1);
}

TEST(NcclKVStore, PushPullInitPullAndBroadcastOnTheGpu) {
  SKIP_WITHOUT_GPU();
  auto kv = KVStore::Create("nccl");
  const Context gpu = Context::GPU(0);
  int key = 0;
  for (DType dt : {DType::kFloat32, DType::kFloat16, DType::kFloat64,
                   DType::kInt32, DType::kInt64}) {
    SCOPED_TRACE(DTypeName(dt));
    std::vector<double> values(1000);
    for (int i = 0; i < 1000; ++i) values[i] = (i * 37) % 101 - 50;
    const NDArray host = nd::cast(testing::ArrayOf({1000}, values), dt);
    const std::vector<double> want = ToDouble(host);
    // In place, and into another output.
    NDArray g = host.Copy(gpu);
    NDArray out(host.shape(), gpu, dt);
    kv->PushPull({key}, {g}, {g});
    kv->PushPull({key + 1}, {g}, {out});
    EXPECT_EQ(ToDouble(g.Copy(Context::CPU())), want);
    EXPECT_EQ(ToDouble(out.Copy(Context::CPU())), want);
    key += 2;
  }
  // Two values of one key (listed once per value, summed by the store)
  // pushed to a stored key.
  const NDArray a = RandomArray({64}, DType::kFloat32, -1, 1, 1).Copy(gpu);
  const NDArray b = RandomArray({64}, DType::kFloat32, -1, 1, 2).Copy(gpu);
  NDArray pulled(a.shape(), gpu, DType::kFloat32);
  kv->Init({100}, {nd::zeros_like(a)});
  kv->Push({100, 100}, {a, b});
  kv->Pull({100}, {pulled});
  EXPECT_TRUE(testing::AllClose(ToDouble(pulled.Copy(Context::CPU())),
                                ToDouble(nd::add(a, b).Copy(Context::CPU())),
                                1e-6, 1e-7));
  // Broadcast: rank 0's value (this process's).
  NDArray w = RandomArray({33}, DType::kFloat32, -1, 1, 3).Copy(gpu);
  NDArray w_out(w.shape(), gpu, DType::kFloat32);
  kv->Broadcast({101}, {w}, {w_out});
  EXPECT_EQ(ToDouble(w_out.Copy(Context::CPU())),
            ToDouble(w.Copy(Context::CPU())));
  // Counted by the operations once NCCL took the collectives: 10 PushPull,
  // Init, Push and Broadcast's Init, each one NCCL group.
  const CommStats stats = kv->comm_stats();
  EXPECT_EQ(stats.collectives, 13);
  EXPECT_GT(stats.bytes, 0);
  std::printf("nccl store: %lld collectives, %lld bytes\n",
              static_cast<long long>(stats.collectives),
              static_cast<long long>(stats.bytes));
}

TEST(NcclKVStore, HostArraysAndBoolAreTypedErrors) {
  SKIP_WITHOUT_GPU();
  auto kv = KVStore::Create("nccl");
  NDArray host = RandomArray({4}, DType::kFloat32, -1, 1, 1);
  testing::ExpectError<InvalidArgument>(
      [&] { kv->PushPull({0}, {host}, {host}); }, {"nccl", "cpu"});
  NDArray flags = nd::cast(host, DType::kBool).Copy(Context::GPU(0));
  testing::ExpectError<DTypeError>([&] { kv->PushPull({1}, {flags}, {flags}); },
                                   {"nccl", "bool"});
  // A refused Init leaves its key free.
  testing::ExpectError<InvalidArgument>([&] { kv->Init({2}, {host}); },
                                        {"nccl", "cpu"});
  kv->Init({2}, {host.Copy(Context::GPU(0))});
}

// Checked before looking for a GPU: one process only.
TEST(NcclKVStore, SeveralLaunchedProcessesAreNotImplemented) {
  for (const char* launcher : {"OMPI_COMM_WORLD_SIZE", "WORLD_SIZE"}) {
    SCOPED_TRACE(launcher);
    setenv(launcher, "2", 1);
    testing::ExpectError<NotImplemented>(
        [] { KVStore::Create("nccl"); },
        {"KVStore \"nccl\"", "2 processes", "dist_sync"});
    unsetenv(launcher);
  }
}

// Losses of a few SGD steps of the MLP on the GPU, with or without the
// store (seeded initialization and data).
std::vector<double> LossCurve(std::shared_ptr<KVStore> kv) {
  random::Seed(5);
  auto net = models::Make("mlp");
  net->Initialize(nn::init::Xavier(), Context::GPU(0));
  nn::SoftmaxCrossEntropyLoss loss_fn;
  nn::SGDOptions sgd;
  sgd.learning_rate = 0.1;
  sgd.momentum = 0.9;
  std::unique_ptr<nn::Trainer> trainer =
      kv ? std::make_unique<nn::Trainer>(net->CollectParams(), nn::MakeSGD(sgd),
                                         kv)
         : std::make_unique<nn::Trainer>(net->CollectParams(),
                                         nn::MakeSGD(sgd));
  const NDArray x = RandomArray({32, 1, 28, 28}, DType::kFloat32, 0, 1, 9)
                        .Copy(Context::GPU(0));
  std::vector<double> labels(32);
  for (int i = 0; i < 32; ++i) labels[i] = (i * 3) % 10;
  const NDArray y = testing::ArrayOf({32}, labels).Copy(Context::GPU(0));
  std::vector<double> losses;
  for (int step = 0; step < 6; ++step) {
    NDArray loss;
    {
      autograd::RecordScope record;
      loss = loss_fn({(*net)(x), y})[0];
    }
    autograd::Backward({loss});
    trainer->Step(32);
    losses.push_back(ToDouble(nd::mean(loss).Copy(Context::CPU()))[0]);
  }
  return losses;
}

TEST(NcclKVStore, TrainerWithTheStoreTrainsAsWithout) {
  SKIP_WITHOUT_GPU();
  const std::vector<double> alone = LossCurve(nullptr);
  const std::vector<double> with_store =
      LossCurve(std::shared_ptr<KVStore>(KVStore::Create("nccl")));
  EXPECT_TRUE(testing::AllClose(with_store, alone, 1e-6, 1e-7));
  EXPECT_LT(alone.back(), alone.front());
  std::printf("loss per step with the nccl store:");
  for (double l : with_store) std::printf(" %.5f", l);
  std::printf("\n");
}

}  // namespace
}  // namespace kvstore
}  // namespace mx
