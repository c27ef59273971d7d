// _contrib_MultiBoxDetection, as MXNet's (SSD's decoding): for each anchor
// a of each batch item, the best non-background class (class 0 is the
// background) of cls_prob (B, classes, A) and its score; anchors scoring
// at least `threshold` become rows [class - 1, score, x0, y0, x1, y1] with
// the box decoded from loc_pred (B, A * 4) against the anchor (1, A, 4)
// (mx_math::DecodeSsdBox). Those rows come first in anchor order; when
// 0 < nms_threshold <= 1 they are stably sorted by descending score, the
// nms_topk best kept, and greedy suppression sets the class of a row to -1
// where it overlaps (IoU >= nms_threshold) a better kept row of its class
// (any class with force_suppress). Exactly MXNet's layout: rows past the
// detections are all -1; rows past nms_topk keep their unsorted values
// with class -1. The gradient is zero, as MXNet's.
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

struct MultiBoxDetectionParam {
  bool clip = true;
  double threshold = 0.01;
  int64_t background_id = 0;
  double nms_threshold = 0.5;
  bool force_suppress = false;
  FloatTuple variances = {0.1, 0.1, 0.2, 0.2};
  int64_t nms_topk = -1;
  static void Declare(ParamSchema<MultiBoxDetectionParam>* s) {
    s->Field("clip", &MultiBoxDetectionParam::clip)
        .Describe("Clamp the boxes to [0, 1].");
    s->Field("threshold", &MultiBoxDetectionParam::threshold)
        .Describe("Lowest score of a detection.");
    s->Field("background_id", &MultiBoxDetectionParam::background_id)
        .Describe("Must be 0: MXNet's kernels take class 0 as the background.");
    s->Field("nms_threshold", &MultiBoxDetectionParam::nms_threshold)
        .Describe("IoU suppressing a worse box; outside (0, 1]: no NMS.");
    s->Field("force_suppress", &MultiBoxDetectionParam::force_suppress)
        .Describe("Suppress across classes.");
    s->Field("variances", &MultiBoxDetectionParam::variances)
        .Describe("(vx, vy, vw, vh) scaling loc_pred's offsets.");
    s->Field("nms_topk", &MultiBoxDetectionParam::nms_topk)
        .Describe("Detections kept before NMS; <= 0: all.");
  }
};

void CheckParams(const NodeAttrs& attrs) {
  const MultiBoxDetectionParam& p = attrs.get<MultiBoxDetectionParam>();
  if (p.variances.size() != 4) {
    throw InvalidArgument(absl::StrCat(OpLabel(attrs), ": variances has ",
                                       p.variances.size(),
                                       " values; 4 (vx, vy, vw, vh) needed"));
  }
  if (p.background_id != 0) {
    // MXNet accepts other values and still treats class 0 as background;
    // refusing them is better than answering a different question.
    throw NotImplemented(absl::StrCat(
        OpLabel(attrs), ": background_id=", p.background_id,
        "; MXNet's MultiBoxDetection always takes class 0 as the background"));
  }
}

void MultiBoxDetectionShape(const NodeAttrs& attrs, std::vector<TShape>* in,
                            std::vector<TShape>* out) {
  CheckParams(attrs);
  const TShape &c = (*in)[0], &l = (*in)[1], &a = (*in)[2];
  const auto need = [&](int i, const char* name, const TShape& s, int ndim) {
    if (s.ndim_known() && s.ndim() != ndim) {
      throw ShapeError(absl::StrCat(OpLabel(attrs), ": input ", i, " (", name,
                                    ") has shape ", s.ToString(), "; ", ndim,
                                    " dims needed"));
    }
  };
  need(0, "cls_prob", c, 3);
  need(1, "loc_pred", l, 2);
  need(2, "anchor", a, 3);
  if (!c.is_known() || !l.is_known() || !a.is_known()) return;
  if (a[0] < 1 || a[1] < 1 || a[2] != 4 || c[2] != a[1] || l[0] != c[0] ||
      l[1] != c[2] * 4) {
    throw ShapeError(absl::StrCat(
        OpLabel(attrs), ": cls_prob ", c.ToString(), ", loc_pred ",
        l.ToString(), " and anchor ", a.ToString(),
        " must be (B, classes, A), (B, A * 4) and (1, A, 4) with A >= 1"));
  }
  AssignShape(attrs, out, 0, TShape{c[0], c[2], 6}, true);
}

