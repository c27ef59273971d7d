// Crop, MXNet's legacy spatial crop of NCHW data: to h_w (num_args=1) or
// to a second input's height and width (num_args=2, crop_like), starting at
// `offset` or centred (center_crop). A strided copy; its gradient
// _backward_Crop puts the gradient back into zeros (crop_like gets zeros),
// and Crop is _backward_Crop's gradient, so every order differentiates.
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "backends/cpu/grad_util.h"
#include "backends/cpu/kernel_util.h"
#include "backends/cpu/like_input_op.h"
#include "backends/cpu/strided_gather.h"
#include "base/error.h"

namespace mx {
namespace cpu {
namespace {

struct CropParam {
  int num_args = 1;
  TShape offset = TShape({0, 0});
  TShape h_w = TShape({0, 0});
  bool center_crop = false;
  static void Declare(ParamSchema<CropParam>* s) {
    s->Field("num_args", &CropParam::num_args)
        .Required()
        .AtMost(2)
        .Describe("1: crop to h_w; 2: crop to crop_like's height and width");
    s->Field("offset", &CropParam::offset)
        .Describe("(y, x) of the crop's corner (unless center_crop)");
    s->Field("h_w", &CropParam::h_w).Describe("(height, width), num_args=1");
    s->Field("center_crop", &CropParam::center_crop)
        .Describe("centre the crop instead of using offset");
  }
};

int NumInputs(const NodeAttrs& attrs) {
  return attrs.get<CropParam>().num_args;
}

// The crop of data (N, C, H, W): its (h, w) and its corner (y, x).
struct Window {
  int64_t h = 0, w = 0, y = 0, x = 0;
};

Window WindowOf(const NodeAttrs& attrs, const TShape& data,
                const TShape* like) {
  const CropParam& p = attrs.get<CropParam>();
  const std::string label = OpLabel(attrs);
  if (p.num_args < 1) {
    throw InvalidArgument(
        absl::StrCat(label, ": num_args=", p.num_args, " (1 or 2)"));
  }
  if (data.ndim() != 4 || (like != nullptr && like->ndim() != 4)) {
    throw ShapeError(absl::StrCat(label, ": input 0 (data) has shape ",
                                  data.ToString(),
                                  like ? absl::StrCat(" and input 1 "
                                                      "(crop_like) ",
                                                      like->ToString())
                                       : std::string(),
                                  "; 4 dims (NCHW) needed"));
  }
  if (p.offset.ndim() != 2 || p.h_w.ndim() != 2) {
    throw InvalidArgument(absl::StrCat(label, ": offset=", p.offset.ToString(),
                                       " and h_w=", p.h_w.ToString(),
                                       " must be pairs (y, x), (h, w)"));
  }
  Window win;
  win.h = like ? (*like)[2] : p.h_w[0];
  win.w = like ? (*like)[3] : p.h_w[1];
  if (p.center_crop) {
    win.y = (data[2] - win.h) / 2;
    win.x = (data[3] - win.w) / 2;
  } else {
    win.y = p.offset[0];
    win.x = p.offset[1];
  }
  if (win.h <= 0 || win.w <= 0 || win.y < 0 || win.x < 0 || win.h > data[2] ||
      win.w > data[3] || win.y > data[2] - win.h ||
      win.x > data[3] - win.w) {  // No sum that could overflow.
    throw ShapeError(absl::StrCat(
        label, ": a (", win.h, ", ", win.w, ") crop at (", win.y, ", ", win.x,
        ") does not fit input 0 (data) of shape ", data.ToString()));
  }
  return win;
}

// The crop as a strided view of data: corner offset and per-dim strides.
void ViewOf(const TShape& data, const Window& win, int64_t* base,
            std::vector<int64_t>* strides) {
  *strides = Strides(data);
  *base = win.y * data[3] + win.x;
}

TShape CropShape(const TShape& data, const Window& win) {
  return TShape({data[0], data[1], win.h, win.w});
}

void Compute(bool backward, const NodeAttrs& attrs,
             const std::vector<TBlob>& in, const std::vector<OpReqType>& req,
             const std::vector<TBlob>& out) {
  const int first = backward ? 1 : 0;
  const TShape& data = in[first].shape;
  const bool like = NumInputs(attrs) == 2;
  const Window win =
      WindowOf(attrs, data, like ? &in[first + 1].shape : nullptr);
  int64_t base;
  std::vector<int64_t> strides;
  ViewOf(data, win, &base, &strides);
  if (!backward) {
    GatherCompute(in[0], base, strides, req[0], out[0]);
    return;
  }
  ScatterCompute(in[0], base, strides, req[0], out[0]);
  ZeroLikeGradient(req, out);
}

[[maybe_unused]] const bool kRegistered = [] {
  auto [op, backward] = RegisterLikeInputOp(
      "Crop", "_backward_Crop",
      [](const NodeAttrs& attrs) { return NumInputs(attrs) == 2; },
      [](const NodeAttrs& attrs, const TShape& data, const TShape* like) {
        return CropShape(data, WindowOf(attrs, data, like));
      },
      "crop_like", {{"num_args", "2"}}, /*float_only=*/false,
      [](const OpContext&, const NodeAttrs& attrs, const std::vector<TBlob>& in,
         const std::vector<OpReqType>& req, const std::vector<TBlob>& out) {
        Compute(false, attrs, in, req, out);
      },
      [](const OpContext&, const NodeAttrs& attrs, const std::vector<TBlob>& in,
         const std::vector<OpReqType>& req, const std::vector<TBlob>& out) {
        Compute(true, attrs, in, req, out);
      });
  op->Describe(
        "Crops NCHW data to h_w or to crop_like's height and width, at "
        "offset or centred (MXNet's legacy Crop).")
      .SetParams<CropParam>();
  backward
      ->Describe(
          "Crop's gradient: (ograd, data[, crop_like]) -> (ograd in zeros of "
          "data's shape[, zeros]).")
      .SetParams<CropParam>();
  return true;
}();

}  // namespace
}  // namespace cpu
}  // namespace mx
