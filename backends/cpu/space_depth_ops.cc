// depth_to_space and space_to_depth (MXNet's, NCHW, DCR order): each is a
// reshape to six dims, a transpose and a reshape back, done as one strided
// gather. Each is the other's gradient.
//
//   depth_to_space: (N, C, H, W) -> (N, C / b^2, H * b, W * b),
//     y[n, c, h*b + i, w*b + j] = x[n, (i*b + j) * C/b^2 + c, h, w]
//   space_to_depth: the inverse.
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "backends/cpu/grad_util.h"
#include "backends/cpu/kernel_util.h"
#include "backends/cpu/strided_gather.h"
#include "base/error.h"

namespace mx {
namespace cpu {
namespace {

struct BlockParam {
  int block_size = 0;
  static void Declare(ParamSchema<BlockParam>* s) {
    s->Field("block_size", &BlockParam::block_size)
        .Required()
        .Describe("edge of the spatial blocks moved to or from channels");
  }
};

// The block size, checked against an NCHW input of shape `in`.
int64_t CheckedBlock(const NodeAttrs& attrs, const TShape& in, bool to_space) {
  const std::string label = OpLabel(attrs);
  const int64_t b = attrs.get<BlockParam>().block_size;
  if (b <= 0) {
    throw InvalidArgument(
        absl::StrCat(label, ": block_size=", b, " must be positive"));
  }
  if (in.ndim() != 4) {
    throw ShapeError(absl::StrCat(label, ": input 0 (data) has shape ",
                                  in.ToString(), "; 4 dims (NCHW) needed"));
  }
  const bool fits =
      to_space ? in[1] % (b * b) == 0 : in[2] % b == 0 && in[3] % b == 0;
  if (!fits) {
    throw ShapeError(absl::StrCat(
        label, ": input 0 (data) of shape ", in.ToString(),
        to_space ? " has channels not divisible by block_size^2 = "
                 : " has height or width not divisible by block_size = ",
        to_space ? b * b : b));
  }
  // The enlarged extents (an empty input divides by any block).
  const bool sized =
      to_space ? CheckedProduct({in[2], b}) && CheckedProduct({in[3], b})
               : CheckedProduct({in[1], b, b}).has_value();
  if (!sized) {
    throw ShapeError(absl::StrCat(label, ": input 0 (data) of shape ",
                                  in.ToString(), " with block_size=", b,
                                  " does not fit in 64 bits"));
  }
  return b;
}

TShape SpaceDepthShape(const TShape& in, int64_t b, bool to_space) {
  if (to_space) return TShape({in[0], in[1] / (b * b), in[2] * b, in[3] * b});
  return TShape({in[0], in[1] * b * b, in[2] / b, in[3] / b});
}

// The output as six dims in row-major order and, per dim, its stride in
// the input.
void SixDimGather(const TShape& in, int64_t b, bool to_space, TShape* shape,
                  std::vector<int64_t>* strides) {
  const int64_t c = in[1], h = in[2], w = in[3];
  if (to_space) {
    // x as [N, b, b, C', H, W] read as [N, C', H, b, W, b].
    const int64_t cb = c / (b * b);
    *shape = TShape({in[0], cb, h, b, w, b});
    *strides = {c * h * w, h * w, w, b * cb * h * w, 1, cb * h * w};
  } else {
    // x as [N, C, H', b, W', b] read as [N, b, b, C, H', W'].
    *shape = TShape({in[0], b, b, c, h / b, w / b});
    *strides = {c * h * w, w, 1, h * w, b * w, b};
  }
}

void RegisterSpaceDepth(const char* name, bool to_space, const char* doc) {
  OpRegistry::Get()
      ->Register(name)
      .Describe(doc)
      .SetNumInputs(1)
      .SetInputNames({"data"})
      .SetParams<BlockParam>()
      .SetInferShape([to_space](const NodeAttrs& attrs, std::vector<TShape>* in,
                                std::vector<TShape>* out) {
        const TShape& s = (*in)[0];
        if (!s.is_known()) return;
        AssignShape(
            attrs, out, 0,
            SpaceDepthShape(s, CheckedBlock(attrs, s, to_space), to_space),
            true);
      })
      .SetInferType(SameType)
      .SetCompute(Context::kCPU,
                  [to_space](const OpContext&, const NodeAttrs& attrs,
                             const std::vector<TBlob>& in,
                             const std::vector<OpReqType>& req,
                             const std::vector<TBlob>& out) {
                    const TShape& s = in[0].shape;
                    TShape shape;
                    std::vector<int64_t> strides;
                    SixDimGather(s, CheckedBlock(attrs, s, to_space), to_space,
                                 &shape, &strides);
                    GatherCompute(in[0], 0, strides, req[0], out[0], &shape);
                  });
  // Each is the other's adjoint (a permutation of the elements).
  const char* inverse = to_space ? "space_to_depth" : "depth_to_space";
  SetGradient(name, [inverse](GradBuilder& b, const std::vector<NodeEntry>& g) {
    return std::vector<NodeEntry>{b.Op(
        inverse, {g[0]}, {{"block_size", b.n->attrs.dict.at("block_size")}})};
  });
}

[[maybe_unused]] const bool kRegistered = [] {
  RegisterSpaceDepth("depth_to_space", true,
                     "Moves channel blocks into b x b spatial blocks: (N, C, "
                     "H, W) -> (N, C/b^2, H*b, W*b), MXNet's DCR order.");
  RegisterSpaceDepth("space_to_depth", false,
                     "Moves b x b spatial blocks into channels: (N, C, H, W) "
                     "-> (N, C*b^2, H/b, W/b); depth_to_space's inverse.");
  return true;
}();

}  // namespace
}  // namespace cpu
}  // namespace mx
