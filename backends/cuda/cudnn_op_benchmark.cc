// The CUDA plugin's Pooling, BatchNorm, log_softmax and relu (forward and
// backward) against the same work done by raw cuDNN calls, side by side in
// one run, at ResNet shapes (batch 32, float32); with MX_CUDA_OWN_KERNELS=1
// the plugin's side runs its own kernels instead of cuDNN's. Each iteration
// queues 20 calls, then waits (mxcore) or synchronizes the stream (raw), so the
// numbers are GPU time per call plus what launching cannot hide. They
// decide, per op, whether the plugin calls cuDNN or its own kernel (see the
// README's CUDA section). Needs MX_CUDA_PLUGIN and a GPU; without one it
// prints why and runs nothing.
//
//   MX_CUDA_PLUGIN=.../libmx_cuda.so bazel-bin/backends/cuda/cudnn_op_benchmark
#include <cuda_runtime.h>
#include <cudnn.h>

#include <cstdio>
#include <cstdlib>
#include <functional>
#include <string>
#include <vector>

#include "backends/cuda/gpu_benchmark_util.h"
#include "benchmark/benchmark.h"
#include "graph/op.h"
#include "imperative/imperative.h"
#include "imperative/nd.h"
#include "plugin/plugin.h"
#include "testing/op_test_util.h"

