// The subgraph property "cuda": chains and trees of elementwise ops become
// one _cuda_fused_elemwise op, whose GPU kernel is generated from the
// fused program, compiled at run time with NVRTC for the device's
// architecture and cached per (program, dtype, write requests, device
// architecture), as MXNet's pointwise fusion did. The op also runs on the
// CPU (the program interpreter shared with the fuse plugin). Inference
// only: the fused op has no gradient, so training graphs keep the
// unfused ops.
#include <nvrtc.h>

#include <cstdio>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "backends/common/elemwise_program.h"
#include "backends/cuda/cuda_ops.h"
#include "backends/cuda/cuda_util.h"

namespace mx_cuda {
namespace {

using mx_elemwise::Code;
using mx_elemwise::Instr;
using mx_elemwise::Program;
using mxplugin::Error;

constexpr char kOp[] = "_cuda_fused_elemwise";

std::string Literal(double v) {
  char buf[40];
  std::snprintf(buf, sizeof(buf), "T(%.17g)", v);
  return buf;
}

// The expression of one instruction over registers (the same formulas as
// the built-in kernels: relu keeps NaN).
std::string Expr(const Instr& i) {
  const std::string a = "r" + std::to_string(i.a);
  const std::string b = "r" + std::to_string(i.b);
  const std::string s = Literal(i.scalar);
  switch (i.code) {
    case Code::kNegative:
      return "-" + a;
    case Code::kAbs:
      return "(" + a + " < T(0) ? -" + a + " : " + a + ")";
    case Code::kExp:
      return "exp(" + a + ")";
    case Code::kLog:
      return "log(" + a + ")";
    case Code::kSqrt:
      return "sqrt(" + a + ")";
    case Code::kSquare:
      return a + " * " + a;
    case Code::kReciprocal:
      return "T(1) / " + a;
    case Code::kSin:
      return "sin(" + a + ")";
    case Code::kCos:
      return "cos(" + a + ")";
    case Code::kTanh:
      return "tanh(" + a + ")";
    case Code::kSigmoid:
      return "T(1) / (T(1) + exp(-" + a + "))";
    case Code::kRelu:
      return "((" + a + " > T(0) || " + a + " != " + a + ") ? " + a +
             " : T(0))";
    case Code::kAdd:
      return a + " + " + b;
    case Code::kSub:
      return a + " - " + b;
    case Code::kMul:
      return a + " * " + b;
    case Code::kDiv:
      return a + " / " + b;
    case Code::kPlusScalar:
      return a + " + " + s;
    case Code::kMinusScalar:
      return a + " - " + s;
    case Code::kRMinusScalar:
      return s + " - " + a;
    case Code::kMulScalar:
      return a + " * " + s;
    case Code::kDivScalar:
      return a + " / " + s;
    case Code::kRDivScalar:
      return s + " / " + a;
  }
  return a;
}

// CUDA source of the fused kernel; parameters: each used input, each
// written output, then the element count.
std::string Source(const Program& p, const char* type,
                   const std::vector<int32_t>& req) {
  std::string params, body;
  for (int i = 0; i < p.num_inputs; ++i) {
    if (!p.input_used[i]) continue;
    params += "const T* __restrict__ in" + std::to_string(i) + ", ";
    body += "    const T r" + std::to_string(i) + " = in" + std::to_string(i) +
            "[i];\n";
  }
  for (size_t k = 0; k < p.outputs.size(); ++k) {
    if (req[k] == MX_REQ_NULL) continue;
    params += "T* __restrict__ out" + std::to_string(k) + ", ";
  }
  for (const Instr& i : p.instrs) {
    body += "    const T r" + std::to_string(i.dst) + " = " + Expr(i) + ";\n";
  }
  for (size_t k = 0; k < p.outputs.size(); ++k) {
    if (req[k] == MX_REQ_NULL) continue;
    body += "    out" + std::to_string(k) + "[i] " +
            (req[k] == MX_REQ_ADD ? "+= " : "= ") + "r" +
            std::to_string(p.outputs[k]) + ";\n";
  }
  return std::string("typedef ") + type + " T;\n" +
         "extern \"C\" __global__ void mx_fused(" + params +
         "long long n) {\n" +
         "  for (long long i = blockIdx.x * (long long)blockDim.x + "
         "threadIdx.x; i < n;\n       i += (long long)blockDim.x * gridDim.x) "
         "{\n" +
         body + "  }\n}\n";
}

void CheckNvrtc(nvrtcResult r, const std::string& what) {
  if (r != NVRTC_SUCCESS) {
    throw Error(MX_STATUS_RUNTIME_ERROR,
                std::string(kOp) + ": " + what + ": " + nvrtcGetErrorString(r));
  }
}

// Compiles `source` for the device's architecture and loads it.
cudaKernel_t Build(const std::string& source, int major, int minor) {
  nvrtcProgram prog;
  CheckNvrtc(nvrtcCreateProgram(&prog, source.c_str(), "mx_fused.cu", 0,
                                nullptr, nullptr),
             "nvrtcCreateProgram");
  std::unique_ptr<nvrtcProgram, void (*)(nvrtcProgram*)> guard(
      &prog, [](nvrtcProgram* p) { nvrtcDestroyProgram(p); });
  const std::string arch =
      "--gpu-architecture=sm_" + std::to_string(major) + std::to_string(minor);
  const char* options[] = {arch.c_str(), "--std=c++17"};
  const nvrtcResult compiled = nvrtcCompileProgram(prog, 2, options);
  if (compiled != NVRTC_SUCCESS) {
    size_t size = 0;
    nvrtcGetProgramLogSize(prog, &size);
    std::string log(size, '\0');
    nvrtcGetProgramLog(prog, log.data());
    throw Error(MX_STATUS_RUNTIME_ERROR,
                std::string(kOp) +
                    ": NVRTC could not compile the fused "
                    "kernel for " +
                    arch + ": " + log + "\nsource:\n" + source);
  }
  size_t size = 0;
  CheckNvrtc(nvrtcGetCUBINSize(prog, &size), "nvrtcGetCUBINSize");
  std::string cubin(size, '\0');
  CheckNvrtc(nvrtcGetCUBIN(prog, cubin.data()), "nvrtcGetCUBIN");
  cudaLibrary_t lib;
  CheckCuda(cudaLibraryLoadData(&lib, cubin.data(), nullptr, nullptr, 0,
                                nullptr, nullptr, 0),
            std::string(kOp) + ": loading the fused kernel");
  cudaKernel_t kernel;
  CheckCuda(cudaLibraryGetKernel(&kernel, lib, "mx_fused"),
            std::string(kOp) + ": finding the fused kernel");
  return kernel;  // The library stays loaded: kernels are cached for good.
}

struct KernelCache {
  std::mutex mu;
  std::map<std::string, cudaKernel_t> kernels;
  int64_t compiles = 0;
};

KernelCache& Cache() {
  static auto* cache = new KernelCache();
  return *cache;
}

cudaKernel_t KernelFor(const Program& p, int dtype, int dev_id,
                       const std::vector<int32_t>& req) {
  int major = 0, minor = 0;
  CheckCuda(
      cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev_id),
      kOp);
  CheckCuda(
      cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, dev_id),
      kOp);
  const std::string source =
      Source(p, dtype == MX_DTYPE_FLOAT64 ? "double" : "float", req);
  const std::string key =
      std::to_string(major) + "." + std::to_string(minor) + "\n" + source;
  KernelCache& c = Cache();
  std::lock_guard<std::mutex> lock(c.mu);
  auto it = c.kernels.find(key);
  if (it != c.kernels.end()) return it->second;
  const cudaKernel_t k = Build(source, major, minor);
  ++c.compiles;
  c.kernels.emplace(key, k);
  return k;
}

