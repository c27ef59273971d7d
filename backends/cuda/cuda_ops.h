// The CUDA plugin's kernel registrations, one function per family.
#ifndef MXCORE_BACKENDS_CUDA_CUDA_OPS_H_
#define MXCORE_BACKENDS_CUDA_CUDA_OPS_H_

#include <cstdint>
#include <string>

#include "backends/plugin_api/mx_plugin_cpp.h"

namespace mx_cuda {

// Elementwise, broadcast, scalar, clip, Activation, add_n, softmax
// (elementwise.cu, reduce_kernels.cu).
void RegisterElementwiseOps(mxplugin::Plugin& plugin);
// MXNet 2's NumPy-interface elementwise ops (_npi_add, _npi_exp, ...):
// operands of other dtypes converted first (numpy_ops.cc).
void RegisterNumpyOps(mxplugin::Plugin& plugin);
// sum, mean, max, min, prod, nansum, nanprod, norm, prod's gradient and
// the reduce/broadcast gradient helpers (reduce_kernels.cu,
// prod_norm_kernels.cu).
void RegisterReduceOps(mxplugin::Plugin& plugin);
// Reshapes, broadcast_to/like/axis, transpose, SwapAxis, slices, Concat, Cast,
// fills, random numbers, one_hot, optimizer updates.
void RegisterArrayOps(mxplugin::Plugin& plugin);
// slice, slice_axis, slice_like, reverse, tile, repeat, Pad, UpSampling
// and their gradients (strided gathers and scatters).
void RegisterLayoutOps(mxplugin::Plugin& plugin);
// flatnonzero, boolean_mask and its gradient (dynamic-shape: outputs
// allocated through the ABI's alloc_output once counted).
void RegisterDynamicOps(mxplugin::Plugin& plugin);
// _contrib_box_nms and its gradient (box_nms_kernels.cu).
void RegisterBoxNmsOps(mxplugin::Plugin& plugin);
// dot, _backward_dot, batch_dot, FullyConnected (cuBLAS).
void RegisterBlasOps(mxplugin::Plugin& plugin);
// Row-major C (m x n, `batch` of them at the given element strides) =
// op(A) op(B) (+ C when `accumulate`) on cuBLAS (blas_ops.cc): float32 and
// float64 in full precision, float16 with float accumulation.
void Gemm(const std::string& op, const mxplugin::KernelContext& ctx, int dtype,
          bool ta, bool tb, int64_t m, int64_t n, int64_t k, const void* a,
          const void* b, void* c, bool accumulate, int64_t batch = 1,
          int64_t stride_a = 0, int64_t stride_b = 0, int64_t stride_c = 0);
// One row-major matrix operand of a batched product: rows `ld` elements
// apart, matrices `stride` apart, from `data`.
struct GemmOperand {
  const void* data;
  int64_t ld, stride;
};
// C = alpha op(A) op(B) (+ C when `accumulate`) with leading dimensions and
// strides of its own (the interleaved attention layouts).
void StridedGemm(const std::string& op, const mxplugin::KernelContext& ctx,
                 int dtype, bool ta, bool tb, int64_t m, int64_t n, int64_t k,
                 double alpha, GemmOperand a, GemmOperand b, void* c,
                 int64_t ldc, int64_t stride_c, bool accumulate, int64_t batch);
// _contrib_interleaved_matmul_* and their gradients
// (interleaved_matmul_ops.cc over StridedGemm).
void RegisterInterleavedMatmulOps(mxplugin::Plugin& plugin);
// RNN and _backward_RNN (backends/common/rnn_driver.h over cuBLAS and
// rnn_kernels.cu).
void RegisterRnnOps(mxplugin::Plugin& plugin);
// LRN (lrn_ops.cc).
void RegisterLrnOps(mxplugin::Plugin& plugin);
// SequenceMask, SequenceLast, _backward_SequenceLast, SequenceReverse
// (sequence_ops.cc).
void RegisterSequenceOps(mxplugin::Plugin& plugin);
// argsort, sort, topk and _backward_topk (ordering_ops.cc).
void RegisterOrderingOps(mxplugin::Plugin& plugin);
// Convolution and _backward_Convolution (cuDNN).
void RegisterConvOps(mxplugin::Plugin& plugin);
// Deconvolution and _backward_Deconvolution (cuDNN, conv_plan.h).
void RegisterDeconvOps(mxplugin::Plugin& plugin);
// Deconvolution's forward kernel, for ops that are one (UpSampling's
// bilinear mode).
void RunDeconvolution(const mxplugin::KernelContext& ctx,
                      const mxplugin::Attrs& attrs, mxplugin::Tensors in,
                      const int32_t* req, mxplugin::Tensors out);
// Pooling, BatchNorm, Dropout and their gradients (nn_kernels.cu).
void RegisterNnOps(mxplugin::Plugin& plugin);
// take, Embedding, gather_nd and their gradients, where, SequenceMask,
// argmax, argmin, argsort, _arange, tril, triu (index_kernels.cu,
// order_kernels.cu).
void RegisterIndexOps(mxplugin::Plugin& plugin);
// npx.index_add, npx.index_update, their gradients and npx.constraint_check
// (index_modify_kernels.cu).
void RegisterIndexModifyOps(mxplugin::Plugin& plugin);
// np.einsum and its gradient (einsum_kernels.cu).
void RegisterEinsumOps(mxplugin::Plugin& plugin);
// LeakyReLU, LayerNorm, L2Normalization, _contrib_div_sqrt_dim,
// AdaptiveAvgPooling2D, _contrib_ROIAlign and their gradients
// (norm_kernels.cu, roi_align_kernels.cu).
void RegisterNormOps(mxplugin::Plugin& plugin);
// GroupNorm, InstanceNorm and their gradients (from the LayerNorm kernels).
void RegisterGroupNormOps(mxplugin::Plugin& plugin);
// _contrib_BilinearResize2D (resize_kernels.cu), Crop and their gradients.
void RegisterResizeOps(mxplugin::Plugin& plugin);
// SoftmaxOutput, SoftmaxActivation, softmax_cross_entropy and their
// gradients (loss_kernels.cu).
void RegisterLossOps(mxplugin::Plugin& plugin);
// CTCLoss and its gradient (ctc_kernels.cu).
void RegisterCtcOps(mxplugin::Plugin& plugin);
// The subgraph property "cuda" and its op _cuda_fused_elemwise (NVRTC).
void RegisterFusion(mxplugin::Plugin& plugin);
// Fused kernels compiled since the plugin loaded.
int64_t FusedKernelCompiles();

}  // namespace mx_cuda

#endif  // MXCORE_BACKENDS_CUDA_CUDA_OPS_H_
