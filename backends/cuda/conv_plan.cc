// cuDNN convolution plans (conv_plan.h): descriptors, algorithm searches
// and their cache. float32 runs with FMA math (exact float32 as the CPU
// reference) unless MX_CUDA_ALLOW_TF32=1; float16 uses tensor cores.
#include "backends/cuda/conv_plan.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <mutex>
#include <set>
#include <utility>
#include <vector>

#include "backends/common/attr_parse.h"
#include "backends/cuda/cuda_util.h"

namespace mx_cuda {
namespace {

using mxplugin::Attrs;
using mxplugin::Error;

// Algorithms may use at most this much scratch memory.
constexpr size_t kMaxWorkspace = size_t{1} << 30;
// cudnnFind times each algorithm once. The first round runs on a GPU that
// may still be at idle clocks (seen on an H200: the slower algorithm won),
// so it only warms up; one timing per algorithm is still noisy (two H200
// runs chose algorithms 5 and 7 for one convolution, 0.24 against 0.27 ms
// queued), so the choice takes each algorithm's median over the rest.
constexpr int kSearchRounds = 4;

// MX_CUDA_VERBOSE=1 prints each algorithm choice to stderr.
bool Verbose() {
  static const bool verbose = EnvFlag("MX_CUDA_VERBOSE");
  return verbose;
}

bool AllowTf32() {
  static const bool allow = EnvFlag("MX_CUDA_ALLOW_TF32");
  return allow;
}

std::vector<int> PackedStrides(const std::vector<int>& dims) {
  std::vector<int> s(dims.size(), 1);
  for (int i = static_cast<int>(dims.size()) - 2; i >= 0; --i) {
    s[i] = s[i + 1] * dims[i + 1];
  }
  return s;
}

void MakeDescriptors(const std::string& op, const ConvGeometry& g,
                     ConvPlan* p) {
  const cudnnDataType_t t = DnnType(op, g.dtype);
  const int nd = static_cast<int>(g.x.size());
  CheckDnn(cudnnCreateTensorDescriptor(&p->x), op);
  CheckDnn(cudnnCreateTensorDescriptor(&p->y), op);
  CheckDnn(cudnnCreateFilterDescriptor(&p->w), op);
  CheckDnn(cudnnCreateConvolutionDescriptor(&p->conv), op);
  CheckDnn(cudnnSetTensorNdDescriptor(p->x, t, nd, g.x.data(),
                                      PackedStrides(g.x).data()),
           op + ": data descriptor");
  CheckDnn(cudnnSetTensorNdDescriptor(p->y, t, nd, g.y.data(),
                                      PackedStrides(g.y).data()),
           op + ": output descriptor");
  CheckDnn(
      cudnnSetFilterNdDescriptor(p->w, t, CUDNN_TENSOR_NCHW, nd, g.w.data()),
      op + ": weight descriptor");
  // Accumulate float16 in float32.
  const cudnnDataType_t acc = t == CUDNN_DATA_HALF ? CUDNN_DATA_FLOAT : t;
  CheckDnn(cudnnSetConvolutionNdDescriptor(p->conv, nd - 2, g.pad.data(),
                                           g.stride.data(), g.dilate.data(),
                                           CUDNN_CROSS_CORRELATION, acc),
           op + ": convolution descriptor");
  CheckDnn(cudnnSetConvolutionGroupCount(p->conv, g.groups), op + ": groups");
  const cudnnMathType_t math = t == CUDNN_DATA_HALF ? CUDNN_TENSOR_OP_MATH
                               : AllowTf32()        ? CUDNN_DEFAULT_MATH
                                                    : CUDNN_FMA_MATH;
  CheckDnn(cudnnSetConvolutionMathType(p->conv, math), op + ": math type");
  if (g.has_bias) {
    std::vector<int> b(nd, 1);
    b[1] = g.bias_on_x ? g.x[1] : g.y[1];
    CheckDnn(cudnnCreateTensorDescriptor(&p->bias), op);
    CheckDnn(cudnnSetTensorNdDescriptor(p->bias, t, nd, b.data(),
                                        PackedStrides(b).data()),
             op + ": bias descriptor");
  }
}

// Plans by geometry, per device; algorithms are found on first use.
class PlanCache {
 public:
  std::shared_ptr<ConvPlan> Get(const std::string& op, int dev_id,
                                const ConvGeometry& g) {
    const std::string key = std::to_string(dev_id) + "#" + g.Key();
    std::lock_guard<std::mutex> lock(mu_);
    auto it = plans_.find(key);
    if (it != plans_.end()) return it->second;
    auto p = std::make_shared<ConvPlan>();
    MakeDescriptors(op, g, p.get());
    plans_.emplace(key, p);
    return p;
  }
  // Serializes algorithm searches (they time kernels on the device).
  std::mutex& search_mu() { return search_mu_; }

