// SoftmaxOutput's gradient, softmax_cross_entropy and
// AdaptiveAvgPooling2D kernels of the CUDA plugin (norm_kernels.h). Row
// reductions run one block per row, sums in double as on the CPU; labels
// outside the classes are reported through a device word the caller reads.
#include "backends/cuda/kernel_util.cuh"
#include "backends/cuda/norm_kernels.h"
#include "backends/cuda/norm_util.cuh"

namespace mx_cuda {
namespace {

using namespace kernel;  // NOLINT: the shared kernel helpers.

// ---- SoftmaxOutput's gradient and softmax_cross_entropy. ----

// As MXNet (and the CPU): labels match ignore_label as integers.
__device__ __forceinline__ bool IsIgnoreLabel(const SoftmaxOutputArgs& a,
                                              double lv) {
  return trunc(lv) == trunc(a.ignore_label);
}
__device__ __forceinline__ bool Ignored(const SoftmaxOutputArgs& a, double lv) {
  return a.use_ignore && IsIgnoreLabel(a, lv);
}

// One block: the first bad line (atomicMin) and the count of lines whose
// label is not ignore_label (normalization=valid counts them even without
// use_ignore, as MXNet).
template <typename L>
__global__ void SoftmaxOutputCheckKernel(SoftmaxOutputArgs a, const L* label,
                                         unsigned long long* bad,
                                         double* valid) {
  __shared__ double shared[kThreads];
  const int64_t rows = a.l.outer * a.l.inner;
  double kept = 0;
  for (int64_t r = threadIdx.x; r < rows; r += kThreads) {
    const double lv = LabelAt(label, r);
    if (!IsIgnoreLabel(a, lv)) kept += 1;
    if (Ignored(a, lv)) continue;
    if (!(lv >= 0 && lv < static_cast<double>(a.l.len))) {
      atomicMin(bad, static_cast<unsigned long long>(r));
    }
  }
  kept = BlockSum(kept, shared);
  if (threadIdx.x == 0) *valid = kept;
}

template <typename T, typename L>
__global__ void SoftmaxOutputGradKernel(SoftmaxOutputArgs a, const T* og,
                                        const T* y, const L* label, T* dx,
                                        int req) {
  using A = typename Acc<T>::type;
  const Lines& l = a.l;
  const double off = l.len > 1 ? a.smooth_alpha / (l.len - 1) : 0;
  MX_CUDA_GRID_STRIDE(i, l.outer * l.len * l.inner) {
    const int64_t c = (i / l.inner) % l.len;
    const int64_t row = (i / (l.len * l.inner)) * l.inner + i % l.inner;
    const double lv = LabelAt(label, row);
    double g = 0;
    if (!Ignored(a, lv)) {
      const int64_t target = static_cast<int64_t>(lv);
      const double t = c == target ? 1.0 - a.smooth_alpha : off;
      g = (static_cast<double>(Load(y, i)) - t) * a.scale;
      if (a.out_grad) g *= static_cast<double>(Load(og, i));
    }
    Put(dx, i, req, static_cast<A>(g));
  }
}

// A row's maximum (in A) and sum of exp(x - max) (in double).
template <typename T>
__device__ void RowSoftmaxStats(const T* row, int64_t classes, double* shared,
                                typename Acc<T>::type* amax, double* sum) {
  using A = typename Acc<T>::type;
  __shared__ A shared_max[kThreads];
  A m = -static_cast<A>(INFINITY);
  for (int64_t j = threadIdx.x; j < classes; j += kThreads) {
    const A v = Load(row, j);
    if (m < v) m = v;
  }
  m = BlockMax(m, shared_max);
  double s = 0;
  for (int64_t j = threadIdx.x; j < classes; j += kThreads) {
    s += exp(static_cast<double>(Load(row, j) - m));
  }
  *amax = m;
  *sum = BlockSum(s, shared);
}

template <typename T, typename L>
__global__ void CrossEntropyRowKernel(int64_t rows, int64_t classes, const T* x,
                                      const L* label, double* loss,
                                      unsigned long long* bad) {
  using A = typename Acc<T>::type;
  __shared__ double shared[kThreads];
  for (int64_t r = blockIdx.x; r < rows; r += gridDim.x) {
    const T* row = x + r * classes;
    A m;
    double sum;
    RowSoftmaxStats(row, classes, shared, &m, &sum);
    if (threadIdx.x != 0) continue;
    const double lv = LabelAt(label, r);
    if (!(lv >= 0 && lv < static_cast<double>(classes))) {
      atomicMin(bad, static_cast<unsigned long long>(r));
      loss[r] = 0;
      continue;
    }
    const int64_t t = static_cast<int64_t>(lv);
    // At most -log(1e-8f), as MXNet (and the CPU) take -log(max(p, 1e-8f));
    // NaN stays NaN (as std::min on the CPU; fmin would drop it).
    const double row_loss = log(sum) - static_cast<double>(Load(row, t) - m);
    const double cap = -log(static_cast<double>(1e-8f));
    loss[r] = cap < row_loss ? cap : row_loss;
  }
}

// One block: y[0] = the sum of the row losses.
template <typename T>
__global__ void SumLossKernel(int64_t rows, const double* loss, T* y, int req) {
  using A = typename Acc<T>::type;
  __shared__ double shared[kThreads];
  double s = 0;
  for (int64_t r = threadIdx.x; r < rows; r += kThreads) s += loss[r];
  s = BlockSum(s, shared);
  if (threadIdx.x == 0) Put(y, 0, req, static_cast<A>(s));
}

template <typename T, typename L>
__global__ void CrossEntropyGradKernel(int64_t rows, int64_t classes,
                                       const T* og, const T* x, const L* label,
                                       T* dx, int req,
                                       unsigned long long* bad) {
  using A = typename Acc<T>::type;
  __shared__ double shared[kThreads];
  const double scale = static_cast<double>(Load(og, 0));
  for (int64_t r = blockIdx.x; r < rows; r += gridDim.x) {
    const T* row = x + r * classes;
    A m;
    double sum;
    RowSoftmaxStats(row, classes, shared, &m, &sum);
    const double lv = LabelAt(label, r);
    if (!(lv >= 0 && lv < static_cast<double>(classes))) {
      if (threadIdx.x == 0) atomicMin(bad, static_cast<unsigned long long>(r));
      continue;
    }
    const int64_t t = static_cast<int64_t>(lv);
    for (int64_t j = threadIdx.x; j < classes; j += kThreads) {
      const double prob = exp(static_cast<double>(Load(row, j) - m)) / sum;
      Put(dx, r * classes + j, req,
          static_cast<A>(scale * (prob - (j == t ? 1.0 : 0.0))));
    }
  }
}

// ---- AdaptiveAvgPooling2D. ----

// Cell [begin, end) of output index o of `out` cells over `in` inputs.
__device__ __forceinline__ int64_t CellBegin(int64_t o, int64_t in,
                                             int64_t out) {
  return (o * in) / out;
}
__device__ __forceinline__ int64_t CellEnd(int64_t o, int64_t in, int64_t out) {
  return ((o + 1) * in + out - 1) / out;
}

template <typename T>
__global__ void AdaptivePoolKernel(AdaptivePoolShape s, const T* x, T* y,
                                   int req) {
  using A = typename Acc<T>::type;
  MX_CUDA_GRID_STRIDE(i, s.planes * s.oh * s.ow) {
    const int64_t ox = i % s.ow, oy = (i / s.ow) % s.oh;
    const int64_t pl = i / (s.ow * s.oh);
    const int64_t y0 = CellBegin(oy, s.h, s.oh), y1 = CellEnd(oy, s.h, s.oh);
    const int64_t x0 = CellBegin(ox, s.w, s.ow), x1 = CellEnd(ox, s.w, s.ow);
    A sum = 0;
    for (int64_t iy = y0; iy < y1; ++iy) {
      for (int64_t ix = x0; ix < x1; ++ix) {
        sum += Load(x, (pl * s.h + iy) * s.w + ix);
      }
    }
    Put(y, i, req, sum / static_cast<A>((y1 - y0) * (x1 - x0)));
  }
}

// Each input element sums the shares of the cells holding it: cells oy
// with begin <= iy < end lie in [iy*oh/h, (iy+1)*oh/h] (floored).
template <typename T>
__global__ void AdaptivePoolGradKernel(AdaptivePoolShape s, const T* og, T* dx,
                                       int req) {
  using A = typename Acc<T>::type;
  MX_CUDA_GRID_STRIDE(i, s.planes * s.h * s.w) {
    const int64_t ix = i % s.w, iy = (i / s.w) % s.h;
    const int64_t pl = i / (s.w * s.h);
    A sum = 0;
    const int64_t oy_hi = min(s.oh - 1, ((iy + 1) * s.oh) / s.h);
    const int64_t ox_hi = min(s.ow - 1, ((ix + 1) * s.ow) / s.w);
    for (int64_t oy = (iy * s.oh) / s.h; oy <= oy_hi; ++oy) {
      const int64_t y0 = CellBegin(oy, s.h, s.oh), y1 = CellEnd(oy, s.h, s.oh);
      if (iy < y0 || iy >= y1) continue;
      for (int64_t ox = (ix * s.ow) / s.w; ox <= ox_hi; ++ox) {
        const int64_t x0 = CellBegin(ox, s.w, s.ow);
        const int64_t x1 = CellEnd(ox, s.w, s.ow);
        if (ix < x0 || ix >= x1) continue;
        sum += Load(og, (pl * s.oh + oy) * s.ow + ox) /
               static_cast<A>((y1 - y0) * (x1 - x0));
      }
    }
    Put(dx, i, req, sum);
  }
}

// ---- Launchers: Dispatch picks T; requests are passed at run time. ----

template <typename T>
struct SoftmaxOutputGradLabel {
  SoftmaxOutputArgs a;
  const void *og, *y, *label;
  void* dx;
  int req;
  cudaStream_t s;
  template <typename L>
  void operator()() const {
    SoftmaxOutputGradKernel<T, L>
        <<<Blocks(a.l.outer * a.l.len * a.l.inner), kThreads, 0, s>>>(
            a, static_cast<const T*>(og), static_cast<const T*>(y),
            static_cast<const L*>(label), static_cast<T*>(dx), req);
  }
};

struct SoftmaxOutputGradLauncher {
  int label_dtype;
  SoftmaxOutputArgs a;
  const void *og, *y, *label;
  void* dx;
  int req;
  cudaStream_t s;
  bool* label_ok;
  template <int R, typename T>
  void operator()() const {
    *label_ok = LabelDispatch(
        label_dtype, SoftmaxOutputGradLabel<T>{a, og, y, label, dx, req, s});
  }
};

// og null: the forward (row losses in `loss`, then their sum into y).
struct CrossEntropyArgs {
  int64_t rows, classes;
  const void *og, *x, *label;
  void* y;
  int req;
  unsigned long long* bad;
  double* loss;
  cudaStream_t s;
};

template <typename T>
struct CrossEntropyLabel {
  CrossEntropyArgs a;
  template <typename L>
  void operator()() const {
    const int64_t rows = a.rows, classes = a.classes;
    const void *og = a.og, *x = a.x, *label = a.label;
    void* y = a.y;
    const int req = a.req;
    unsigned long long* bad = a.bad;
    double* loss = a.loss;
    cudaStream_t s = a.s;
    const T* xt = static_cast<const T*>(x);
    const L* lt = static_cast<const L*>(label);
    if (og == nullptr) {
      CrossEntropyRowKernel<T, L><<<LineBlocks(rows), kThreads, 0, s>>>(
          rows, classes, xt, lt, loss, bad);
      SumLossKernel<T>
          <<<1, kThreads, 0, s>>>(rows, loss, static_cast<T*>(y), req);
    } else {
      CrossEntropyGradKernel<T, L><<<LineBlocks(rows), kThreads, 0, s>>>(
          rows, classes, static_cast<const T*>(og), xt, lt, static_cast<T*>(y),
          req, bad);
    }
  }
};

struct CrossEntropyLauncher {
  int label_dtype;
  CrossEntropyArgs args;
  bool* label_ok;
  template <int R, typename T>
  void operator()() const {
    *label_ok = LabelDispatch(label_dtype, CrossEntropyLabel<T>{args});
  }
};

struct AdaptivePoolLauncher {
  AdaptivePoolShape shape;
  bool grad;
  const void* x;
  void* y;
  int req;
  cudaStream_t s;
  template <int R, typename T>
  void operator()() const {
    if (grad) {
      AdaptivePoolGradKernel<T>
          <<<Blocks(shape.planes * shape.h * shape.w), kThreads, 0, s>>>(
              shape, static_cast<const T*>(x), static_cast<T*>(y), req);
    } else {
      AdaptivePoolKernel<T>
          <<<Blocks(shape.planes * shape.oh * shape.ow), kThreads, 0, s>>>(
              shape, static_cast<const T*>(x), static_cast<T*>(y), req);
    }
  }
};

struct LabelOnlyLauncher {
  SoftmaxOutputArgs a;
  const void* label;
  void* check;
  cudaStream_t s;
  template <typename L>
  void operator()() const {
    auto* bad = static_cast<unsigned long long*>(check);
    SoftmaxOutputCheckKernel<L>
        <<<1, kThreads, 0, s>>>(a, static_cast<const L*>(label), bad,
                                reinterpret_cast<double*>(bad + 1));
  }
};

}  // namespace

cudaError_t LaunchSoftmaxOutputCheck(int label_dtype,
                                     const SoftmaxOutputArgs& a,
                                     const void* label, void* check,
                                     cudaStream_t stream) {
  cudaError_t err = cudaMemsetAsync(check, 0xff, sizeof(uint64_t), stream);
  if (err != cudaSuccess) return err;
  if (!LabelDispatch(label_dtype, LabelOnlyLauncher{a, label, check, stream})) {
    return cudaErrorInvalidValue;
  }
  return cudaGetLastError();
}

cudaError_t LaunchSoftmaxOutputGrad(int dtype, int label_dtype,
                                    const SoftmaxOutputArgs& a, const void* og,
                                    const void* y, const void* label, void* dx,
                                    int req, cudaStream_t stream) {
  if (a.l.outer * a.l.len * a.l.inner == 0 || !Writes(req)) {
    return cudaSuccess;
  }
  bool label_ok = true;
  const cudaError_t err =
      Dispatch(dtype, MX_REQ_WRITE,
               SoftmaxOutputGradLauncher{label_dtype, a, og, y, label, dx, req,
                                         stream, &label_ok});
  return label_ok ? err : cudaErrorInvalidValue;
}

cudaError_t LaunchCrossEntropy(int dtype, int label_dtype, int64_t rows,
                               int64_t classes, const void* x,
                               const void* label, void* y, int req,
                               uint64_t* bad, void* scratch,
                               cudaStream_t stream) {
  bool label_ok = true;
  const cudaError_t err =
      Dispatch(dtype, MX_REQ_WRITE,
               CrossEntropyLauncher{label_dtype,
                                    {rows, classes, nullptr, x, label, y,
                                     Writes(req) ? req : MX_REQ_NULL,
                                     reinterpret_cast<unsigned long long*>(bad),
                                     static_cast<double*>(scratch), stream},
                                    &label_ok});
  return label_ok ? err : cudaErrorInvalidValue;
}

size_t CrossEntropyScratchBytes(int64_t rows) {
  return static_cast<size_t>(rows + 1) * sizeof(double);
}

cudaError_t LaunchCrossEntropyGrad(int dtype, int label_dtype, int64_t rows,
                                   int64_t classes, const void* og,
                                   const void* x, const void* label, void* dx,
                                   int req, uint64_t* bad,
                                   cudaStream_t stream) {
  if (rows * classes == 0 || !Writes(req)) return cudaSuccess;
  bool label_ok = true;
  const cudaError_t err =
      Dispatch(dtype, MX_REQ_WRITE,
               CrossEntropyLauncher{label_dtype,
                                    {rows, classes, og, x, label, dx, req,
                                     reinterpret_cast<unsigned long long*>(bad),
                                     nullptr, stream},
                                    &label_ok});
  return label_ok ? err : cudaErrorInvalidValue;
}

cudaError_t LaunchAdaptivePool(int dtype, const AdaptivePoolShape& s,
                               const void* x, void* y, int req,
                               cudaStream_t stream) {
  if (s.planes * s.oh * s.ow == 0 || !Writes(req)) return cudaSuccess;
  return Dispatch(dtype, MX_REQ_WRITE,
                  AdaptivePoolLauncher{s, false, x, y, req, stream});
}

cudaError_t LaunchAdaptivePoolBackward(int dtype, const AdaptivePoolShape& s,
                                       const void* og, void* dx, int req,
                                       cudaStream_t stream) {
  if (s.planes * s.h * s.w == 0 || !Writes(req)) return cudaSuccess;
  return Dispatch(dtype, MX_REQ_WRITE,
                  AdaptivePoolLauncher{s, true, og, dx, req, stream});
}

}  // namespace mx_cuda
