#include "backends/cuda/cuda_util.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <memory>
#include <mutex>
#include <utility>
#include <vector>

#include "backends/common/attr_parse.h"

namespace mx_cuda {

using mxplugin::Error;

void CheckCuda(cudaError_t err, const std::string& what) {
  if (err == cudaSuccess) return;
  const MxStatusCode code = err == cudaErrorMemoryAllocation
                                ? MX_STATUS_OUT_OF_MEMORY
                                : MX_STATUS_RUNTIME_ERROR;
  cudaGetLastError();  // Clears a non-sticky error for the next call.
  throw Error(code, what + ": " + cudaGetErrorName(err) + " (" +
                        cudaGetErrorString(err) + ")");
}

void CheckBlas(cublasStatus_t st, const std::string& what) {
  if (st == CUBLAS_STATUS_SUCCESS) return;
  throw Error(st == CUBLAS_STATUS_ALLOC_FAILED ? MX_STATUS_OUT_OF_MEMORY
                                               : MX_STATUS_RUNTIME_ERROR,
              what + ": cuBLAS " + cublasGetStatusString(st));
}

void CheckDnn(cudnnStatus_t st, const std::string& what) {
  if (st == CUDNN_STATUS_SUCCESS) return;
  throw Error(st == CUDNN_STATUS_ALLOC_FAILED ? MX_STATUS_OUT_OF_MEMORY
                                              : MX_STATUS_RUNTIME_ERROR,
              what + ": cuDNN " + cudnnGetErrorString(st));
}

namespace {

struct DeviceQuery {
  int count = 0;
  std::string reason;
};

const DeviceQuery& Query() {
  static const DeviceQuery* q = [] {
    auto* r = new DeviceQuery();
    const cudaError_t err = cudaGetDeviceCount(&r->count);
    if (err != cudaSuccess) {
      r->count = 0;
      r->reason =
          std::string(cudaGetErrorName(err)) + ": " + cudaGetErrorString(err);
      cudaGetLastError();
    } else if (r->count == 0) {
      r->reason = "the CUDA driver reports no device";
    }
    return r;
  }();
  return *q;
}

// Per-stream state: library handles bound to the stream, and scratch
// memory used in its order. The engine runs one thread at a time on a
// stream (an engine worker's own, or one lent to a pushing thread for a
// launch, handed over under a lock), so a stream's state needs no lock.
struct StreamState {
  cublasHandle_t blas = nullptr;
  cudnnHandle_t dnn = nullptr;
  void* workspace = nullptr;
  size_t workspace_bytes = 0;
};

// Never destroyed: engine workers end during static destruction at exit,
// after the CUDA runtime has torn its context down, and destroying a
// cuBLAS/cuDNN handle then crashes (seen on an H200). The engine's streams
// live as long as their worker threads, or (lent to pushing threads) as
// the process, so the states stay as many as the streams the engine made.
// (NaiveEngine gives each pushing thread a stream that ends with it; a
// later stream at the same address gets that state back.)
StreamState& StateOf(int dev_id, cudaStream_t stream) {
  struct Last {
    int dev_id = -1;
    cudaStream_t stream = nullptr;
    StreamState* state = nullptr;
  };
  thread_local Last last;  // Consecutive kernels mostly share a stream.
  if (last.state != nullptr && last.dev_id == dev_id && last.stream == stream) {
    return *last.state;
  }
  static auto* mu = new std::mutex();
  static auto* states =
      new std::map<std::pair<int, cudaStream_t>, StreamState*>();
  StreamState* state;
  {
    std::lock_guard<std::mutex> lock(*mu);
    StreamState*& entry = (*states)[{dev_id, stream}];
    if (entry == nullptr) entry = new StreamState();
    state = entry;
  }
  last = Last{dev_id, stream, state};
  return *state;
}

}  // namespace

const std::string& NoDeviceReason() { return Query().reason; }
int DeviceCount() { return Query().count; }

void UseDevice(int dev_id) {
  // Asked each time, not cached: an application thread that launches
  // (engine launches on the pusher) may have set another device itself.
  int current = -1;
  CheckCuda(cudaGetDevice(&current), "cudaGetDevice");
  if (current == dev_id) return;
  CheckCuda(cudaSetDevice(dev_id),
            "cudaSetDevice(" + std::to_string(dev_id) + ")");
}

cublasHandle_t BlasHandle(int dev_id, cudaStream_t stream) {
  UseDevice(dev_id);
  StreamState& state = StateOf(dev_id, stream);
  if (state.blas == nullptr) {
    cublasHandle_t h = nullptr;
    CheckBlas(cublasCreate(&h), "cublasCreate");
    const cublasStatus_t bound = cublasSetStream(h, stream);
    if (bound != CUBLAS_STATUS_SUCCESS) cublasDestroy(h);
    CheckBlas(bound, "cublasSetStream");
    state.blas = h;
  }
  return state.blas;
}

cudnnHandle_t DnnHandle(int dev_id, cudaStream_t stream) {
  UseDevice(dev_id);
  StreamState& state = StateOf(dev_id, stream);
  if (state.dnn == nullptr) {
    cudnnHandle_t h = nullptr;
    CheckDnn(cudnnCreate(&h), "cudnnCreate");
    const cudnnStatus_t bound = cudnnSetStream(h, stream);
    if (bound != CUDNN_STATUS_SUCCESS) cudnnDestroy(h);
    CheckDnn(bound, "cudnnSetStream");
    state.dnn = h;
  }
  return state.dnn;
}

void* Workspace(const mxplugin::KernelContext& ctx, size_t bytes) {
  if (bytes == 0) return nullptr;
  const int dev_id = ctx.dev_id();
  UseDevice(dev_id);
  StreamState& state = StateOf(dev_id, static_cast<cudaStream_t>(ctx.stream()));
  if (state.workspace_bytes < bytes) {
    if (state.workspace != nullptr) {
      CheckCuda(cudaFree(state.workspace), "cudaFree");
    }
    state.workspace = nullptr;
    state.workspace_bytes = 0;
    CheckCuda(cudaMalloc(&state.workspace, bytes),
              "workspace of " + std::to_string(bytes) + " bytes on gpu(" +
                  std::to_string(dev_id) + ")");
    state.workspace_bytes = bytes;
  }
  return state.workspace;
}

cudaStream_t StreamOf(const mxplugin::KernelContext& ctx) {
  UseDevice(ctx.dev_id());
  return static_cast<cudaStream_t>(ctx.stream());
}

bool IsFloat(int dtype) {
  return dtype == MX_DTYPE_FLOAT32 || dtype == MX_DTYPE_FLOAT64 ||
         dtype == MX_DTYPE_FLOAT16;
}

void RequireFloat(const std::string& op, const mxplugin::Tensor& t) {
  const int d = t.dtype();
  if (!IsFloat(d)) {
    throw Error(MX_STATUS_DTYPE_ERROR,
                op + " on gpu: " + DTypeName(d) +
                    " is not supported (float32, float64, float16)");
  }
}

void RequireNumeric(const std::string& op, const mxplugin::Tensor& t) {
  const int d = t.dtype();
  if (d != MX_DTYPE_UINT8 && d != MX_DTYPE_INT8 && d != MX_DTYPE_INT32 &&
      d != MX_DTYPE_INT64) {
    RequireFloat(op, t);
  }
}

double NumberAttr(const std::string& op, const mxplugin::Attrs& attrs,
                  const std::string& key, double fallback) {
  const auto text = attrs.Find(key);
  if (!text || *text == "None") return fallback;
  const auto v = mxplugin::ParseFloat(*text);
  if (!v) {
    throw Error(
        MX_STATUS_INVALID_ARGUMENT,
        op + ": " + key + "=" + std::string(*text) + " is not a number");
  }
  return *v;
}

// Bytes before the scratch in the workspace: the flag int, padded so the
// scratch stays aligned for double atomics.
constexpr size_t kFlagBytes = 256;

int* FlagAndScratch(const mxplugin::KernelContext& ctx, const std::string& op,
                    size_t scratch_bytes, void** scratch) {
  char* w = static_cast<char*>(Workspace(ctx, kFlagBytes + scratch_bytes));
  CheckCuda(cudaMemsetAsync(w, 0, sizeof(int), StreamOf(ctx)), op);
  if (scratch != nullptr) *scratch = w + kFlagBytes;
  return reinterpret_cast<int*>(w);
}

void CheckFlag(const mxplugin::KernelContext& ctx, const std::string& op,
               const int* bad, const std::string& why) {
  int host = 0;
  ReadBack(op + " (index check)", StreamOf(ctx), bad, &host, sizeof(host));
  if (host != 0) throw Error(MX_STATUS_INVALID_ARGUMENT, op + ": " + why);
}

int64_t Prod(const mxplugin::Tensor& t, int begin, int end) {
  int64_t n = 1;
  for (int d = begin; d < end; ++d) n *= t.dim(d);
  return n;
}

int AxisAttr(const std::string& op, const mxplugin::Attrs& attrs,
             const char* key, double fallback, int ndim) {
  const double v = NumberAttr(op, attrs, key, fallback);
  if (v != std::floor(v) || v < -ndim || v >= ndim) {
    throw Error(MX_STATUS_INVALID_ARGUMENT,
                op + ": " + key + "=" + attrs.Get(key) +
                    " is not an axis of an array of rank " +
                    std::to_string(ndim));
  }
  return static_cast<int>(v < 0 ? v + ndim : v);
}

AxisLines AxisLinesOf(const std::string& op, const mxplugin::Attrs& attrs,
                      const mxplugin::Tensor& x, const char* fallback) {
  AxisLines l;
  if (attrs.Get("axis", fallback) == "None") {
    l.len = x.size();
    return l;
  }
  // The key is present here, or missing with a numeric fallback.
  const int axis = AxisAttr(op, attrs, "axis", -1, x.ndim());
  l.outer = Prod(x, 0, axis);
  l.len = x.dim(axis);
  l.inner = Prod(x, axis + 1, x.ndim());
  return l;
}

bool FlagAttr(const std::string& op, const mxplugin::Attrs& attrs,
              const char* key, const char* fallback) {
  const auto v = mxplugin::ParseBool(attrs.Get(key, fallback));
  if (!v) {
    throw Error(MX_STATUS_INVALID_ARGUMENT,
                op + ": " + key + "=" + attrs.Get(key) + " is not a bool");
  }
  return *v;
}

void CheckLaunch(const std::string& op, cudaError_t err, int dtype) {
  if (err == cudaErrorInvalidValue) {
    cudaGetLastError();
    throw Error(MX_STATUS_DTYPE_ERROR,
                op + " on gpu: " + DTypeName(dtype) + " is not supported");
  }
  CheckCuda(err, op);
}

void RunGather(const std::string& op, const mxplugin::KernelContext& ctx,
               const GatherIndex& gi, const mxplugin::Tensor& src,
               const mxplugin::Tensor& out, int32_t req) {
  if (req == MX_REQ_NULL) return;
  RequireNumeric(op, src);
  CheckCuda(LaunchGatherSum(src.dtype(), out.size(), gi, src.data<void>(),
                            out.data<void>(), req, StreamOf(ctx)),
            op);
}

void FillOutput(const std::string& op, cudaStream_t s,
                const mxplugin::Tensor& out, int32_t req, double value) {
  if (req == MX_REQ_ADD) {
    if (value != 0) {
      CheckCuda(LaunchScalar(Binary::kAdd, false, out.dtype(), out.size(),
                             out.data<void>(), value, out.data<void>(),
                             MX_REQ_WRITE, s),
                op);
    }
  } else if (req == MX_REQ_WRITE || req == MX_REQ_INPLACE) {
    CheckCuda(LaunchFill(out.dtype(), out.size(), value, out.data<void>(), s),
              op);
  }
}

void ZeroUnlessAdding(const std::string& op, const mxplugin::KernelContext& ctx,
                      const mxplugin::Tensor& out, int32_t req) {
  if (req != MX_REQ_WRITE && req != MX_REQ_INPLACE) return;
  if (ByteSize(out) == 0) return;
  CheckCuda(cudaMemsetAsync(out.data<void>(), 0, ByteSize(out), StreamOf(ctx)),
            op);
}

void RunScatter(const std::string& op, const mxplugin::KernelContext& ctx,
                const GatherIndex& gi, const mxplugin::Tensor& src,
                const mxplugin::Tensor& out, int32_t req) {
  if (req == MX_REQ_NULL) return;
  RequireNumeric(op, src);
  cudaStream_t s = StreamOf(ctx);
  ZeroUnlessAdding(op, ctx, out, req);
  CheckCuda(LaunchScatter(src.dtype(), src.size(), gi, src.data<void>(),
                          out.data<void>(),
                          req == MX_REQ_ADD ? MX_REQ_ADD : MX_REQ_WRITE, s),
            op);
}

void ReadBack(const std::string& what, cudaStream_t s, const void* src,
              void* dst, size_t bytes) {
  CheckCuda(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToHost, s), what);
  CheckCuda(cudaStreamSynchronize(s), what);
}

