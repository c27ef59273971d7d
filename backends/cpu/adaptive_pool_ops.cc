// _contrib_AdaptiveAvgPooling2D: average pooling of NCHW data to a fixed
// (oh, ow) output; output cell (i, j) averages rows [floor(i*H/oh),
// ceil((i+1)*H/oh)) and the columns likewise, as in MXNet and PyTorch.
// Its gradient spreads each output gradient evenly over the cell.
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "backends/cpu/grad_util.h"
#include "backends/cpu/kernel_util.h"
#include "base/error.h"

namespace mx {
namespace cpu {
namespace {

struct AdaptivePoolParam {
  TShape output_size;
  static void Declare(ParamSchema<AdaptivePoolParam>* s) {
    s->Field("output_size", &AdaptivePoolParam::output_size)
        .Describe("(h, w), or one value for both; default (1, 1).");
  }
};

// The (oh, ow) output extents; throws on a bad output_size. Callers copy
// them into plain variables, not a structured binding: the kernels' lambdas
// capture them, which C++17 forbids for bindings (clang rejects it).
std::pair<int64_t, int64_t> OutputSize(const NodeAttrs& attrs) {
  const TShape& s = attrs.get<AdaptivePoolParam>().output_size;
  if (!s.ndim_known() || s.ndim() == 0) return {1, 1};
  if (s.ndim() > 2 || s[0] < 1 || s[s.ndim() - 1] < 1) {
    throw InvalidArgument(absl::StrCat(OpLabel(attrs),
                                       ": output_size=", s.ToString(),
                                       " must be one or two values >= 1"));
  }
  return {s[0], s[s.ndim() - 1]};
}

void AdaptivePoolShape(const NodeAttrs& attrs, std::vector<TShape>* in,
                       std::vector<TShape>* out) {
  const std::pair<int64_t, int64_t> out_size = OutputSize(attrs);
  const int64_t oh = out_size.first, ow = out_size.second;
  const TShape& d = (*in)[0];
  if (!d.ndim_known()) return;
  if (d.ndim() != 4) {
    throw ShapeError(absl::StrCat(OpLabel(attrs), ": input 0 (data) has shape ",
                                  d.ToString(),
                                  " but a 4-D shape (NCHW) is required"));
  }
  AssignShape(attrs, out, 0, TShape{d[0], d[1], oh, ow}, true);
}

// Cell [begin, end) of output index o of `out` cells over `in` inputs.
inline int64_t CellBegin(int64_t o, int64_t in, int64_t out) {
  return (o * in) / out;
}
inline int64_t CellEnd(int64_t o, int64_t in, int64_t out) {
  return ((o + 1) * in + out - 1) / out;
}

// Calls f(plane, oy, ox, y0, y1, x0, x1) for every output cell of every
// (n, c) plane of data shape `d`.
template <typename F>
void ForEachCell(const TShape& d, int64_t oh, int64_t ow, F f) {
  const int64_t planes = d[0] * d[1], h = d[2], w = d[3];
  ParallelFor(planes, 1, [&](int64_t b, int64_t e) {
    for (int64_t pl = b; pl < e; ++pl) {
      for (int64_t oy = 0; oy < oh; ++oy) {
        const int64_t y0 = CellBegin(oy, h, oh), y1 = CellEnd(oy, h, oh);
        for (int64_t ox = 0; ox < ow; ++ox) {
          f(pl, oy, ox, y0, y1, CellBegin(ox, w, ow), CellEnd(ox, w, ow));
        }
      }
    }
  });
}

void AdaptivePoolCompute(const OpContext&, const NodeAttrs& attrs,
                         const std::vector<TBlob>& in,
                         const std::vector<OpReqType>& req,
                         const std::vector<TBlob>& out) {
  if (req[0] == OpReqType::kNullOp) return;
  const std::pair<int64_t, int64_t> out_size = OutputSize(attrs);
  const int64_t oh = out_size.first, ow = out_size.second;
  const TShape& d = in[0].shape;
  const int64_t h = d[2], w = d[3];
  MX_FLOAT_DTYPE_SWITCH(in[0].dtype, T, {
    using A = AccType<T>;
    const T* x = in[0].data<T>();
    T* y = out[0].data<T>();
    ForEachCell(d, oh, ow,
                [&](int64_t pl, int64_t oy, int64_t ox, int64_t y0, int64_t y1,
                    int64_t x0, int64_t x1) {
                  A sum = 0;
                  for (int64_t iy = y0; iy < y1; ++iy) {
                    for (int64_t ix = x0; ix < x1; ++ix) {
                      sum += static_cast<A>(x[(pl * h + iy) * w + ix]);
                    }
                  }
                  const A area = static_cast<A>((y1 - y0) * (x1 - x0));
                  Assign(y + (pl * oh + oy) * ow + ox, req[0], sum / area);
                });
  });
}

MX_REGISTER_OP(_contrib_AdaptiveAvgPooling2D)
    .Describe(
        "Average pooling of NCHW data to output_size (h, w), with cells as "
        "even as the sizes allow.")
    .SetNumInputs(1)
    .SetInputNames({"data"})
    .SetParams<AdaptivePoolParam>()
    .SetInferShape(AdaptivePoolShape)
    .SetInferType([](const NodeAttrs& attrs, std::vector<DType>* in,
                     std::vector<DType>* out) {
      SameType(attrs, in, out);
      if ((*in)[0] != DType::kUnknown) RequireFloat(attrs, (*in)[0]);
    })
    .SetCompute(Context::kCPU, AdaptivePoolCompute);

// Inputs (out_grad, data); output data_grad.
void AdaptivePoolBackwardCompute(const OpContext&, const NodeAttrs& attrs,
                                 const std::vector<TBlob>& in,
                                 const std::vector<OpReqType>& req,
                                 const std::vector<TBlob>& out) {
  if (req[0] == OpReqType::kNullOp) return;
  const std::pair<int64_t, int64_t> out_size = OutputSize(attrs);
  const int64_t oh = out_size.first, ow = out_size.second;
  const TShape& d = in[1].shape;
  const int64_t h = d[2], w = d[3];
  MX_FLOAT_DTYPE_SWITCH(in[1].dtype, T, {
    using A = AccType<T>;
    const T* g = in[0].data<T>();
    std::vector<A> dx(static_cast<size_t>(in[1].Size()), A(0));
    // Cells of one plane may overlap, but planes are disjoint.
    ForEachCell(d, oh, ow,
                [&](int64_t pl, int64_t oy, int64_t ox, int64_t y0, int64_t y1,
                    int64_t x0, int64_t x1) {
                  const A v = static_cast<A>(g[(pl * oh + oy) * ow + ox]) /
                              static_cast<A>((y1 - y0) * (x1 - x0));
                  for (int64_t iy = y0; iy < y1; ++iy) {
                    for (int64_t ix = x0; ix < x1; ++ix) {
                      dx[(pl * h + iy) * w + ix] += v;
                    }
                  }
                });
    T* dst = out[0].data<T>();
    for (size_t i = 0; i < dx.size(); ++i) Assign(dst + i, req[0], dx[i]);
  });
}

MX_REGISTER_OP(_backward_contrib_AdaptiveAvgPooling2D)
    .Describe(
        "Gradient of _contrib_AdaptiveAvgPooling2D: (out_grad, data) -> "
        "data_grad.")
    .SetNumInputs(2)
    .SetInputNames({"out_grad", "data"})
    .SetParams<AdaptivePoolParam>()
    .SetInferShape([](const NodeAttrs& attrs, std::vector<TShape>* in,
                      std::vector<TShape>* out) {
      AssignShape(attrs, out, 0, (*in)[1], true);
      std::vector<TShape> fwd_in{(*in)[1]}, fwd_out{(*in)[0]};
      AdaptivePoolShape(attrs, &fwd_in, &fwd_out);
      AssignShape(attrs, in, 0, fwd_out[0], false);
    })
    .SetInferType([](const NodeAttrs& attrs, std::vector<DType>* in,
                     std::vector<DType>* out) {
      AssignType(attrs, in, 0, (*in)[1], false);
      AssignType(attrs, out, 0, (*in)[1], true);
    })
    .SetCompute(Context::kCPU, AdaptivePoolBackwardCompute);

[[maybe_unused]] const bool kGradientRegistered = [] {
  SetGradient("_contrib_AdaptiveAvgPooling2D",
              [](GradBuilder& b, const std::vector<NodeEntry>& g) {
                return std::vector<NodeEntry>{
                    b.Op("_backward_contrib_AdaptiveAvgPooling2D",
                         {g[0], b.x()}, b.n->attrs.dict)};
              });
  return true;
}();

}  // namespace
}  // namespace cpu
}  // namespace mx
