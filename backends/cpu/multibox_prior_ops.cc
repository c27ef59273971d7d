// _contrib_MultiBoxPrior, as MXNet's (SSD): the anchor boxes of a feature
// map, (1, H * W * A, 4) as (xmin, ymin, xmax, ymax) in [0, 1] image
// coordinates. At each cell centre ((r + offsets[0]) * step_y,
// (c + offsets[1]) * step_x): every size with the first ratio, then the
// first size with every other ratio (A = sizes + ratios - 1); a box of size
// s and ratio q has half-width s * H / W * sqrt(q) / 2 and half-height
// s / sqrt(q) / 2. Steps default to 1 / H and 1 / W; clip clamps to
// [0, 1]. Only data's shape is read: the gradient is zero.
#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "backends/common/mxnet_geometry.h"
#include "backends/cpu/grad_util.h"
#include "backends/cpu/kernel_util.h"
#include "base/error.h"

namespace mx {
namespace cpu {
namespace {

struct MultiBoxPriorParam {
  FloatTuple sizes = {1};
  FloatTuple ratios = {1};
  bool clip = false;
  FloatTuple steps = {-1, -1};
  FloatTuple offsets = {0.5, 0.5};
  static void Declare(ParamSchema<MultiBoxPriorParam>* s) {
    s->Field("sizes", &MultiBoxPriorParam::sizes)
        .Describe("box sizes, fractions of the image");
    s->Field("ratios", &MultiBoxPriorParam::ratios)
        .Describe("box aspect ratios (width / height)");
    s->Field("clip", &MultiBoxPriorParam::clip)
        .Describe("clamp the boxes to [0, 1]");
    s->Field("steps", &MultiBoxPriorParam::steps)
        .Describe("(y, x) cell size; <= 0: 1 / the feature map's extent");
    s->Field("offsets", &MultiBoxPriorParam::offsets)
        .Describe("(y, x) of the centre within a cell");
  }
};

// The anchors per cell; throws on empty or bad lists.
int64_t AnchorsPerCell(const NodeAttrs& attrs) {
  const MultiBoxPriorParam& p = attrs.get<MultiBoxPriorParam>();
  const std::string label = OpLabel(attrs);
  if (p.sizes.empty() || p.ratios.empty() || p.steps.size() != 2 ||
      p.offsets.size() != 2) {
    throw InvalidArgument(
        absl::StrCat(label,
                     ": sizes and ratios need at least one value, steps and "
                     "offsets two"));
  }
  for (double v : p.sizes) {
    if (!(v > 0) || !std::isfinite(v)) {
      throw InvalidArgument(
          absl::StrCat(label, ": sizes must be positive, got ", v));
    }
  }
  for (double v : p.ratios) {
    if (!(v > 0) || !std::isfinite(v)) {
      throw InvalidArgument(
          absl::StrCat(label, ": ratios must be positive, got ", v));
    }
  }
  return static_cast<int64_t>(p.sizes.size() + p.ratios.size() - 1);
}

void MultiBoxPriorShape(const NodeAttrs& attrs, std::vector<TShape>* in,
                        std::vector<TShape>* out) {
  const int64_t anchors = AnchorsPerCell(attrs);
  const TShape& d = (*in)[0];
  if (!d.ndim_known()) return;
  if (d.ndim() != 4) {
    throw ShapeError(absl::StrCat(OpLabel(attrs), ": input 0 (data) has shape ",
                                  d.ToString(), "; NCHW is required"));
  }
  if (!d.is_known()) return;
  AssignShape(attrs, out, 0, TShape{1, d[2] * d[3] * anchors, 4}, true);
}

void MultiBoxPriorCompute(const OpContext&, const NodeAttrs& attrs,
                          const std::vector<TBlob>& in,
                          const std::vector<OpReqType>& req,
                          const std::vector<TBlob>& out) {
  const MultiBoxPriorParam& p = attrs.get<MultiBoxPriorParam>();
  const int64_t h = in[0].shape[2], w = in[0].shape[3];
  const int64_t anchors = AnchorsPerCell(attrs);
  const double step_y = p.steps[0] > 0 ? p.steps[0] : 1.0 / h;
  const double step_x = p.steps[1] > 0 ? p.steps[1] : 1.0 / w;
  // Half extents of the cell's anchors, the same at every cell.
  std::vector<mx_math::AnchorHalfExtent> half;
  for (int64_t a = 0; a < anchors; ++a) {
    half.push_back(mx_math::AnchorHalfExtentOf(
        p.sizes.data(), static_cast<int64_t>(p.sizes.size()), p.ratios.data(),
        a, h, w));
  }
  MX_FLOAT_DTYPE_SWITCH(out[0].dtype, T, {
    using A = AccType<T>;
    T* y = out[0].data<T>();
    ParallelFor(h * w, 64, [&](int64_t b, int64_t e) {
      for (int64_t cell = b; cell < e; ++cell) {
        const double cy = (cell / w + p.offsets[0]) * step_y;
        const double cx = (cell % w + p.offsets[1]) * step_x;
        for (int64_t a = 0; a < anchors; ++a) {
          const double box[4] = {cx - half[a].w, cy - half[a].h, cx + half[a].w,
                                 cy + half[a].h};
          T* dst = y + (cell * anchors + a) * 4;
          for (int k = 0; k < 4; ++k) {
            const double v = p.clip ? std::clamp(box[k], 0.0, 1.0) : box[k];
            Assign(dst + k, req[0], static_cast<A>(v));
          }
        }
      }
    });
  });
}

MX_REGISTER_OP(_contrib_MultiBoxPrior)
    .Describe(
        "SSD anchor boxes of a feature map: (1, H*W*(sizes+ratios-1), 4) "
        "corners in [0, 1], as MXNet's MultiBoxPrior.")
    .SetNumInputs(1)
    .SetInputNames({"data"})
    .SetParams<MultiBoxPriorParam>()
    .SetInferShape(MultiBoxPriorShape)
    .SetInferType([](const NodeAttrs& attrs, std::vector<DType>* in,
                     std::vector<DType>* out) {
      AssignType(attrs, out, 0, (*in)[0], true);
      if ((*in)[0] != DType::kUnknown) RequireFloat(attrs, (*in)[0]);
    })
    .SetCompute(Context::kCPU, MultiBoxPriorCompute)
    .AddAlias("_contrib_multibox_prior");

[[maybe_unused]] const bool kGradientRegistered = [] {
  SetZeroGrad("_contrib_MultiBoxPrior");
  return true;
}();

}  // namespace
}  // namespace cpu
}  // namespace mx
