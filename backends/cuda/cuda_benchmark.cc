// mxcore on the GPU against raw cuBLAS/cuDNN calls, in one run: a 4096^3
// FullyConnected against cublasSgemm, a ResNet-style 3x3 convolution
// (batch 64, 64 -> 64 channels, 56x56, pad 1) against cudnnConvolution-
// Forward with the algorithm cudnnFind picks (same math: FMA, no TF32),
// the launch overhead of a 1-element add (one op and its wait, and per op
// in a stream of 1000), and an 8-op elementwise chain on 16M floats,
// unfused and fused by the "cuda" property (one NVRTC kernel), and a cumsum
// of one line of 16M floats. Each mxcore
// iteration waits for its result, each raw one synchronizes its stream. Needs
// MX_CUDA_PLUGIN and a GPU; without one it prints why and runs nothing.
//
//   MX_CUDA_PLUGIN=.../libmx_cuda.so bazel-bin/backends/cuda/cuda_benchmark
#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <cudnn.h>
#include <dlfcn.h>

#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

#include "backends/cuda/gpu_benchmark_util.h"
#include "benchmark/benchmark.h"
#include "engine/engine.h"
#include "imperative/executor.h"
#include "imperative/nd.h"
#include "plugin/plugin.h"
#include "subgraph/partition_graph.h"
#include "testing/op_test_util.h"

