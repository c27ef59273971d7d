// dot, _backward_dot, batch_dot, FullyConnected, _npi_matmul and
// _backward_npi_matmul on cuBLAS
// (cublasGemmEx / cublasGemmStridedBatchedEx; float32 and float64 in full
// precision, no TF32; float16 with float accumulation). Row-major products
// run as the column-major product of the transposes: C = op(A) op(B) is
// C^T = op(B)^T op(A)^T, so A and B swap places in the call.
#include <string>

#include "backends/common/attr_parse.h"
#include "backends/common/matmul_geometry.h"
#include "backends/cuda/cuda_ops.h"
#include "backends/cuda/cuda_util.h"
#include "backends/cuda/elementwise.h"

namespace mx_cuda {
namespace {

using mxplugin::Attrs;
using mxplugin::Error;
using mxplugin::KernelContext;
using mxplugin::Tensor;
using mxplugin::Tensors;

struct BlasTypes {
  cudaDataType_t data;
  cublasComputeType_t compute;
};

BlasTypes TypesOf(const std::string& op, int dtype) {
  switch (dtype) {
    case MX_DTYPE_FLOAT32:
      return {CUDA_R_32F, CUBLAS_COMPUTE_32F};
    case MX_DTYPE_FLOAT64:
      return {CUDA_R_64F, CUBLAS_COMPUTE_64F};
    case MX_DTYPE_FLOAT16:
      return {CUDA_R_16F, CUBLAS_COMPUTE_32F};
    default:
      throw Error(MX_STATUS_DTYPE_ERROR,
                  op + " on gpu: " + DTypeName(dtype) +
                      " is not supported (float32, float64, float16)");
  }
}

}  // namespace

void StridedGemm(const std::string& op, const KernelContext& ctx, int dtype,
                 bool ta, bool tb, int64_t m, int64_t n, int64_t k,
                 double alpha, GemmOperand a, GemmOperand b, void* c,
                 int64_t ldc, int64_t stride_c, bool accumulate,
                 int64_t batch) {
  if (m == 0 || n == 0 || batch == 0) return;
  const BlasTypes t = TypesOf(op, dtype);
  cudaStream_t stream = static_cast<cudaStream_t>(ctx.stream());
  if (k == 0) {
    // An empty sum: C = 0 (or unchanged when accumulating); only dense C
    // comes here (every caller's k is an array extent of at least 1
    // otherwise).
    if (!accumulate) {
      CheckCuda(cudaMemsetAsync(
                    c, 0, static_cast<size_t>(batch * m * n) * DTypeSize(dtype),
                    stream),
                op);
    }
    return;
  }
  cublasHandle_t h = BlasHandle(ctx.dev_id(), stream);
  const double beta64 = accumulate ? 1 : 0;
  const float alpha32 = static_cast<float>(alpha), beta32 = accumulate ? 1 : 0;
  const bool f64 = dtype == MX_DTYPE_FLOAT64;
  const void* alpha_p = f64 ? static_cast<const void*>(&alpha) : &alpha32;
  const void* beta_p = f64 ? static_cast<const void*>(&beta64) : &beta32;
  const cublasOperation_t opa = ta ? CUBLAS_OP_T : CUBLAS_OP_N;
  const cublasOperation_t opb = tb ? CUBLAS_OP_T : CUBLAS_OP_N;
  if (batch == 1) {
    CheckBlas(
        cublasGemmEx(h, opb, opa, static_cast<int>(n), static_cast<int>(m),
                     static_cast<int>(k), alpha_p, b.data, t.data,
                     static_cast<int>(b.ld), a.data, t.data,
                     static_cast<int>(a.ld), beta_p, c, t.data,
                     static_cast<int>(ldc), t.compute, CUBLAS_GEMM_DEFAULT),
        op + ": gemm");
  } else {
    CheckBlas(cublasGemmStridedBatchedEx(
                  h, opb, opa, static_cast<int>(n), static_cast<int>(m),
                  static_cast<int>(k), alpha_p, b.data, t.data,
                  static_cast<int>(b.ld), b.stride, a.data, t.data,
                  static_cast<int>(a.ld), a.stride, beta_p, c, t.data,
                  static_cast<int>(ldc), stride_c, static_cast<int>(batch),
                  t.compute, CUBLAS_GEMM_DEFAULT),
              op + ": batched gemm");
  }
}

void Gemm(const std::string& op, const KernelContext& ctx, int dtype, bool ta,
          bool tb, int64_t m, int64_t n, int64_t k, const void* a,
          const void* b, void* c, bool accumulate, int64_t batch,
          int64_t stride_a, int64_t stride_b, int64_t stride_c) {
  // Dense row-major operands: rows as long as their columns.
  StridedGemm(op, ctx, dtype, ta, tb, m, n, k, 1.0, {a, ta ? m : k, stride_a},
              {b, tb ? k : n, stride_b}, c, n, stride_c, accumulate, batch);
}

namespace {

// MXNet's dot of N-d arrays: a's last axis (first when transposed) with
// b's first axis (last when transposed); the rest flattened.
struct DotShape {
  int64_t m, n, k;
};

DotShape DotExtents(const Tensor& a, const Tensor& b, bool ta, bool tb) {
  DotShape s{1, 1, 1};
  const int na = a.ndim(), nb = b.ndim();
  s.k = ta ? a.dim(0) : a.dim(na - 1);
  for (int d = ta ? 1 : 0; d < (ta ? na : na - 1); ++d) s.m *= a.dim(d);
  for (int d = tb ? 0 : 1; d < (tb ? nb - 1 : nb); ++d) s.n *= b.dim(d);
  return s;
}

void Dot(const KernelContext& ctx, const Attrs& attrs, Tensors in,
         const int32_t* req, Tensors out) {
  if (req[0] == MX_REQ_NULL) return;
  const bool ta = FlagAttr("dot", attrs, "transpose_a", "False");
  const bool tb = FlagAttr("dot", attrs, "transpose_b", "False");
  const DotShape s = DotExtents(in[0], in[1], ta, tb);
  Gemm("dot", ctx, in[0].dtype(), ta, tb, s.m, s.n, s.k, in[0].data<void>(),
       in[1].data<void>(), out[0].data<void>(), req[0] == MX_REQ_ADD);
}

// (out_grad, a, b) -> (a_grad, b_grad) of C = op(A) op(B).
void DotBackward(const KernelContext& ctx, const Attrs& attrs, Tensors in,
                 const int32_t* req, Tensors out) {
  const std::string op = "_backward_dot";
  const bool ta = FlagAttr(op, attrs, "transpose_a", "False");
  const bool tb = FlagAttr(op, attrs, "transpose_b", "False");
  const DotShape s = DotExtents(in[1], in[2], ta, tb);
  const int dt = in[0].dtype();
  const void *og = in[0].data<void>(), *a = in[1].data<void>(),
             *b = in[2].data<void>();
  if (req[0] != MX_REQ_NULL) {
    if (!ta) {  // dA (m x k) = og (m x n) op(B)^T.
      Gemm(op, ctx, dt, false, !tb, s.m, s.k, s.n, og, b, out[0].data<void>(),
           req[0] == MX_REQ_ADD);
    } else {  // dA (k x m) = op(B) (k x n) og^T.
      Gemm(op, ctx, dt, tb, true, s.k, s.m, s.n, b, og, out[0].data<void>(),
           req[0] == MX_REQ_ADD);
    }
  }
  if (req[1] != MX_REQ_NULL) {
    if (!tb) {  // dB (k x n) = op(A)^T og.
      Gemm(op, ctx, dt, !ta, false, s.k, s.n, s.m, a, og, out[1].data<void>(),
           req[1] == MX_REQ_ADD);
    } else {  // dB (n x k) = og^T op(A).
      Gemm(op, ctx, dt, true, ta, s.n, s.k, s.m, og, a, out[1].data<void>(),
           req[1] == MX_REQ_ADD);
    }
  }
}

void BatchDot(const KernelContext& ctx, const Attrs& attrs, Tensors in,
              const int32_t* req, Tensors out) {
  const std::string op = "batch_dot";
  if (req[0] == MX_REQ_NULL) return;
  const bool ta = FlagAttr(op, attrs, "transpose_a", "False");
  const bool tb = FlagAttr(op, attrs, "transpose_b", "False");
  const Tensor a = in[0], b = in[1];
  const int na = a.ndim(), nb = b.ndim();
  if (na < 3 || nb < 3) Unsupported(op, "operands of fewer than 3 dims");
  int64_t batch = 1;
  for (int d = 0; d < na - 2; ++d) batch *= a.dim(d);
  const int64_t m = ta ? a.dim(na - 1) : a.dim(na - 2);
  const int64_t k = ta ? a.dim(na - 2) : a.dim(na - 1);
  const int64_t n = tb ? b.dim(nb - 2) : b.dim(nb - 1);
  Gemm(op, ctx, a.dtype(), ta, tb, m, n, k, a.data<void>(), b.data<void>(),
       out[0].data<void>(), req[0] == MX_REQ_ADD, batch, m * k, k * n, m * n);
}

mx_math::MatmulGeometry MatmulOf(const std::string& op, const Tensor& a,
                                 const Tensor& b) {
  mx_math::MatmulGeometry g;
  const std::string why = mx_math::MatmulGeometryOf(a.shape(), b.shape(), &g);
  if (!why.empty()) throw Error(MX_STATUS_SHAPE_ERROR, op + ": " + why);
  return g;
}

// A pointer `index` matrices of `bytes` each past p.
const void* MatrixAt(const void* p, int64_t index, int64_t bytes) {
  return static_cast<const char*>(p) + index * bytes;
}
void* MatrixAt(void* p, int64_t index, int64_t bytes) {
  return static_cast<char*>(p) + index * bytes;
}

// np.matmul: one strided batched call when each operand is either not
// broadcast or broadcast whole (stride 0), else one call per matrix.
void NumpyMatmul(const KernelContext& ctx, const Attrs&, Tensors in,
                 const int32_t* req, Tensors out) {
  const std::string op = "_npi_matmul";
  if (req[0] == MX_REQ_NULL) return;
  const mx_math::MatmulGeometry g = MatmulOf(op, in[0], in[1]);
  const int dt = in[0].dtype();
  const int64_t es = static_cast<int64_t>(DTypeSize(dt));
  const int64_t mk = g.m * g.k, kn = g.k * g.n, mn = g.m * g.n;
  const int64_t batches = g.batch_count();
  const bool add = req[0] == MX_REQ_ADD;
  const bool a_whole = g.a_matrices == batches || g.a_matrices == 1;
  const bool b_whole = g.b_matrices == batches || g.b_matrices == 1;
  if (a_whole && b_whole) {
    Gemm(op, ctx, dt, false, false, g.m, g.n, g.k, in[0].data<void>(),
         in[1].data<void>(), out[0].data<void>(), add, batches,
         g.a_matrices == 1 ? 0 : mk, g.b_matrices == 1 ? 0 : kn, mn);
    return;
  }
  for (int64_t i = 0; i < batches; ++i) {
    Gemm(op, ctx, dt, false, false, g.m, g.n, g.k,
         MatrixAt(in[0].data<void>(), g.a_index(i), mk * es),
         MatrixAt(in[1].data<void>(), g.b_index(i), kn * es),
         MatrixAt(out[0].data<void>(), i, mn * es), add);
  }
}

// (out_grad, a, b) -> (a_grad, b_grad): dA = dC B^T and dB = A^T dC per
// output matrix; an operand broadcast along batches sums its products
// (zeroed first unless adding).
void NumpyMatmulBackward(const KernelContext& ctx, const Attrs&, Tensors in,
                         const int32_t* req, Tensors out) {
  const std::string op = "_backward_npi_matmul";
  const mx_math::MatmulGeometry g = MatmulOf(op, in[1], in[2]);
  const int dt = in[0].dtype();
  const int64_t es = static_cast<int64_t>(DTypeSize(dt));
  const int64_t mk = g.m * g.k, kn = g.k * g.n, mn = g.m * g.n;
  const int64_t batches = g.batch_count();
  const void *dc = in[0].data<void>(), *a = in[1].data<void>(),
             *b = in[2].data<void>();
  for (int which : {0, 1}) {
    if (req[which] == MX_REQ_NULL) continue;
    void* d = out[which].data<void>();
    const int64_t own = which == 0 ? g.a_matrices : g.b_matrices;
    const int64_t size = which == 0 ? mk : kn;
    const bool gathers = own != batches;
    bool add = req[which] == MX_REQ_ADD;
    const int64_t other = which == 0 ? g.b_matrices : g.a_matrices;
    if (!gathers && (other == batches || other == 1)) {  // one strided call
      const int64_t other_stride = other == 1 ? 0 : (which == 0 ? kn : mk);
      if (which == 0) {
        Gemm(op, ctx, dt, false, true, g.m, g.k, g.n, dc, b, d, add, batches,
             mn, other_stride, mk);
      } else {
        Gemm(op, ctx, dt, true, false, g.k, g.n, g.m, a, dc, d, add, batches,
             other_stride, mn, kn);
      }
      continue;
    }
    if (gathers && !add) {
      CheckCuda(cudaMemsetAsync(d, 0, static_cast<size_t>(own * size * es),
                                StreamOf(ctx)),
                op);
      add = true;
    }
    for (int64_t i = 0; i < batches; ++i) {
      if (which == 0) {
        Gemm(op, ctx, dt, false, true, g.m, g.k, g.n, MatrixAt(dc, i, mn * es),
             MatrixAt(b, g.b_index(i), kn * es),
             MatrixAt(d, g.a_index(i), mk * es), add);
      } else {
        Gemm(op, ctx, dt, true, false, g.k, g.n, g.m,
             MatrixAt(a, g.a_index(i), mk * es), MatrixAt(dc, i, mn * es),
             MatrixAt(d, g.b_index(i), kn * es), add);
      }
    }
  }
}

// (data, weight[, bias]) -> data (rows x K) weight^T (K x H) + bias.
void FullyConnected(const KernelContext& ctx, const Attrs& attrs, Tensors in,
                    const int32_t* req, Tensors out) {
  const std::string op = "FullyConnected";
  if (req[0] == MX_REQ_NULL) return;
  const bool no_bias = FlagAttr(op, attrs, "no_bias", "False");
  const Tensor x = in[0], w = in[1], y = out[0];
  const int64_t hidden = w.dim(0), k = w.dim(1);
  const int64_t rows = k == 0 ? y.size() / hidden : x.size() / k;
  Gemm(op, ctx, x.dtype(), false, true, rows, hidden, k, x.data<void>(),
       w.data<void>(), y.data<void>(), req[0] == MX_REQ_ADD);
  if (!no_bias && in.size() > 2) {
    CheckCuda(
        LaunchAddBias(x.dtype(), rows, hidden, in[2].data<void>(),
                      y.data<void>(), static_cast<cudaStream_t>(ctx.stream())),
        op + ": bias");
  }
}

}  // namespace

void RegisterBlasOps(mxplugin::Plugin& plugin) {
  RegisterGpuKernel(plugin, "dot", Dot);
  RegisterGpuKernel(plugin, "_backward_dot", DotBackward);
  RegisterGpuKernel(plugin, "batch_dot", BatchDot);
  RegisterGpuKernel(plugin, "FullyConnected", FullyConnected);
  RegisterGpuKernel(plugin, "_npi_matmul", NumpyMatmul);
  RegisterGpuKernel(plugin, "_backward_npi_matmul", NumpyMatmulBackward);
}

}  // namespace mx_cuda
