// The oneDNN plugin against the built-in kernels on shapes the conformance
// table does not reach (odd sizes, batch 1, groups with dilation and
// asymmetric strides, accumulating gradients), its fallbacks, and
// hybridized training with and without it. References are computed on the
// built-in kernels first; then the plugin is loaded (plugins never unload).
#include <dlfcn.h>

#include <cmath>
#include <filesystem>
#include <functional>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include "autograd/autograd.h"
#include "base/float_mode.h"
#include "engine/engine.h"
#include "gtest/gtest.h"
#include "imperative/imperative.h"
#include "imperative/nd.h"
#include "nn/nn.h"
#include "plugin/plugin.h"
#include "testing/op_test_util.h"
#include "tools/models.h"

namespace mx {
namespace {

using testing::AllClose;
using testing::RandomArray;
using testing::ToDouble;

// Outputs followed by the gradients of every input.
using Values = std::vector<std::vector<double>>;

// f(inputs) and d(sum(f * head))/d inputs, gradients written with `req`
// (kAddTo adds to gradients pre-filled with 1).
Values Compute(const std::vector<TShape>& shapes, DType dtype, OpReqType req,
               const std::function<NDArray(const std::vector<NDArray>&)>& f) {
  std::vector<NDArray> in;
  for (size_t i = 0; i < shapes.size(); ++i) {
    in.push_back(RandomArray(shapes[i], dtype, -1, 1, 11 + i));
    autograd::AttachGrad(&in.back(), req);
    if (req == OpReqType::kAddTo) {
      CopyFromTo(nd::ones_like(in.back()), in.back().grad());
    }
  }
  // Inputs ready before each push: which ops run on this thread (small
  // ones, with a team of one) and which on a worker does not depend on
  // timing, nor do the primitive cache's keys (per team size).
  engine::Engine::Get()->WaitForAll();
  NDArray y;
  {
    autograd::RecordScope record;
    y = f(in);
  }
  NDArray head = RandomArray(y.shape(), dtype, -1, 1, 5);
  engine::Engine::Get()->WaitForAll();
  autograd::Backward({y}, {head});
  Values v{ToDouble(y)};
  for (const NDArray& x : in) v.push_back(ToDouble(x.grad()));
  return v;
}

struct Case {
  std::vector<TShape> shapes;
  DType dtype = DType::kFloat32;
  OpReqType req = OpReqType::kWriteTo;
  std::function<NDArray(const std::vector<NDArray>&)> f;
  // The plugin declines every kernel of the case (the built-in ones run).
  bool declined = false;
};

std::map<std::string, Case> Cases() {
  std::map<std::string, Case> c;
  c["conv_batch1_stride_pad_dilate_bias"] = {
      {{1, 3, 17, 13}, {8, 3, 3, 3}, {8}},
      DType::kFloat32,
      OpReqType::kWriteTo,
      [](const std::vector<NDArray>& x) {
        return nd::Convolution(x[0], x[1], x[2], {3, 3}, 8, {2, 1}, {1, 2},
                               {2, 1});
      }};
  c["conv_groups_no_bias_accumulate"] = {{{3, 6, 9, 10}, {9, 2, 3, 2}},
                                         DType::kFloat32,
                                         OpReqType::kAddTo,
                                         [](const std::vector<NDArray>& x) {
                                           return nd::Convolution(
                                               x[0], x[1], NDArray(), {3, 2}, 9,
                                               {1, 2}, {1, 0}, {1, 1}, 3, true);
                                         }};
  c["conv_float64_falls_back"] = {
      {{2, 3, 7, 7}, {4, 3, 3, 3}, {4}},
      DType::kFloat64,
      OpReqType::kWriteTo,
      [](const std::vector<NDArray>& x) {
        return nd::Convolution(x[0], x[1], x[2], {3, 3}, 4);
      },
      /*declined=*/true};
  c["fc_flatten_odd"] = {{{5, 3, 7, 11}, {33, 231}, {33}},
                         DType::kFloat32,
                         OpReqType::kWriteTo,
                         [](const std::vector<NDArray>& x) {
                           return nd::FullyConnected(x[0], x[1], x[2], 33);
                         }};
  c["fc_no_flatten_no_bias"] = {{{4, 3, 10}, {6, 10}},
                                DType::kFloat32,
                                OpReqType::kAddTo,
                                [](const std::vector<NDArray>& x) {
                                  return nd::FullyConnected(
                                      x[0], x[1], NDArray(), 6, true, false);
                                }};
  c["pool_max_pad"] = {
      {{2, 4, 11, 9}},
      DType::kFloat32,
      OpReqType::kWriteTo,
      [](const std::vector<NDArray>& x) {
        return nd::Pooling(x[0], {3, 3}, "max", {2, 2}, {1, 1});
      },
      // The forward writes the argmax the built-in backward scatters
      // through, in a format oneDNN's workspace does not have.
      /*declined=*/true};
  c["pool_avg_exclude_pad_full"] = {{{1, 3, 10, 8}},
                                    DType::kFloat32,
                                    OpReqType::kWriteTo,
                                    [](const std::vector<NDArray>& x) {
                                      return nd::Pooling(x[0], {3, 2}, "avg",
                                                         {2, 2}, {1, 1}, false,
                                                         "full", false);
                                    }};
  c["batch_dot_transposed"] = {{{3, 17, 5}, {3, 9, 17}},
                               DType::kFloat32,
                               OpReqType::kWriteTo,
                               [](const std::vector<NDArray>& x) {
                                 return nd::batch_dot(x[0], x[1], true, true);
                               }};
  // Training: batch statistics, the moving statistics updated in place.
  c["batchnorm_train_odd"] = {
      {{5, 3, 7, 6}, {3}, {3}},
      DType::kFloat32,
      OpReqType::kWriteTo,
      [](const std::vector<NDArray>& x) {
        const NDArray moving_mean = nd::zeros({3}), moving_var = nd::ones({3});
        const NDArray y = nd::BatchNorm(x[0], x[1], x[2], moving_mean,
                                        moving_var, 1e-3, 0.9, false);
        // The updated statistics are part of the result.
        return nd::concat({nd::reshape(y, {-1}), moving_mean, moving_var}, 0);
      }};
  c["batchnorm_fix_gamma_2d_accumulate"] = {
      {{9, 4}, {4}, {4}},
      DType::kFloat32,
      OpReqType::kAddTo,
      [](const std::vector<NDArray>& x) {
        return nd::BatchNorm(x[0], x[1], x[2], nd::zeros({4}), nd::ones({4}));
      }};
  c["deconv_groups_adj_bias"] = {{{2, 4, 5, 3}, {4, 3, 3, 2}, {6}},
                                 DType::kFloat32,
                                 OpReqType::kWriteTo,
                                 [](const std::vector<NDArray>& x) {
                                   return nd::Call("Deconvolution",
                                                   {x[0], x[1], x[2]},
                                                   {{"kernel", "(3,2)"},
                                                    {"num_filter", "6"},
                                                    {"num_group", "2"},
                                                    {"stride", "(2,2)"},
                                                    {"pad", "(1,1)"},
                                                    {"adj", "(1,1)"},
                                                    {"no_bias", "False"}});
                                 }};
  c["concat_axis1_odd"] = {{{3, 2, 5}, {3, 7, 5}, {3, 1, 5}},
                           DType::kFloat32,
                           OpReqType::kAddTo,
                           [](const std::vector<NDArray>& x) {
                             return nd::concat({x[0], x[1], x[2]}, 1);
                           }};
  // Above the plugin's size threshold; the second operand broadcasts.
  c["add_large_broadcast"] = {
      {{70, 1000}, {1000}},
      DType::kFloat32,
      OpReqType::kWriteTo,
      [](const std::vector<NDArray>& x) { return x[0] + x[1]; }};
  c["softmax_axis1"] = {
      {{4, 33, 3}},
      DType::kFloat32,
      OpReqType::kWriteTo,
      [](const std::vector<NDArray>& x) { return nd::softmax(x[0], 1); }};
  return c;
}

// Loss of each step of hybridized training (SGD with momentum, batch 16).
std::vector<double> LossCurve(const std::string& model, int steps) {
  random::Seed(3);
  auto net = models::Make(model);
  net->Initialize(nn::init::Xavier());
  net->Hybridize();
  nn::SoftmaxCrossEntropyLoss loss_fn;
  nn::SGDOptions sgd;
  sgd.learning_rate = 0.05;
  sgd.momentum = 0.9;
  nn::Trainer trainer(net->CollectParams(), nn::MakeSGD(sgd));
  const NDArray x = RandomArray({16, 1, 28, 28}, DType::kFloat32, 0, 1, 9);
  std::vector<double> labels(16);
  for (int i = 0; i < 16; ++i) labels[i] = (i * 7) % 10;
  const NDArray y = testing::ArrayOf({16}, labels);
  std::vector<double> losses;
  for (int s = 0; s < steps; ++s) {
    NDArray loss;
    {
      autograd::RecordScope record;
      loss = loss_fn({(*net)(x), y})[0];
    }
    autograd::Backward({loss});
    trainer.Step(16);
    losses.push_back(ToDouble(nd::mean(loss))[0]);
  }
  // The last update may still run; it must finish before the process
  // exits and libdnnl's static destructors free its JIT code.
  engine::Engine::Get()->WaitForAll();
  return losses;
}

struct Stats {
  int64_t hits = 0, misses = 0, entries = 0, declined = 0, calls = 0;
};

Stats PluginStats() {
  using StatsFn = void (*)(int64_t*, int64_t*, int64_t*, int64_t*);
  void* lib = dlopen(std::getenv("MX_ONEDNN_PLUGIN"), RTLD_NOW | RTLD_NOLOAD);
  EXPECT_NE(lib, nullptr);
  Stats s;
  if (lib == nullptr) return s;
  auto fn = reinterpret_cast<StatsFn>(dlsym(lib, "mx_onednn_stats"));
  EXPECT_NE(fn, nullptr);
  if (fn != nullptr) fn(&s.hits, &s.misses, &s.entries, &s.declined);
  auto calls = reinterpret_cast<int64_t (*)()>(dlsym(lib, "mx_onednn_calls"));
  EXPECT_NE(calls, nullptr);
  if (calls != nullptr) s.calls = calls();
  dlclose(lib);
  return s;
}

constexpr int kSteps = 6;

struct References {
  std::map<std::string, Values> cases;
  std::map<std::string, std::vector<double>> losses;
};

// Built-in results, then the plugin is loaded.
const References& Refs() {
  static const References* refs = [] {
    auto* r = new References;
    for (const auto& [name, c] : Cases()) {
      r->cases[name] = Compute(c.shapes, c.dtype, c.req, c.f);
    }
    for (const char* model : {"mlp", "cnn", "cnn_bn"}) {
      r->losses[model] = LossCurve(model, kSteps);
    }
    const PluginInfo info = LoadPlugin(std::getenv("MX_ONEDNN_PLUGIN"));
    EXPECT_EQ(info.name, "onednn");
    return r;
  }();
  return *refs;
}

TEST(OnednnPlugin, KernelsMatchTheBuiltInOnesForwardAndBackward) {
  const References& refs = Refs();
  for (const auto& [name, c] : Cases()) {
    SCOPED_TRACE(name);
    const Stats before = PluginStats();
    const Values got = Compute(c.shapes, c.dtype, c.req, c.f);
    const Stats after = PluginStats();
    const Values& want = refs.cases.at(name);
    ASSERT_EQ(got.size(), want.size());
    for (size_t i = 0; i < want.size(); ++i) {
      // Sums of up to a few hundred products in another order.
      EXPECT_TRUE(AllClose(got[i], want[i], 1e-4, 1e-5)) << "value " << i;
    }
    if (!c.declined) {
      EXPECT_GT(after.calls, before.calls) << "oneDNN never ran";
    } else {
      EXPECT_GT(after.declined, before.declined)
          << "the case must be declined to the built-in kernels";
    }
  }
}

TEST(OnednnPlugin, PrimitivesAreReusedAcrossCalls) {
  Refs();
  const Case c = Cases().at("conv_batch1_stride_pad_dilate_bias");
  Compute(c.shapes, c.dtype, c.req, c.f);
  const Stats before = PluginStats();
  Compute(c.shapes, c.dtype, c.req, c.f);
  const Stats after = PluginStats();
  EXPECT_EQ(after.misses, before.misses);
  EXPECT_GE(after.hits, before.hits + 2);  // Forward and backward.
}

int ThreadsOfThisProcess() {
  int n = 0;
  for (const auto& e : std::filesystem::directory_iterator("/proc/self/task")) {
    (void)e;
    ++n;
  }
  return n;
}

// With two kernel threads (BUILD), a small op the engine runs on the
// thread that pushed it uses a team of one: that thread starts no OpenMP
// team, whose threads would spin against the engine's workers.
TEST(OnednnPlugin, SmallOpsRunOnThePushingThreadStartNoThreadTeam) {
  Refs();
#if defined(__SANITIZE_THREAD__)
  GTEST_SKIP() << "the plugin uses one thread under ThreadSanitizer";
#endif
  NDArray x = RandomArray({4, 8}, DType::kFloat32, -1, 1, 3);
  nd::softmax(x, 1).WaitToRead();  // The engine's own lazy setup.
  int before = 0, after = 0;
  int64_t calls_before = 0, calls_after = 0;
  std::thread([&] {  // A thread with no OpenMP team yet.
    x.WaitToRead();
    calls_before = PluginStats().calls;
    before = ThreadsOfThisProcess();
    NDArray y = nd::softmax(x, 1);  // Inputs ready: runs right here.
    after = ThreadsOfThisProcess();
    calls_after = PluginStats().calls;  // Already: it ran before returning.
    y.WaitToRead();
  })
      .join();
  EXPECT_GT(calls_after, calls_before) << "oneDNN did not run on the thread";
  EXPECT_EQ(after, before) << "the pushing thread started OpenMP threads";
}

// With two kernel threads the plugin offers its OpenMP threads as the
// host's thread runtime: built-in kernels' loops run on them too.
TEST(OnednnPlugin, BuiltInLoopsRunOnThePluginsOpenMpThreads) {
  Refs();
#if defined(__SANITIZE_THREAD__)
  GTEST_SKIP() << "the plugin uses one thread under ThreadSanitizer";
#endif
  void* lib = dlopen(std::getenv("MX_ONEDNN_PLUGIN"), RTLD_NOW | RTLD_NOLOAD);
  ASSERT_NE(lib, nullptr);
  auto loops =
      reinterpret_cast<int64_t (*)()>(dlsym(lib, "mx_onednn_runtime_loops"));
  dlclose(lib);
  ASSERT_NE(loops, nullptr);
  const int64_t before = loops();
  NDArray x = RandomArray({1 << 20}, DType::kFloat32, -1, 1, 4);
  const std::vector<double> xs = ToDouble(x);
  const std::vector<double> y = ToDouble(nd::square(x));
  EXPECT_GT(loops(), before);
  for (size_t i = 0; i < xs.size(); ++i) {
    ASSERT_EQ(y[i], static_cast<double>(static_cast<float>(xs[i] * xs[i])))
        << i;
  }
}

// oneDNN's kernels run on OpenMP threads the host never sees (a team of
// two, BUILD): they compute in the host's float mode all the same, and
// follow when it changes. A product over denormal inputs: 0 where they
// read as 0 (the default, as in MXNet), 512 * 1e-39 (a normal float) where
// denormals are kept.
TEST(OnednnPlugin, KernelsOnTheTeamComputeInTheHostsFloatMode) {
  Refs();
  const int64_t n = 512;
  const NDArray x = NDArray::FromVector<float>(
      {n, n}, std::vector<float>(n * n, 1e-39f));  // Copied, not computed.
  const NDArray ones = nd::ones({n, n});
  for (const bool flush : {true, false, true}) {
    const bool was = SetFlushDenormals(flush);
    const int64_t calls = PluginStats().calls;
    const std::vector<double> y = ToDouble(nd::dot(x, ones));
    EXPECT_GT(PluginStats().calls, calls) << "oneDNN did not run the product";
    size_t wrong = 0;
    for (double v : y) {
      wrong += flush ? v != 0 : std::abs(v - 512e-39) > 1e-40;
    }
    EXPECT_EQ(wrong, 0u) << "flush " << flush << ", first " << y[0];
    SetFlushDenormals(was);
  }
}

TEST(OnednnPlugin, HybridizedTrainingGivesTheSameLossCurve) {
  const References& refs = Refs();
  for (const char* model : {"mlp", "cnn", "cnn_bn"}) {
    SCOPED_TRACE(model);
    const std::vector<double> got = LossCurve(model, kSteps);
    // Per-step rounding differences compound over the steps; 1e-3
    // relative is far below the step-to-step change of the loss.
    EXPECT_TRUE(AllClose(got, refs.losses.at(model), 1e-3, 1e-5));
    EXPECT_GT(refs.losses.at(model).front() - refs.losses.at(model).back(),
              0.01)
        << "the reference run did not train";
  }
}

}  // namespace
}  // namespace mx
