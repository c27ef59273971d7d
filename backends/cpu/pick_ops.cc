// pick (MXNet's name): one element of `data` along an axis per position of
// `index`, whose shape is the output's: data with the axis removed (kept
// with length 1 under keepdims). Gluon's SoftmaxCrossEntropyLoss picks the
// label's log-probability with it. _backward_pick puts the gradient back
// at the picked positions, 0 elsewhere. The index gets no gradient.
//
// Indices may have any numeric dtype (floats truncate toward zero; NaN is
// 0); out-of-range ones are clipped to [0, n-1] (mode "clip", MXNet's
// default) or wrapped modulo n ("wrap").
#include <algorithm>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "backends/cpu/grad_util.h"
#include "backends/cpu/kernel_util.h"
#include "base/error.h"

namespace mx {
namespace cpu {
namespace {

struct PickParam {
  std::optional<int> axis = -1;
  bool keepdims = false;
  std::string mode = "clip";
  static void Declare(ParamSchema<PickParam>* s) {
    s->Field("axis", &PickParam::axis)
        .Describe("axis to pick along (negative counts from the end)");
    s->Field("keepdims", &PickParam::keepdims)
        .Describe("keep the picked axis with length 1");
    s->Field("mode", &PickParam::mode)
        .Choices({"clip", "wrap"})
        .Describe("out-of-range indices: clip to [0, n-1] or wrap modulo n");
  }
};

// The picked axis of `data`; axis=None is MXNet's unsupported case too.
int PickAxis(const NodeAttrs& attrs, const TShape& data) {
  const PickParam& p = attrs.get<PickParam>();
  if (!p.axis) {
    throw NotImplemented(
        absl::StrCat(OpLabel(attrs),
                     ": axis=None (picking from the flattened array) is "
                     "not supported, as in MXNet; give an axis"));
  }
  return data.CheckAxis(*p.axis, OpLabel(attrs).c_str());
}

// data's shape without the picked axis (length 1 with keepdims), which
// the output and the index have; ShapeError where nothing can be picked.
TShape PickedShape(const NodeAttrs& attrs, const TShape& data) {
  if (data.ndim() < 1) {
    throw ShapeError(absl::StrCat(OpLabel(attrs), ": data has shape ",
                                  data.ToString(),
                                  " but at least 1 axis is required"));
  }
  const int axis = PickAxis(attrs, data);
  std::vector<int64_t> dims(data.begin(), data.end());
  if (attrs.get<PickParam>().keepdims) {
    dims[axis] = 1;
  } else {
    dims.erase(dims.begin() + axis);
  }
  const TShape picked(dims);
  if (data[axis] == 0 && picked.Size() > 0) {
    throw ShapeError(absl::StrCat(OpLabel(attrs), ": cannot pick from axis ",
                                  axis, " of length 0 (data has shape ",
                                  data.ToString(), ")"));
  }
  return picked;
}

void PickShape(const NodeAttrs& attrs, std::vector<TShape>* in,
               std::vector<TShape>* out) {
  const TShape& data = (*in)[0];
  if (!data.ndim_known()) return;
  const TShape picked = PickedShape(attrs, data);
  AssignShape(attrs, out, 0, picked, true);
  AssignShape(attrs, in, 1, picked, false);
}

void PickType(const NodeAttrs& attrs, std::vector<DType>* in,
              std::vector<DType>* out) {
  RequireIndexType(attrs, (*in)[1], 1, "index");
  AssignType(attrs, out, 0, (*in)[0], true);
  AssignType(attrs, in, 0, (*out)[0], false);
}

// data viewed as (outer, n, inner); the index and output as (outer, inner).
struct PickGeometry {
  int64_t outer = 1, n = 1, inner = 1;
  bool wrap = false;
};

PickGeometry GeometryOf(const NodeAttrs& attrs, const TShape& data) {
  const int axis = PickAxis(attrs, data);
  PickGeometry g;
  g.outer = data.ProdDims(0, axis);
  g.n = data[axis];
  g.inner = data.ProdDims(axis + 1, data.ndim());
  g.wrap = attrs.get<PickParam>().mode == "wrap";
  return g;
}

// An index as a position in [0, n) (n > 0).
template <typename I>
inline int64_t Position(I raw, const PickGeometry& g) {
  return ClipOrWrapIndex(ConvertElement<int64_t>(raw), g.n, g.wrap);
}

constexpr int64_t kGrain = 1 << 14;

void PickCompute(const OpContext&, const NodeAttrs& attrs,
                 const std::vector<TBlob>& in,
                 const std::vector<OpReqType>& req,
                 const std::vector<TBlob>& out) {
  if (req[0] == OpReqType::kNullOp || out[0].Size() == 0) return;
  const PickGeometry g = GeometryOf(attrs, in[0].shape);
  const OpReqType r = req[0];
  MX_DTYPE_SWITCH(in[0].dtype, T, {
    const T* x = in[0].data<T>();
    T* y = out[0].data<T>();
    MX_DTYPE_SWITCH(in[1].dtype, I, {
      const I* index = in[1].data<I>();
      ParallelFor(g.outer * g.inner, kGrain, [&](int64_t b, int64_t e) {
        for (int64_t k = b; k < e; ++k) {
          const int64_t o = k / g.inner, t = k % g.inner;
          Assign(y + k, r, x[(o * g.n + Position(index[k], g)) * g.inner + t]);
        }
      });
    });
  });
}

MX_REGISTER_OP(pick)
    .Describe(
        "The element of data along `axis` at each index: out[..., i, ...] = "
        "data[..., index[..., i, ...], ...] (the axis removed, or kept with "
        "keepdims); indices clipped or wrapped.")
    .SetNumInputs(2)
    .SetInputNames({"data", "index"})
    .SetParams<PickParam>()
    .SetInferShape(PickShape)
    .SetInferType(PickType)
    .SetCompute(Context::kCPU, PickCompute);

// Inputs (out_grad, index, data): zeros of data's shape with each
// out_grad element at its picked position (positions are distinct per
// output element, so nothing adds up).
void PickBackwardCompute(const OpContext&, const NodeAttrs& attrs,
                         const std::vector<TBlob>& in,
                         const std::vector<OpReqType>& req,
                         const std::vector<TBlob>& out) {
  const OpReqType r = req[0];
  if (r == OpReqType::kNullOp || out[0].Size() == 0) return;
  const PickGeometry g = GeometryOf(attrs, out[0].shape);
  MX_DTYPE_SWITCH(out[0].dtype, T, {
    const T* og = in[0].data<T>();
    T* dx = out[0].data<T>();
    MX_DTYPE_SWITCH(in[1].dtype, I, {
      const I* index = in[1].data<I>();
      // Rows of `outer` are disjoint, so threads write without sharing.
      ParallelFor(
          g.outer, std::max<int64_t>(1, kGrain / (g.n * g.inner)),
          [&](int64_t b, int64_t e) {
            if (r != OpReqType::kAddTo) {
              std::fill(dx + b * g.n * g.inner, dx + e * g.n * g.inner, T{});
            }
            for (int64_t o = b; o < e; ++o) {
              for (int64_t t = 0; t < g.inner; ++t) {
                const int64_t k = o * g.inner + t;
                Assign(dx + (o * g.n + Position(index[k], g)) * g.inner + t,
                       OpReqType::kAddTo, og[k]);
              }
            }
          });
    });
  });
}

MX_REGISTER_OP(_backward_pick)
    .Describe(
        "Gradient of pick: (out_grad, index, data) -> zeros of data's shape "
        "with out_grad at the picked positions.")
    .SetNumInputs(3)
    .SetInputNames({"out_grad", "index", "data"})
    .SetParams<PickParam>()
    .SetInferShape([](const NodeAttrs& attrs, std::vector<TShape>* in,
                      std::vector<TShape>* out) {
      AssignShape(attrs, out, 0, (*in)[2], true);
      AssignShape(attrs, in, 2, (*out)[0], false);
      const TShape& data = (*in)[2];
      if (!data.ndim_known()) return;
      const TShape picked = PickedShape(attrs, data);
      AssignShape(attrs, in, 0, picked, false);
      AssignShape(attrs, in, 1, picked, false);
    })
    .SetInferType([](const NodeAttrs& attrs, std::vector<DType>* in,
                     std::vector<DType>* out) {
      std::vector<DType> pick_in{(*in)[0], (*in)[1]};
      PickType(attrs, &pick_in, out);
      AssignType(attrs, in, 0, (*out)[0], false);
      AssignType(attrs, in, 2, (*out)[0], false);
    })
    .SetCompute(Context::kCPU, PickBackwardCompute);

[[maybe_unused]] const bool kGradientsRegistered = [] {
  using B = GradBuilder;
  using E = std::vector<NodeEntry>;
  SetGradient("pick", [](B& b, const E& g) {
    return E{b.Op("_backward_pick", {g[0], b.x(1), b.x(0)}, b.n->attrs.dict),
             NodeEntry{}};
  });
  // Linear in out_grad: its gradient picks the incoming one again.
  SetGradient("_backward_pick", [](B& b, const E& g) {
    return E{b.Op("pick", {g[0], b.x(1)}, b.n->attrs.dict), NodeEntry{},
             NodeEntry{}};
  });
  return true;
}();

}  // namespace
}  // namespace cpu
}  // namespace mx