std::vector<double> HostDoubles(const std::string& op,
                                const mxplugin::KernelContext& ctx,
                                const mxplugin::Tensor& t) {
  std::vector<double> v(static_cast<size_t>(t.size()));
  if (v.empty()) return v;
  const size_t bytes = v.size() * sizeof(double);
  cudaStream_t s = StreamOf(ctx);
  void* tmp = Workspace(ctx, bytes);
  CheckLaunch(
      op,
      LaunchCast(t.dtype(), MX_DTYPE_FLOAT64, t.size(), t.data<void>(), tmp, s),
      t.dtype());
  ReadBack(op, s, tmp, v.data(), bytes);
  return v;
}

std::vector<int64_t> StridesOf(const mxplugin::Tensor& t) {
  std::vector<int64_t> s(t.ndim(), 1);
  for (int d = t.ndim() - 2; d >= 0; --d) s[d] = s[d + 1] * t.dim(d + 1);
  return s;
}

// The broadcast index of out = a op b (shapes right-aligned).
BroadcastIndex MakeBroadcast(const std::string& op, const mxplugin::Tensor& a,
                             const mxplugin::Tensor& b,
                             const mxplugin::Tensor& out) {
  const int n = out.ndim();
  if (n > kMaxDims) Unsupported(op, "more than 8 dimensions");
  BroadcastIndex bc;
  bc.ndim = n;
  int64_t sa = 1, sb = 1;
  for (int d = n - 1; d >= 0; --d) {
    const int da = d - (n - a.ndim()), db = d - (n - b.ndim());
    const int64_t ea = da >= 0 ? a.dim(da) : 1, eb = db >= 0 ? b.dim(db) : 1;
    bc.shape[d] = out.dim(d);
    bc.a_stride[d] = ea == 1 ? 0 : sa;
    bc.b_stride[d] = eb == 1 ? 0 : sb;
    sa *= ea;
    sb *= eb;
  }
  return bc;
}

