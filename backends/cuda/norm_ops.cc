// GPU kernels for LeakyReLU (all act_types; rrelu's random slopes in
// training are left to the CPU kernel), prelu's gradient, LayerNorm,
// L2Normalization, SoftmaxOutput, SoftmaxActivation,
// softmax_cross_entropy, _contrib_div_sqrt_dim, AdaptiveAvgPooling2D,
// _contrib_ROIAlign, ROIPooling and their gradients (norm_kernels.cu,
// loss_kernels.cu, roi_align_kernels.cu, roi_pooling_kernels.cu,
// elementwise.cu).
// The host's shape and type inference has run: only what the kernels
// index is checked again here.
#include <cmath>
#include <cstdint>
#include <string>

#include "backends/common/attr_parse.h"
#include "backends/cuda/cuda_ops.h"
#include "backends/cuda/cuda_util.h"
#include "backends/cuda/elementwise.h"
#include "backends/cuda/norm_kernels.h"
#include "backends/cuda/roi_align_kernels.h"

namespace mx_cuda {
namespace {

using mxplugin::Attrs;
using mxplugin::Error;
using mxplugin::KernelContext;
using mxplugin::Tensor;
using mxplugin::Tensors;

// The axis attribute `key` of t, wrapped into [0, ndim).
int AxisOf(const std::string& op, const Attrs& attrs, const char* key,
           const char* fallback, const Tensor& t) {
  const std::string text = attrs.Get(key, fallback);
  const auto axis = mxplugin::ParseInt(text);
  const int n = t.ndim();
  if (!axis || *axis < -n || *axis >= n) {
    throw Error(
        MX_STATUS_INVALID_ARGUMENT,
        op + ": " + key + "=" + text + " for " + std::to_string(n) + " dims");
  }
  return static_cast<int>(*axis < 0 ? *axis + n : *axis);
}

// ---- LeakyReLU. ----

// prelu's (outer, channels, inner) view: one slope per channel (axis 1)
// or one for all.
Lines PreluLines(const std::string& op, const Tensor& data,
                 const Tensor& gamma) {
  const int64_t n = data.size();
  if (gamma.size() == 1) return Lines{1, 1, n};
  if (data.ndim() < 2 || gamma.size() != data.dim(1)) {
    throw Error(
        MX_STATUS_SHAPE_ERROR,
        op + ": input gamma has " + std::to_string(gamma.size()) +
            " values but data has " +
            (data.ndim() < 2 ? std::string("no channel axis")
                             : std::to_string(data.dim(1)) + " channels"));
  }
  return Lines{data.dim(0), data.dim(1), Prod(data, 2, data.ndim())};
}

void LeakyReLU(const KernelContext& ctx, const Attrs& attrs, Tensors in,
               const int32_t* req, Tensors out) {
  const std::string op = "LeakyReLU";
  RequireFloat(op, in[0]);
  const std::string act = attrs.Get("act_type", "leaky");
  const double slope = NumberAttr(op, attrs, "slope", 0.25);
  const int dt = in[0].dtype();
  const int64_t n = in[0].size();
  cudaStream_t s = StreamOf(ctx);
  if (act == "prelu") {
    CheckLaunch(
        op,
        LaunchPrelu(dt, PreluLines(op, in[0], in[1]), in[0].data<void>(),
                    in[1].data<void>(), out[0].data<void>(), req[0], s),
        dt);
    return;
  }
  if (act == "rrelu") {
    const double lo = NumberAttr(op, attrs, "lower_bound", 0.125);
    const double hi = NumberAttr(op, attrs, "upper_bound", 0.334);
    if (!(lo >= 0 && lo <= hi)) {
      throw Error(MX_STATUS_INVALID_ARGUMENT,
                  op + ": lower_bound and upper_bound must satisfy 0 <= "
                       "lower_bound <= upper_bound");
    }
    // Training draws a slope per element from the host's generator, which
    // only the CPU kernel reproduces.
    if (ctx.is_train()) Unsupported(op, "act_type=rrelu in training");
    const double mean = (lo + hi) / 2;
    // The slopes first: the output may overwrite the data in place.
    if (out.size() > 1) {
      CheckLaunch(
          op,
          LaunchLeaky(Leaky::kRreluMask, dt, n, mean, in[0].data<void>(),
                      out[1].data<void>(), req[1], s),
          dt);
    }
    CheckLaunch(op,
                LaunchLeaky(Leaky::kLeaky, dt, n, mean, in[0].data<void>(),
                            out[0].data<void>(), req[0], s),
                dt);
    return;
  }
  Leaky mode;
  if (act == "leaky") {
    mode = Leaky::kLeaky;
  } else if (act == "elu") {
    mode = Leaky::kElu;
  } else if (act == "selu") {
    mode = Leaky::kSelu;
  } else if (act == "gelu") {
    mode = Leaky::kGelu;
  } else {
    throw Error(MX_STATUS_INVALID_ARGUMENT, op + ": act_type=" + act +
                                                " is not one of leaky, elu, "
                                                "selu, gelu, prelu, rrelu");
  }
  CheckLaunch(op,
              LaunchLeaky(mode, dt, n, slope, in[0].data<void>(),
                          out[0].data<void>(), req[0], s),
              dt);
}

// (out_grad, data, gamma) -> (data_grad, gamma_grad).
void PreluBackward(const KernelContext& ctx, const Attrs&, Tensors in,
                   const int32_t* req, Tensors out) {
  const std::string op = "_backward_LeakyReLU_prelu";
  RequireFloat(op, in[1]);
  const int dt = in[1].dtype();
  CheckLaunch(op,
              LaunchPreluBackward(
                  dt, PreluLines(op, in[1], in[2]), in[0].data<void>(),
                  in[1].data<void>(), in[2].data<void>(), out[0].data<void>(),
                  req[0], out[1].data<void>(), req[1], StreamOf(ctx)),
              dt);
}

// ---- LayerNorm. ----

Lines LayerNormLines(const std::string& op, const Attrs& attrs,
                     const Tensor& data) {
  const int ax = AxisOf(op, attrs, "axis", "-1", data);
  return Lines{Prod(data, 0, ax), data.dim(ax),
               Prod(data, ax + 1, data.ndim())};
}

double Eps(const std::string& op, const Attrs& attrs, double fallback) {
  const double eps = NumberAttr(op, attrs, "eps", fallback);
  if (!(eps >= 0)) {
    throw Error(MX_STATUS_INVALID_ARGUMENT, op + ": eps must be >= 0");
  }
  return eps;
}

// (data, gamma, beta) -> (output, mean, std).
void LayerNorm(const KernelContext& ctx, const Attrs& attrs, Tensors in,
               const int32_t* req, Tensors out) {
  const std::string op = "LayerNorm";
  RequireFloat(op, in[0]);
  const Lines l = LayerNormLines(op, attrs, in[0]);
  const int dt = in[0].dtype();
  CheckLaunch(
      op,
      LaunchLayerNorm(dt, l, Eps(op, attrs, 1e-5), in[0].data<void>(),
                      in[1].data<void>(), in[2].data<void>(),
                      out[0].data<void>(), req[0], out[1].data<void>(), req[1],
                      out[2].data<void>(), req[2], StreamOf(ctx)),
      dt);
}

// (out_grad, data, gamma) -> (data_grad, gamma_grad, beta_grad).
void LayerNormBackward(const KernelContext& ctx, const Attrs& attrs, Tensors in,
                       const int32_t* req, Tensors out) {
  const std::string op = "_backward_LayerNorm";
  RequireFloat(op, in[1]);
  const Lines l = LayerNormLines(op, attrs, in[1]);
  const int dt = in[1].dtype();
  void* scratch = Workspace(ctx, LayerNormScratchBytes(l));
  CheckLaunch(
      op,
      LaunchLayerNormBackward(
          dt, l, Eps(op, attrs, 1e-5), in[0].data<void>(), in[1].data<void>(),
          in[2].data<void>(), out[0].data<void>(), req[0], out[1].data<void>(),
          req[1], out[2].data<void>(), req[2], scratch, StreamOf(ctx)),
      dt);
}

// ---- L2Normalization. ----

// Groups of the mode: each instance, each channel vector (axis 1 at every
// position) or each spatial plane.
Lines L2Lines(const std::string& op, const Attrs& attrs, const Tensor& d) {
  const std::string mode = attrs.Get("mode", "instance");
  const int need = mode == "instance" ? 2 : 3;
  if (mode != "instance" && mode != "channel" && mode != "spatial") {
    throw Error(
        MX_STATUS_INVALID_ARGUMENT,
        op + ": mode=" + mode + " is not one of instance, channel, spatial");
  }
  if (d.ndim() < need) {
    throw Error(MX_STATUS_SHAPE_ERROR, op + ": mode=" + mode +
                                           " needs at least " +
                                           std::to_string(need) + " axes");
  }
  const int64_t n = d.dim(0), c = d.dim(1), spatial = Prod(d, 2, d.ndim());
  if (mode == "instance") return Lines{n, c * spatial, 1};
  if (mode == "channel") return Lines{n, c, spatial};
  return Lines{n * c, spatial, 1};
}

void L2Normalization(const KernelContext& ctx, const Attrs& attrs, Tensors in,
                     const int32_t* req, Tensors out) {
  const std::string op = "L2Normalization";
  RequireFloat(op, in[0]);
  const int dt = in[0].dtype();
  CheckLaunch(op,
              LaunchL2Norm(dt, L2Lines(op, attrs, in[0]), Eps(op, attrs, 1e-10),
                           in[0].data<void>(), out[0].data<void>(), req[0],
                           StreamOf(ctx)),
              dt);
}

// (out_grad, data) -> data_grad.
void L2NormalizationBackward(const KernelContext& ctx, const Attrs& attrs,
                             Tensors in, const int32_t* req, Tensors out) {
  const std::string op = "_backward_L2Normalization";
  RequireFloat(op, in[1]);
  const int dt = in[1].dtype();
  CheckLaunch(
      op,
      LaunchL2NormBackward(dt, L2Lines(op, attrs, in[1]), Eps(op, attrs, 1e-10),
                           in[0].data<void>(), in[1].data<void>(),
                           out[0].data<void>(), req[0], StreamOf(ctx)),
      dt);
}

// ---- _contrib_div_sqrt_dim and AdaptiveAvgPooling2D. ----

void DivSqrtDim(const KernelContext& ctx, const Attrs&, Tensors in,
                const int32_t* req, Tensors out) {
  const std::string op = "_contrib_div_sqrt_dim";
  RequireFloat(op, in[0]);
  if (in[0].ndim() == 0) {
    throw Error(MX_STATUS_SHAPE_ERROR, op + ": data needs at least one axis");
  }
  const double scale =
      1.0 / std::sqrt(static_cast<double>(in[0].dim(in[0].ndim() - 1)));
  const int dt = in[0].dtype();
  CheckLaunch(
      op,
      LaunchScalar(Binary::kMul, false, dt, in[0].size(), in[0].data<void>(),
                   scale, out[0].data<void>(), req[0], StreamOf(ctx)),
      dt);
}

// The host inferred the output from output_size: its extents are used.
AdaptivePoolShape AdaptiveShape(const std::string& op, const Tensor& data,
                                const Tensor& pooled) {
  if (data.ndim() != 4 || pooled.ndim() != 4 ||
      pooled.dim(0) * pooled.dim(1) != data.dim(0) * data.dim(1)) {
    throw Error(MX_STATUS_SHAPE_ERROR,
                op + ": data and output must be NCHW with the same N and C");
  }
  AdaptivePoolShape s;
  s.planes = data.dim(0) * data.dim(1);
  s.h = data.dim(2);
  s.w = data.dim(3);
  s.oh = pooled.dim(2);
  s.ow = pooled.dim(3);
  if (s.planes > 0 && (s.oh < 1 || s.ow < 1)) {
    throw Error(MX_STATUS_INVALID_ARGUMENT,
                op + ": output_size must be one or two values >= 1");
  }
  return s;
}

void AdaptivePool(const KernelContext& ctx, const Attrs&, Tensors in,
                  const int32_t* req, Tensors out) {
  const std::string op = "_contrib_AdaptiveAvgPooling2D";
  RequireFloat(op, in[0]);
  const int dt = in[0].dtype();
  CheckLaunch(op,
              LaunchAdaptivePool(dt, AdaptiveShape(op, in[0], out[0]),
                                 in[0].data<void>(), out[0].data<void>(),
                                 req[0], StreamOf(ctx)),
              dt);
}

// (out_grad, data) -> data_grad.
void AdaptivePoolBackward(const KernelContext& ctx, const Attrs&, Tensors in,
                          const int32_t* req, Tensors out) {
  const std::string op = "_backward_contrib_AdaptiveAvgPooling2D";
  RequireFloat(op, in[1]);
  const int dt = in[1].dtype();
  CheckLaunch(op,
              LaunchAdaptivePoolBackward(
                  dt, AdaptiveShape(op, in[1], in[0]), in[0].data<void>(),
                  out[0].data<void>(), req[0], StreamOf(ctx)),
              dt);
}

// ---- _contrib_ROIAlign. ----

// data (N, C, H, W), rois (R, 5) and the output's channels.
ROIAlignArgs ROIAlignOf(const std::string& op, const Attrs& attrs,
                        const Tensor& data, const Tensor& rois, int64_t out_c) {
  const auto pooled = mxplugin::ParseTuple(attrs.Get("pooled_size", "None"));
  if (!pooled || pooled->size() != 2 || (*pooled)[0] < 1 || (*pooled)[1] < 1) {
    throw Error(MX_STATUS_INVALID_ARGUMENT,
                op + ": pooled_size=" + attrs.Get("pooled_size", "None") +
                    " must be two values >= 1");
  }
  const auto ratio = mxplugin::ParseInt(attrs.Get("sample_ratio", "-1"));
  if (!ratio || !attrs.Find("spatial_scale")) {
    throw Error(MX_STATUS_INVALID_ARGUMENT,
                op + ": cannot read spatial_scale and sample_ratio");
  }
  if (data.ndim() != 4 || rois.ndim() != 2 || rois.dim(1) != 5) {
    throw Error(MX_STATUS_SHAPE_ERROR,
                op + ": data must be NCHW and rois (regions, 5)");
  }
  ROIAlignArgs a;
  a.n = data.dim(0);
  a.c = data.dim(1);
  a.h = data.dim(2);
  a.w = data.dim(3);
  a.num_rois = rois.dim(0);
  a.out_c = out_c;
  a.ph = (*pooled)[0];
  a.pw = (*pooled)[1];
  a.spatial_scale = NumberAttr(op, attrs, "spatial_scale", 1);
  a.sample_ratio = *ratio;
  a.position_sensitive = FlagAttr(op, attrs, "position_sensitive", "False");
  a.aligned = FlagAttr(op, attrs, "aligned", "False");
  const int64_t need = a.position_sensitive ? out_c * a.ph * a.pw : out_c;
  if (a.position_sensitive ? need != a.c : out_c != a.c) {
    throw Error(MX_STATUS_SHAPE_ERROR,
                op + ": the output's channels do not fit data's " +
                    std::to_string(a.c));
  }
  return a;
}

void ThrowIfBadRoi(const std::string& op, cudaStream_t s, const uint64_t* bad) {
  uint64_t host = ~uint64_t{0};
  ReadBack(op, s, bad, &host, sizeof(host));
  if (host != ~uint64_t{0}) {
    throw Error(MX_STATUS_INVALID_ARGUMENT,
                op + ": input rois row " + std::to_string(host) +
                    " has a batch index past data's images, non-finite "
                    "coordinates or more than 1024 samples per bin side");
  }
}

// (data, rois) -> output. Regions are checked on the device; the host
// reads the flag back, so the call synchronizes its stream.
void ROIAlign(const KernelContext& ctx, const Attrs& attrs, Tensors in,
              const int32_t* req, Tensors out) {
  const std::string op = "_contrib_ROIAlign";
  if (req[0] == MX_REQ_NULL) return;
  RequireFloat(op, in[0]);
  const ROIAlignArgs a = ROIAlignOf(op, attrs, in[0], in[1], out[0].dim(1));
  cudaStream_t s = StreamOf(ctx);
  auto* bad = static_cast<uint64_t*>(Workspace(ctx, sizeof(uint64_t)));
  CheckCuda(cudaMemsetAsync(bad, 0xff, sizeof(uint64_t), s), op);
  CheckLaunch(
      op,
      LaunchROIAlign(in[0].dtype(), a, in[0].data<void>(), in[1].data<void>(),
                     out[0].data<void>(), req[0], bad, s),
      in[0].dtype());
  ThrowIfBadRoi(op, s, bad);
}

// (out_grad, data, rois) -> data_grad.
void ROIAlignBackward(const KernelContext& ctx, const Attrs& attrs, Tensors in,
                      const int32_t* req, Tensors out) {
  const std::string op = "_backward_contrib_ROIAlign";
  if (req[0] == MX_REQ_NULL) return;
  RequireFloat(op, in[1]);
  const ROIAlignArgs a = ROIAlignOf(op, attrs, in[1], in[2], in[0].dim(1));
  if (in[0].ndim() != 4 || in[0].dim(0) != a.num_rois || in[0].dim(2) != a.ph ||
      in[0].dim(3) != a.pw) {
    throw Error(MX_STATUS_SHAPE_ERROR,
                op + ": out_grad must be (regions, channels, pooled_size)");
  }
  cudaStream_t s = StreamOf(ctx);
  // The double sums, then the bad-roi word.
  const size_t acc_bytes = ROIAlignGradScratchBytes(a);
  char* scratch =
      static_cast<char*>(Workspace(ctx, acc_bytes + sizeof(uint64_t)));
  auto* bad = reinterpret_cast<uint64_t*>(scratch + acc_bytes);
  CheckCuda(cudaMemsetAsync(bad, 0xff, sizeof(uint64_t), s), op);
  CheckLaunch(op,
              LaunchROIAlignBackward(in[1].dtype(), a, in[0].data<void>(),
                                     in[2].data<void>(), out[0].data<void>(),
                                     req[0], bad, scratch, s),
              in[1].dtype());
  ThrowIfBadRoi(op, s, bad);
}

// ---- ROIPooling. ----

ROIPoolArgs ROIPoolOf(const std::string& op, const Attrs& attrs,
                      const Tensor& data, const Tensor& rois) {
  const auto pooled = mxplugin::ParseTuple(attrs.Get("pooled_size", "None"));
  if (!pooled || pooled->size() != 2 || (*pooled)[0] < 1 || (*pooled)[1] < 1) {
    throw Error(MX_STATUS_INVALID_ARGUMENT,
                op + ": pooled_size must be two values >= 1");
  }
  if (data.ndim() != 4 || rois.ndim() != 2 || rois.dim(1) != 5) {
    throw Error(MX_STATUS_SHAPE_ERROR,
                op + ": data must be NCHW and rois (regions, 5)");
  }
  ROIPoolArgs a;
  a.n = data.dim(0);
  a.c = data.dim(1);
  a.h = data.dim(2);
  a.w = data.dim(3);
  a.num_rois = rois.dim(0);
  a.ph = (*pooled)[0];
  a.pw = (*pooled)[1];
  a.spatial_scale = NumberAttr(op, attrs, "spatial_scale", 0);
  if (!(a.spatial_scale > 0)) {
    throw Error(MX_STATUS_INVALID_ARGUMENT, op + ": spatial_scale must be > 0");
  }
  return a;
}

// (data, rois) -> (output, argmax); the regions are checked on the device
// and the flag read back (the call synchronizes its stream).
void ROIPooling(const KernelContext& ctx, const Attrs& attrs, Tensors in,
                const int32_t* req, Tensors out) {
  const std::string op = "ROIPooling";
  RequireFloat(op, in[0]);
  if (out[1].dtype() != MX_DTYPE_INT32) {
    throw Error(MX_STATUS_DTYPE_ERROR, op + ": argmax must be int32");
  }
  const ROIPoolArgs a = ROIPoolOf(op, attrs, in[0], in[1]);
  cudaStream_t s = StreamOf(ctx);
  auto* bad = static_cast<uint64_t*>(Workspace(ctx, sizeof(uint64_t)));
  CheckCuda(cudaMemsetAsync(bad, 0xff, sizeof(uint64_t), s), op);
  CheckLaunch(op,
              LaunchROIPool(in[0].dtype(), a, in[0].data<void>(),
                            in[1].data<void>(), out[0].data<void>(), req[0],
                            out[1].data<int32_t>(), req[1], bad, s),
              in[0].dtype());
  uint64_t host = ~uint64_t{0};
  ReadBack(op, s, bad, &host, sizeof(host));
  if (host != ~uint64_t{0}) {
    throw Error(MX_STATUS_INVALID_ARGUMENT,
                op + ": input rois row " + std::to_string(host) +
                    " has a batch index past data's images or non-finite "
                    "coordinates");
  }
}

// (out_grad, data, rois, argmax) -> (data_grad, zeros for rois).
void ROIPoolingBackward(const KernelContext& ctx, const Attrs& attrs,
                        Tensors in, const int32_t* req, Tensors out) {
  const std::string op = "_backward_ROIPooling";
  RequireFloat(op, in[1]);
  const ROIPoolArgs a = ROIPoolOf(op, attrs, in[1], in[2]);
  if (in[3].dtype() != MX_DTYPE_INT32 || in[0].size() != in[3].size() ||
      in[0].size() != a.num_rois * a.c * a.ph * a.pw) {
    throw Error(MX_STATUS_SHAPE_ERROR,
                op + ": out_grad and argmax must be (regions, channels, "
                     "pooled_size), argmax int32");
  }
  cudaStream_t s = StreamOf(ctx);
  FillOutput(op, s, out[1], req[1], 0.0);
  void* scratch = Workspace(ctx, ROIPoolGradScratchBytes(a));
  CheckLaunch(op,
              LaunchROIPoolBackward(in[1].dtype(), a, in[0].data<void>(),
                                    in[2].data<void>(), in[3].data<int32_t>(),
                                    out[0].data<void>(), req[0], scratch, s),
              in[1].dtype());
}

}  // namespace

void RegisterNormOps(mxplugin::Plugin& plugin) {
  RegisterGpuKernel(plugin, "ROIPooling", ROIPooling);
  RegisterGpuKernel(plugin, "_backward_ROIPooling", ROIPoolingBackward);
  RegisterGpuKernel(plugin, "LeakyReLU", LeakyReLU);
  RegisterGpuKernel(plugin, "_backward_LeakyReLU_prelu", PreluBackward);
  RegisterGpuKernel(plugin, "LayerNorm", LayerNorm);
  RegisterGpuKernel(plugin, "_backward_LayerNorm", LayerNormBackward);
  RegisterGpuKernel(plugin, "L2Normalization", L2Normalization);
  RegisterGpuKernel(plugin, "_backward_L2Normalization",
                    L2NormalizationBackward);
  RegisterGpuKernel(plugin, "_contrib_div_sqrt_dim", DivSqrtDim);
  RegisterGpuKernel(plugin, "_contrib_AdaptiveAvgPooling2D", AdaptivePool);
  RegisterGpuKernel(plugin, "_backward_contrib_AdaptiveAvgPooling2D",
                    AdaptivePoolBackward);
  RegisterGpuKernel(plugin, "_contrib_ROIAlign", ROIAlign);
  RegisterGpuKernel(plugin, "_backward_contrib_ROIAlign", ROIAlignBackward);
}

}  // namespace mx_cuda