 private:
  std::mutex mu_, search_mu_;
  std::map<std::string, std::shared_ptr<ConvPlan>> plans_;
};

PlanCache& Plans() {
  static auto* cache = new PlanCache();
  return *cache;
}

// The timings of the search rounds after the first (cudnn*AlgoPerf_t of
// one kind); Best() is the (algorithm, math type) with the lowest median
// time among those that ran within the workspace limit in the most rounds.
// cudnnFind may list one algorithm more than once in a round, with
// different math types: each is timed on its own (once per round, the
// first listed, which is the faster), and the workspace chosen is the
// largest any listing of the algorithm asked for, since the convolution
// runs with its descriptor's math type.
template <typename Perf>
class SearchRounds {
 public:
  void Add(const Perf* results, int n) {
    ++rounds_;
    if (rounds_ == 1) return;  // Warm-up.
    std::set<std::pair<int, int>> seen;
    for (int i = 0; i < n; ++i) {
      const Perf& r = results[i];
      if (r.status != CUDNN_STATUS_SUCCESS || r.memory > kMaxWorkspace) {
        continue;
      }
      const int algo = static_cast<int>(r.algo);
      size_t& memory = memory_[algo];
      memory = std::max(memory, r.memory);
      const std::pair<int, int> key{algo, static_cast<int>(r.mathType)};
      if (!seen.insert(key).second) continue;
      Timings& t = by_key_[key];
      t.times.push_back(r.time);
      t.last = r;
    }
  }
  // Null when no algorithm ran. Only those that ran in the most rounds
  // compete (a median of fewer timings is a noisier one).
  const Perf* Best() {
    size_t most = 0;
    for (const auto& [key, t] : by_key_) most = std::max(most, t.times.size());
    Perf* best = nullptr;
    float best_median = 0;
    for (auto& [key, t] : by_key_) {
      if (most == 0 || t.times.size() != most) continue;
      std::sort(t.times.begin(), t.times.end());
      const float median = t.times[t.times.size() / 2];
      if (best == nullptr || median < best_median) {
        best = &t.last;
        best_median = median;
      }
    }
    if (best == nullptr) return nullptr;
    best->memory = memory_[static_cast<int>(best->algo)];
    best_time_ = best_median;
    return best;
  }
  float best_time() const { return best_time_; }