// One batch item into `rows` (A x 6, filled with -1 by the caller).
template <typename T>
void DetectOne(const MultiBoxDetectionParam& p, int64_t classes,
               int64_t anchors, const T* cls, const T* loc, const T* anchor,
               std::vector<T>* rows) {
  using A = AccType<T>;
  // MXNet's parameters are floats.
  const A threshold = static_cast<A>(static_cast<float>(p.threshold));
  A variances[4];
  for (int k = 0; k < 4; ++k) {
    variances[k] = static_cast<A>(static_cast<float>(p.variances[k]));
  }
  T* out = rows->data();
  int64_t valid = 0;
  for (int64_t i = 0; i < anchors; ++i) {
    A score = -1;
    int64_t id = 0;
    for (int64_t j = 1; j < classes; ++j) {
      const A v = static_cast<A>(cls[j * anchors + i]);
      if (v > score) {
        score = v;
        id = j;
      }
    }
    if (id == 0 || score < threshold) continue;
    T* row = out + valid * 6;
    row[0] = static_cast<T>(static_cast<A>(id - 1));
    row[1] = static_cast<T>(score);
    A box[4], anchor_box[4], offsets[4];
    for (int k = 0; k < 4; ++k) {
      anchor_box[k] = static_cast<A>(anchor[i * 4 + k]);
      offsets[k] = static_cast<A>(loc[i * 4 + k]);
    }
    mx_math::DecodeSsdBox(anchor_box, offsets, variances, p.clip, box);
    for (int k = 0; k < 4; ++k) row[2 + k] = static_cast<T>(box[k]);
    ++valid;
  }
  // As MXNet's (and the CUDA kernel's), the float parameter decides.
  const float nms_threshold = static_cast<float>(p.nms_threshold);
  if (valid == 0 || !(nms_threshold > 0 && nms_threshold <= 1)) return;
  const std::vector<T> unsorted(out, out + valid * 6);
  std::vector<int64_t> order(valid);
  for (int64_t r = 0; r < valid; ++r) order[r] = r;
  std::stable_sort(order.begin(), order.end(), [&](int64_t x, int64_t y) {
    return static_cast<A>(unsorted[x * 6 + 1]) >
           static_cast<A>(unsorted[y * 6 + 1]);
  });
  int64_t keep = valid;
  if (p.nms_topk > 0 && p.nms_topk < keep) keep = p.nms_topk;
  for (int64_t r = keep; r < valid; ++r) out[r * 6] = static_cast<T>(-1.0f);
  for (int64_t r = 0; r < keep; ++r) {
    std::copy_n(unsorted.begin() + order[r] * 6, 6, out + r * 6);
  }

  const auto box_of = [&](int64_t r, A* b) {
    for (int k = 0; k < 4; ++k) b[k] = static_cast<A>(out[r * 6 + 2 + k]);
  };
  for (int64_t r = 0; r < keep; ++r) {
    const A id_r = static_cast<A>(out[r * 6]);
    if (id_r < 0) continue;
    A br[4], bq[4];
    box_of(r, br);
    for (int64_t q = r + 1; q < keep; ++q) {
      const A id_q = static_cast<A>(out[q * 6]);
      if (id_q < 0 || (!p.force_suppress && id_q != id_r)) continue;
      box_of(q, bq);
      if (mx_math::SsdOverlap(br, bq) >= static_cast<A>(nms_threshold)) {
        out[q * 6] = static_cast<T>(-1.0f);
      }
    }
  }
}

void MultiBoxDetectionCompute(const OpContext&, const NodeAttrs& attrs,
                              const std::vector<TBlob>& in,
                              const std::vector<OpReqType>& req,
                              const std::vector<TBlob>& out) {
  if (req[0] == OpReqType::kNullOp) return;
  const MultiBoxDetectionParam& p = attrs.get<MultiBoxDetectionParam>();
  const int64_t batches = in[0].shape[0], classes = in[0].shape[1];
  const int64_t anchors = in[0].shape[2];
  MX_FLOAT_DTYPE_SWITCH(out[0].dtype, T, {
    using A = AccType<T>;
    const T* cls = in[0].data<T>();
    const T* loc = in[1].data<T>();
    const T* anchor = in[2].data<T>();  // The first anchor set, as MXNet.
    T* y = out[0].data<T>();
    ParallelFor(batches, 1, [&](int64_t b, int64_t e) {
      std::vector<T> rows(anchors * 6);
      for (int64_t n = b; n < e; ++n) {
        std::fill(rows.begin(), rows.end(), static_cast<T>(-1.0f));
        DetectOne(p, classes, anchors, cls + n * classes * anchors,
                  loc + n * anchors * 4, anchor, &rows);
        T* dst = y + n * anchors * 6;
        for (int64_t k = 0; k < anchors * 6; ++k) {
          Assign(dst + k, req[0], static_cast<A>(rows[k]));
        }
      }
    });
  });
}

MX_REGISTER_OP(_contrib_MultiBoxDetection)
    .Describe(
        "SSD detections from class probabilities, box offsets and anchors: "
        "(B, A, 6) rows [class, score, x0, y0, x1, y1], -1 where none "
        "(MXNet's MultiBoxDetection, NMS included).")
    .SetNumInputs(3)
    .SetInputNames({"cls_prob", "loc_pred", "anchor"})
    .SetParams<MultiBoxDetectionParam>()
    .SetInferShape(MultiBoxDetectionShape)
    .SetInferType([](const NodeAttrs& attrs, std::vector<DType>* in,
                     std::vector<DType>* out) {
      SameFloatType(attrs, in, out);
    })
    .SetCompute(Context::kCPU, MultiBoxDetectionCompute)
    .AddAlias("_npx_multibox_detection");

[[maybe_unused]] const bool kGradientRegistered = [] {
  SetZeroGrad("_contrib_MultiBoxDetection");
  return true;
}();

}  // namespace
}  // namespace cpu
}  // namespace mx
