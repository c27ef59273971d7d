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
#include "backends/cuda/fusion_source.h"

namespace mx_cuda {
namespace {

using mx_elemwise::Program;
using mxplugin::Error;

constexpr char kOp[] = "_cuda_fused_elemwise";

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
  const std::string source = FusedKernelSource(p, dtype, req);
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
  if (dtype != MX_DTYPE_FLOAT32 && dtype != MX_DTYPE_FLOAT64 &&
      dtype != MX_DTYPE_FLOAT16) {
    throw Error(MX_STATUS_DTYPE_ERROR, std::string(kOp) +
                                           " on gpu: float32, float64 and "
                                           "float16 only");
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
          "interpreter on the CPU); float32, float64 and float16.")
          .Kernel(MX_DEVICE_GPU, FusedKernel));
  plugin.RegisterSubgraphProperty("cuda",
                                  mx_elemwise::FusionProperty("cuda", kOp));
}

int64_t FusedKernelCompiles() {
  std::lock_guard<std::mutex> lock(Cache().mu);
  return Cache().compiles;
}

}  // namespace mx_cuda