 private:
  struct Timings {
    std::vector<float> times;
    Perf last;
  };
  int rounds_ = 0;
  std::map<std::pair<int, int>, Timings> by_key_;  // (algo, math type)
  std::map<int, size_t> memory_;                   // By algo.
  float best_time_ = 0;
};

struct Scale {
  double d;
  float f;
  const void* of(int dtype) const {
    return dtype == MX_DTYPE_FLOAT64 ? static_cast<const void*>(&d) : &f;
  }
};
constexpr Scale kOne{1, 1}, kZero{0, 0};

}  // namespace

ConvPlan::~ConvPlan() {
  if (x) cudnnDestroyTensorDescriptor(x);
  if (y) cudnnDestroyTensorDescriptor(y);
  if (bias) cudnnDestroyTensorDescriptor(bias);
  if (w) cudnnDestroyFilterDescriptor(w);
  if (conv) cudnnDestroyConvolutionDescriptor(conv);
}

std::string ConvGeometry::Key() const {
  std::string k = std::to_string(dtype) + ":" + std::to_string(groups) + ":" +
                  (has_bias ? (bias_on_x ? "bx" : "by") : "-");
  for (const auto* v : {&x, &w, &y, &stride, &dilate, &pad}) {
    k += "|";
    for (int i : *v) k += std::to_string(i) + ",";
  }
  return k;
}

cudnnDataType_t DnnType(const std::string& op, int dtype) {
  switch (dtype) {
    case MX_DTYPE_FLOAT32:
      return CUDNN_DATA_FLOAT;
    case MX_DTYPE_FLOAT64:
      return CUDNN_DATA_DOUBLE;
    case MX_DTYPE_FLOAT16:
      return CUDNN_DATA_HALF;
    default:
      throw Error(MX_STATUS_DTYPE_ERROR,
                  op + " on gpu: " + DTypeName(dtype) +
                      " is not supported (float32, float64, float16)");
  }
}

ConvAttrs ParseConvAttrs(const std::string& op, const mxplugin::Attrs& attrs,
                         const char* no_bias_default) {
  const auto kernel = mxplugin::ParseTuple(attrs.Get("kernel", "None"));
  const auto groups = mxplugin::ParseInt(attrs.Get("num_group", "1"));
  const auto no_bias =
      mxplugin::ParseBool(attrs.Get("no_bias", no_bias_default));
  const std::string layout = attrs.Get("layout", "None");
  if (!kernel || kernel->empty() || kernel->size() > 3 || !groups ||
      *groups < 1 || !no_bias) {
    throw mxplugin::Error(MX_STATUS_INVALID_ARGUMENT,
                          op + ": cannot read the attributes");
  }
  if (layout != "None" && layout != "NCW" && layout != "NCHW" &&
      layout != "NCDHW") {
    Unsupported(op, "layout " + layout);
  }
  return ConvAttrs{*kernel, *groups, *no_bias};
}

std::vector<int> Ints(const std::vector<int64_t>& v) {
  return std::vector<int>(v.begin(), v.end());
}

std::vector<int64_t> PerAxis(const std::string& op, const Attrs& attrs,
                             const char* key, size_t rank, int64_t fallback) {
  const auto v = mxplugin::ParseTuple(attrs.Get(key, "None"));
  if (!v) {
    throw Error(MX_STATUS_INVALID_ARGUMENT,
                op + ": cannot read " + key + "=" + attrs.Get(key));
  }
  if (v->empty()) return std::vector<int64_t>(rank, fallback);
  if (v->size() != rank) {
    throw Error(MX_STATUS_INVALID_ARGUMENT,
                op + ": " + key + " has " + std::to_string(v->size()) +
                    " values for a " + std::to_string(rank) + "-D kernel");
  }
  return *v;
}

std::shared_ptr<ConvPlan> GetConvPlan(const std::string& op, int dev_id,
                                      const ConvGeometry& g) {
  return Plans().Get(op, dev_id, g);
}

void FindForward(const std::string& op, cudnnHandle_t h, ConvPlan* p) {
  std::lock_guard<std::mutex> lock(Plans().search_mu());
  if (p->has_fwd) return;
  SearchRounds<cudnnConvolutionFwdAlgoPerf_t> rounds;
  for (int round = 0; round < kSearchRounds; ++round) {
    cudnnConvolutionFwdAlgoPerf_t r[CUDNN_CONVOLUTION_FWD_ALGO_COUNT];
    int n = 0;
    CheckDnn(cudnnFindConvolutionForwardAlgorithm(
                 h, p->x, p->w, p->conv, p->y, CUDNN_CONVOLUTION_FWD_ALGO_COUNT,
                 &n, r),
             op + ": algorithm search");
    rounds.Add(r, n);
  }
  const auto* best = rounds.Best();
  if (best == nullptr) Unsupported(op, "cuDNN has no algorithm for it");
  p->fwd = best->algo;
  p->fwd_ws = best->memory;
  p->has_fwd = true;
  if (Verbose()) {
    std::fprintf(stderr,
                 "[mx_cuda] %s: forward algorithm %d (median %.3f ms, %zu "
                 "bytes of workspace)\n",
                 op.c_str(), static_cast<int>(best->algo), rounds.best_time(),
                 best->memory);
  }
}

void FindBackward(const std::string& op, cudnnHandle_t h, ConvPlan* p) {
  std::lock_guard<std::mutex> lock(Plans().search_mu());
  if (p->has_bwd) return;
  SearchRounds<cudnnConvolutionBwdDataAlgoPerf_t> data_rounds;
  SearchRounds<cudnnConvolutionBwdFilterAlgoPerf_t> filter_rounds;
  for (int round = 0; round < kSearchRounds; ++round) {
    cudnnConvolutionBwdDataAlgoPerf_t rd[CUDNN_CONVOLUTION_BWD_DATA_ALGO_COUNT];
    cudnnConvolutionBwdFilterAlgoPerf_t
        rf[CUDNN_CONVOLUTION_BWD_FILTER_ALGO_COUNT];
    int nd = 0, nf = 0;
    CheckDnn(cudnnFindConvolutionBackwardDataAlgorithm(
                 h, p->w, p->y, p->conv, p->x,
                 CUDNN_CONVOLUTION_BWD_DATA_ALGO_COUNT, &nd, rd),
             op + ": data-gradient algorithm search");
    CheckDnn(cudnnFindConvolutionBackwardFilterAlgorithm(
                 h, p->x, p->y, p->conv, p->w,
                 CUDNN_CONVOLUTION_BWD_FILTER_ALGO_COUNT, &nf, rf),
             op + ": weight-gradient algorithm search");
    data_rounds.Add(rd, nd);
    filter_rounds.Add(rf, nf);
  }
  const auto* bd = data_rounds.Best();
  const auto* bf = filter_rounds.Best();
  if (bd == nullptr || bf == nullptr) {
    Unsupported(op, "cuDNN has no gradient algorithm for it");
  }
  p->bwd_data = bd->algo;
  p->bwd_data_ws = bd->memory;
  p->bwd_filter = bf->algo;
  p->bwd_filter_ws = bf->memory;
  p->has_bwd = true;
  if (Verbose()) {
    std::fprintf(stderr,
                 "[mx_cuda] %s: data-gradient algorithm %d (median %.3f "
                 "ms), weight-gradient algorithm %d (median %.3f ms)\n",
                 op.c_str(), static_cast<int>(bd->algo),
                 data_rounds.best_time(), static_cast<int>(bf->algo),
                 filter_rounds.best_time());
  }
}

const void* DnnOne(int dtype) { return kOne.of(dtype); }

const void* BetaFor(int req, int dtype) {
  return (req == MX_REQ_ADD ? kOne : kZero).of(dtype);
}

void ReadConvEnv() {
  Verbose();
  AllowTf32();
}

}  // namespace mx_cuda