namespace mx {
namespace {

constexpr int kQueue = 20;

void ReportPerCall(benchmark::State& state) {
  state.counters["us/call"] = benchmark::Counter(
      static_cast<double>(state.iterations() * kQueue) * 1e-6,
      benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
}

// op on `in` into fixed outputs (made by a first call), kQueue per wait.
void MxQueued(benchmark::State& state, const std::string& op,
              const std::vector<NDArray>& in, const AttrDict& attrs,
              bool train) {
  if (!HasGpu()) return state.SkipWithError("no GPU");
  imperative::TrainingScope mode(train);
  std::vector<NDArray> outs = imperative::Invoke(op, in, attrs);
  const NodeAttrs parsed = MakeAttrs(*OpRegistry::Get()->Find(op), attrs);
  for (const NDArray& o : outs) o.WaitToRead();
  for (auto _ : state) {
    for (int i = 0; i < kQueue; ++i) imperative::Invoke(parsed, in, &outs);
    for (const NDArray& o : outs) o.WaitToRead();
  }
  ReportPerCall(state);
}

// A cuDNN handle on its own stream and device buffers for the raw side.
class Raw {
 public:
  Raw() {
    cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking);
    cudnnCreate(&handle_);
    cudnnSetStream(handle_, stream_);
  }
  ~Raw() {
    for (void* p : buffers_) cudaFree(p);
    for (auto d : tensors_) cudnnDestroyTensorDescriptor(d);
    cudnnDestroy(handle_);
    cudaStreamDestroy(stream_);
  }
  cudnnHandle_t handle() const { return handle_; }
  // A float buffer of `n` elements holding the first n of `like` when
  // given (zeros otherwise).
  float* Buffer(size_t n, const NDArray* like = nullptr) {
    void* p = nullptr;
    cudaMalloc(&p, n * sizeof(float));
    if (like != nullptr) {
      const std::vector<float> host = like->ToVector<float>();
      if (host.size() < n) std::abort();
      cudaMemcpy(p, host.data(), n * sizeof(float), cudaMemcpyHostToDevice);
    } else {
      cudaMemset(p, 0, n * sizeof(float));
    }
    buffers_.push_back(p);
    return static_cast<float*>(p);
  }
  cudnnTensorDescriptor_t Nchw(int n, int c, int h, int w) {
    cudnnTensorDescriptor_t d;
    cudnnCreateTensorDescriptor(&d);
    cudnnSetTensor4dDescriptor(d, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, n, c, h,
                               w);
    tensors_.push_back(d);
    return d;
  }
  // Times `call`, which must succeed: a failing raw call would time as
  // nearly nothing and flatter cuDNN.
  void Run(benchmark::State& state,
           const std::function<cudnnStatus_t()>& call) {
    const cudnnStatus_t st = call();
    if (st != CUDNN_STATUS_SUCCESS) {
      return state.SkipWithError(cudnnGetErrorString(st));
    }
    cudaStreamSynchronize(stream_);
    for (auto _ : state) {
      for (int i = 0; i < kQueue; ++i) call();
      cudaStreamSynchronize(stream_);
    }
    ReportPerCall(state);
  }

 private:
  cudaStream_t stream_;
  cudnnHandle_t handle_;
  std::vector<void*> buffers_;
  std::vector<cudnnTensorDescriptor_t> tensors_;
};

const float kOne = 1, kZero = 0;

// ---- relu on (32, 64, 112, 112), ResNet-18's first activation, and on
// (32, 512, 7, 7), its last. ----
const TShape kAct{32, 64, 112, 112};
const TShape kActSmall{32, 512, 7, 7};

void MxRelu(benchmark::State& state, const TShape& shape) {
  if (!HasGpu()) return state.SkipWithError("no GPU");
  MxQueued(state, "Activation", {OnGpu(shape, 1)}, {{"act_type", "relu"}},
           false);
}
void BM_MxRelu(benchmark::State& state) { MxRelu(state, kAct); }
void BM_MxReluSmall(benchmark::State& state) { MxRelu(state, kActSmall); }
void BM_MxReluBackward(benchmark::State& state) {
  if (!HasGpu()) return state.SkipWithError("no GPU");
  MxQueued(state, "_backward_relu", {OnGpu(kAct, 1), OnGpu(kAct, 2, 0, 1)}, {},
           false);
}
void RawRelu(benchmark::State& state, const TShape& shape, bool backward) {
  if (!HasGpu()) return state.SkipWithError("no GPU");
  Raw raw;
  const size_t n = shape.Size();
  const NDArray x = OnGpu(shape, 1);
  float* xd = raw.Buffer(n, &x);
  float* yd = raw.Buffer(n, &x);
  float* dy = raw.Buffer(n, &x);
  float* dx = raw.Buffer(n);
  auto t = raw.Nchw(static_cast<int>(shape[0]), static_cast<int>(shape[1]),
                    static_cast<int>(shape[2]), static_cast<int>(shape[3]));
  cudnnActivationDescriptor_t act;
  cudnnCreateActivationDescriptor(&act);
  cudnnSetActivationDescriptor(act, CUDNN_ACTIVATION_RELU, CUDNN_PROPAGATE_NAN,
                               0);
  raw.Run(state, [&] {
    if (backward) {
      return cudnnActivationBackward(raw.handle(), act, &kOne, t, yd, t, dy, t,
                                     xd, &kZero, t, dx);
    } else {
      return cudnnActivationForward(raw.handle(), act, &kOne, t, xd, &kZero, t,
                                    yd);
    }
  });
  cudnnDestroyActivationDescriptor(act);
}
void BM_RawCudnnRelu(benchmark::State& state) { RawRelu(state, kAct, false); }
void BM_RawCudnnReluSmall(benchmark::State& state) {
  RawRelu(state, kActSmall, false);
}
void BM_RawCudnnReluBackward(benchmark::State& state) {
  RawRelu(state, kAct, true);
}

// ---- Global average pooling of (32, 512, 7, 7): ResNet's head. ----
const TShape kHead{32, 512, 7, 7};
void BM_MxGlobalAvgPool(benchmark::State& state) {
  if (!HasGpu()) return state.SkipWithError("no GPU");
  MxQueued(state, "Pooling", {OnGpu(kHead, 1)},
           {{"kernel", "(1,1)"}, {"pool_type", "avg"}, {"global_pool", "True"}},
           true);
}
void BM_RawCudnnGlobalAvgPool(benchmark::State& state) {
  if (!HasGpu()) return state.SkipWithError("no GPU");
  Raw raw;
  const NDArray x = OnGpu(kHead, 1);
  float* xd = raw.Buffer(kHead.Size(), &x);
  float* yd = raw.Buffer(32 * 512);
  auto ti = raw.Nchw(32, 512, 7, 7);
  auto to = raw.Nchw(32, 512, 1, 1);
  cudnnPoolingDescriptor_t pd;
  cudnnCreatePoolingDescriptor(&pd);
  cudnnSetPooling2dDescriptor(pd, CUDNN_POOLING_AVERAGE_COUNT_INCLUDE_PADDING,
                              CUDNN_NOT_PROPAGATE_NAN, 7, 7, 0, 0, 1, 1);
  raw.Run(state, [&] {
    return cudnnPoolingForward(raw.handle(), pd, &kOne, ti, xd, &kZero, to, yd);
  });
  cudnnDestroyPoolingDescriptor(pd);
}

// ---- log_softmax over the 1000 classes of (32, 1000). ----
const TShape kLogits{32, 1000};

void BM_MxLogSoftmax(benchmark::State& state) {
  if (!HasGpu()) return state.SkipWithError("no GPU");
  MxQueued(state, "log_softmax", {OnGpu(kLogits, 1)}, {{"axis", "-1"}}, false);
}
void BM_MxLogSoftmaxBackward(benchmark::State& state) {
  if (!HasGpu()) return state.SkipWithError("no GPU");
  const NDArray y =
      nd::Call("log_softmax", {OnGpu(kLogits, 1)}, {{"axis", "-1"}});
  MxQueued(state, "_backward_log_softmax", {OnGpu(kLogits, 2), y},
           {{"axis", "-1"}}, false);
}
void RawLogSoftmax(benchmark::State& state, bool backward) {
  if (!HasGpu()) return state.SkipWithError("no GPU");
  Raw raw;
  const size_t n = kLogits.Size();
  const NDArray x = OnGpu(kLogits, 1);
  float* xd = raw.Buffer(n, &x);
  float* yd = raw.Buffer(n);
  float* dy = raw.Buffer(n, &x);
  float* dx = raw.Buffer(n);
  auto t = raw.Nchw(32, 1000, 1, 1);
  cudnnSoftmaxForward(raw.handle(), CUDNN_SOFTMAX_LOG,
                      CUDNN_SOFTMAX_MODE_INSTANCE, &kOne, t, xd, &kZero, t, yd);
  raw.Run(state, [&] {
    if (backward) {
      return cudnnSoftmaxBackward(raw.handle(), CUDNN_SOFTMAX_LOG,
                                  CUDNN_SOFTMAX_MODE_INSTANCE, &kOne, t, yd, t,
                                  dy, &kZero, t, dx);
    } else {
      return cudnnSoftmaxForward(raw.handle(), CUDNN_SOFTMAX_LOG,
                                 CUDNN_SOFTMAX_MODE_INSTANCE, &kOne, t, xd,
                                 &kZero, t, yd);
    }
  });
}
void BM_RawCudnnLogSoftmax(benchmark::State& state) {
  RawLogSoftmax(state, false);
}
void BM_RawCudnnLogSoftmaxBackward(benchmark::State& state) {
  RawLogSoftmax(state, true);
}

// ---- BatchNorm in training on (32, 64, 56, 56). ----
const TShape kBn{32, 64, 56, 56};
const AttrDict kBnAttrs = {{"fix_gamma", "False"}, {"eps", "1e-5"}};

std::vector<NDArray> BnInputs() {
  return {OnGpu(kBn, 1), OnGpu({64}, 2, 0.5, 1.5), OnGpu({64}, 3),
          OnGpu({64}, 4), OnGpu({64}, 5, 0.5, 1.5)};
}
void BM_MxBatchNormTrain(benchmark::State& state) {
  if (!HasGpu()) return state.SkipWithError("no GPU");
  MxQueued(state, "BatchNorm", BnInputs(), kBnAttrs, true);
}
void BM_MxBatchNormBackward(benchmark::State& state) {
  if (!HasGpu()) return state.SkipWithError("no GPU");
  const std::vector<NDArray> in = BnInputs();
  MxQueued(
      state, "_backward_BatchNorm",
      {OnGpu(kBn, 6), in[0], in[1], OnGpu({64}, 7), OnGpu({64}, 8, 0.5, 1)},
      kBnAttrs, true);
}
void RawBatchNorm(benchmark::State& state, bool backward) {
  if (!HasGpu()) return state.SkipWithError("no GPU");
  Raw raw;
  const size_t n = kBn.Size();
  const NDArray x = OnGpu(kBn, 1), g = OnGpu({64}, 2, 0.5, 1.5);
  float* xd = raw.Buffer(n, &x);
  float* yd = raw.Buffer(n);
  float* dy = raw.Buffer(n, &x);
  float* dx = raw.Buffer(n);
  float* scale = raw.Buffer(64, &g);
  float* bias = raw.Buffer(64, &g);
  float *rm = raw.Buffer(64), *rv = raw.Buffer(64, &g);
  float *sm = raw.Buffer(64), *si = raw.Buffer(64);
  float *dscale = raw.Buffer(64), *dbias = raw.Buffer(64);
  auto t = raw.Nchw(32, 64, 56, 56);
  auto p = raw.Nchw(1, 64, 1, 1);
  const auto mode = CUDNN_BATCHNORM_SPATIAL;
  cudnnBatchNormalizationForwardTraining(raw.handle(), mode, &kOne, &kZero, t,
                                         xd, t, yd, p, scale, bias, 0.1, rm, rv,
                                         1e-5, sm, si);
  raw.Run(state, [&] {
    if (backward) {
      return cudnnBatchNormalizationBackward(
          raw.handle(), mode, &kOne, &kZero, &kOne, &kZero, t, xd, t, dy, t, dx,
          p, scale, dscale, dbias, 1e-5, sm, si);
    } else {
      return cudnnBatchNormalizationForwardTraining(
          raw.handle(), mode, &kOne, &kZero, t, xd, t, yd, p, scale, bias, 0.1,
          rm, rv, 1e-5, sm, si);
    }
  });
}
void BM_RawCudnnBatchNormTrain(benchmark::State& state) {
  RawBatchNorm(state, false);
}
void BM_RawCudnnBatchNormBackward(benchmark::State& state) {
  RawBatchNorm(state, true);
}

// ---- 3x3 stride-2 max pooling of (32, 64, 112, 112): ResNet's stem. ----
const TShape kPoolIn{32, 64, 112, 112};
const AttrDict kPoolAttrs = {{"kernel", "(3,3)"},
                             {"stride", "(2,2)"},
                             {"pad", "(1,1)"},
                             {"pool_type", "max"}};

// In training the forward also writes the argmax positions its gradient
// reads; cuDNN's recomputes them from data and output instead.
void BM_MxMaxPoolTrain(benchmark::State& state) {
  if (!HasGpu()) return state.SkipWithError("no GPU");
  MxQueued(state, "Pooling", {OnGpu(kPoolIn, 1)}, kPoolAttrs, true);
}
void BM_MxMaxPoolBackward(benchmark::State& state) {
  if (!HasGpu()) return state.SkipWithError("no GPU");
  imperative::TrainingScope train(true);
  const NDArray x = OnGpu(kPoolIn, 1);
  const std::vector<NDArray> fwd =
      imperative::Invoke("Pooling", {x}, kPoolAttrs);
  if (fwd.size() < 2) return state.SkipWithError("no argmax output");
  MxQueued(state, "_backward_Pooling_max",
           {OnGpu(fwd[0].shape(), 2), fwd[1], x}, kPoolAttrs, true);
}
void RawMaxPool(benchmark::State& state, bool backward) {
  if (!HasGpu()) return state.SkipWithError("no GPU");
  Raw raw;
  const NDArray x = OnGpu(kPoolIn, 1);
  float* xd = raw.Buffer(kPoolIn.Size(), &x);
  float* dx = raw.Buffer(kPoolIn.Size());
  const size_t m = 32 * 64 * 56 * 56;
  float* yd = raw.Buffer(m);
  float* dy = raw.Buffer(m, &x);
  auto ti = raw.Nchw(32, 64, 112, 112);
  auto to = raw.Nchw(32, 64, 56, 56);
  cudnnPoolingDescriptor_t pd;
  cudnnCreatePoolingDescriptor(&pd);
  cudnnSetPooling2dDescriptor(pd, CUDNN_POOLING_MAX, CUDNN_PROPAGATE_NAN, 3, 3,
                              1, 1, 2, 2);
  cudnnPoolingForward(raw.handle(), pd, &kOne, ti, xd, &kZero, to, yd);
  raw.Run(state, [&] {
    if (backward) {
      return cudnnPoolingBackward(raw.handle(), pd, &kOne, to, yd, to, dy, ti,
                                  xd, &kZero, ti, dx);
    } else {
      return cudnnPoolingForward(raw.handle(), pd, &kOne, ti, xd, &kZero, to,
                                 yd);
    }
  });
  cudnnDestroyPoolingDescriptor(pd);
}
void BM_RawCudnnMaxPool(benchmark::State& state) { RawMaxPool(state, false); }
void BM_RawCudnnMaxPoolBackward(benchmark::State& state) {
  RawMaxPool(state, true);
}

#define MX_GPU_BENCHMARK(fn) \
  BENCHMARK(fn)->Unit(benchmark::kMicrosecond)->UseRealTime()
MX_GPU_BENCHMARK(BM_MxRelu);
MX_GPU_BENCHMARK(BM_RawCudnnRelu);
MX_GPU_BENCHMARK(BM_MxReluSmall);
MX_GPU_BENCHMARK(BM_RawCudnnReluSmall);
MX_GPU_BENCHMARK(BM_MxReluBackward);
MX_GPU_BENCHMARK(BM_RawCudnnReluBackward);
MX_GPU_BENCHMARK(BM_MxLogSoftmax);
MX_GPU_BENCHMARK(BM_RawCudnnLogSoftmax);
MX_GPU_BENCHMARK(BM_MxLogSoftmaxBackward);
MX_GPU_BENCHMARK(BM_RawCudnnLogSoftmaxBackward);
MX_GPU_BENCHMARK(BM_MxGlobalAvgPool);
MX_GPU_BENCHMARK(BM_RawCudnnGlobalAvgPool);
MX_GPU_BENCHMARK(BM_MxBatchNormTrain);
MX_GPU_BENCHMARK(BM_RawCudnnBatchNormTrain);
MX_GPU_BENCHMARK(BM_MxBatchNormBackward);
MX_GPU_BENCHMARK(BM_RawCudnnBatchNormBackward);
MX_GPU_BENCHMARK(BM_MxMaxPoolTrain);
MX_GPU_BENCHMARK(BM_RawCudnnMaxPool);
MX_GPU_BENCHMARK(BM_MxMaxPoolBackward);
MX_GPU_BENCHMARK(BM_RawCudnnMaxPoolBackward);

}  // namespace
}  // namespace mx

BENCHMARK_MAIN();
