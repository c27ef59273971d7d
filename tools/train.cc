// Trains an MLP or a small CNN on Fashion-MNIST and reports test accuracy.
//
//   bazel run --config=opt //tools:train -- --model=mlp --epochs=2
//
// CPU kernels: the oneDNN plugin when it is built (next to the trainer in
// bazel-bin, or in its runfiles) unless --backend=builtin or MX_PLUGINS
// names plugins; the trainer prints which backend runs.
//
// Data-parallel on several processes (README "Distributed training"):
//   mpirun -np 2 bazel-bin/tools/train --kvstore=dist_sync --model=cnn
// shards every global batch (--batch_size per rank) across the ranks,
// sums gradients with the KVStore, and reports from rank 0 only.
//
// The data comes from the Debian package dataset-fashion-mnist (gzip'd IDX
// files in /usr/share/datasets/fashion-mnist); tools/setup.sh installs it.
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <memory>
#include <string>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "absl/strings/str_format.h"
#include "autograd/autograd.h"
#include "base/error.h"
#include "imperative/nd.h"
#include "kvstore/kvstore.h"
#include "nn/nn.h"
#include "plugin/plugin.h"
#include "tools/data/idx.h"
#include "tools/models.h"

ABSL_FLAG(std::string, model, "mlp", "mlp, cnn or cnn_bn");
ABSL_FLAG(int, epochs, 2, "passes over the training set");
ABSL_FLAG(int, batch_size, 64, "examples per step");
ABSL_FLAG(double, lr, -1, "learning rate (default: 0.001 adam, 0.05 sgd)");
ABSL_FLAG(std::string, optimizer, "adam", "adam or sgd");
ABSL_FLAG(double, momentum, 0.9, "SGD momentum");
ABSL_FLAG(double, wd, 0, "weight decay");
ABSL_FLAG(bool, hybridize, true, "trace the model into a graph (CachedOp)");
ABSL_FLAG(uint64_t, seed, 1, "seed for initialization, shuffling, dropout");
ABSL_FLAG(std::string, ctx, "cpu",
          "cpu, or gpu / gpu(N): train on that GPU through the CUDA plugin "
          "(libmx_cuda.so next to the oneDNN one, or from MX_PLUGINS)");
ABSL_FLAG(std::string, data_dir, mx::data::kFashionMNISTDir,
          "directory with the gzip'd IDX files");
ABSL_FLAG(int, limit, 0, "use only the first N training examples (0: all)");
ABSL_FLAG(std::string, backend, "auto",
          "CPU kernels: auto (the oneDNN plugin when built, else built-in), "
          "onednn (fail without the plugin) or builtin");
ABSL_FLAG(std::string, kvstore, "",
          "\"\" (one process), local or dist_sync (under mpirun: the "
          "gradients of --batch_size examples per rank summed across ranks)");
ABSL_FLAG(std::string, lr_schedule, "none",
          "none, or cosine: the learning rate follows half a cosine from "
          "--lr to 0 over the epochs (set per epoch)");

namespace mx {
namespace {

std::unique_ptr<nn::Optimizer> MakeOptimizer() {
  const std::string name = absl::GetFlag(FLAGS_optimizer);
  const double lr = absl::GetFlag(FLAGS_lr);
  if (name == "sgd") {
    nn::SGDOptions o;
    o.learning_rate = lr > 0 ? lr : 0.05;
    o.momentum = absl::GetFlag(FLAGS_momentum);
    o.wd = absl::GetFlag(FLAGS_wd);
    return nn::MakeSGD(o);
  }
  if (name == "adam") {
    nn::AdamOptions o;
    o.learning_rate = lr > 0 ? lr : 0.001;
    o.wd = absl::GetFlag(FLAGS_wd);
    return nn::MakeAdam(o);
  }
  throw InvalidArgument("--optimizer must be sgd or adam, not \"" + name +
                        "\"");
}

// One line, redrawn in place on a terminal; every 10% otherwise.
class ProgressBar {
 public:
  ProgressBar(int epoch, int epochs, int64_t total)
      : epoch_(epoch), epochs_(epochs), total_(total), tty_(isatty(2)) {}
  void Update(int64_t done, double images_per_s, double loss) {
    const int percent = static_cast<int>(100 * done / total_);
    if (!tty_ && percent / 10 == last_decile_ && done < total_) return;
    last_decile_ = percent / 10;
    const int width = 30, filled = width * percent / 100;
    std::fprintf(stderr, "%sepoch %d/%d [%s%s] %3d%% %6.0f img/s loss %.4f%s",
                 tty_ ? "\r" : "", epoch_, epochs_,
                 std::string(filled, '#').c_str(),
                 std::string(width - filled, '.').c_str(), percent,
                 images_per_s, loss, tty_ ? "" : "\n");
    std::fflush(stderr);
  }
  void Finish() {
    if (tty_) std::fprintf(stderr, "\n");
  }

