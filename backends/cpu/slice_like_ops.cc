// slice_like: data[0:like.shape[a]] on each listed axis (every axis of
// `like` when axes is empty), as MXNet's slice_like; its gradient writes
// the output gradient into zeros of data's shape (_backward_slice_like).
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "backends/cpu/grad_util.h"
#include "backends/cpu/kernel_util.h"
#include "base/error.h"

namespace mx {
namespace cpu {
namespace {

struct SliceLikeParam {
  TShape axes;
  static void Declare(ParamSchema<SliceLikeParam>* s) {
    s->Field("axes", &SliceLikeParam::axes)
        .Describe("Axes to slice (negative from the end); default all.");
  }
};

// Output shape of slicing `data` like `like`; throws on bad axes or an
// extent larger than data's.
TShape SliceLikeShape(const NodeAttrs& attrs, const TShape& data,
                      const TShape& like) {
  const TShape& axes = attrs.get<SliceLikeParam>().axes;
  TShape out = data;
  const auto take = [&](int a) {
    if (like[a] > data[a]) {
      throw ShapeError(absl::StrCat(
          OpLabel(attrs), ": input 1 (shape_like) has shape ", like.ToString(),
          ", larger than input 0 (data) ", data.ToString(), " on axis ", a));
    }
    out[a] = like[a];
  };
  if (!axes.ndim_known() || axes.ndim() == 0) {
    if (like.ndim() != data.ndim()) {
      throw ShapeError(
          absl::StrCat(OpLabel(attrs), ": input 0 (data) ", data.ToString(),
                       " and input 1 (shape_like) ", like.ToString(),
                       " need the same rank when axes is empty"));
    }
    for (int a = 0; a < data.ndim(); ++a) take(a);
    return out;
  }
  for (int64_t ax : axes) {
    const int a = data.CheckAxis(static_cast<int>(ax), OpLabel(attrs).c_str());
    like.CheckAxis(a, OpLabel(attrs).c_str());
    take(a);
  }
  return out;
}

void ForwardShape(const NodeAttrs& attrs, std::vector<TShape>* in,
                  std::vector<TShape>* out) {
  const TShape &d = (*in)[0], &like = (*in)[1];
  if (!d.is_known() || !like.is_known()) return;
  AssignShape(attrs, out, 0, SliceLikeShape(attrs, d, like), true);
}

// Copies the leading block of shape `small` between `big` (row-major) and
// `small`: gather (big -> small) or scatter-add into big.
template <bool kGather, typename T>
void Block(const TShape& big, const TShape& small, const T* src, T* dst,
           OpReqType req) {
  const std::vector<int64_t> strides = Strides(big);
  const int64_t n = small.Size();
  for (int64_t i = 0; i < n; ++i) {
    int64_t off = 0, rest = i;
    for (int d = small.ndim() - 1; d >= 0; --d) {
      off += (rest % small[d]) * strides[d];
      rest /= small[d];
    }
    if constexpr (kGather) {
      Assign(dst + i, req, src[off]);
    } else {
      Assign(dst + off, req, src[i]);
    }
  }
}

void SliceLikeCompute(const OpContext&, const NodeAttrs&,
                      const std::vector<TBlob>& in,
                      const std::vector<OpReqType>& req,
                      const std::vector<TBlob>& out) {
  if (req[0] == OpReqType::kNullOp) return;
  MX_DTYPE_SWITCH(in[0].dtype, T, {
    Block<true>(in[0].shape, out[0].shape, in[0].data<T>(), out[0].data<T>(),
                req[0]);
  });
}

MX_REGISTER_OP(slice_like)
    .Describe(
        "data cut to shape_like's extents on `axes` (all axes when empty), "
        "keeping the leading part.")
    .SetNumInputs(2)
    .SetInputNames({"data", "shape_like"})
    .SetParams<SliceLikeParam>()
    .SetInferShape(ForwardShape)
    .SetInferType([](const NodeAttrs& attrs, std::vector<DType>* in,
                     std::vector<DType>* out) {
      AssignType(attrs, out, 0, (*in)[0], true);
      AssignType(attrs, in, 0, (*out)[0], false);
    })
    .SetCompute(Context::kCPU, SliceLikeCompute);

// Inputs (out_grad, data); output: zeros of data's shape with out_grad in
// the leading block.
void SliceLikeBackwardCompute(const OpContext&, const NodeAttrs&,
                              const std::vector<TBlob>& in,
                              const std::vector<OpReqType>& req,
                              const std::vector<TBlob>& out) {
  if (req[0] == OpReqType::kNullOp) return;
  MX_DTYPE_SWITCH(out[0].dtype, T, {
    T* dst = out[0].data<T>();
    if (req[0] != OpReqType::kAddTo) {
      const int64_t n = out[0].Size();
      for (int64_t i = 0; i < n; ++i) dst[i] = T(0);
    }
    Block<false>(out[0].shape, in[0].shape, in[0].data<T>(), dst,
                 OpReqType::kAddTo);
  });
}

MX_REGISTER_OP(_backward_slice_like)
    .Describe(
        "Gradient of slice_like: (out_grad, data) -> zeros of data's shape "
        "with out_grad in the leading block.")
    .SetNumInputs(2)
    .SetInputNames({"out_grad", "data"})
    .SetParams<SliceLikeParam>()
    .SetInferShape([](const NodeAttrs& attrs, std::vector<TShape>* in,
                      std::vector<TShape>* out) {
      AssignShape(attrs, out, 0, (*in)[1], true);
      const TShape &g = (*in)[0], &d = (*in)[1];
      if (g.is_known() && d.is_known()) {
        if (g.ndim() != d.ndim()) {
          throw ShapeError(absl::StrCat(OpLabel(attrs), ": out_grad ",
                                        g.ToString(), " and data ",
                                        d.ToString(), " differ in rank"));
        }
        for (int a = 0; a < g.ndim(); ++a) {
          if (g[a] > d[a]) {
            throw ShapeError(absl::StrCat(OpLabel(attrs), ": out_grad ",
                                          g.ToString(), " exceeds data ",
                                          d.ToString()));
          }
        }
      }
    })
    // The kernel reads out_grad in data's dtype: they must agree.
    .SetInferType(SameType)
    .SetCompute(Context::kCPU, SliceLikeBackwardCompute);

[[maybe_unused]] const bool kGradientRegistered = [] {
  SetGradient(
      "slice_like", [](GradBuilder& b, const std::vector<NodeEntry>& g) {
        return std::vector<NodeEntry>{
            b.Op("_backward_slice_like", {g[0], b.x(0)}, b.n->attrs.dict),
            b.Op("zeros_like", {b.x(1)})};
      });
  return true;
}();

}  // namespace
}  // namespace cpu
}  // namespace mx