void Unsupported(const std::string& op, const std::string& why) {
  throw Error(MX_STATUS_NOT_IMPLEMENTED, op + " on gpu: " + why);
}

bool EnvFlag(const char* name) {
  const char* v = std::getenv(name);
  if (v == nullptr) return false;
  const std::string value(v);
  if (value == "1" || value == "true") return true;
  if (value.empty() || value == "0" || value == "false") return false;
  throw Error(MX_STATUS_INVALID_ARGUMENT,
              std::string(name) + "=\"" + value +
                  "\" is not allowed: use 0, 1, false or true");
}

namespace {

struct OpTime {
  int64_t calls = 0;
  double seconds = 0;
};

struct Profile {
  std::mutex mu;
  std::map<std::string, OpTime> ops;
};

Profile& Profiles() {
  static auto* p = new Profile();
  return *p;
}

void PrintProfile() {
  Profile& p = Profiles();
  std::lock_guard<std::mutex> lock(p.mu);
  std::vector<std::pair<std::string, OpTime>> rows(p.ops.begin(), p.ops.end());
  std::sort(rows.begin(), rows.end(), [](const auto& a, const auto& b) {
    return a.second.seconds > b.second.seconds;
  });
  double total = 0;
  for (const auto& r : rows) total += r.second.seconds;
  std::fprintf(stderr, "[mx_cuda] profile: %.3f ms in %zu ops\n", total * 1e3,
               rows.size());
  std::fprintf(stderr, "[mx_cuda] %-28s %10s %12s %10s %6s\n", "op", "calls",
               "total ms", "mean us", "%");
  for (const auto& [name, t] : rows) {
    std::fprintf(stderr, "[mx_cuda] %-28s %10lld %12.3f %10.2f %6.2f\n",
                 name.c_str(), static_cast<long long>(t.calls), t.seconds * 1e3,
                 t.seconds * 1e6 / t.calls, 100 * t.seconds / total);
  }
}

bool Profiling() {
  static const bool on = [] {
    const bool enabled = EnvFlag("MX_CUDA_PROFILE");
    if (enabled) std::atexit(PrintProfile);
    return enabled;
  }();
  return on;
}

}  // namespace

