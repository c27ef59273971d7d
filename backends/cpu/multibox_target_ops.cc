// _contrib_MultiBoxTarget, as MXNet's (SSD's training targets): anchors
// (1, A, 4), labels (B, M, >= 5) rows [class, x0, y0, x1, y1] (a class of
// -1 ends an image's list; the rest of that row must be -1 too) and class
// predictions (B, C, A) give loc_target and loc_mask (B, A * 4) and
// cls_target (B, A). Per image: each ground truth in turn takes the free
// anchor it overlaps most (the best remaining pair first, IoU > 1e-6);
// then, with overlap_threshold > 0, every other anchor takes its best
// ground truth and is positive above the threshold. Positives get class
// + 1, mask 1 and the encoded box (mx_math::EncodeSsdBox). With
// negative_mining_ratio > 0, ratio x positives of the anchors overlapping
// less than negative_mining_thresh and least confident of the background
// become negatives (class 0); without, all non-positives do. The rest keep
// ignore_label, as does every anchor of an image without ground truth.
// Matching compares floats, as MXNet's. The gradient is zero.
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

struct MultiBoxTargetParam {
  double overlap_threshold = 0.5;
  double ignore_label = -1;
  double negative_mining_ratio = -1;
  double negative_mining_thresh = 0.5;
  int64_t minimum_negative_samples = 0;
  FloatTuple variances = {0.1, 0.1, 0.2, 0.2};
  static void Declare(ParamSchema<MultiBoxTargetParam>* s) {
    s->Field("overlap_threshold", &MultiBoxTargetParam::overlap_threshold)
        .Describe("IoU above which an anchor matches a ground truth.");
    s->Field("ignore_label", &MultiBoxTargetParam::ignore_label)
        .Describe("cls_target of anchors neither positive nor negative.");
    s->Field("negative_mining_ratio",
             &MultiBoxTargetParam::negative_mining_ratio)
        .Describe("Negatives per positive; <= 0: every other anchor.");
    s->Field("negative_mining_thresh",
             &MultiBoxTargetParam::negative_mining_thresh)
        .Describe("Negatives overlap every ground truth less than this.");
    s->Field("minimum_negative_samples",
             &MultiBoxTargetParam::minimum_negative_samples)
        .Describe("Accepted and unused, as in MXNet.");
    s->Field("variances", &MultiBoxTargetParam::variances)
        .Describe("(vx, vy, vw, vh) dividing the regression targets.");
  }
};

// 2^28 overlaps (1 GiB of floats) per image.
constexpr int64_t kMaxOverlapPairs = int64_t{1} << 28;

void MultiBoxTargetShape(const NodeAttrs& attrs, std::vector<TShape>* in,
                         std::vector<TShape>* out) {
  const MultiBoxTargetParam& p = attrs.get<MultiBoxTargetParam>();
  if (p.variances.size() != 4) {
    throw InvalidArgument(absl::StrCat(OpLabel(attrs), ": variances has ",
                                       p.variances.size(),
                                       " values; 4 (vx, vy, vw, vh) needed"));
  }
  if (p.negative_mining_ratio > 0 && !(p.negative_mining_thresh > 0)) {
    throw InvalidArgument(absl::StrCat(
        OpLabel(attrs), ": negative_mining_thresh=", p.negative_mining_thresh,
        " must be > 0 with negative mining"));
  }
  const TShape &a = (*in)[0], &l = (*in)[1], &c = (*in)[2];
  if (!a.is_known() || !l.is_known() || !c.is_known()) return;
  if (a.ndim() != 3 || a[0] != 1 || a[1] < 1 || a[2] != 4 || l.ndim() != 3 ||
      l[1] < 1 || l[2] < 5 || c.ndim() != 3 || c[0] != l[0] || c[1] < 1 ||
      c[2] != a[1]) {
    throw ShapeError(absl::StrCat(
        OpLabel(attrs), ": anchor ", a.ToString(), ", label ", l.ToString(),
        " and cls_pred ", c.ToString(),
        " must be (1, A, 4), (B, M, >= 5) and (B, classes, A) with A, M >= 1"));
  }
  // Each image's overlaps are an A x M matrix: bounded so that a small
  // input cannot ask for a huge allocation.
  if (a[1] > kMaxOverlapPairs / l[1]) {
    throw InvalidArgument(
        absl::StrCat(OpLabel(attrs), ": ", a[1], " anchors x ", l[1],
                     " label rows need more than the ", kMaxOverlapPairs,
                     " overlaps allowed per image"));
  }
  AssignShape(attrs, out, 0, TShape{l[0], a[1] * 4}, true);
  AssignShape(attrs, out, 1, TShape{l[0], a[1] * 4}, true);
  AssignShape(attrs, out, 2, TShape{l[0], a[1]}, true);
}

