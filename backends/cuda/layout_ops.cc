// GPU kernels for ops that move elements without arithmetic, and their
// gradients: slice, slice_axis, slice_like (strided gathers; gradients are
// scatters into zeros), reverse (negative strides), tile and repeat
// (gathers with stride-0 axes; gradients sum over the copies), Pad (all
// three modes), stack / SliceChannel (2-D block copies) and UpSampling
// (nearest: a gather per input; its gradient sums each block).
#include <algorithm>
#include <optional>
#include <string>
#include <vector>

#include "backends/common/attr_parse.h"
#include "backends/cuda/cuda_ops.h"
#include "backends/cuda/cuda_util.h"
#include "backends/cuda/elementwise.h"

namespace mx_cuda {
namespace {

using mxplugin::Attrs;
using mxplugin::Error;
using mxplugin::KernelContext;
using mxplugin::Tensor;
using mxplugin::Tensors;

[[noreturn]] void BadAttr(const std::string& op, const Attrs& attrs,
                          const std::string& key) {
  throw Error(MX_STATUS_INVALID_ARGUMENT,
              op + ": cannot use " + key + "=\"" + attrs.Get(key, "") + "\"");
}

int AxisOf(const std::string& op, const Attrs& attrs, const std::string& key,
           int64_t value, int ndim) {
  if (value < -ndim || value >= ndim) BadAttr(op, attrs, key);
  return static_cast<int>(value < 0 ? value + ndim : value);
}

// ---- slice, slice_axis, slice_like: the part of `whole` they select. ----

// NumPy's rules, as the CPU's slice: the first index of an axis.
int64_t SliceBegin(int64_t n, std::optional<int64_t> b, int64_t step) {
  auto wrap = [n](int64_t v, int64_t lo, int64_t hi) {
    if (v < 0) v += n;
    return std::clamp(v, lo, hi);
  };
  if (step > 0) return b ? wrap(*b, 0, n) : 0;
  return b ? wrap(*b, -1, n - 1) : n - 1;
}

// One optional integer per axis from "(0, None, -2)".
std::vector<std::optional<int64_t>> OptionalInts(const std::string& op,
                                                 const std::string& text) {
  std::vector<std::optional<int64_t>> v;
  std::string body = text;
  body.erase(std::remove_if(body.begin(), body.end(),
                            [](char c) {
                              return c == '(' || c == ')' || c == '[' ||
                                     c == ']' || c == ' ';
                            }),
             body.end());
  size_t start = 0;
  while (start <= body.size() && !body.empty()) {
    const size_t comma = body.find(',', start);
    const std::string item = body.substr(
        start, comma == std::string::npos ? std::string::npos : comma - start);
    if (item.empty() && comma == std::string::npos) break;
    if (item == "None") {
      v.push_back(std::nullopt);
    } else {
      const auto i = mxplugin::ParseInt(item);
      if (!i) {
        throw Error(MX_STATUS_INVALID_ARGUMENT,
                    op + ": cannot read \"" + text + "\"");
      }
      v.push_back(*i);
    }
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return v;
}

// The elements of `whole` that slice(begin, end, step) gives as `part`.
GatherIndex SliceIndex(const std::string& op, const Attrs& attrs,
                       const Tensor& whole, const Tensor& part) {
  const int n = whole.ndim();
  if (n > kMaxDims) Unsupported(op, "more than 8 dimensions");
  const auto begin = OptionalInts(op, attrs.Get("begin", "()"));
  const auto step = OptionalInts(op, attrs.Get("step", "()"));
  const std::vector<int64_t> ws = StridesOf(whole);
  GatherIndex gi;
  gi.ndim = n;
  for (int d = 0; d < n; ++d) {
    int64_t s = 1;
    if (d < static_cast<int>(step.size()) && step[d]) s = *step[d];
    if (s == 0) throw Error(MX_STATUS_INVALID_ARGUMENT, op + ": step 0");
    const std::optional<int64_t> b =
        d < static_cast<int>(begin.size()) ? begin[d] : std::nullopt;
    gi.shape[d] = part.dim(d);
    gi.stride[d] = ws[d] * s;
    if (part.dim(d) > 0) gi.offset += SliceBegin(whole.dim(d), b, s) * ws[d];
  }
  return gi;
}

GatherIndex SliceAxisIndex(const std::string& op, const Attrs& attrs,
                           const Tensor& whole, const Tensor& part) {
  const int n = whole.ndim();
  if (n > kMaxDims) Unsupported(op, "more than 8 dimensions");
  const auto axis = mxplugin::ParseInt(attrs.Get("axis", ""));
  const auto begin = mxplugin::ParseInt(attrs.Get("begin", ""));
  if (!axis) BadAttr(op, attrs, "axis");
  if (!begin) BadAttr(op, attrs, "begin");
  const int ax = AxisOf(op, attrs, "axis", *axis, n);
  const std::vector<int64_t> ws = StridesOf(whole);
  GatherIndex gi;
  gi.ndim = n;
  for (int d = 0; d < n; ++d) {
    gi.shape[d] = part.dim(d);
    gi.stride[d] = ws[d];
  }
  if (part.size() > 0)
    gi.offset = SliceBegin(whole.dim(ax), *begin, 1) * ws[ax];
  return gi;
}

// slice_like keeps the leading block of every axis.
GatherIndex LeadingBlockIndex(const std::string& op, const Tensor& whole,
                              const Tensor& part) {
  const int n = whole.ndim();
  if (n > kMaxDims || part.ndim() != n) Unsupported(op, "these ranks");
  const std::vector<int64_t> ws = StridesOf(whole);
  GatherIndex gi;
  gi.ndim = n;
  for (int d = 0; d < n; ++d) {
    gi.shape[d] = part.dim(d);
    gi.stride[d] = ws[d];
  }
  return gi;
}

// ---- reverse, tile, repeat. ----

GatherIndex ReverseIndex(const std::string& op, const Attrs& attrs,
                         const Tensor& x) {
  const int n = x.ndim();
  if (n > kMaxDims) Unsupported(op, "more than 8 dimensions");
  const auto axes = mxplugin::ParseTuple(attrs.Get("axis", ""));
  if (!axes) BadAttr(op, attrs, "axis");
  const std::vector<int64_t> xs = StridesOf(x);
  GatherIndex gi;
  gi.ndim = n;
  for (int d = 0; d < n; ++d) {
    gi.shape[d] = x.dim(d);
    gi.stride[d] = xs[d];
  }
  // Each listed axis flips once more: twice is none, as MXNet (and the CPU).
  std::vector<bool> flipped(n, false);
  for (int64_t a : *axes) {
    const int d = AxisOf(op, attrs, "axis", a, n);
    flipped[d] = !flipped[d];
  }
  for (int d = 0; d < n; ++d) {
    if (!flipped[d] || x.dim(d) == 0) continue;
    gi.offset += (x.dim(d) - 1) * xs[d];
    gi.stride[d] = -xs[d];
  }
  return gi;
}

// Axes of tile / repeat as (copies, extent) pairs: the output reads the
// input with stride 0 along the copies; the gradient sums over them.
struct CopyAxes {
  // Per input axis (after padding with leading 1s): how many copies, and
  // whether the copies are outside (tile: whole blocks) or inside (repeat:
  // each element repeated).
  std::vector<int64_t> extent, copies;
  std::vector<bool> inside;
};

CopyAxes TileAxes(const std::string& op, const Attrs& attrs, const Tensor& x) {
  const auto reps = mxplugin::ParseTuple(attrs.Get("reps", ""));
  if (!reps) BadAttr(op, attrs, "reps");
  const int nr = static_cast<int>(reps->size());
  const int nd = std::max(x.ndim(), nr);
  CopyAxes c;
  for (int d = 0; d < nd; ++d) {
    const int dx = d - (nd - x.ndim()), dr = d - (nd - nr);
    c.extent.push_back(dx >= 0 ? x.dim(dx) : 1);
    const int64_t r = dr >= 0 ? (*reps)[dr] : 1;
    if (r < 0) BadAttr(op, attrs, "reps");
    c.copies.push_back(r);
    c.inside.push_back(false);
  }
  return c;
}

CopyAxes RepeatAxes(const std::string& op, const Attrs& attrs,
                    const Tensor& x) {
  const auto repeats = mxplugin::ParseInt(attrs.Get("repeats", ""));
  if (!repeats || *repeats < 0) BadAttr(op, attrs, "repeats");
  const std::string axis_text = attrs.Get("axis", "None");
  CopyAxes c;
  if (axis_text == "None") {
    c.extent = {x.size()};
    c.copies = {*repeats};
    c.inside = {true};
    return c;
  }
  const auto axis = mxplugin::ParseInt(axis_text);
  if (!axis) BadAttr(op, attrs, "axis");
  const int a = AxisOf(op, attrs, "axis", *axis, x.ndim());
  for (int d = 0; d < x.ndim(); ++d) {
    c.extent.push_back(x.dim(d));
    c.copies.push_back(d == a ? *repeats : 1);
    c.inside.push_back(true);
  }
  return c;
}

// Forward: the output (copies and extents interleaved) gathers the input
// with stride 0 along each copy axis. Gradient (`grad`): the input-shaped
// gradient sums the output gradient over the copy axes.
GatherIndex CopyIndex(const std::string& op, const CopyAxes& c, bool grad) {
  const int nd = static_cast<int>(c.extent.size());
  std::vector<int64_t> in_stride(nd, 1);
  for (int d = nd - 2; d >= 0; --d) {
    in_stride[d] = in_stride[d + 1] * c.extent[d + 1];
  }
  // Output axes, outermost first: (extent, stride in x, stride in dy, copy).
  struct Axis {
    int64_t extent, x_stride, is_copy;
  };
  std::vector<Axis> axes;
  for (int d = 0; d < nd; ++d) {
    const Axis e{c.extent[d], in_stride[d], 0};
    const Axis r{c.copies[d], 0, 1};
    if (c.copies[d] == 1) {
      axes.push_back(e);
    } else if (c.inside[d]) {
      axes.push_back(e);
      axes.push_back(r);
    } else {
      axes.push_back(r);
      axes.push_back(e);
    }
  }
  if (static_cast<int>(axes.size()) > kMaxDims) {
    Unsupported(op, "more than 8 dimensions with copies");
  }
  GatherIndex gi;
  if (!grad) {
    gi.ndim = static_cast<int>(axes.size());
    for (int i = 0; i < gi.ndim; ++i) {
      gi.shape[i] = axes[i].extent;
      gi.stride[i] = axes[i].x_stride;
    }
    return gi;
  }
  // Row-major strides of the output gradient over the interleaved axes.
  std::vector<int64_t> dy_stride(axes.size(), 1);
  for (int i = static_cast<int>(axes.size()) - 2; i >= 0; --i) {
    dy_stride[i] = dy_stride[i + 1] * axes[i + 1].extent;
  }
  for (size_t i = 0; i < axes.size(); ++i) {
    if (axes[i].is_copy) {
      gi.rshape[gi.rdim] = axes[i].extent;
      gi.rstride[gi.rdim++] = dy_stride[i];
    } else {
      gi.shape[gi.ndim] = axes[i].extent;
      gi.stride[gi.ndim++] = dy_stride[i];
    }
  }
  return gi;
}

template <bool kTile, bool kGrad>
void CopyOp(const KernelContext& ctx, const Attrs& attrs, Tensors in,
            const int32_t* req, Tensors out) {
  const std::string op =
      std::string(kGrad ? "_backward_" : "") + (kTile ? "tile" : "repeat");
  // The gradient's inputs are (out_grad, data).
  const Tensor x = kGrad ? in[1] : in[0];
  // The gradients are float-only, as the CPU's (the copies take integers).
  if (kGrad) RequireFloat(op, in[0]);
  const CopyAxes c = kTile ? TileAxes(op, attrs, x) : RepeatAxes(op, attrs, x);
  RunGather(op, ctx, CopyIndex(op, c, kGrad), in[0], out[0], req[0]);
}

// ---- Pad. ----

PadIndex PadIndexOf(const std::string& op, const Attrs& attrs, const Tensor& x,
                    const Tensor& y) {
  const int n = x.ndim();
  if (n > kMaxDims) Unsupported(op, "more than 8 dimensions");
  const std::string mode = attrs.Get("mode", "constant");
  PadIndex p;
  p.ndim = n;
  if (mode == "constant") {
    p.mode = PadMode::kConstant;
  } else if (mode == "edge") {
    p.mode = PadMode::kEdge;
  } else if (mode == "reflect") {
    p.mode = PadMode::kReflect;
  } else {
    BadAttr(op, attrs, "mode");
  }
  const auto width = mxplugin::ParseTuple(attrs.Get("pad_width", ""));
  if (!width || static_cast<int>(width->size()) != 2 * n) {
    BadAttr(op, attrs, "pad_width");
  }
  const std::vector<int64_t> xs = StridesOf(x);
  for (int d = 0; d < n; ++d) {
    const int64_t before = (*width)[2 * d], after = (*width)[2 * d + 1];
    if (before < 0 || after < 0 || x.dim(d) + before + after != y.dim(d)) {
      BadAttr(op, attrs, "pad_width");
    }
    if (p.mode == PadMode::kReflect &&
        (before >= x.dim(d) || after >= x.dim(d)) && before + after > 0) {
      BadAttr(op, attrs, "pad_width");  // The CPU's shape check says more.
    }
    p.out_shape[d] = y.dim(d);
    p.in_shape[d] = x.dim(d);
    p.in_stride[d] = xs[d];
    p.before[d] = before;
  }
  return p;
}

void Pad(const KernelContext& ctx, const Attrs& attrs, Tensors in,
         const int32_t* req, Tensors out) {
  if (req[0] == MX_REQ_NULL) return;
  RequireNumeric("Pad", in[0]);
  const PadIndex p = PadIndexOf("Pad", attrs, in[0], out[0]);
  CheckCuda(
      LaunchPad(in[0].dtype(), out[0].size(), p,
                NumberAttr("Pad", attrs, "constant_value", 0.0),
                in[0].data<void>(), out[0].data<void>(), req[0], StreamOf(ctx)),
      "Pad");
}

// (out_grad, data) -> data's gradient.
void PadBackward(const KernelContext& ctx, const Attrs& attrs, Tensors in,
                 const int32_t* req, Tensors out) {
  const std::string op = "_backward_Pad";
  if (req[0] == MX_REQ_NULL) return;
  RequireFloat(op, in[0]);
  const PadIndex p = PadIndexOf(op, attrs, in[1], in[0]);
  cudaStream_t s = StreamOf(ctx);
  ZeroUnlessAdding(op, ctx, out[0], req[0]);
  CheckCuda(LaunchPadGrad(in[0].dtype(), in[0].size(), p, in[0].data<void>(),
                          out[0].data<void>(), s),
            op);
}

// An op selecting part of its input (gi: where `part` lies in `whole`) and
// its gradient, which scatters the part's gradient into zeros of the
// whole: forward (data, ...) -> part; gradient (part's gradient, whole's
// stand-in) -> whole.
using PartIndex = GatherIndex (*)(const std::string& op, const Attrs& attrs,
                                  const Tensor& whole, const Tensor& part);

void RegisterPartOp(mxplugin::Plugin& plugin, const std::string& op,
                    PartIndex index) {
  RegisterGpuKernel(plugin, op,
                    [op, index](const KernelContext& ctx, const Attrs& attrs,
                                Tensors in, const int32_t* req, Tensors out) {
                      RunGather(op, ctx, index(op, attrs, in[0], out[0]), in[0],
                                out[0], req[0]);
                    });
  const std::string grad = "_backward_" + op;
  RegisterGpuKernel(plugin, grad,
                    [grad, index](const KernelContext& ctx, const Attrs& attrs,
                                  Tensors in, const int32_t* req, Tensors out) {
                      RunScatter(grad, ctx, index(grad, attrs, out[0], in[0]),
                                 in[0], out[0], req[0]);
                    });
}

GatherIndex LeadingBlock(const std::string& op, const Attrs&,
                         const Tensor& whole, const Tensor& part) {
  return LeadingBlockIndex(op, whole, part);
}

// ---- UpSampling, as the CPU's upsampling_ops.cc (bilinear: the
// Deconvolution kernel). ----

// Input i enlarges by (output height / its height) and lands at channel
// `channel` (concat) or adds to channel 0 on (sum); the host checked the
// shapes.
void UpSampling(const KernelContext& ctx, const Attrs& attrs, Tensors in,
                const int32_t* req, Tensors out) {
  const std::string op = "UpSampling";
  if (attrs.Get("sample_type", "") == "bilinear") {
    // MXNet's: the grouped Deconvolution the CPU's upsampling_ops.cc
    // describes.
    const auto scale = mxplugin::ParseInt(attrs.Get("scale", ""));
    const std::string nf = attrs.Get("num_filter", "0");
    if (!scale || *scale < 1) BadAttr(op, attrs, "scale");
    const int64_t k = 2 * *scale - *scale % 2, pad = *scale / 2;
    const auto pair = [](int64_t v) {
      return "(" + std::to_string(v) + "," + std::to_string(v) + ")";
    };
    const mxplugin::OwnedAttrs deconv({{"kernel", pair(k)},
                                       {"stride", pair(*scale)},
                                       {"pad", pair(pad)},
                                       {"num_filter", nf},
                                       {"num_group", nf},
                                       {"no_bias", "True"}});
    RunDeconvolution(ctx, deconv.view(), in, req, out);
    return;
  }
  if (attrs.Get("sample_type", "") != "nearest") {
    Unsupported(op, "sample_type other than nearest");
  }
  const Tensor& y = out[0];
  if (req[0] == MX_REQ_NULL || y.size() == 0) return;
  const bool sum = attrs.Get("multi_input_mode", "concat") == "sum";
  const int64_t oc = y.dim(1), oh = y.dim(2), ow = y.dim(3);
  const size_t bytes = DTypeSize(y.dtype());
  int64_t channel = 0;
  for (int i = 0; i < in.size(); ++i) {
    const Tensor& x = in[i];
    RequireNumeric(op, x);  // Integers too, as the CPU's nearest copies.
    const int64_t n = x.dim(0), c = x.dim(1), h = x.dim(2), w = x.dim(3);
    const int64_t f = oh / h;
    // Output (c, h, f, w, f) reads x (c, h, w): stride 0 along the copies.
    GatherIndex gi;
    gi.ndim = 5;
    const int64_t shape[] = {c, h, f, w, f}, stride[] = {h * w, w, 0, 1, 0};
    std::copy(shape, shape + 5, gi.shape);
    std::copy(stride, stride + 5, gi.stride);
    const int r = sum && i > 0 ? MX_REQ_ADD : req[0];
    // One batch item's channels are contiguous in y; all of them are when x
    // fills every channel.
    const int64_t items = c == oc ? 1 : n;
    if (c == oc) gi.shape[0] = n * c;
    for (int64_t b = 0; b < items; ++b) {
      const char* src =
          static_cast<const char*>(x.data<void>()) + b * c * h * w * bytes;
      char* dst = static_cast<char*>(y.data<void>()) +
                  (b * oc + channel) * oh * ow * bytes;
      CheckCuda(LaunchGatherSum(x.dtype(), gi.shape[0] * oh * ow, gi, src, dst,
                                r, StreamOf(ctx)),
                op);
    }
    if (!sum) channel += c;
  }
}

// Inputs (ograd, arg0, ...): each argument's gradient sums its blocks of
// ograd.
void UpSamplingBackward(const KernelContext& ctx, const Attrs& attrs,
                        Tensors in, const int32_t* req, Tensors out) {
  const std::string op = "_backward_UpSampling";
  const Tensor& g = in[0];
  RequireNumeric(op, g);
  const bool sum = attrs.Get("multi_input_mode", "concat") == "sum";
  const int64_t oc = g.dim(1), oh = g.dim(2), ow = g.dim(3);
  int64_t channel = 0;
  for (int i = 0; i < out.size(); ++i) {
    const Tensor& gx = out[i];
    const int64_t n = gx.dim(0), c = gx.dim(1), h = gx.dim(2), w = gx.dim(3);
    const int64_t f = oh / h;
    if (req[i] != MX_REQ_NULL && gx.size() > 0) {
      GatherIndex gi;
      gi.ndim = 4;
      gi.rdim = 2;
      const int64_t shape[] = {n, c, h, w},
                    stride[] = {oc * oh * ow, oh * ow, f * ow, f};
      std::copy(shape, shape + 4, gi.shape);
      std::copy(stride, stride + 4, gi.stride);
      gi.rshape[0] = gi.rshape[1] = f;
      gi.rstride[0] = ow;
      gi.rstride[1] = 1;
      gi.offset = channel * oh * ow;
      CheckCuda(LaunchGatherSum(g.dtype(), gx.size(), gi, g.data<void>(),
                                gx.data<void>(), req[i], StreamOf(ctx)),
                op);
    }
    if (!sum) channel += c;
  }
}

// ---- diag: the diagonal as a strided view of the larger array (the 1-D
// input's square matrix, or the N-D input), as backends/cpu/diag_ops.cc.

GatherIndex DiagIndex(const std::string& op, const Attrs& attrs,
                      const Tensor& data) {
  const auto k = mxplugin::ParseInt(attrs.Get("k", "0"));
  if (!k) BadAttr(op, attrs, "k");
  GatherIndex gi;
  const int n = data.ndim();
  if (n == 1) {
    const int64_t m = data.dim(0) + (*k < 0 ? -*k : *k);
    gi.ndim = 1;
    gi.shape[0] = data.dim(0);
    gi.stride[0] = m + 1;
    gi.offset = *k >= 0 ? *k : -*k * m;
    return gi;
  }
  if (n < 1 || n - 1 > kMaxDims) Unsupported(op, "this rank");
  const auto axis1 = mxplugin::ParseInt(attrs.Get("axis1", "0"));
  const auto axis2 = mxplugin::ParseInt(attrs.Get("axis2", "1"));
  if (!axis1) BadAttr(op, attrs, "axis1");
  if (!axis2) BadAttr(op, attrs, "axis2");
  const int a1 = AxisOf(op, attrs, "axis1", *axis1, n);
  const int a2 = AxisOf(op, attrs, "axis2", *axis2, n);
  if (a1 == a2) BadAttr(op, attrs, "axis2");
  const std::vector<int64_t> s = StridesOf(data);
  const int64_t d1 = data.dim(a1), d2 = data.dim(a2);
  int64_t len = *k >= 0 ? std::min(d1, d2 - *k) : std::min(d1 + *k, d2);
  if (len < 0) len = 0;
  for (int d = 0; d < n; ++d) {
    if (d == a1 || d == a2) continue;
    gi.shape[gi.ndim] = data.dim(d);
    gi.stride[gi.ndim] = s[d];
    ++gi.ndim;
  }
  gi.shape[gi.ndim] = len;
  gi.stride[gi.ndim] = s[a1] + s[a2];
  ++gi.ndim;
  gi.offset = len == 0 ? 0 : (*k >= 0 ? *k * s[a2] : -*k * s[a1]);
  return gi;
}

void Diag(const KernelContext& ctx, const Attrs& attrs, Tensors in,
          const int32_t* req, Tensors out) {
  const std::string op = "diag";
  const GatherIndex gi = DiagIndex(op, attrs, in[0]);
  if (in[0].ndim() == 1) {
    RunScatter(op, ctx, gi, in[0], out[0], req[0]);
  } else {
    RunGather(op, ctx, gi, in[0], out[0], req[0]);
  }
}

// (ograd, data) -> ograd copied back to data's shape.
void DiagBackward(const KernelContext& ctx, const Attrs& attrs, Tensors in,
                  const int32_t* req, Tensors out) {
  const std::string op = "_backward_diag";
  const GatherIndex gi = DiagIndex(op, attrs, in[1]);
  if (in[1].ndim() == 1) {
    RunGather(op, ctx, gi, in[0], out[0], req[0]);
  } else {
    RunScatter(op, ctx, gi, in[0], out[0], req[0]);
  }
}

}  // namespace

void RegisterLayoutOps(mxplugin::Plugin& plugin) {
  RegisterGpuKernel(plugin, "diag", Diag);
  RegisterGpuKernel(plugin, "_backward_diag", DiagBackward);
  // _backward_slice(_axis) take (the slice's gradient, like);
  // _backward_slice_like takes (out_grad, data).
  RegisterPartOp(plugin, "slice", SliceIndex);
  RegisterPartOp(plugin, "slice_axis", SliceAxisIndex);
  RegisterPartOp(plugin, "slice_like", LeadingBlock);
  RegisterGpuKernel(plugin, "reverse",
                    [](const KernelContext& ctx, const Attrs& attrs, Tensors in,
                       const int32_t* req, Tensors out) {
                      RunGather("reverse", ctx,
                                ReverseIndex("reverse", attrs, in[0]), in[0],
                                out[0], req[0]);
                    });
  RegisterGpuKernel(plugin, "tile", CopyOp<true, false>);
  RegisterGpuKernel(plugin, "_backward_tile", CopyOp<true, true>);
  RegisterGpuKernel(plugin, "repeat", CopyOp<false, false>);
  RegisterGpuKernel(plugin, "_backward_repeat", CopyOp<false, true>);
  RegisterGpuKernel(plugin, "Pad", Pad);
  RegisterGpuKernel(plugin, "_backward_Pad", PadBackward);
  RegisterGpuKernel(plugin, "UpSampling", UpSampling);
  RegisterGpuKernel(plugin, "_backward_UpSampling", UpSamplingBackward);
}

}  // namespace mx_cuda
