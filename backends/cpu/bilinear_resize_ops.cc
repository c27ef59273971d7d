// _contrib_BilinearResize2D, as MXNet's: NCHW data resized to (height,
// width) by bilinear interpolation, the size given directly, by scale, by a
// second input (mode=like) or by a parity rule (to_even_down, ...), with
// align_corners (default, MXNet's original behaviour) or half-pixel
// centres. The gradient _backward_contrib_BilinearResize2D spreads each
// output gradient over its four source pixels; its own gradient is the
// resize again (mode=like), so every order differentiates.
#include <cmath>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "backends/common/mxnet_geometry.h"
#include "backends/cpu/grad_util.h"
#include "backends/cpu/kernel_util.h"
#include "backends/cpu/like_input_op.h"
#include "base/error.h"

namespace mx {
namespace cpu {
namespace {

struct BilinearResizeParam {
  int height = 1;
  int width = 1;
  std::optional<double> scale_height;
  std::optional<double> scale_width;
  std::string mode = "size";
  bool align_corners = true;
  static void Declare(ParamSchema<BilinearResizeParam>* s) {
    s->Field("height", &BilinearResizeParam::height)
        .Describe("output height (mode=size without scale_height)");
    s->Field("width", &BilinearResizeParam::width)
        .Describe("output width (mode=size without scale_width)");
    s->Field("scale_height", &BilinearResizeParam::scale_height)
        .Describe("output height = scale_height * input height");
    s->Field("scale_width", &BilinearResizeParam::scale_width)
        .Describe("output width = scale_width * input width");
    s->Field("mode", &BilinearResizeParam::mode)
        .Choices({"size", "odd_scale", "like", "to_even_down", "to_even_up",
                  "to_odd_down", "to_odd_up"})
        .Describe("how the output size is chosen");
    s->Field("align_corners", &BilinearResizeParam::align_corners)
        .Describe("corner pixels aligned (else half-pixel centres)");
  }
};

// One output extent from input extent `in` along one axis, as MXNet's
// modes choose it; `like` is the like input's extent (mode=like).
int64_t ResizedExtent(const NodeAttrs& attrs, int64_t in, int fixed,
                      const std::optional<double>& scale, int64_t like,
                      const char* name) {
  const std::string& mode = attrs.get<BilinearResizeParam>().mode;
  const std::string label = OpLabel(attrs);
  const auto scaled = [&](double extent) {
    if (!scale) {
      throw InvalidArgument(
          absl::StrCat(label, ": mode=", mode, " needs scale_", name));
    }
    const double v = *scale * extent;
    if (!(v >= 0 && v < 2147483648.0)) {
      throw InvalidArgument(absl::StrCat(label, ": scale_", name, "=", *scale,
                                         " gives a ", name, " of ", v));
    }
    return static_cast<int64_t>(v);
  };
  int64_t out = 0;
  if (mode == "size") {
    out = scale ? scaled(static_cast<double>(in)) : fixed;
  } else if (mode == "odd_scale") {
    out = in % 2 == 0 ? scaled(static_cast<double>(in))
                      : scaled(static_cast<double>(in - 1)) + 1;
  } else if (mode == "like") {
    out = like;
  } else if (mode == "to_even_down") {
    out = in % 2 == 0 ? in : in - 1;
  } else if (mode == "to_even_up") {
    out = in % 2 == 0 ? in : in + 1;
  } else if (mode == "to_odd_down") {
    out = in % 2 == 1 ? in : in - 1;
  } else {  // to_odd_up
    out = in % 2 == 1 ? in : in + 1;
  }
  if (out <= 0) {
    throw ShapeError(absl::StrCat(label, ": the output ", name, " would be ",
                                  out, " (input ", name, " ", in,
                                  ", mode=", mode, ")"));
  }
  return out;
}

int NumInputs(const NodeAttrs& attrs) {
  return attrs.get<BilinearResizeParam>().mode == "like" ? 2 : 1;
}

// The output shape for data `d` (and `like` for mode=like).
TShape ResizedShape(const NodeAttrs& attrs, const TShape& d,
                    const TShape* like) {
  if (d.ndim() != 4) {
    throw ShapeError(absl::StrCat(OpLabel(attrs), ": input 0 (data) has shape ",
                                  d.ToString(), "; 4 dims (NCHW) needed"));
  }
  if (d[2] < 1 || d[3] < 1) {  // Nothing to interpolate from.
    throw ShapeError(absl::StrCat(OpLabel(attrs), ": input 0 (data) has shape ",
                                  d.ToString(),
                                  "; height and width must be "
                                  "at least 1"));
  }
  if (like != nullptr && like->ndim() != 4) {
    throw ShapeError(absl::StrCat(OpLabel(attrs), ": input 1 (like) has shape ",
                                  like->ToString(), "; 4 dims (NCHW) needed"));
  }
  const BilinearResizeParam& p = attrs.get<BilinearResizeParam>();
  return TShape({d[0], d[1],
                 ResizedExtent(attrs, d[2], p.height, p.scale_height,
                               like ? (*like)[2] : 0, "height"),
                 ResizedExtent(attrs, d[3], p.width, p.scale_width,
                               like ? (*like)[3] : 0, "width")});
}

// The taps (mx_math::BilinearTapOf) of every output index along one axis.
std::vector<mx_math::BilinearTap> TapsOf(int64_t in, int64_t out,
                                         bool align_corners) {
  std::vector<mx_math::BilinearTap> taps;
  taps.reserve(out);
  for (int64_t o = 0; o < out; ++o) {
    taps.push_back(mx_math::BilinearTapOf(in, out, align_corners, o));
  }
  return taps;
}

// Calls f(out_index, in_index, weight) for the four taps of every output
// pixel of one plane.
template <typename F>
void ForEachTap(const std::vector<mx_math::BilinearTap>& th,
                const std::vector<mx_math::BilinearTap>& tw, int64_t in_w,
                F f) {
  const int64_t oh = th.size(), ow = tw.size();
  for (int64_t y = 0; y < oh; ++y) {
    const double fy = th[y].frac;
    const int64_t r0 = th[y].lo * in_w, r1 = r0 + th[y].step * in_w;
    for (int64_t x = 0; x < ow; ++x) {
      const double fx = tw[x].frac;
      const int64_t c0 = tw[x].lo, c1 = c0 + tw[x].step;
      const int64_t o = y * ow + x;
      f(o, r0 + c0, (1 - fy) * (1 - fx));
      f(o, r0 + c1, (1 - fy) * fx);
      f(o, r1 + c0, fy * (1 - fx));
      f(o, r1 + c1, fy * fx);
    }
  }
}

// forward: small = data (N, C, H, W), large = output; backward: the
// gradient flows from the output's shape back to data's.
void Resize(bool backward, const NodeAttrs& attrs, const TBlob& src,
            const TShape& data_shape, const TShape& out_shape, OpReqType req,
            const TBlob& dst) {
  if (req == OpReqType::kNullOp || dst.Size() == 0) return;
  const bool align = attrs.get<BilinearResizeParam>().align_corners;
  const int64_t ih = data_shape[2], iw = data_shape[3];
  const int64_t oh = out_shape[2], ow = out_shape[3];
  const std::vector<mx_math::BilinearTap> th = TapsOf(ih, oh, align),
                                          tw = TapsOf(iw, ow, align);
  const int64_t planes = data_shape[0] * data_shape[1];
  MX_FLOAT_DTYPE_SWITCH(src.dtype, T, {
    using A = AccType<T>;
    const T* s = src.data<T>();
    T* d = dst.data<T>();
    ParallelFor(planes, 1, [&](int64_t b, int64_t e) {
      std::vector<double> acc(backward ? ih * iw : oh * ow);
      for (int64_t p = b; p < e; ++p) {
        std::fill(acc.begin(), acc.end(), 0.0);
        const T* sp = s + p * (backward ? oh * ow : ih * iw);
        ForEachTap(th, tw, iw, [&](int64_t o, int64_t i, double w) {
          if (backward) {
            acc[i] += w * static_cast<double>(static_cast<A>(sp[o]));
          } else {
            acc[o] += w * static_cast<double>(static_cast<A>(sp[i]));
          }
        });
        T* dp = d + p * static_cast<int64_t>(acc.size());
        for (size_t k = 0; k < acc.size(); ++k) {
          Assign(dp + k, req, static_cast<A>(acc[k]));
        }
      }
    });
  });
}

[[maybe_unused]] const bool kRegistered = [] {
  auto [op, backward] = RegisterLikeInputOp(
      "_contrib_BilinearResize2D", "_backward_contrib_BilinearResize2D",
      [](const NodeAttrs& attrs) { return NumInputs(attrs) == 2; },
      ResizedShape, "like", {{"mode", "like"}}, /*float_only=*/true,
      [](const OpContext&, const NodeAttrs& attrs, const std::vector<TBlob>& in,
         const std::vector<OpReqType>& req, const std::vector<TBlob>& out) {
        Resize(false, attrs, in[0], in[0].shape, out[0].shape, req[0], out[0]);
      },
      [](const OpContext&, const NodeAttrs& attrs, const std::vector<TBlob>& in,
         const std::vector<OpReqType>& req, const std::vector<TBlob>& out) {
        Resize(true, attrs, in[0], in[1].shape, in[0].shape, req[0], out[0]);
        ZeroLikeGradient(req, out);
      });
  op->Describe(
        "Bilinear resize of NCHW data to (height, width), by scale, to a "
        "`like` input's size, or by a parity rule; align_corners as MXNet's.")
      .SetParams<BilinearResizeParam>();
  backward
      ->Describe(
          "Gradient of _contrib_BilinearResize2D: (ograd, data[, like]) -> "
          "(data_grad[, zeros for like]).")
      .SetParams<BilinearResizeParam>();
  return true;
}();

}  // namespace
}  // namespace cpu
}  // namespace mx
