// _contrib_box_nms on the GPU, one block per batch item, deciding exactly
// as the CPU kernel (values read as double): valid boxes ranked by
// descending score (ties by row, a stable sort), the topk best kept, then
// greedy suppression in rank order, each step's IoU tests spread over the
// block's threads.
#include <cuda_fp16.h>

#include "backends/cuda/box_nms_kernels.h"
#include "backends/cuda/kernel_util.cuh"
#include "backends/plugin_api/mx_plugin.h"

namespace mx_cuda {
namespace {

using namespace kernel;  // NOLINT: the shared kernel helpers.

struct Box {
  double x0, y0, x1, y1;
};

template <typename T>
__device__ double At(const T* row, int64_t j) {
  return static_cast<double>(Load(row, j));
}

template <typename T>
__device__ Box CornerBox(const T* v, bool center) {
  const double a = At(v, 0), b = At(v, 1), c = At(v, 2), d = At(v, 3);
  if (!center) return {a, b, c, d};
  return {a - c / 2, b - d / 2, a + c / 2, b + d / 2};
}

__device__ double IoU(const Box& a, const Box& b) {
  const double iw = fmin(a.x1, b.x1) - fmax(a.x0, b.x0);
  const double ih = fmin(a.y1, b.y1) - fmax(a.y0, b.y0);
  if (iw <= 0 || ih <= 0) return 0;
  const double inter = iw * ih;
  const double area_a = fmax(0.0, a.x1 - a.x0) * fmax(0.0, a.y1 - a.y0);
  const double area_b = fmax(0.0, b.x1 - b.x0) * fmax(0.0, b.y1 - b.y0);
  const double uni = area_a + area_b - inter;
  return uni <= 0 ? 0 : inter / uni;
}

template <typename T>
__device__ bool Valid(const BoxNmsParams& p, const T* row) {
  if (!(At(row, p.score_index) > p.valid_thresh)) return false;
  return !(p.id_index >= 0 && p.background_id >= 0 &&
           At(row, p.id_index) == static_cast<double>(p.background_id));
}

// order[r] = the row of rank r (r < count); dropped[r] set by suppression.
template <typename T>
__global__ void BoxNmsKernel(int64_t n, int64_t k, BoxNmsParams p, const T* x,
                             T* y, int req_y, int32_t* src, int req_src,
                             int64_t* order_all, unsigned char* dropped_all) {
  const int64_t b = blockIdx.x;
  const T* xb = x + b * n * k;
  int64_t* order = order_all + b * n;
  unsigned char* dropped = dropped_all + b * n;
  __shared__ int64_t count;
  __shared__ int keep_current;
  // topk=0: MXNet leaves the boxes as they are (no filtering, no
  // suppression, no format conversion), each row its own source.
  const bool identity = p.topk == 0;
  int64_t kept = 0;
  if (identity) {
    for (int64_t i = threadIdx.x; i < n; i += blockDim.x) order[i] = i;
    kept = n;
    __syncthreads();
  } else {
    // Rank of each valid row: valid rows scoring higher, or as high and
    // earlier (std::stable_sort's order).
    for (int64_t i = threadIdx.x; i < n; i += blockDim.x) {
      const T* ri = xb + i * k;
      if (!Valid(p, ri)) continue;
      const double si = At(ri, p.score_index);
      int64_t rank = 0;
      for (int64_t j = 0; j < n; ++j) {
        const T* rj = xb + j * k;
        if (j == i || !Valid(p, rj)) continue;
        const double sj = At(rj, p.score_index);
        if (sj > si || (sj == si && j < i)) ++rank;
      }
      order[rank] = i;
    }
    if (threadIdx.x == 0) {
      int64_t c = 0;
      for (int64_t i = 0; i < n; ++i) c += Valid(p, xb + i * k) ? 1 : 0;
      if (p.topk > 0 && c > p.topk) c = p.topk;
      count = c;
    }
    __syncthreads();
    const int64_t m = count;
    for (int64_t r = threadIdx.x; r < m; r += blockDim.x) dropped[r] = 0;
    __syncthreads();
    for (int64_t r = 0; r < m; ++r) {
      if (threadIdx.x == 0) keep_current = dropped[r] == 0;
      __syncthreads();
      if (keep_current) {
        const T* a = xb + order[r] * k;
        const Box ba = CornerBox(a + p.coord_start, p.center_in);
        for (int64_t q = r + 1 + threadIdx.x; q < m; q += blockDim.x) {
          if (dropped[q]) continue;
          const T* c = xb + order[q] * k;
          if (!p.force_suppress && p.id_index >= 0 &&
              trunc(At(a, p.id_index)) != trunc(At(c, p.id_index))) {
            continue;
          }
          if (IoU(ba, CornerBox(c + p.coord_start, p.center_in)) >
              p.overlap_thresh) {
            dropped[q] = 1;
          }
        }
        if (threadIdx.x == 0) order[kept] = order[r];  // kept <= r: in place.
        ++kept;
      }
      __syncthreads();
    }
  }
  // Output rows: the kept boxes (coordinates converted), then -1 rows.
  T* yb = y + b * n * k;
  const bool convert = !identity && p.center_in != p.center_out;
  for (int64_t e = threadIdx.x; e < n * k; e += blockDim.x) {
    const int64_t r = e / k, j = e % k;
    double v = -1;
    if (r < kept) {
      const T* row = xb + order[r] * k;
      v = At(row, j);
      const int64_t c = j - p.coord_start;
      if (convert && c >= 0 && c < 4) {
        const Box bx = CornerBox(row + p.coord_start, p.center_in);
        const double center[4] = {(bx.x0 + bx.x1) / 2, (bx.y0 + bx.y1) / 2,
                                  bx.x1 - bx.x0, bx.y1 - bx.y0};
        const double corner[4] = {bx.x0, bx.y0, bx.x1, bx.y1};
        v = p.center_out ? center[c] : corner[c];
      }
    }
    using A = typename Acc<T>::type;
    if (req_y == MX_REQ_ADD) {
      yb[e] = static_cast<T>(static_cast<A>(yb[e]) + static_cast<A>(v));
    } else if (req_y != MX_REQ_NULL) {
      yb[e] = static_cast<T>(static_cast<A>(v));
    }
  }
  if (src != nullptr && req_src != MX_REQ_NULL) {
    for (int64_t r = threadIdx.x; r < n; r += blockDim.x) {
      const int32_t s = r < kept ? static_cast<int32_t>(order[r]) : -1;
      src[b * n + r] = req_src == MX_REQ_ADD ? src[b * n + r] + s : s;
    }
  }
}

template <int kReq, typename T>
__global__ void BoxNmsGradKernel(int64_t batches, int64_t n, int64_t k,
                                 const T* g, const int32_t* src, T* dx) {
  using A = typename Acc<T>::type;
  const int64_t total = batches * n * k;
  for (int64_t e = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; e < total;
       e += int64_t{blockDim.x} * gridDim.x) {
    if (kReq != MX_REQ_ADD) dx[e] = static_cast<T>(A(0));
  }
}

template <typename T>
__global__ void BoxNmsScatterKernel(int64_t batches, int64_t n, int64_t k,
                                    const T* g, const int32_t* src, T* dx) {
  const int64_t total = batches * n * k;
  for (int64_t e = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; e < total;
       e += int64_t{blockDim.x} * gridDim.x) {
    const int64_t row = e / k, j = e % k, b = row / n;
    const int32_t s = src[row];
    if (s < 0 || s >= n) continue;
    // Atomic: the op's own source rows are distinct, but the gradient op
    // may be called with any (the CPU adds repeats).
    atomicAdd(dx + (b * n + s) * k + j, g[e]);
  }
}

struct BoxNmsGradLauncher {
  int64_t batches, n, k;
  const void* g;
  const int32_t* src;
  void* dx;
  cudaStream_t s;
  template <int R, typename T>
  void operator()() const {
    const int64_t total = batches * n * k;
    BoxNmsGradKernel<R, T><<<Blocks(total), kThreads, 0, s>>>(
        batches, n, k, static_cast<const T*>(g), src, static_cast<T*>(dx));
    BoxNmsScatterKernel<T><<<Blocks(total), kThreads, 0, s>>>(
        batches, n, k, static_cast<const T*>(g), src, static_cast<T*>(dx));
  }
};

template <int kReq, typename T>
__global__ void MultiBoxPriorKernel(PriorBoxes p, T* y) {
  using A = typename Acc<T>::type;
  const int64_t boxes = p.h * p.w * p.anchors;
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < boxes;
       i += int64_t{blockDim.x} * gridDim.x) {
    const int64_t a = i % p.anchors, cell = i / p.anchors;
    const double cy = (cell / p.w + p.offset_y) * p.step_y;
    const double cx = (cell % p.w + p.offset_x) * p.step_x;
    const double box[4] = {cx - p.half_w[a], cy - p.half_h[a], cx + p.half_w[a],
                           cy + p.half_h[a]};
    for (int k = 0; k < 4; ++k) {
      const double v = p.clip ? fmin(fmax(box[k], 0.0), 1.0) : box[k];
      Store<kReq>(y, i * 4 + k, static_cast<A>(v));
    }
  }
}

struct MultiBoxPriorLauncher {
  PriorBoxes p;
  void* y;
  cudaStream_t s;
  template <int R, typename T>
  void operator()() const {
    MultiBoxPriorKernel<R, T>
        <<<Blocks(p.h * p.w * p.anchors), kThreads, 0, s>>>(p,
                                                            static_cast<T*>(y));
  }
};

}  // namespace