// One image's three outputs.
struct ImageTargets {
  std::vector<float> loc;   // A * 4
  std::vector<float> mask;  // A * 4
  std::vector<float> cls;   // A
};

template <typename T>
ImageTargets TargetsOf(const MultiBoxTargetParam& p, int64_t anchors,
                       int64_t num_gt, int64_t width, int64_t classes,
                       const T* anchor, const T* label, const T* cls_pred) {
  using A = AccType<T>;
  // Overlaps in A, compared as floats (MXNet's).
  std::vector<float> iou(anchors * num_gt);
  for (int64_t j = 0; j < anchors; ++j) {
    A box[4];
    for (int k = 0; k < 4; ++k) box[k] = static_cast<A>(anchor[j * 4 + k]);
    for (int64_t g = 0; g < num_gt; ++g) {
      A gt[4];
      for (int k = 0; k < 4; ++k) {
        gt[k] = static_cast<A>(label[g * width + 1 + k]);
      }
      iou[j * num_gt + g] =
          static_cast<float>(mx_math::SsdTargetOverlap(box, gt));
    }
  }
  std::vector<char> gt_matched(num_gt, 0), flag(anchors, -1);
  std::vector<float> best_iou(anchors, -1.0f);
  std::vector<int64_t> best_gt(anchors, -1);
  int64_t positives = 0;
  // Bipartite: the best remaining (anchor, ground truth) pair, first in
  // (anchor, ground truth) order among equals, until none overlaps.
  for (int64_t round = 0; round < num_gt; ++round) {
    int64_t pick_j = -1, pick_g = -1;
    float most = 1e-6f;
    for (int64_t j = 0; j < anchors; ++j) {
      if (flag[j] == 1) continue;
      for (int64_t g = 0; g < num_gt; ++g) {
        if (!gt_matched[g] && iou[j * num_gt + g] > most) {
          most = iou[j * num_gt + g];
          pick_j = j;
          pick_g = g;
        }
      }
    }
    if (pick_j < 0) break;
    best_iou[pick_j] = most;
    best_gt[pick_j] = pick_g;
    gt_matched[pick_g] = 1;
    flag[pick_j] = 1;
    ++positives;
  }
  // Each other anchor's best ground truth (first among equals).
  const auto best_of = [&](int64_t j) {
    float most = -1.0f;
    for (int64_t g = 0; g < num_gt; ++g) {
      if (iou[j * num_gt + g] > most) {
        most = iou[j * num_gt + g];
        best_gt[j] = g;
      }
    }
    if (best_gt[j] >= 0) best_iou[j] = most;
  };
  const float overlap_threshold = static_cast<float>(p.overlap_threshold);
  if (overlap_threshold > 0) {
    for (int64_t j = 0; j < anchors; ++j) {
      if (flag[j] == 1) continue;
      best_of(j);
      if (best_gt[j] >= 0 && best_iou[j] > overlap_threshold) {
        flag[j] = 1;
        ++positives;
      }
    }
  }
  // As MXNet's (and the CUDA kernel's), the float parameter decides.
  const float ratio = static_cast<float>(p.negative_mining_ratio);
  if (ratio > 0) {
    int64_t wanted = static_cast<int64_t>(positives * ratio);
    wanted = std::min(wanted, anchors - positives);
    const float thresh = static_cast<float>(p.negative_mining_thresh);
    std::vector<std::pair<float, int64_t>> candidates;  // (-prob, anchor)
    for (int64_t j = 0; j < anchors && wanted > 0; ++j) {
      if (flag[j] == 1) continue;
      if (best_iou[j] < 0) best_of(j);
      if (!(best_iou[j] < thresh)) continue;
      const auto score = [&](int64_t k) {
        return static_cast<A>(cls_pred[k * anchors + j]);
      };
      candidates.push_back(
          {-static_cast<float>(mx_math::SsdBackgroundProb<A>(classes, score)),
           j});
    }
    std::stable_sort(
        candidates.begin(), candidates.end(),
        [](const auto& x, const auto& y) { return x.first > y.first; });
    // MXNet asserts there are enough candidates; fewer mark them all.
    wanted = std::min<int64_t>(wanted, candidates.size());
    for (int64_t r = 0; r < wanted; ++r) flag[candidates[r].second] = 0;
  } else {
    for (int64_t j = 0; j < anchors; ++j) {
      if (flag[j] != 1) flag[j] = 0;
    }
  }
  ImageTargets out;
  out.loc.assign(anchors * 4, 0.0f);
  out.mask.assign(anchors * 4, 0.0f);
  out.cls.assign(anchors, static_cast<float>(p.ignore_label));
  float variances[4];
  for (int k = 0; k < 4; ++k) variances[k] = static_cast<float>(p.variances[k]);
  for (int64_t j = 0; j < anchors; ++j) {
    if (flag[j] == 0) {
      out.cls[j] = 0;
    } else if (flag[j] == 1) {
      const T* gt = label + best_gt[j] * width;
      out.cls[j] = static_cast<float>(static_cast<A>(gt[0])) + 1;
      float box[4], gt_box[4];
      for (int k = 0; k < 4; ++k) {
        box[k] = static_cast<float>(static_cast<A>(anchor[j * 4 + k]));
        gt_box[k] = static_cast<float>(static_cast<A>(gt[1 + k]));
        out.mask[j * 4 + k] = 1;
      }
      mx_math::EncodeSsdBox(box, gt_box, variances, &out.loc[j * 4]);
    }
  }
  return out;
}

