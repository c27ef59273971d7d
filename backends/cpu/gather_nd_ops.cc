// gather_nd: out[y...] = data[indices[0, y...], ..., indices[M-1, y...],
// ...] for indices of shape (M, Y...), as MXNet's gather_nd (negative
// indices count from the end; others out of range are errors). The
// gradient (_backward_gather_nd) adds out_grad back at those positions.
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "backends/cpu/grad_util.h"
#include "backends/cpu/kernel_util.h"
#include "base/error.h"

namespace mx {
namespace cpu {
namespace {

TShape GatherNdShape(const NodeAttrs& attrs, const TShape& d,
                     const TShape& idx) {
  if (idx.ndim() < 1 || idx[0] < 1 || idx[0] > d.ndim()) {
    throw ShapeError(
        absl::StrCat(OpLabel(attrs), ": input 1 (indices) has shape ",
                     idx.ToString(), " but (M, ...) with 1 <= M <= ", d.ndim(),
                     " (the rank of data ", d.ToString(), ") is required"));
  }
  std::vector<int64_t> out(idx.begin() + 1, idx.end());
  for (int i = static_cast<int>(idx[0]); i < d.ndim(); ++i) out.push_back(d[i]);
  return TShape(out);
}

void ForwardShape(const NodeAttrs& attrs, std::vector<TShape>* in,
                  std::vector<TShape>* out) {
  const TShape &d = (*in)[0], &idx = (*in)[1];
  if (!d.ndim_known() || !idx.is_known()) return;
  AssignShape(attrs, out, 0, GatherNdShape(attrs, d, idx), true);
}

// Calls f(position k of Y, offset of the slice in data, slice size).
template <typename F>
void ForEachSlice(const NodeAttrs& attrs, const TBlob& data,
                  const TBlob& indices, F f) {
  const TShape& d = data.shape;
  const int64_t m = indices.shape[0];
  const int64_t count = m == 0 ? 0 : indices.Size() / m;
  const int64_t slice = d.ProdDims(static_cast<int>(m), d.ndim());
  const std::vector<int64_t> strides = Strides(d);
  MX_DTYPE_SWITCH(indices.dtype, I, {
    const I* ix = indices.data<I>();
    for (int64_t k = 0; k < count; ++k) {
      int64_t off = 0;
      for (int64_t j = 0; j < m; ++j) {
        const double v = static_cast<double>(ix[j * count + k]);
        const int64_t extent = d[static_cast<int>(j)];
        if (!(v >= -static_cast<double>(extent) &&
              v < static_cast<double>(extent))) {
          throw InvalidArgument(
              absl::StrCat(OpLabel(attrs), ": input 1 (indices) holds ", v,
                           " for axis ", j, " of data ", d.ToString()));
        }
        int64_t i = static_cast<int64_t>(v);
        if (i < 0) i += extent;
        off += i * strides[j];
      }
      f(k, off, slice);
    }
  });
}

void GatherNdCompute(const OpContext&, const NodeAttrs& attrs,
                     const std::vector<TBlob>& in,
                     const std::vector<OpReqType>& req,
                     const std::vector<TBlob>& out) {
  if (req[0] == OpReqType::kNullOp) return;
  MX_DTYPE_SWITCH(in[0].dtype, T, {
    const T* x = in[0].data<T>();
    T* y = out[0].data<T>();
    ForEachSlice(attrs, in[0], in[1], [&](int64_t k, int64_t off, int64_t n) {
      for (int64_t i = 0; i < n; ++i) Assign(y + k * n + i, req[0], x[off + i]);
    });
  });
}

MX_REGISTER_OP(gather_nd)
    .Describe(
        "Slices of data picked by the columns of indices (M, Y...): output "
        "(Y..., data.shape[M:]).")
    .SetNumInputs(2)
    .SetInputNames({"data", "indices"})
    .SetInferShape(ForwardShape)
    .SetInferType([](const NodeAttrs& attrs, std::vector<DType>* in,
                     std::vector<DType>* out) {
      AssignType(attrs, out, 0, (*in)[0], true);
      AssignType(attrs, in, 0, (*out)[0], false);
      if ((*in)[1] != DType::kUnknown) RequireNumeric(attrs, (*in)[1]);
    })
    .SetCompute(Context::kCPU, GatherNdCompute);

// Inputs (out_grad, indices, data); output data_grad.
void GatherNdBackwardCompute(const OpContext&, const NodeAttrs& attrs,
                             const std::vector<TBlob>& in,
                             const std::vector<OpReqType>& req,
                             const std::vector<TBlob>& out) {
  if (req[0] == OpReqType::kNullOp) return;
  MX_FLOAT_DTYPE_SWITCH(in[2].dtype, T, {
    using A = AccType<T>;
    const T* g = in[0].data<T>();
    std::vector<A> dx(static_cast<size_t>(in[2].Size()), A(0));
    ForEachSlice(attrs, in[2], in[1], [&](int64_t k, int64_t off, int64_t n) {
      for (int64_t i = 0; i < n; ++i)
        dx[off + i] += static_cast<A>(g[k * n + i]);
    });
    T* dst = out[0].data<T>();
    for (size_t i = 0; i < dx.size(); ++i) Assign(dst + i, req[0], dx[i]);
  });
}

MX_REGISTER_OP(_backward_gather_nd)
    .Describe("Gradient of gather_nd: (out_grad, indices, data) -> data_grad.")
    .SetNumInputs(3)
    .SetInputNames({"out_grad", "indices", "data"})
    .SetInferShape([](const NodeAttrs& attrs, std::vector<TShape>* in,
                      std::vector<TShape>* out) {
      AssignShape(attrs, out, 0, (*in)[2], true);
      std::vector<TShape> fwd_in{(*in)[2], (*in)[1]}, fwd_out{(*in)[0]};
      ForwardShape(attrs, &fwd_in, &fwd_out);
      AssignShape(attrs, in, 0, fwd_out[0], false);
    })
    .SetInferType([](const NodeAttrs& attrs, std::vector<DType>* in,
                     std::vector<DType>* out) {
      AssignType(attrs, in, 0, (*in)[2], false);
      AssignType(attrs, out, 0, (*in)[2], true);
    })
    .SetCompute(Context::kCPU, GatherNdBackwardCompute);

[[maybe_unused]] const bool kGradientRegistered = [] {
  SetGradient("gather_nd", [](GradBuilder& b, const std::vector<NodeEntry>& g) {
    return std::vector<NodeEntry>{
        b.Op("_backward_gather_nd", {g[0], b.x(1), b.x(0)}), NodeEntry{}};
  });
  return true;
}();

}  // namespace
}  // namespace cpu
}  // namespace mx