void RegisterGpuKernel(mxplugin::Plugin& plugin, const std::string& op,
                       mxplugin::Kernel fn) {
  if (!Profiling()) {
    plugin.RegisterKernel(op, MX_DEVICE_GPU, std::move(fn));
    return;
  }
  plugin.RegisterKernel(
      op, MX_DEVICE_GPU,
      [op, fn](const mxplugin::KernelContext& ctx, const mxplugin::Attrs& attrs,
               mxplugin::Tensors in, const int32_t* req,
               mxplugin::Tensors out) {
        // The time from the call to the end of its GPU work (the stream
        // was idle at the start: the engine synchronizes after each op).
        const auto start = std::chrono::steady_clock::now();
        fn(ctx, attrs, in, req, out);
        CheckCuda(
            cudaStreamSynchronize(static_cast<cudaStream_t>(ctx.stream())), op);
        const double s = std::chrono::duration<double>(
                             std::chrono::steady_clock::now() - start)
                             .count();
        Profile& p = Profiles();
        std::lock_guard<std::mutex> lock(p.mu);
        OpTime& t = p.ops[op];
        ++t.calls;
        t.seconds += s;
      });
}

const char* DTypeName(int dtype) {
  switch (dtype) {
    case MX_DTYPE_FLOAT32:
      return "float32";
    case MX_DTYPE_FLOAT64:
      return "float64";
    case MX_DTYPE_FLOAT16:
      return "float16";
    case MX_DTYPE_UINT8:
      return "uint8";
    case MX_DTYPE_INT32:
      return "int32";
    case MX_DTYPE_INT8:
      return "int8";
    case MX_DTYPE_INT64:
      return "int64";
    case MX_DTYPE_BOOL:
      return "bool";
    default:
      return "unknown";
  }
}

size_t DTypeSize(int dtype) {
  switch (dtype) {
    case MX_DTYPE_FLOAT64:
    case MX_DTYPE_INT64:
      return 8;
    case MX_DTYPE_FLOAT32:
    case MX_DTYPE_INT32:
      return 4;
    case MX_DTYPE_FLOAT16:
      return 2;
    case MX_DTYPE_UINT8:
    case MX_DTYPE_INT8:
    case MX_DTYPE_BOOL:
      return 1;
    default:
      return 0;
  }
}

size_t ByteSize(const mxplugin::Tensor& t) {
  return static_cast<size_t>(t.size()) * DTypeSize(t.dtype());
}

}  // namespace mx_cuda
