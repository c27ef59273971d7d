// GPU kernels for _contrib_box_nms (non-maximum suppression, as the CPU
// kernel decides it) and its gradient, _contrib_MultiBoxPrior
// (box_nms_kernels.cu), _contrib_MultiBoxDetection and
// _contrib_MultiBoxTarget (multibox_detection_kernels.cu,
// multibox_target_kernels.cu).
#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "backends/common/attr_parse.h"
#include "backends/common/mxnet_geometry.h"
#include "backends/cuda/box_nms_kernels.h"
#include "backends/cuda/cuda_ops.h"
#include "backends/cuda/cuda_util.h"

namespace mx_cuda {
namespace {

using mxplugin::Attrs;
using mxplugin::Error;
using mxplugin::KernelContext;
using mxplugin::Tensor;
using mxplugin::Tensors;

// (batches, boxes, values per box) of data (..., boxes, values).
struct BoxDims {
  int64_t batches = 0, n = 0, k = 0;
};

BoxDims DimsOf(const std::string& op, const Tensor& data) {
  if (data.ndim() < 2) {
    throw Error(MX_STATUS_SHAPE_ERROR,
                op + ": data must be (..., boxes, values)");
  }
  BoxDims d;
  d.k = data.dim(data.ndim() - 1);
  d.n = data.dim(data.ndim() - 2);
  d.batches = d.n * d.k == 0 ? 0 : data.size() / (d.n * d.k);
  return d;
}

int64_t IntAttr(const std::string& op, const Attrs& attrs, const char* key,
                int64_t fallback) {
  return static_cast<int64_t>(NumberAttr(op, attrs, key, fallback));
}

std::string FormatAttr(const std::string& op, const Attrs& attrs,
                       const char* key) {
  const std::string v = attrs.Get(key, "corner");
  if (v != "corner" && v != "center") {
    throw Error(MX_STATUS_INVALID_ARGUMENT,
                op + ": " + key + "=\"" + v + "\" is not corner or center");
  }
  return v;
}

BoxNmsParams ParamsOf(const std::string& op, const Attrs& attrs, int64_t k) {
  BoxNmsParams p;
  p.overlap_thresh = NumberAttr(op, attrs, "overlap_thresh", 0.5);
  p.valid_thresh = NumberAttr(op, attrs, "valid_thresh", 0);
  p.topk = IntAttr(op, attrs, "topk", -1);
  p.coord_start = IntAttr(op, attrs, "coord_start", 2);
  p.score_index = IntAttr(op, attrs, "score_index", 1);
  p.id_index = IntAttr(op, attrs, "id_index", -1);
  p.background_id = IntAttr(op, attrs, "background_id", -1);
  p.force_suppress = FlagAttr(op, attrs, "force_suppress", "False");
  p.center_in = FormatAttr(op, attrs, "in_format") == "center";
  p.center_out = FormatAttr(op, attrs, "out_format") == "center";
  // The kernel indexes rows with these: as the CPU's checks.
  if (p.coord_start < 0 || p.coord_start > k - 4 || p.score_index < 0 ||
      p.score_index >= k || p.id_index < -1 || p.id_index >= k) {
    throw Error(MX_STATUS_INVALID_ARGUMENT,
                op +
                    ": coord_start, score_index or id_index out of range "
                    "for boxes of " +
                    std::to_string(k) + " values");
  }
  return p;
}

// data -> (output, source_row).
void BoxNms(const KernelContext& ctx, const Attrs& attrs, Tensors in,
            const int32_t* req, Tensors out) {
  const std::string op = "_contrib_box_nms";
  RequireFloat(op, in[0]);
  const BoxDims d = DimsOf(op, in[0]);
  const BoxNmsParams p = ParamsOf(op, attrs, d.k);
  if (d.batches > 2147483647) Unsupported(op, "more than 2^31 batch items");
  void* scratch = Workspace(ctx, BoxNmsScratchBytes(d.batches, d.n));
  CheckLaunch(
      op,
      LaunchBoxNms(in[0].dtype(), d.batches, d.n, d.k, p, in[0].data<void>(),
                   out[0].data<void>(), req[0], out[1].data<int32_t>(), req[1],
                   scratch, StreamOf(ctx)),
      in[0].dtype());
}

// (out_grad, source_row, data) -> data_grad.
void BoxNmsBackward(const KernelContext& ctx, const Attrs&, Tensors in,
                    const int32_t* req, Tensors out) {
  const std::string op = "_backward_contrib_box_nms";
  if (req[0] == MX_REQ_NULL) return;
  RequireFloat(op, in[2]);
  const BoxDims d = DimsOf(op, in[2]);
  if (in[0].size() != in[2].size() || in[1].size() != d.batches * d.n ||
      in[1].dtype() != MX_DTYPE_INT32) {
    throw Error(MX_STATUS_SHAPE_ERROR,
                op + ": out_grad and source_row do not fit data");
  }
  CheckLaunch(op,
              LaunchBoxNmsGrad(in[2].dtype(), d.batches, d.n, d.k,
                               in[0].data<void>(), in[1].data<int32_t>(),
                               out[0].data<void>(), req[0], StreamOf(ctx)),
              in[2].dtype());
}

// _contrib_MultiBoxPrior: data lends its (h, w); the anchors' half
// extents are worked out here, as the CPU's.
void MultiBoxPrior(const KernelContext& ctx, const Attrs& attrs, Tensors in,
                   const int32_t* req, Tensors out) {
  const std::string op = "_contrib_MultiBoxPrior";
  if (req[0] == MX_REQ_NULL) return;
  RequireFloat(op, out[0]);
  const auto tuple = [&](const char* key, const char* fallback) {
    auto v = mxplugin::ParseFloatTuple(attrs.Get(key, fallback));
    if (!v || v->empty()) {
      throw Error(MX_STATUS_INVALID_ARGUMENT,
                  op + ": cannot read " + std::string(key));
    }
    return *v;
  };
  const std::vector<double> sizes = tuple("sizes", "(1,)");
  const std::vector<double> ratios = tuple("ratios", "(1,)");
  const std::vector<double> steps = tuple("steps", "(-1,-1)");
  const std::vector<double> offsets = tuple("offsets", "(0.5,0.5)");
  if (in[0].ndim() != 4 || steps.size() != 2 || offsets.size() != 2) {
    throw Error(MX_STATUS_INVALID_ARGUMENT,
                op + ": needs NCHW data and (y, x) steps and offsets");
  }
  PriorBoxes p;
  p.h = in[0].dim(2);
  p.w = in[0].dim(3);
  p.anchors = static_cast<int64_t>(sizes.size() + ratios.size() - 1);
  p.step_y = steps[0] > 0 ? steps[0] : 1.0 / p.h;
  p.step_x = steps[1] > 0 ? steps[1] : 1.0 / p.w;
  p.offset_y = offsets[0];
  p.offset_x = offsets[1];
  p.clip = FlagAttr(op, attrs, "clip", "False");
  // Half widths then half heights, copied to the workspace (from pageable
  // memory: staged before cudaMemcpyAsync returns).
  std::vector<double> half(2 * p.anchors);
  for (int64_t a = 0; a < p.anchors; ++a) {
    const mx_math::AnchorHalfExtent e = mx_math::AnchorHalfExtentOf(
        sizes.data(), static_cast<int64_t>(sizes.size()), ratios.data(), a, p.h,
        p.w);
    half[a] = e.w;
    half[p.anchors + a] = e.h;
  }
  cudaStream_t s = StreamOf(ctx);
  auto* dev_half =
      static_cast<double*>(Workspace(ctx, half.size() * sizeof(double)));
  CheckCuda(cudaMemcpyAsync(dev_half, half.data(), half.size() * sizeof(double),
                            cudaMemcpyHostToDevice, s),
            op);
  p.half_w = dev_half;
  p.half_h = dev_half + p.anchors;
  CheckLaunch(
      op,
      LaunchMultiBoxPrior(out[0].dtype(), p, out[0].data<void>(), req[0], s),
      out[0].dtype());
}

// The SSD ops' parameters are floats in MXNet: a number attribute, and the
// `variances` (vx, vy, vw, vh) into `out`.
float FloatAttr(const std::string& op, const Attrs& attrs, const char* key,
                double fallback) {
  return static_cast<float>(NumberAttr(op, attrs, key, fallback));
}

void SsdVariances(const std::string& op, const Attrs& attrs, float out[4]) {
  const auto v =
      mxplugin::ParseFloatTuple(attrs.Get("variances", "(0.1,0.1,0.2,0.2)"));
  if (!v || v->size() != 4) {
    throw Error(MX_STATUS_INVALID_ARGUMENT, op + ": variances needs 4 values");
  }
  for (int k = 0; k < 4; ++k) out[k] = static_cast<float>((*v)[k]);
}

// _contrib_MultiBoxDetection: (cls_prob, loc_pred, anchor) -> detections.
void MultiBoxDetection(const KernelContext& ctx, const Attrs& attrs, Tensors in,
                       const int32_t* req, Tensors out) {
  const std::string op = "_contrib_MultiBoxDetection";
  RequireFloat(op, out[0]);
  const Tensor &cls = in[0], &loc = in[1], &anchor = in[2];
  if (cls.ndim() != 3 || loc.ndim() != 2 || anchor.ndim() != 3 ||
      anchor.dim(1) != cls.dim(2) || anchor.dim(2) != 4 ||
      loc.dim(0) != cls.dim(0) || loc.dim(1) != cls.dim(2) * 4 ||
      out[0].size() != cls.dim(0) * cls.dim(2) * 6) {
    throw Error(MX_STATUS_SHAPE_ERROR,
                op + ": needs cls_prob (B, classes, A), loc_pred (B, A * 4) "
                     "and anchor (1, A, 4)");
  }
  if (IntAttr(op, attrs, "background_id", 0) != 0) {
    Unsupported(op, "background_id other than 0");
  }
  SsdDetection p;
  p.batches = cls.dim(0);
  p.classes = cls.dim(1);
  p.anchors = cls.dim(2);
  p.threshold = FloatAttr(op, attrs, "threshold", 0.01);
  p.nms_threshold = FloatAttr(op, attrs, "nms_threshold", 0.5);
  SsdVariances(op, attrs, p.variances);
  p.clip = FlagAttr(op, attrs, "clip", "True");
  p.force_suppress = FlagAttr(op, attrs, "force_suppress", "False");
  p.nms_topk = IntAttr(op, attrs, "nms_topk", -1);
  if (p.batches > 2147483647) Unsupported(op, "more than 2^31 batch items");
  // The rows, the two index arrays and the flags, carved from one
  // workspace.
  const size_t items = static_cast<size_t>(p.batches * p.anchors);
  const size_t row_bytes = AlignedBytes(items * 6 * DTypeSize(out[0].dtype()));
  const size_t index_bytes = AlignedBytes(items * sizeof(int64_t));
  char* base =
      static_cast<char*>(Workspace(ctx, row_bytes + 2 * index_bytes + items));
  SsdDetectionScratch scratch;
  scratch.rows = base;
  scratch.compact = reinterpret_cast<int64_t*>(base + row_bytes);
  scratch.order = reinterpret_cast<int64_t*>(base + row_bytes + index_bytes);
  scratch.dropped =
      reinterpret_cast<unsigned char*>(base + row_bytes + 2 * index_bytes);
  CheckLaunch(op,
              LaunchMultiBoxDetection(out[0].dtype(), p, cls.data<void>(),
                                      loc.data<void>(), anchor.data<void>(),
                                      out[0].data<void>(), req[0], scratch,
                                      StreamOf(ctx)),
              out[0].dtype());
}

// _contrib_MultiBoxTarget: (anchor, label, cls_pred) -> (loc_target,
// loc_mask, cls_target). A malformed padding row is read back as a flag:
// one stream synchronize per call.
void MultiBoxTarget(const KernelContext& ctx, const Attrs& attrs, Tensors in,
                    const int32_t* req, Tensors out) {
  const std::string op = "_contrib_MultiBoxTarget";
  const Tensor &anchor = in[0], &label = in[1], &cls = in[2];
  RequireFloat(op, anchor);
  if (anchor.ndim() != 3 || anchor.dim(2) != 4 || label.ndim() != 3 ||
      label.dim(2) < 5 || cls.ndim() != 3 || cls.dim(0) != label.dim(0) ||
      cls.dim(2) != anchor.dim(1) || cls.dim(1) < 1) {
    throw Error(MX_STATUS_SHAPE_ERROR,
                op + ": needs anchor (1, A, 4), label (B, M, >= 5) and "
                     "cls_pred (B, classes, A)");
  }
  SsdTargets p;
  p.batches = label.dim(0);
  p.anchors = anchor.dim(1);
  p.rows = label.dim(1);
  p.width = label.dim(2);
  p.classes = cls.dim(1);
  p.overlap_threshold = FloatAttr(op, attrs, "overlap_threshold", 0.5);
  p.ignore_label = FloatAttr(op, attrs, "ignore_label", -1);
  p.negative_mining_ratio = FloatAttr(op, attrs, "negative_mining_ratio", -1);
  p.negative_mining_thresh =
      FloatAttr(op, attrs, "negative_mining_thresh", 0.5);
  SsdVariances(op, attrs, p.variances);
  if (p.batches > 2147483647) Unsupported(op, "more than 2^31 images");
  // Images in groups whose scratch (the overlap matrices) stays under
  // 1 GiB; the CPU's shape check bounds one image's.
  SsdTargets one = p;
  one.batches = 1;
  const size_t per_image = MultiBoxTargetScratchBytes(one);
  const int64_t group = std::max<int64_t>(
      1,
      static_cast<int64_t>((size_t{1} << 30) / std::max<size_t>(1, per_image)));
  SsdTargets part = p;
  part.batches = std::min(group, p.batches);
  const size_t flag_bytes = AlignedBytes(sizeof(unsigned long long));
  char* scratch = static_cast<char*>(
      Workspace(ctx, flag_bytes + MultiBoxTargetScratchBytes(part)));
  auto* bad = reinterpret_cast<unsigned long long*>(scratch);
  cudaStream_t s = StreamOf(ctx);
  CheckCuda(cudaMemsetAsync(bad, 0xff, sizeof(*bad), s), op);
  const size_t elem = DTypeSize(anchor.dtype());
  const auto at = [elem](const Tensor& t, int64_t items) {
    return static_cast<char*>(t.data<void>()) + items * elem;
  };
  for (int64_t first = 0; first < p.batches; first += group) {
    part.batches = std::min(group, p.batches - first);
    part.first_image = first;
    CheckLaunch(op,
                LaunchMultiBoxTarget(anchor.dtype(), part, anchor.data<void>(),
                                     at(label, first * p.rows * p.width),
                                     at(cls, first * p.classes * p.anchors),
                                     at(out[0], first * p.anchors * 4), req[0],
                                     at(out[1], first * p.anchors * 4), req[1],
                                     at(out[2], first * p.anchors), req[2], bad,
                                     scratch + flag_bytes, s),
                anchor.dtype());
  }
  unsigned long long host = 0;
  ReadBack(op, s, bad, &host, sizeof(host));
  if (host != ~0ull) {
    throw Error(MX_STATUS_INVALID_ARGUMENT,
                op + ": label[" + std::to_string(host / p.rows) + ", " +
                    std::to_string(host % p.rows) +
                    "] has class -1 (the end of the list) but a box value "
                    "that is not -1");
  }
}

}  // namespace

void RegisterBoxNmsOps(mxplugin::Plugin& plugin) {
  RegisterGpuKernel(plugin, "_contrib_box_nms", BoxNms);
  RegisterGpuKernel(plugin, "_backward_contrib_box_nms", BoxNmsBackward);
  RegisterGpuKernel(plugin, "_contrib_MultiBoxPrior", MultiBoxPrior);
  RegisterGpuKernel(plugin, "_contrib_MultiBoxDetection", MultiBoxDetection);
  RegisterGpuKernel(plugin, "_contrib_MultiBoxTarget", MultiBoxTarget);
}

}  // namespace mx_cuda