namespace mx {
namespace {

constexpr int64_t kGemm = 4096;

// Raw buffers get the same kind of data as the mxcore arrays: the GPU runs
// faster on zeros (less switching power), which would flatter the raw side.
void FillRandom(void* dst, size_t floats, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(-1, 1);
  std::vector<float> host(floats);
  for (float& v : host) v = u(rng);
  cudaMemcpy(dst, host.data(), floats * sizeof(float), cudaMemcpyHostToDevice);
}

void BM_MxFullyConnected4096(benchmark::State& state) {
  if (!HasGpu()) return state.SkipWithError("no GPU");
  const NDArray x = OnGpu({kGemm, kGemm}, 1), w = OnGpu({kGemm, kGemm}, 2);
  NDArray y = nd::FullyConnected(x, w, NDArray(), kGemm, /*no_bias=*/true);
  y.WaitToRead();
  for (auto _ : state) {
    nd::CallInto("FullyConnected", {x, w},
                 {{"num_hidden", std::to_string(kGemm)}, {"no_bias", "True"}},
                 y);
    y.WaitToRead();
  }
  state.counters["TFLOP/s"] = benchmark::Counter(
      2.0 * kGemm * kGemm * kGemm * state.iterations() / 1e12,
      benchmark::Counter::kIsRate);
}
BENCHMARK(BM_MxFullyConnected4096)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

void BM_RawCublasSgemm4096(benchmark::State& state) {
  if (!HasGpu()) return state.SkipWithError("no GPU");
  float *a, *b, *c;
  const size_t bytes = sizeof(float) * kGemm * kGemm;
  cudaMalloc(&a, bytes);
  cudaMalloc(&b, bytes);
  cudaMalloc(&c, bytes);
  FillRandom(a, kGemm * kGemm, 1);
  FillRandom(b, kGemm * kGemm, 2);
  cudaStream_t s;
  cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking);
  cublasHandle_t h;
  cublasCreate(&h);
  cublasSetStream(h, s);
  const float one = 1, zero = 0;
  for (auto _ : state) {
    cublasSgemm(h, CUBLAS_OP_T, CUBLAS_OP_N, kGemm, kGemm, kGemm, &one, b,
                kGemm, a, kGemm, &zero, c, kGemm);
    cudaStreamSynchronize(s);
  }
  state.counters["TFLOP/s"] = benchmark::Counter(
      2.0 * kGemm * kGemm * kGemm * state.iterations() / 1e12,
      benchmark::Counter::kIsRate);
  cublasDestroy(h);
  cudaStreamDestroy(s);
  cudaFree(a);
  cudaFree(b);
  cudaFree(c);
}
BENCHMARK(BM_RawCublasSgemm4096)->Unit(benchmark::kMillisecond)->UseRealTime();

const std::map<std::string, std::string> kConvAttrs = {{"kernel", "(3,3)"},
                                                       {"num_filter", "64"},
                                                       {"pad", "(1,1)"},
                                                       {"no_bias", "True"}};

void BM_MxConv3x3Batch64(benchmark::State& state) {
  if (!HasGpu()) return state.SkipWithError("no GPU");
  const NDArray x = OnGpu({64, 64, 56, 56}, 3), w = OnGpu({64, 64, 3, 3}, 4);
  NDArray y = nd::Call("Convolution", {x, w}, kConvAttrs);
  y.WaitToRead();
  for (auto _ : state) {
    nd::CallInto("Convolution", {x, w}, kConvAttrs, y);
    y.WaitToRead();
  }
}
BENCHMARK(BM_MxConv3x3Batch64)->Unit(benchmark::kMillisecond)->UseRealTime();

// Throughput: 20 convolutions queued, then one wait (per-convolution time
// reported), as a training step runs them; the single-call form above also
// measures the wait's round trip.
constexpr int kConvQueue = 20;
void BM_MxConv3x3Batch64Queued(benchmark::State& state) {
  if (!HasGpu()) return state.SkipWithError("no GPU");
  const NDArray x = OnGpu({64, 64, 56, 56}, 3), w = OnGpu({64, 64, 3, 3}, 4);
  NDArray y = nd::Call("Convolution", {x, w}, kConvAttrs);
  y.WaitToRead();
  for (auto _ : state) {
    for (int i = 0; i < kConvQueue; ++i) {
      nd::CallInto("Convolution", {x, w}, kConvAttrs, y);
    }
    y.WaitToRead();
  }
  state.SetItemsProcessed(state.iterations() * kConvQueue);
  state.counters["ms/conv"] = benchmark::Counter(
      static_cast<double>(state.iterations() * kConvQueue) * 1e-3,
      benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
}
BENCHMARK(BM_MxConv3x3Batch64Queued)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

void BM_RawCudnnConv3x3Batch64(benchmark::State& state) {
  if (!HasGpu()) return state.SkipWithError("no GPU");
  cudnnHandle_t h;
  cudnnCreate(&h);
  cudaStream_t s;
  cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking);
  cudnnSetStream(h, s);
  cudnnTensorDescriptor_t xd, yd;
  cudnnFilterDescriptor_t wd;
  cudnnConvolutionDescriptor_t cd;
  cudnnCreateTensorDescriptor(&xd);
  cudnnCreateTensorDescriptor(&yd);
  cudnnCreateFilterDescriptor(&wd);
  cudnnCreateConvolutionDescriptor(&cd);
  cudnnSetTensor4dDescriptor(xd, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, 64, 64,
                             56, 56);
  cudnnSetTensor4dDescriptor(yd, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, 64, 64,
                             56, 56);
  cudnnSetFilter4dDescriptor(wd, CUDNN_DATA_FLOAT, CUDNN_TENSOR_NCHW, 64, 64, 3,
                             3);
  cudnnSetConvolution2dDescriptor(cd, 1, 1, 1, 1, 1, 1, CUDNN_CROSS_CORRELATION,
                                  CUDNN_DATA_FLOAT);
  cudnnSetConvolutionMathType(cd, std::getenv("MX_CUDA_ALLOW_TF32") != nullptr
                                      ? CUDNN_DEFAULT_MATH
                                      : CUDNN_FMA_MATH);
  cudnnConvolutionFwdAlgoPerf_t perf[CUDNN_CONVOLUTION_FWD_ALGO_COUNT];
  int n = 0;
  cudnnFindConvolutionForwardAlgorithm(
      h, xd, wd, cd, yd, CUDNN_CONVOLUTION_FWD_ALGO_COUNT, &n, perf);
  const size_t xb = sizeof(float) * 64 * 64 * 56 * 56;
  void *x, *w, *y, *ws = nullptr;
  cudaMalloc(&x, xb);
  cudaMalloc(&y, xb);
  cudaMalloc(&w, sizeof(float) * 64 * 64 * 9);
  FillRandom(x, xb / sizeof(float), 3);
  FillRandom(w, 64 * 64 * 9, 4);
  if (perf[0].memory > 0) cudaMalloc(&ws, perf[0].memory);
  const float one = 1, zero = 0;
  const int queue = static_cast<int>(state.range(0));
  for (auto _ : state) {
    for (int i = 0; i < queue; ++i) {
      cudnnConvolutionForward(h, &one, xd, x, wd, w, cd, perf[0].algo, ws,
                              perf[0].memory, &zero, yd, y);
    }
    cudaStreamSynchronize(s);
  }
  state.SetLabel("algo " + std::to_string(perf[0].algo) + ", " +
                 std::to_string(queue) + " per wait");
  state.counters["ms/conv"] = benchmark::Counter(
      static_cast<double>(state.iterations() * queue) * 1e-3,
      benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
  cudaFree(x);
  cudaFree(y);
  cudaFree(w);
  cudaFree(ws);
  cudnnDestroy(h);
  cudaStreamDestroy(s);
}
BENCHMARK(BM_RawCudnnConv3x3Batch64)
    ->Arg(1)
    ->Arg(kConvQueue)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

// One 1-element add and its wait.
void BM_MxAdd1ElementWaited(benchmark::State& state) {
  if (!HasGpu()) return state.SkipWithError("no GPU");
  const NDArray a = OnGpu({1}, 5), b = OnGpu({1}, 6);
  for (auto _ : state) {
    NDArray c = a + b;
    c.WaitToRead();
  }
}
BENCHMARK(BM_MxAdd1ElementWaited)->Unit(benchmark::kMicrosecond)->UseRealTime();

// 1000 independent 1-element adds, then one wait: per-op cost in a stream.
void BM_MxAdd1ElementStream(benchmark::State& state) {
  if (!HasGpu()) return state.SkipWithError("no GPU");
  const NDArray a = OnGpu({1}, 5), b = OnGpu({1}, 6);
  for (auto _ : state) {
    for (int i = 0; i < 1000; ++i) NDArray c = a + b;
    engine::Engine::Get()->WaitForAll();
  }
  state.SetItemsProcessed(state.iterations() * 1000);
}
BENCHMARK(BM_MxAdd1ElementStream)->Unit(benchmark::kMillisecond)->UseRealTime();

// A raw kernel launch and synchronize (cudaMemsetAsync of 4 bytes).
void BM_RawLaunchAndSync(benchmark::State& state) {
  if (!HasGpu()) return state.SkipWithError("no GPU");
  void* p;
  cudaMalloc(&p, 4);
  cudaStream_t s;
  cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking);
  for (auto _ : state) {
    cudaMemsetAsync(p, 0, 4, s);
    cudaStreamSynchronize(s);
  }
  cudaStreamDestroy(s);
  cudaFree(p);
}
BENCHMARK(BM_RawLaunchAndSync)->Unit(benchmark::kMicrosecond)->UseRealTime();

// cumsum of one line of 16M floats (summed in double, as the CPU's) and its
// wait: one CUB scan over the whole GPU (torch_peer.py times torch.cumsum,
// which sums in float).
void BM_MxCumsumOneLine16M(benchmark::State& state) {
  if (!HasGpu()) return state.SkipWithError("no GPU");
  const NDArray x = OnGpu({int64_t{1} << 24}, 8);
  for (auto _ : state) {
    NDArray y = nd::Call("cumsum", {x}, {});
    y.WaitToRead();
  }
  state.SetBytesProcessed(state.iterations() * (int64_t{1} << 24) * 4 * 2);
}
BENCHMARK(BM_MxCumsumOneLine16M)->Unit(benchmark::kMicrosecond)->UseRealTime();

// The 8-op elementwise chain of the fuse benchmark on 16M floats, through
// the executor on gpu(0): each op its own kernel, or one NVRTC kernel from
// the "cuda" property.
Symbol Chain8() {
  Symbol s = Symbol::Variable("x");
  const std::vector<std::pair<std::string, AttrDict>> ops = {
      {"_mul_scalar", {{"scalar", "1.5"}}},
      {"_plus_scalar", {{"scalar", "1"}}},
      {"relu", {}},
      {"square", {}},
      {"_minus_scalar", {{"scalar", "3"}}},
      {"abs", {}},
      {"negative", {}},
      {"_mul_scalar", {{"scalar", "0.5"}}},
  };
  for (const auto& [op, attrs] : ops) s = Symbol::Create(op, {s}, attrs);
  return s;
}

void Chain8(benchmark::State& state, const std::string& backend) {
  if (!HasGpu()) return state.SkipWithError("no GPU");
  constexpr int64_t kN = int64_t{1} << 24;
  const Symbol net = PartitionGraph(Chain8(), backend);
  auto exec = Executor::SimpleBind(net, Context::GPU(0), {{"x", {kN}}}, {},
                                   OpReqType::kNullOp);
  CopyFromTo(OnGpu({kN}, 7), exec->arg_dict().at("x"));
  exec->Forward(false);
  exec->outputs()[0].WaitToRead();
  for (auto _ : state) {
    exec->Forward(false);
    exec->outputs()[0].WaitToRead();
  }
  state.SetBytesProcessed(state.iterations() * kN * 4 * 2);
}
void BM_Chain8x16MUnfused(benchmark::State& state) { Chain8(state, "NONE"); }
void BM_Chain8x16MFusedNvrtc(benchmark::State& state) { Chain8(state, "cuda"); }
BENCHMARK(BM_Chain8x16MUnfused)->Unit(benchmark::kMicrosecond)->UseRealTime();
BENCHMARK(BM_Chain8x16MFusedNvrtc)
    ->Unit(benchmark::kMicrosecond)
    ->UseRealTime();

}  // namespace
}  // namespace mx

BENCHMARK_MAIN();
