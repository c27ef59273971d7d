// Convolution and _backward_Convolution on cuDNN (1-D as 2-D with height
// 1, 2-D, 3-D; groups, stride, dilation, padding, bias). The fastest
// algorithm for each (shapes, dtype, attributes) is found once with
// cudnnFind*Algorithm and cached. float32 runs with FMA math (exact
// float32 as the CPU reference) unless MX_CUDA_ALLOW_TF32=1; float16 uses
// tensor cores.
#include <cstdio>
#include <cstdlib>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "backends/common/attr_parse.h"
#include "backends/cuda/cuda_ops.h"
#include "backends/cuda/cuda_util.h"

namespace mx_cuda {
namespace {

using mxplugin::Attrs;
using mxplugin::Error;
using mxplugin::KernelContext;
using mxplugin::Tensor;
using mxplugin::Tensors;

// Algorithms may use at most this much scratch memory.
constexpr size_t kMaxWorkspace = size_t{1} << 30;
// cudnnFind times each algorithm once; the first round runs on a GPU that
// may still be at idle clocks (seen on an H200: the slower algorithm won),
// so the choice comes from the second.
constexpr int kSearchRounds = 2;

// MX_CUDA_VERBOSE=1 prints each algorithm choice to stderr.
bool Verbose() {
  static const bool verbose = EnvFlag("MX_CUDA_VERBOSE");
  return verbose;
}

bool AllowTf32() {
  static const bool allow = EnvFlag("MX_CUDA_ALLOW_TF32");
  return allow;
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

std::vector<int> Ints(const std::vector<int64_t>& v) {
  return std::vector<int>(v.begin(), v.end());
}

std::vector<int> PackedStrides(const std::vector<int>& dims) {
  std::vector<int> s(dims.size(), 1);
  for (int i = static_cast<int>(dims.size()) - 2; i >= 0; --i) {
    s[i] = s[i + 1] * dims[i + 1];
  }
  return s;
}

// The cuDNN descriptors and algorithms of one convolution.
struct ConvPlan {
  cudnnTensorDescriptor_t x = nullptr, y = nullptr, bias = nullptr;
  cudnnFilterDescriptor_t w = nullptr;
  cudnnConvolutionDescriptor_t conv = nullptr;
  bool has_fwd = false, has_bwd = false;
  cudnnConvolutionFwdAlgo_t fwd{};
  cudnnConvolutionBwdDataAlgo_t bwd_data{};
  cudnnConvolutionBwdFilterAlgo_t bwd_filter{};
  size_t fwd_ws = 0, bwd_data_ws = 0, bwd_filter_ws = 0;
  ~ConvPlan() {
    if (x) cudnnDestroyTensorDescriptor(x);
    if (y) cudnnDestroyTensorDescriptor(y);
    if (bias) cudnnDestroyTensorDescriptor(bias);
    if (w) cudnnDestroyFilterDescriptor(w);
    if (conv) cudnnDestroyConvolutionDescriptor(conv);
  }
};

// Shapes padded to at least 4 dims (1-D convolutions get height 1).
struct ConvGeometry {
  std::vector<int> x, w, y, stride, dilate, pad;
  int groups = 1;
  bool has_bias = false;
  int dtype = 0;
  std::string Key() const {
    std::string k = std::to_string(dtype) + ":" + std::to_string(groups);
    for (const auto* v : {&x, &w, &y, &stride, &dilate, &pad}) {
      k += "|";
      for (int i : *v) k += std::to_string(i) + ",";
    }
    return k;
  }
};

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

ConvGeometry Geometry(const std::string& op, const Attrs& attrs,
                      const Tensor& data, const Tensor& weight,
                      const std::vector<int64_t>& out_shape) {
  const auto kernel = mxplugin::ParseTuple(attrs.Get("kernel", "None"));
  const auto groups = mxplugin::ParseInt(attrs.Get("num_group", "1"));
  const auto no_bias = mxplugin::ParseBool(attrs.Get("no_bias", "False"));
  const std::string layout = attrs.Get("layout", "None");
  if (!kernel || kernel->empty() || kernel->size() > 3 || !groups ||
      *groups < 1 || !no_bias) {
    throw Error(MX_STATUS_INVALID_ARGUMENT,
                op + ": cannot read the attributes");
  }
  if (layout != "None" && layout != "NCW" && layout != "NCHW" &&
      layout != "NCDHW") {
    Unsupported(op, "layout " + layout);
  }
  const size_t rank = kernel->size();
  ConvGeometry g;
  g.dtype = data.dtype();
  g.groups = static_cast<int>(*groups);
  g.has_bias = !*no_bias;
  g.x = Ints(data.shape());
  g.w = Ints(weight.shape());
  g.y = Ints(out_shape);
  g.stride = Ints(PerAxis(op, attrs, "stride", rank, 1));
  g.dilate = Ints(PerAxis(op, attrs, "dilate", rank, 1));
  g.pad = Ints(PerAxis(op, attrs, "pad", rank, 0));
  if (rank == 1) {  // As 2-D with a height of 1.
    for (auto* v : {&g.x, &g.w, &g.y}) v->insert(v->begin() + 2, 1);
    g.stride.insert(g.stride.begin(), 1);
    g.dilate.insert(g.dilate.begin(), 1);
    g.pad.insert(g.pad.begin(), 0);
  }
  return g;
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
    b[1] = g.y[1];
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

template <typename Perf>
const Perf* Best(const Perf* results, int n) {
  for (int i = 0; i < n; ++i) {
    if (results[i].status == CUDNN_STATUS_SUCCESS &&
        results[i].memory <= kMaxWorkspace) {
      return &results[i];
    }
  }
  return nullptr;
}

void FindForward(const std::string& op, cudnnHandle_t h, ConvPlan* p) {
  std::lock_guard<std::mutex> lock(Plans().search_mu());
  if (p->has_fwd) return;
  cudnnConvolutionFwdAlgoPerf_t r[CUDNN_CONVOLUTION_FWD_ALGO_COUNT];
  int n = 0;
  for (int round = 0; round < kSearchRounds; ++round) {
    CheckDnn(cudnnFindConvolutionForwardAlgorithm(
                 h, p->x, p->w, p->conv, p->y, CUDNN_CONVOLUTION_FWD_ALGO_COUNT,
                 &n, r),
             op + ": algorithm search");
  }
  const auto* best = Best(r, n);
  if (best == nullptr) Unsupported(op, "cuDNN has no algorithm for it");
  p->fwd = best->algo;
  p->fwd_ws = best->memory;
  p->has_fwd = true;
  if (Verbose()) {
    std::fprintf(stderr,
                 "[mx_cuda] %s: forward algorithm %d (%.3f ms, %zu "
                 "bytes of workspace) of %d\n",
                 op.c_str(), static_cast<int>(best->algo), best->time,
                 best->memory, n);
  }
}

void FindBackward(const std::string& op, cudnnHandle_t h, ConvPlan* p) {
  std::lock_guard<std::mutex> lock(Plans().search_mu());
  if (p->has_bwd) return;
  cudnnConvolutionBwdDataAlgoPerf_t rd[CUDNN_CONVOLUTION_BWD_DATA_ALGO_COUNT];
  cudnnConvolutionBwdFilterAlgoPerf_t
      rf[CUDNN_CONVOLUTION_BWD_FILTER_ALGO_COUNT];
  int nd = 0, nf = 0;
  for (int round = 0; round < kSearchRounds; ++round) {
    CheckDnn(cudnnFindConvolutionBackwardDataAlgorithm(
                 h, p->w, p->y, p->conv, p->x,
                 CUDNN_CONVOLUTION_BWD_DATA_ALGO_COUNT, &nd, rd),
             op + ": data-gradient algorithm search");
    CheckDnn(cudnnFindConvolutionBackwardFilterAlgorithm(
                 h, p->x, p->y, p->conv, p->w,
                 CUDNN_CONVOLUTION_BWD_FILTER_ALGO_COUNT, &nf, rf),
             op + ": weight-gradient algorithm search");
  }
  const auto* bd = Best(rd, nd);
  const auto* bf = Best(rf, nf);
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
                 "[mx_cuda] %s: data-gradient algorithm %d (%.3f ms), "
                 "weight-gradient algorithm %d (%.3f ms)\n",
                 op.c_str(), static_cast<int>(bd->algo), bd->time,
                 static_cast<int>(bf->algo), bf->time);
  }
}

// alpha/beta in the compute type's host representation.
struct Scale {
  double d;
  float f;
  const void* of(int dtype) const {
    return dtype == MX_DTYPE_FLOAT64 ? static_cast<const void*>(&d) : &f;
  }
};
constexpr Scale kOne{1, 1}, kZero{0, 0};

const void* BetaFor(int req, int dtype) {
  return (req == MX_REQ_ADD ? kOne : kZero).of(dtype);
}

void ConvForward(const KernelContext& ctx, const Attrs& attrs, Tensors in,
                 const int32_t* req, Tensors out) {
  const std::string op = "Convolution";
  if (req[0] == MX_REQ_NULL) return;
  const ConvGeometry g = Geometry(op, attrs, in[0], in[1], out[0].shape());
  cudnnHandle_t h =
      DnnHandle(ctx.dev_id(), static_cast<cudaStream_t>(ctx.stream()));
  auto p = Plans().Get(op, ctx.dev_id(), g);
  FindForward(op, h, p.get());
  const int dt = g.dtype;
  void* ws = Workspace(ctx.dev_id(), p->fwd_ws);
  CheckDnn(cudnnConvolutionForward(h, kOne.of(dt), p->x, in[0].data<void>(),
                                   p->w, in[1].data<void>(), p->conv, p->fwd,
                                   ws, p->fwd_ws, BetaFor(req[0], dt), p->y,
                                   out[0].data<void>()),
           op);
  if (g.has_bias && in.size() > 2) {
    CheckDnn(cudnnAddTensor(h, kOne.of(dt), p->bias, in[2].data<void>(),
                            kOne.of(dt), p->y, out[0].data<void>()),
             op + ": bias");
  }
}

// (out_grad, data, weight) -> (data_grad, weight_grad[, bias_grad]).
void ConvBackward(const KernelContext& ctx, const Attrs& attrs, Tensors in,
                  const int32_t* req, Tensors out) {
  const std::string op = "_backward_Convolution";
  const ConvGeometry g = Geometry(op, attrs, in[1], in[2], in[0].shape());
  cudnnHandle_t h =
      DnnHandle(ctx.dev_id(), static_cast<cudaStream_t>(ctx.stream()));
  auto p = Plans().Get(op, ctx.dev_id(), g);
  FindBackward(op, h, p.get());
  const int dt = g.dtype;
  if (req[0] != MX_REQ_NULL) {
    void* ws = Workspace(ctx.dev_id(), p->bwd_data_ws);
    CheckDnn(cudnnConvolutionBackwardData(
                 h, kOne.of(dt), p->w, in[2].data<void>(), p->y,
                 in[0].data<void>(), p->conv, p->bwd_data, ws, p->bwd_data_ws,
                 BetaFor(req[0], dt), p->x, out[0].data<void>()),
             op + ": data gradient");
  }
  if (req[1] != MX_REQ_NULL) {
    void* ws = Workspace(ctx.dev_id(), p->bwd_filter_ws);
    CheckDnn(
        cudnnConvolutionBackwardFilter(
            h, kOne.of(dt), p->x, in[1].data<void>(), p->y, in[0].data<void>(),
            p->conv, p->bwd_filter, ws, p->bwd_filter_ws, BetaFor(req[1], dt),
            p->w, out[1].data<void>()),
        op + ": weight gradient");
  }
  if (g.has_bias && out.size() > 2 && req[2] != MX_REQ_NULL) {
    CheckDnn(cudnnConvolutionBackwardBias(
                 h, kOne.of(dt), p->y, in[0].data<void>(), BetaFor(req[2], dt),
                 p->bias, out[2].data<void>()),
             op + ": bias gradient");
  }
}

}  // namespace

void RegisterConvOps(mxplugin::Plugin& plugin) {
  // Read (and checked) now: a bad value fails the plugin's load.
  Verbose();
  AllowTf32();
  RegisterGpuKernel(plugin, "Convolution", ConvForward);
  RegisterGpuKernel(plugin, "_backward_Convolution", ConvBackward);
}

}  // namespace mx_cuda