size_t BoxNmsScratchBytes(int64_t batches, int64_t n) {
  return static_cast<size_t>(batches * n) * (sizeof(int64_t) + 1) + 16;
}

cudaError_t LaunchBoxNms(int dtype, int64_t batches, int64_t n, int64_t k,
                         const BoxNmsParams& p, const void* x, void* y,
                         int req_y, int32_t* source_row, int req_source,
                         void* scratch, cudaStream_t stream) {
  if (batches == 0 || n == 0) return cudaSuccess;
  int64_t* order = static_cast<int64_t*>(scratch);
  unsigned char* dropped =
      reinterpret_cast<unsigned char*>(order + batches * n);
  const unsigned grid = static_cast<unsigned>(batches);
  switch (dtype) {
    case MX_DTYPE_FLOAT32:
      BoxNmsKernel<float><<<grid, kThreads, 0, stream>>>(
          n, k, p, static_cast<const float*>(x), static_cast<float*>(y), req_y,
          source_row, req_source, order, dropped);
      break;
    case MX_DTYPE_FLOAT64:
      BoxNmsKernel<double><<<grid, kThreads, 0, stream>>>(
          n, k, p, static_cast<const double*>(x), static_cast<double*>(y),
          req_y, source_row, req_source, order, dropped);
      break;
    case MX_DTYPE_FLOAT16:
      BoxNmsKernel<__half><<<grid, kThreads, 0, stream>>>(
          n, k, p, static_cast<const __half*>(x), static_cast<__half*>(y),
          req_y, source_row, req_source, order, dropped);
      break;
    default:
      return cudaErrorInvalidValue;
  }
  return cudaGetLastError();
}

cudaError_t LaunchBoxNmsGrad(int dtype, int64_t batches, int64_t n, int64_t k,
                             const void* out_grad, const int32_t* source_row,
                             void* dx, int req, cudaStream_t stream) {
  if (batches * n * k == 0) return cudaSuccess;
  return Dispatch(
      dtype, req,
      BoxNmsGradLauncher{batches, n, k, out_grad, source_row, dx, stream});
}

cudaError_t LaunchMultiBoxPrior(int dtype, const PriorBoxes& p, void* y,
                                int req, cudaStream_t stream) {
  if (p.h * p.w * p.anchors == 0) return cudaSuccess;
  return Dispatch(dtype, req, MultiBoxPriorLauncher{p, y, stream});
}

}  // namespace mx_cuda