void FusedKernel(const mxplugin::KernelContext& ctx,
                 const mxplugin::Attrs& attrs, mxplugin::Tensors in,
                 const int32_t* req, mxplugin::Tensors out) {
  const Program& p = attrs.parsed<Program>();
  const int dtype = out[0].dtype();
  if (dtype != MX_DTYPE_FLOAT32 && dtype != MX_DTYPE_FLOAT64) {
    throw Error(MX_STATUS_DTYPE_ERROR,
                std::string(kOp) + " on gpu: float32 and float64 only");
  }
  const int64_t n = out[0].size();
  if (n == 0) return;
  std::vector<int32_t> reqs(req, req + out.size());
  UseDevice(ctx.dev_id());
  const cudaKernel_t kernel = KernelFor(p, dtype, ctx.dev_id(), reqs);
  std::vector<void*> pointers;
  for (int i = 0; i < p.num_inputs; ++i) {
    if (p.input_used[i]) pointers.push_back(in[i].data<void>());
  }
  for (int k = 0; k < out.size(); ++k) {
    if (reqs[k] != MX_REQ_NULL) pointers.push_back(out[k].data<void>());
  }
  long long count = n;
  std::vector<void*> args;
  for (void*& ptr : pointers) args.push_back(&ptr);
  args.push_back(&count);
  const int threads = 256;
  const long long blocks =
      std::min<long long>((n + threads - 1) / threads, 65535LL * 16);
  CheckCuda(
      cudaLaunchKernel(reinterpret_cast<const void*>(kernel),
                       dim3(static_cast<unsigned>(blocks)), dim3(threads),
                       args.data(), 0, static_cast<cudaStream_t>(ctx.stream())),
      std::string(kOp) + ": launch");
}

}  // namespace

void RegisterFusion(mxplugin::Plugin& plugin) {
  plugin.RegisterOp(
      mx_elemwise::ProgramOpDef(
          kOp,
          "A chain or tree of elementwise ops fused by the cuda backend: one "
          "kernel generated and compiled with NVRTC on the GPU (the program "
          "interpreter on the CPU); float32 and float64.")
          .Kernel(MX_DEVICE_GPU, FusedKernel));
  plugin.RegisterSubgraphProperty("cuda",
                                  mx_elemwise::FusionProperty("cuda", kOp));
}

int64_t FusedKernelCompiles() {
  std::lock_guard<std::mutex> lock(Cache().mu);
  return Cache().compiles;
}

}  // namespace mx_cuda