 private:
  int epoch_, epochs_;
  int64_t total_;
  bool tty_;
  int last_decile_ = -1;
};

// A plugin built next to this binary: bazel-bin/tools/train ->
// bazel-bin/<rel>, or the runfiles of `bazel run`, or the working
// directory; "" when none is there.
std::string FindPlugin(const char* argv0, const std::string& rel) {
  namespace fs = std::filesystem;
  // The error_code overloads: a missing working directory is "not found",
  // not an exception escaping main.
  std::error_code ec;
  const fs::path self = fs::absolute(argv0, ec).lexically_normal();
  const fs::path cwd = fs::current_path(ec);
  for (const fs::path& p :
       {self.parent_path().parent_path() / rel,
        fs::path(self.string() + ".runfiles") / "mxcore" / rel, cwd / rel}) {
    if (fs::is_regular_file(p, ec)) return p.string();
  }
  return "";
}

// Loads the CPU backend --backend asks for; returns what runs.
std::string ChooseBackend(const char* argv0) {
  const std::string backend = absl::GetFlag(FLAGS_backend);
  if (backend != "auto" && backend != "onednn" && backend != "builtin") {
    throw InvalidArgument("--backend must be auto, onednn or builtin, not \"" +
                          backend + "\"");
  }
  const char* env = std::getenv("MX_PLUGINS");
  if (env != nullptr && *env != '\0') {
    LoadEnvPlugins();
    std::string names;
    for (const PluginInfo& p : ListPlugins()) names += " " + p.name;
    return "plugins from MX_PLUGINS:" + names;
  }
  if (backend == "builtin") return "built-in CPU kernels";
  const std::string path = FindPlugin(argv0, "backends/onednn/libmx_onednn.so");
  if (path.empty()) {
    if (backend == "onednn") {
      throw NotFound(
          "--backend=onednn: libmx_onednn.so is not built (bazel build "
          "--config=opt //backends/onednn:libmx_onednn.so)");
    }
    return "built-in CPU kernels (the oneDNN plugin is not built)";
  }
  LoadPlugin(path);
  return "oneDNN plugin (" + path + ") over the built-in CPU kernels";
}

// The device --ctx names; for a GPU, makes sure the CUDA plugin is loaded.
Context ChooseContext(const char* argv0) {
  const std::string ctx = absl::GetFlag(FLAGS_ctx);
  if (ctx == "cpu") return Context::CPU();
  int id = 0;
  if (ctx != "gpu" && std::sscanf(ctx.c_str(), "gpu(%d)", &id) != 1) {
    throw InvalidArgument("--ctx must be cpu, gpu or gpu(N), not \"" + ctx +
                          "\"");
  }
  bool loaded = false;
  for (const PluginInfo& p : ListPlugins()) loaded |= p.name == "cuda";
  if (!loaded) {
    const std::string path = FindPlugin(argv0, "backends/cuda/libmx_cuda.so");
    if (path.empty()) {
      throw NotFound(
          "--ctx=" + ctx +
          ": libmx_cuda.so is not built (bazel build --config=opt "
          "//backends/cuda:libmx_cuda.so) and MX_PLUGINS does not name it");
    }
    LoadPlugin(path);
  }
  return Context::GPU(id);
}

double Accuracy(nn::Block& net, const data::Dataset& test, Context ctx) {
  autograd::PredictModeScope predict;
  data::BatchIterator it(test, 500, /*shuffle=*/false, 0);
  NDArray x, y;
  int64_t correct = 0, seen = 0;
  while (it.Next(&x, &y)) {
    // The logits come back to the CPU for the argmax.
    const NDArray logits = net(ctx.is_host() ? x : x.Copy(ctx));
    const std::vector<float> pred =
        nd::cast(
            nd::argmax(ctx.is_host() ? logits : logits.Copy(Context::CPU()), 1),
            DType::kFloat32)
            .ToVector<float>();
    const std::vector<float> label = y.ToVector<float>();
    for (size_t i = 0; i < pred.size(); ++i) correct += pred[i] == label[i];
    seen += static_cast<int64_t>(pred.size());
  }
  return static_cast<double>(correct) / seen;
}

int TrainWith(const char* argv0, const std::shared_ptr<kvstore::KVStore>& kv) {
  using Clock = std::chrono::steady_clock;
  const int rank = kv ? kv->rank() : 0;
  const int workers = kv ? kv->num_workers() : 1;
  const bool lead = rank == 0;
  const std::string backend = ChooseBackend(argv0);
  const Context ctx = ChooseContext(argv0);
  if (lead) {
    std::printf("backend: %s\n", backend.c_str());
    std::printf("device: %s\n", ctx.ToString().c_str());
    if (kv) {
      std::printf("kvstore: %s, %d worker(s)\n", kv->type().c_str(), workers);
    }
  }
  const std::string schedule = absl::GetFlag(FLAGS_lr_schedule);
  if (schedule != "none" && schedule != "cosine") {
    throw InvalidArgument("--lr_schedule must be none or cosine, not \"" +
                          schedule + "\"");
  }
  data::Dataset train =
      data::LoadFashionMNIST(absl::GetFlag(FLAGS_data_dir), /*train=*/true);
  const data::Dataset test =
      data::LoadFashionMNIST(absl::GetFlag(FLAGS_data_dir), /*train=*/false);
  if (const int limit = absl::GetFlag(FLAGS_limit);
      limit > 0 && limit < train.size) {
    train.size = limit;
  }
  const int batch = absl::GetFlag(FLAGS_batch_size);
  const int epochs = absl::GetFlag(FLAGS_epochs);
  const uint64_t seed = absl::GetFlag(FLAGS_seed);
  random::Seed(seed);
  auto net = models::Make(absl::GetFlag(FLAGS_model));
  net->Initialize(nn::init::Xavier(), ctx);
  if (absl::GetFlag(FLAGS_hybridize)) net->Hybridize();
  nn::SoftmaxCrossEntropyLoss loss_fn;
  nn::Trainer trainer(net->CollectParams(), MakeOptimizer(), kv);
  // Every rank shuffles with the same seed and takes its slice of each
  // global batch.
  data::BatchIterator batches(train, batch, /*shuffle=*/true, seed, rank,
                              workers);
  const int64_t global_batch = static_cast<int64_t>(batch) * workers;

  double accuracy = 0, train_seconds = 0;
  const double base_lr = trainer.learning_rate();
  for (int epoch = 1; epoch <= epochs; ++epoch) {
    if (schedule == "cosine") {
      trainer.set_learning_rate(base_lr * 0.5 *
                                (1 + std::cos(M_PI * (epoch - 1) / epochs)));
    }
    ProgressBar bar(epoch, epochs, batches.batches_per_epoch() * global_batch);
    const auto start = Clock::now();
    NDArray x, y;
    int64_t done = 0;
    double loss_sum = 0;
    int loss_count = 0;
    for (int step = 0; batches.Next(&x, &y); ++step) {
      if (!ctx.is_host()) {
        x = x.Copy(ctx);
        y = y.Copy(ctx);
      }
      NDArray loss;
      {
        autograd::RecordScope record;
        loss = loss_fn({(*net)(x), y})[0];
      }
      autograd::Backward({loss});
      trainer.Step(batch);
      done += global_batch;
      // Reading the loss waits for the step; do it now and then only (the
      // loss of rank 0's shard).
      const bool last = done == batches.batches_per_epoch() * global_batch;
      if (lead && (step % 50 == 0 || last)) {
        loss_sum += nd::mean(loss).ToVector<float>()[0];
        ++loss_count;
        const double s =
            std::chrono::duration<double>(Clock::now() - start).count();
        bar.Update(done, done / s, loss_sum / loss_count);
      }
    }
    // The epoch's time is that of its last step on every rank.
    for (const auto& [name, p] : net->CollectParams()) p->data().WaitToRead();
    train_seconds +=
        std::chrono::duration<double>(Clock::now() - start).count();
    if (lead) {
      bar.Finish();
      accuracy = Accuracy(*net, test, ctx);
      std::printf("epoch %d/%d: train loss %.4f, test accuracy %.4f\n", epoch,
                  epochs, loss_sum / loss_count, accuracy);
    }
  }
  if (!lead) return 0;
  const int64_t steps =
      static_cast<int64_t>(epochs) * batches.batches_per_epoch();
  const double images = static_cast<double>(steps) * global_batch;
  std::printf(
      "summary: model=%s hybridize=%d optimizer=%s epochs=%d batch=%d "
      "workers=%d test_accuracy=%.4f train_time=%.1fs images_per_s=%.0f\n",
      absl::GetFlag(FLAGS_model).c_str(), absl::GetFlag(FLAGS_hybridize),
      absl::GetFlag(FLAGS_optimizer).c_str(), epochs, batch, workers, accuracy,
      train_seconds, images / train_seconds);
  if (kv && workers > 1) {
    const kvstore::CommStats c = kv->comm_stats();
    std::printf(
        "communication (rank 0): %lld collectives, %.1f MB, %.3f ms per step "
        "in collectives (overlapping backward)\n",
        static_cast<long long>(c.collectives), c.bytes / 1e6,
        1e3 * c.seconds / steps);
  }
  return 0;
}

int Train(const char* argv0) {
  // The store first: under mpirun only rank 0 reports.
  std::shared_ptr<kvstore::KVStore> kv;
  if (const std::string type = absl::GetFlag(FLAGS_kvstore); !type.empty()) {
    kv = kvstore::KVStore::Create(type);
  }
  try {
    return TrainWith(argv0, kv);
  } catch (const Error& e) {
    // The other ranks fail at once, naming this one, instead of waiting
    // out MX_KVSTORE_TIMEOUT in their next reduction.
    if (kv) kv->Abort(e.what());
    throw;
  }
}

}  // namespace
}  // namespace mx

int main(int argc, char** argv) {
  // Before any thread: the oneDNN plugin is loaded with LoadPlugin.
  mx::SetOpenMpWaitDefaults();
  absl::SetProgramUsageMessage(
      "Trains an MLP or CNN on Fashion-MNIST: train --model=mlp --epochs=2 "
      "[--backend=auto|onednn|builtin]");
  absl::ParseCommandLine(argc, argv);
  try {
    return mx::Train(argv[0]);
  } catch (const mx::Error& e) {
    std::fprintf(stderr, "train: %s\n", e.what());
    return 1;
  }
}
