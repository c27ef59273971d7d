// The real MXNet models of ../shared/mxnet-models (see its SOURCES.md and
// models.tsv): every symbol file loads, binds with models.tsv's input
// shapes and runs forward with random weights, partitioned by the
// `default` backend with the same outputs; or it fails with a typed error
// naming the op mxcore lacks. The real .params files load, fit their
// models' inferred shapes and reproduce MXNet's recorded results.
//
// The directory is found next to the source tree (../shared, as CI lays it
// out) or in $MX_MXNET_MODELS_DIR. Forward passes of the large models take
// minutes in unoptimized and sanitizer builds, so by default only models
// whose planned activations fit kForwardBudgetBytes run forward;
// MX_MODELS_FULL=1 runs all (README: "Running MXNet models").
#include <dirent.h>
#include <unistd.h>

#include <algorithm>
#include <climits>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <ostream>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_split.h"
#include "base/error.h"
#include "gtest/gtest.h"
#include "nn/mxnet_params_file.h"
#include "nn/params_file.h"
#include "nn/symbol_block.h"
#include "testing/shared_data.h"
#include "tools/data/idx.h"
#include "tools/mxnet_model.h"

namespace mx {
namespace {

// Models that load, run and partition today. The test fails when one of
// them stops; a model that starts passing is reported (add it here).
const std::set<std::string> kExpectedPassing = {
    "advosbig_mnist_mlp",
    "fashion_mnist",
    "fcrc_lenet",
    "inceptionv3_ucf101",
    "miraclewkf_mobilenet",
    "mlnet_mlp",
    "mlp",
    "mnist_lenet_tanh",
    "opscan_OPSCAN",
    "resnet152_v1d",
    "resnet18_v1",
    "resnet50_v1",
    "resnet50_v2",
    "resnext101_64x4d",
    "squeezenet1.0",
    "vgg16_ucf101",
    // With the ops and JSON upgrades of issue 15.
    "age_gender",
    "imagenet_resnet-50",
    "keyky_mobilenet_v2",
    "mobilefacenet",
    "mtcnn_det1",
    "mtcnn_det2",
    "mtcnn_det3",
    "mtcnn_det4",
    "mxnet_dnnl_model1",
    "mxnet_save_000800",
    "opscan_resnet-18",
    "plantseeds_resnet_checkpoint",
    "se_resnext101_32x4d",
    "se_resnext101_64x4d",
    "senet_154",
    "simple_pose_resnet101_v1d",
    "simple_pose_resnet152_v1b",
    "simple_pose_resnet152_v1d",
    "simple_pose_resnet18_v1b",
    "simple_pose_resnet50_v1b",
    "squeezenet_v1.2",
    "ssd_512_resnet50_v1",
    "ssd_512_vgg16_atrous",
    // Once legacy comparisons gave the input's dtype, as in MXNet 1.x.
    "mask_rcnn_resnet101_v1d_coco",
    "mask_rcnn_resnet18_v1b_coco",
    "static_bert_qa",
};

constexpr size_t kForwardBudgetBytes = size_t{16} << 20;

std::string ModelsDir() { return mx::testing::MxnetModelsDir(); }

struct ModelRow {
  std::string name;
  std::string inputs = "data:1,3,224,224";
  std::string params;     // relative to the models directory
  std::string dataset;    // e.g. fashion-mnist
  std::string reference;  // MXNet's recorded output
};

// gtest prints parameters in failure messages.
void PrintTo(const ModelRow& row, std::ostream* os) { *os << row.name; }

std::vector<ModelRow> ReadModels() {
  const std::string dir = ModelsDir();
  std::map<std::string, ModelRow> rows;
  std::ifstream tsv(dir + "/models.tsv");
  std::string line;
  while (std::getline(tsv, line)) {
    if (line.empty() || line[0] == '#') continue;
    const std::vector<std::string> cols = absl::StrSplit(line, '\t');
    ModelRow row;
    row.name = cols[0];
    if (cols.size() > 1) row.inputs = cols[1];
    if (cols.size() > 2) row.params = cols[2];
    if (cols.size() > 3) row.dataset = cols[3];
    if (cols.size() > 4) row.reference = cols[4];
    rows[row.name] = row;
  }
  std::vector<ModelRow> models;
  if (DIR* d = opendir(dir.c_str())) {
    while (dirent* e = readdir(d)) {
      const std::string file = e->d_name;
      if (!absl::EndsWith(file, "-symbol.json")) continue;
      const std::string name = file.substr(0, file.size() - 12);
      ModelRow row;
      if (rows.count(name)) {
        row = rows[name];
      } else {
        row.name = name;
      }
      models.push_back(row);
    }
    closedir(d);
  }
  std::sort(
      models.begin(), models.end(),
      [](const ModelRow& a, const ModelRow& b) { return a.name < b.name; });
  return models;
}

const std::vector<ModelRow>& Models() {
  static const auto* models = new std::vector<ModelRow>(ReadModels());
  return *models;
}

std::string SymbolPath(const ModelRow& m) {
  return ModelsDir() + "/" + m.name + "-symbol.json";
}

bool FullRun() {
  const char* v = std::getenv("MX_MODELS_FULL");
  return v != nullptr && std::string(v) == "1";
}

// Bitwise, so NaN equals NaN and -0 differs from 0.
bool SameBits(const NDArray& a, const NDArray& b) {
  if (a.shape() != b.shape() || a.dtype() != b.dtype()) return false;
  const size_t n = static_cast<size_t>(a.size()) * DTypeSize(a.dtype());
  std::string x(n, '\0'), y(n, '\0');
  a.SyncCopyToCPU(x.data(), static_cast<size_t>(a.size()));
  b.SyncCopyToCPU(y.data(), static_cast<size_t>(b.size()));
  return x == y;
}

TEST(MXNetModels, CorpusIsThere) {
  ASSERT_GE(Models().size(), 43u)
      << "../shared/mxnet-models not found next to the source tree (looked "
         "in \""
      << ModelsDir() << "\"; set MX_MXNET_MODELS_DIR)";
}

class MXNetModel : public ::testing::TestWithParam<ModelRow> {};

// Loads, binds, runs (within the budget) and compares with the default
// backend's partitioning. Only mx::Error may escape as "failed".
TEST_P(MXNetModel, RunsOrNamesWhatIsMissing) {
  const ModelRow& m = GetParam();
  std::string failure;
  bool ran_forward = false;
  size_t planned = 0;
  try {
    const Symbol symbol = mxnet_model::LoadSymbolFile(SymbolPath(m));
    const auto inputs = mxnet_model::ParseInputs(m.inputs);
    // Random weights only for a forward pass: filling the 100M+ weights of
    // the largest models took most of this test's time in sanitizer builds
    // (vgg16_ucf101: 79 s under ASan) for models that never run.
    auto exec = mxnet_model::BindUnfilled(symbol, inputs);
    planned = exec->bytes_without_reuse();
    if (FullRun() || planned <= kForwardBudgetBytes) {
      ran_forward = true;
      mxnet_model::FillRandomWeights(*exec, inputs);
      exec->Forward();
      const Symbol partitioned = mxnet_model::Partition(symbol, "default");
      auto part = mxnet_model::BindLike(partitioned, *exec);
      part->Forward();
      ASSERT_EQ(part->outputs().size(), exec->outputs().size());
      for (size_t i = 0; i < exec->outputs().size(); ++i) {
        EXPECT_TRUE(SameBits(exec->outputs()[i], part->outputs()[i]))
            << m.name << " output " << i << " differs after partitioning";
      }
    }
  } catch (const NotFound& e) {
    failure = e.what();
    EXPECT_TRUE(absl::StrContains(failure, "unknown op")) << failure;
  } catch (const NotImplemented& e) {
    failure = e.what();
  } catch (const Error& e) {
    ADD_FAILURE() << m.name << ": a typed error that names no missing op or "
                  << "feature: " << e.what();
    return;
  }
  const bool expected = kExpectedPassing.count(m.name) > 0;
  if (failure.empty()) {
    std::printf("[model] %-30s pass%s\n", m.name.c_str(),
                ran_forward ? ""
                            : " (loaded and bound; forward skipped: "
                              "over budget, MX_MODELS_FULL=1 runs it)");
    if (!expected) {
      std::printf("[model] %s now passes: add it to kExpectedPassing\n",
                  m.name.c_str());
    }
  } else {
    std::printf("[model] %-30s missing: %s\n", m.name.c_str(), failure.c_str());
    EXPECT_FALSE(expected) << m.name << " used to pass: " << failure;
  }
}

INSTANTIATE_TEST_SUITE_P(Corpus, MXNetModel, ::testing::ValuesIn(Models()),
                         [](const ::testing::TestParamInfo<ModelRow>& info) {
                           std::string name = info.param.name;
                           for (char& c : name) {
                             if (!std::isalnum(static_cast<unsigned char>(c)))
                               c = '_';
                           }
                           return name;
                         });

// ---- the real parameter files ----

std::vector<ModelRow> ModelsWithParams() {
  std::vector<ModelRow> out;
  for (const ModelRow& m : Models()) {
    if (!m.params.empty()) out.push_back(m);
  }
  return out;
}

// Models whose real parameters load and run today.
const std::set<std::string> kRealParamsRunning = {
    "advosbig_mnist_mlp", "fashion_mnist",    "fcrc_lenet",
    "mlnet_mlp",          "mnist_lenet_tanh", "mtcnn_det1"};

TEST(MXNetModelsParams, SixModelsHaveRealParams) {
  EXPECT_EQ(ModelsWithParams().size(), 6u);
}

class RealParams : public ::testing::TestWithParam<ModelRow> {};

// Every array fits the shape inferred from the model's inputs (Bind checks
// names, shapes and dtypes both ways) and the model runs.
TEST_P(RealParams, FitTheInferredShapesAndRun) {
  const ModelRow& m = GetParam();
  const nn::NamedArrays params = nn::LoadArrays(ModelsDir() + "/" + m.params);
  ASSERT_FALSE(params.empty());
  try {
    const Symbol symbol = mxnet_model::LoadSymbolFile(SymbolPath(m));
    auto exec =
        mxnet_model::Bind(symbol, mxnet_model::ParseInputs(m.inputs), params);
    exec->Forward();
    for (const NDArray& out : exec->outputs()) {
      for (double v : mxnet_model::ToDoubles(out)) {
        ASSERT_TRUE(std::isfinite(v)) << m.name;
      }
    }
    if (!m.reference.empty()) {
      double expected = 0;
      ASSERT_TRUE(absl::SimpleAtod(m.reference, &expected));
      const std::vector<double> got =
          mxnet_model::ToDoubles(exec->outputs()[0]);
      ASSERT_EQ(got.size(), 1u);
      EXPECT_NEAR(got[0], expected, 1e-5 * std::abs(expected)) << m.name;
    }
    if (!kRealParamsRunning.count(m.name)) {
      std::printf("[params] %s now runs: add it to kRealParamsRunning\n",
                  m.name.c_str());
    }
  } catch (const NotFound& e) {
    EXPECT_FALSE(kRealParamsRunning.count(m.name)) << e.what();
    EXPECT_TRUE(absl::StrContains(e.what(), "unknown op")) << e.what();
  } catch (const NotImplemented& e) {
    EXPECT_FALSE(kRealParamsRunning.count(m.name)) << e.what();
  }
}

// MXNet's format written here reads back bit for bit, names included, and
// so does mxcore's.
TEST_P(RealParams, WriteReadRoundTripIsExact) {
  const ModelRow& m = GetParam();
  const nn::NamedArrays params = nn::LoadArrays(ModelsDir() + "/" + m.params);
  const std::string dir =
      std::getenv("TEST_TMPDIR") ? std::getenv("TEST_TMPDIR") : "/tmp";
  for (nn::ParamsFormat format :
       {nn::ParamsFormat::kMXNet, nn::ParamsFormat::kMxcore}) {
    const std::string path = dir + "/" + m.name + "_round.params";
    nn::SaveArrays(path, params, format);
    const nn::NamedArrays back = nn::LoadArrays(path);
    ASSERT_EQ(back.size(), params.size());
    for (size_t i = 0; i < params.size(); ++i) {
      EXPECT_EQ(back[i].first, params[i].first);
      EXPECT_TRUE(SameBits(back[i].second, params[i].second))
          << params[i].first;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Corpus, RealParams,
                         ::testing::ValuesIn(ModelsWithParams()),
                         [](const ::testing::TestParamInfo<ModelRow>& info) {
                           std::string name = info.param.name;
                           for (char& c : name) {
                             if (!std::isalnum(static_cast<unsigned char>(c)))
                               c = '_';
                           }
                           return name;
                         });

// The Gluon way in: SymbolBlock::Import takes MXNet's params file as is.
TEST(MXNetModelsParams, SymbolBlockImportsMXNetsFiles) {
  const ModelRow* mlp = nullptr;
  for (const ModelRow& m : Models()) {
    if (m.name == "mlnet_mlp") mlp = &m;
  }
  ASSERT_NE(mlp, nullptr);
  auto block = nn::SymbolBlock::Import(SymbolPath(*mlp), {"data"},
                                       ModelsDir() + "/" + mlp->params);
  const NDArray y = (*block)(NDArray::FromVector<float>({1, 4}, {1, 1, 1, 1}));
  double expected = 0;
  ASSERT_TRUE(absl::SimpleAtod(mlp->reference, &expected));
  EXPECT_NEAR(mxnet_model::ToDoubles(y)[0], expected, 1e-5 * expected);
}

// MXNet's own fixture of the pre-V1 layout: six unnamed float32 arrays,
// each arange(128) (what MXNet's test_legacy_ndarray checks).
TEST(MXNetModelsParams, LegacyPreV1FixtureDecodes) {
  const nn::NamedArrays arrays =
      nn::LoadMXNetArrays(ModelsDir() + "/params/mxnet_legacy_ndarray.v0");
  ASSERT_EQ(arrays.size(), 6u);
  std::vector<double> arange(128);
  for (int i = 0; i < 128; ++i) arange[i] = i;
  for (const auto& [name, a] : arrays) {
    EXPECT_EQ(name, "");
    EXPECT_EQ(a.shape(), TShape({128}));
    EXPECT_EQ(mxnet_model::ToDoubles(a), arange);
  }
}

// fashion_mnist's real weights classify the Fashion-MNIST test set as
// weakly as they did in MXNet (accuracy 0.38, issue 15).
TEST(MXNetModelsParams, FashionMNISTReachesItsRecordedAccuracy) {
  const data::Dataset test = data::LoadFashionMNIST(data::kFashionMNISTDir,
                                                    /*train=*/false);
  const Symbol symbol =
      mxnet_model::LoadSymbolFile(ModelsDir() + "/fashion_mnist-symbol.json");
  const int64_t batch = 1000;
  auto exec = mxnet_model::Bind(
      symbol, mxnet_model::ParseInputs("data:1000,1,28,28"),
      nn::LoadArrays(ModelsDir() + "/params/fashion_mnist-0039.params"));
  NDArray data = exec->arg_dict().at("data");
  const int64_t pixels = test.rows * test.cols;
  int64_t correct = 0;
  for (int64_t start = 0; start + batch <= test.size; start += batch) {
    data.SyncCopyFromCPU(test.images.data() + start * pixels,
                         static_cast<size_t>(batch * pixels));
    exec->Forward();
    const std::vector<double> scores =
        mxnet_model::ToDoubles(exec->outputs()[0]);
    const size_t classes = scores.size() / batch;
    for (int64_t i = 0; i < batch; ++i) {
      const auto row = scores.begin() + i * classes;
      const int64_t predicted = std::max_element(row, row + classes) - row;
      correct += predicted == static_cast<int64_t>(test.labels[start + i]);
    }
  }
  const double accuracy = static_cast<double>(correct) / test.size;
  std::printf("[params] fashion_mnist test accuracy %.4f\n", accuracy);
  EXPECT_NEAR(accuracy, 0.38, 0.01);
}

}  // namespace
}  // namespace mx
