// GPU kernels for the dynamic-shape ops flatnonzero, _npx_nonzero,
// boolean_mask and _npi_advanced_indexing (and the gradients of the last
// two): the non-zero positions are counted on the GPU,
// the count is read back (the kernel's one stream synchronization: the
// output cannot be allocated before it is known), and the output is
// allocated through the plugin ABI's alloc_output and filled.
#include <string>
#include <vector>

#include "backends/cuda/cuda_ops.h"
#include "backends/cuda/cuda_util.h"
#include "backends/cuda/dynamic_kernels.h"
#include "backends/cuda/index_kernels.h"

namespace mx_cuda {
namespace {

using mxplugin::Attrs;
using mxplugin::Error;
using mxplugin::KernelContext;
using mxplugin::Tensor;
using mxplugin::Tensors;

// Positions (inclusive prefix counts) of index's non-zero elements, in the
// thread's workspace, and how many there are.
struct NonZeros {
  const int64_t* positions = nullptr;
  int64_t count = 0;
};

NonZeros CountNonZeros(const std::string& op, const KernelContext& ctx,
                       const Tensor& index) {
  const int64_t n = index.size();
  NonZeros nz;
  if (n == 0) return nz;
  cudaStream_t s = StreamOf(ctx);
  const size_t pos_bytes = static_cast<size_t>(n) * sizeof(int64_t);
  char* ws =
      static_cast<char*>(Workspace(ctx, pos_bytes + NonZeroScratchBytes(n)));
  int64_t* positions = reinterpret_cast<int64_t*>(ws);
  CheckLaunch(op,
              NonZeroPositions(index.dtype(), n, index.data<void>(), positions,
                               ws + pos_bytes, s),
              index.dtype());
  ReadBack(op + ": counting", s, positions + n - 1, &nz.count,
           sizeof(nz.count));
  nz.positions = positions;
  return nz;
}

void FlatNonzero(const KernelContext& ctx, const Attrs&, Tensors in,
                 const int32_t*, Tensors) {
  const std::string op = "flatnonzero";
  const NonZeros nz = CountNonZeros(op, ctx, in[0]);
  const Tensor y = ctx.AllocOutput(0, {nz.count});
  if (nz.count == 0) return;
  CheckLaunch(
      op,
      ScatterNonZeroIndices(in[0].dtype(), in[0].size(), in[0].data<void>(),
                            nz.positions, y.data<int64_t>(), StreamOf(ctx)),
      in[0].dtype());
}

// _npx_nonzero: (count, ndim) int64 coordinates.
void Nonzero(const KernelContext& ctx, const Attrs&, Tensors in, const int32_t*,
             Tensors) {
  const std::string op = "_npx_nonzero";
  const Tensor x = in[0];
  if (x.ndim() > kMaxNonZeroDims) {
    Unsupported(op, "input of rank " + std::to_string(x.ndim()));
  }
  const NonZeros nz = CountNonZeros(op, ctx, x);
  const Tensor y = ctx.AllocOutput(0, {nz.count, x.ndim()});
  if (nz.count == 0 || x.ndim() == 0) return;
  NonZeroShape shape;
  shape.ndim = x.ndim();
  for (int d = 0; d < x.ndim(); ++d) shape.dims[d] = x.dim(d);
  CheckLaunch(
      op,
      ScatterNonZeroCoords(x.dtype(), x.size(), x.data<void>(), nz.positions,
                           shape, y.data<int64_t>(), StreamOf(ctx)),
      x.dtype());
}

// boolean_mask's kernel, also _npi_advanced_indexing's with a bool index.
void RunBooleanMask(const std::string& op, const KernelContext& ctx,
                    const Tensor& data, const Tensor& index) {
  if (data.ndim() == 0 || index.ndim() != 1 || index.dim(0) != data.dim(0)) {
    throw Error(MX_STATUS_SHAPE_ERROR,
                op + ": index must be 1-D with data's first extent");
  }
  const NonZeros nz = CountNonZeros(op, ctx, index);
  std::vector<int64_t> shape = data.shape();
  shape[0] = nz.count;
  const Tensor y = ctx.AllocOutput(0, shape);
  const int64_t rows = data.dim(0);
  const int64_t row_bytes =
      rows == 0 ? 0 : static_cast<int64_t>(ByteSize(data)) / rows;
  CheckLaunch(op,
              GatherKeptRows(index.dtype(), rows, row_bytes, index.data<void>(),
                             nz.positions, data.data<void>(), y.data<void>(),
                             StreamOf(ctx)),
              index.dtype());
}

void BooleanMask(const KernelContext& ctx, const Attrs& attrs, Tensors in,
                 const int32_t*, Tensors) {
  const std::string op = "boolean_mask";
  if (attrs.Get("axis", "0") != "0") Unsupported(op, "axis other than 0");
  RunBooleanMask(op, ctx, in[0], in[1]);
}

// boolean_mask's gradient (ograd, data, index) -> data-shaped gradient,
// also _npi_advanced_indexing's with a bool index.
void RunBooleanMaskBackward(const std::string& op, const KernelContext& ctx,
                            const Tensor& g, const Tensor& index, int32_t req,
                            const Tensor& dx) {
  if (req == MX_REQ_NULL) return;
  RequireNumeric(op, dx);
  const NonZeros nz = CountNonZeros(op, ctx, index);
  const int64_t rows = dx.ndim() == 0 ? 0 : dx.dim(0);
  const int64_t row = rows == 0 ? 0 : dx.size() / rows;
  // The kernel reads ograd's row k for the k-th kept row: check it has
  // exactly that many rows of that length.
  if (dx.ndim() == 0 || index.size() != rows || g.ndim() != dx.ndim() ||
      g.dim(0) != nz.count || g.size() != nz.count * row) {
    throw Error(MX_STATUS_SHAPE_ERROR,
                op + ": ograd's rows do not match the rows the mask keeps");
  }
  CheckLaunch(
      op,
      ScatterKeptRows(dx.dtype(), index.dtype(), rows, row, index.data<void>(),
                      nz.positions, g.data<void>(), dx.data<void>(),
                      req == MX_REQ_ADD, StreamOf(ctx)),
      dx.dtype());
}

void BooleanMaskBackward(const KernelContext& ctx, const Attrs&, Tensors in,
                         const int32_t* req, Tensors out) {
  RunBooleanMaskBackward("_backward_boolean_mask", ctx, in[0], in[2], req[0],
                         out[0]);
}

// _npi_advanced_indexing: a bool index as boolean_mask; integer indices
// take rows of data (take's kernel along axis 0 in raise mode: negative
// indices count from the end, others out of range are flagged).
TakeShape RowTake(const std::string& op, const Tensor& data,
                  const Tensor& index) {
  if (data.ndim() == 0) {
    throw Error(MX_STATUS_SHAPE_ERROR, op + ": data is 0-d");
  }
  TakeShape s;
  s.outer = 1;
  s.n = data.dim(0);
  s.m = index.size();
  s.inner = Prod(data, 1, data.ndim());
  return s;
}

const char kRowRangeWhy[] =
    "input 1 (indices) holds an index out of range for axis 0 of data";

void AdvancedIndexing(const KernelContext& ctx, const Attrs&, Tensors in,
                      const int32_t*, Tensors) {
  const std::string op = "_npi_advanced_indexing";
  const Tensor data = in[0], index = in[1];
  if (index.dtype() == MX_DTYPE_BOOL)
    return RunBooleanMask(op, ctx, data, index);
  const TakeShape s = RowTake(op, data, index);
  std::vector<int64_t> shape = index.shape();
  for (int d = 1; d < data.ndim(); ++d) shape.push_back(data.dim(d));
  const Tensor y = ctx.AllocOutput(0, shape);
  int* bad = FlagAndScratch(ctx, op, 0, nullptr);
  CheckLaunch(op,
              LaunchTake(data.dtype(), index.dtype(), s, TakeMode::kRaise,
                         data.data<void>(), index.data<void>(), y.data<void>(),
                         MX_REQ_WRITE, bad, StreamOf(ctx)),
              data.dtype());
  CheckFlag(ctx, op, bad, kRowRangeWhy);
}

// (ograd, data, indices) -> data-shaped gradient.
void AdvancedIndexingBackward(const KernelContext& ctx, const Attrs&,
                              Tensors in, const int32_t* req, Tensors out) {
  const std::string op = "_backward_np_advanced_indexing";
  const Tensor g = in[0], index = in[2], dx = out[0];
  if (index.dtype() == MX_DTYPE_BOOL) {
    return RunBooleanMaskBackward(op, ctx, g, index, req[0], dx);
  }
  if (req[0] == MX_REQ_NULL) return;
  const TakeShape s = RowTake(op, dx, index);
  if (g.size() != s.m * s.inner) {
    throw Error(MX_STATUS_SHAPE_ERROR,
                op + ": ograd's size is not the rows the indices pick");
  }
  void* scratch = nullptr;
  int* bad = FlagAndScratch(ctx, op, IndexScratchBytes(dx.dtype(), dx.size()),
                            &scratch);
  CheckLaunch(
      op,
      LaunchTakeBackward(dx.dtype(), index.dtype(), s, TakeMode::kRaise,
                         g.data<void>(), index.data<void>(), dx.data<void>(),
                         req[0], bad, scratch, StreamOf(ctx)),
      dx.dtype());
  CheckFlag(ctx, op, bad, kRowRangeWhy);
}

}  // namespace

void RegisterDynamicOps(mxplugin::Plugin& plugin) {
  RegisterGpuKernel(plugin, "flatnonzero", FlatNonzero);
  RegisterGpuKernel(plugin, "_npx_nonzero", Nonzero);
  RegisterGpuKernel(plugin, "boolean_mask", BooleanMask);
  RegisterGpuKernel(plugin, "_backward_boolean_mask", BooleanMaskBackward);
  RegisterGpuKernel(plugin, "_npi_advanced_indexing", AdvancedIndexing);
  RegisterGpuKernel(plugin, "_backward_np_advanced_indexing",
                    AdvancedIndexingBackward);
}

}  // namespace mx_cuda