// Ground-truth rows of image b before the first class -1; a -1 row must be
// all -1 (MXNet's check).
template <typename T>
int64_t ValidRows(const NodeAttrs& attrs, const T* label, int64_t rows,
                  int64_t width, int64_t b) {
  for (int64_t r = 0; r < rows; ++r) {
    const T* row = label + r * width;
    if (static_cast<float>(row[0]) != -1.0f) continue;
    for (int k = 1; k < 5; ++k) {
      if (static_cast<float>(row[k]) != -1.0f) {
        throw InvalidArgument(
            absl::StrCat(OpLabel(attrs), ": label[", b, ", ", r,
                         "] has class -1 (the end of the list) but value ", k,
                         " is ", static_cast<double>(row[k]), ", not -1"));
      }
    }
    return r;
  }
  return rows;
}

void MultiBoxTargetCompute(const OpContext&, const NodeAttrs& attrs,
                           const std::vector<TBlob>& in,
                           const std::vector<OpReqType>& req,
                           const std::vector<TBlob>& out) {
  const MultiBoxTargetParam& p = attrs.get<MultiBoxTargetParam>();
  const int64_t anchors = in[0].shape[1], batches = in[1].shape[0];
  const int64_t rows = in[1].shape[1], width = in[1].shape[2];
  const int64_t classes = in[2].shape[1];
  MX_FLOAT_DTYPE_SWITCH(in[0].dtype, T, {
    using A = AccType<T>;
    const T* anchor = in[0].data<T>();
    const T* label = in[1].data<T>();
    const T* cls_pred = in[2].data<T>();
    std::vector<int64_t> valid(batches);
    for (int64_t b = 0; b < batches; ++b) {
      valid[b] = ValidRows(attrs, label + b * rows * width, rows, width, b);
    }
    ParallelFor(batches, 1, [&](int64_t b, int64_t e) {
      for (int64_t i = b; i < e; ++i) {
        ImageTargets t;
        if (valid[i] > 0) {
          t = TargetsOf(p, anchors, valid[i], width, classes, anchor,
                        label + i * rows * width,
                        cls_pred + i * classes * anchors);
        } else {  // No ground truth: every anchor ignored, as MXNet.
          t.loc.assign(anchors * 4, 0.0f);
          t.mask.assign(anchors * 4, 0.0f);
          t.cls.assign(anchors, static_cast<float>(p.ignore_label));
        }
        const std::vector<float>* values[3] = {&t.loc, &t.mask, &t.cls};
        for (int o = 0; o < 3; ++o) {
          T* dst =
              out[o].data<T>() + i * static_cast<int64_t>(values[o]->size());
          for (size_t k = 0; k < values[o]->size(); ++k) {
            Assign(dst + k, req[o], static_cast<A>((*values[o])[k]));
          }
        }
      }
    });
  });
}

MX_REGISTER_OP(_contrib_MultiBoxTarget)
    .Describe(
        "SSD training targets from anchors (1, A, 4), labels (B, M, >= 5) "
        "and class predictions (B, C, A): loc_target, loc_mask (B, A * 4) "
        "and cls_target (B, A), as MXNet's MultiBoxTarget.")
    .SetNumInputs(3)
    .SetInputNames({"anchor", "label", "cls_pred"})
    .SetNumOutputs(3)
    .SetParams<MultiBoxTargetParam>()
    .SetInferShape(MultiBoxTargetShape)
    .SetInferType([](const NodeAttrs& attrs, std::vector<DType>* in,
                     std::vector<DType>* out) {
      SameFloatType(attrs, in, out);
    })
    .SetCompute(Context::kCPU, MultiBoxTargetCompute)
    .AddAlias("_npx_multibox_target");

[[maybe_unused]] const bool kGradientRegistered = [] {
  SetZeroGrad("_contrib_MultiBoxTarget");
  return true;
}();

}  // namespace
}  // namespace cpu
}  // namespace mx
