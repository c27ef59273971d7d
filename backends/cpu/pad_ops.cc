// Pad (MXNet's Pad, alias pad) and its gradient _backward_Pad.
//
// Every output element reads one input element or the constant: along each
// axis, output position o maps to input position o - before, which the
// mode folds back into [0, n) when it falls outside (edge: clamp; reflect:
// mirror about the border element) or marks as padding (constant). The
// forward gathers through that map and the backward scatter-adds through
// it, so the two are each other's adjoints.
//
// MXNet's Pad takes only 4-D and 5-D data padded on the spatial axes;
// this one pads any axis of any rank (the same results where MXNet's
// applies).
#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "backends/cpu/grad_util.h"
#include "backends/cpu/kernel_util.h"
#include "base/error.h"

namespace mx {
namespace cpu {
namespace {

struct PadParam {
  std::string mode = "constant";
  TShape pad_width;
  double constant_value = 0;
  static void Declare(ParamSchema<PadParam>* s) {
    s->Field("mode", &PadParam::mode)
        .Choices({"constant", "edge", "reflect"})
        .Describe(
            "constant: constant_value; edge: repeat the border element; "
            "reflect: mirror about the border element (pads < axis size)");
    s->Field("pad_width", &PadParam::pad_width)
        .Required()
        .Describe("(before_0, after_0, before_1, after_1, ...): every axis");
    s->Field("constant_value", &PadParam::constant_value)
        .Describe("value of the padding in constant mode");
  }
};

// Throws unless pad_width fits data of shape `data` under the mode.
void CheckPadWidth(const NodeAttrs& attrs, const TShape& data) {
  const PadParam& p = attrs.get<PadParam>();
  const TShape& w = p.pad_width;
  const std::string where =
      absl::StrCat(OpLabel(attrs), ": pad_width=", w.ToString(),
                   " for input 0 (data) of shape ", data.ToString());
  if (!w.ndim_known() || w.ndim() != 2 * data.ndim()) {
    throw InvalidArgument(absl::StrCat(where, " must have 2 * ", data.ndim(),
                                       " entries: (before, after) per axis"));
  }
  for (int d = 0; d < data.ndim(); ++d) {
    const int64_t before = w[2 * d], after = w[2 * d + 1], n = data[d];
    if (before < 0 || after < 0) {
      throw InvalidArgument(absl::StrCat(where, ": pads must be >= 0"));
    }
    if (n < 0 || before + after == 0) continue;
    if (p.mode == "reflect" && (before >= n || after >= n)) {
      throw InvalidArgument(
          absl::StrCat(where,
                       ": reflect mode needs pads smaller than the axis "
                       "size, but axis ",
                       d, " has size ", n));
    }
    if (p.mode == "edge" && n == 0) {
      throw InvalidArgument(absl::StrCat(where, ": edge mode cannot pad axis ",
                                         d, ", which is empty"));
    }
  }
}

void PadShape(const NodeAttrs& attrs, std::vector<TShape>* in,
              std::vector<TShape>* out) {
  const TShape& x = (*in)[0];
  if (!x.ndim_known()) return;
  CheckPadWidth(attrs, x);
  const TShape& w = attrs.get<PadParam>().pad_width;
  std::vector<int64_t> dims(x.begin(), x.end());
  for (int d = 0; d < x.ndim(); ++d) {
    if (dims[d] >= 0) dims[d] += w[2 * d] + w[2 * d + 1];
  }
  AssignShape(attrs, out, 0, TShape(dims), true);
}

// For every axis, the input position each output position reads; -1 for
// the constant.
std::vector<std::vector<int64_t>> SourceMaps(const PadParam& p,
                                             const TShape& data) {
  std::vector<std::vector<int64_t>> maps(data.ndim());
  for (int d = 0; d < data.ndim(); ++d) {
    const int64_t n = data[d], before = p.pad_width[2 * d];
    const int64_t size = n + before + p.pad_width[2 * d + 1];
    for (int64_t o = 0; o < size; ++o) {
      int64_t i = o - before;
      if (i < 0 || i >= n) {
        if (p.mode == "constant") {
          i = -1;
        } else if (p.mode == "edge") {
          i = std::clamp<int64_t>(i, 0, n - 1);
        } else {  // reflect
          i = i < 0 ? -i : 2 * (n - 1) - i;
        }
      }
      maps[d].push_back(i);
    }
  }
  return maps;
}

// Calls fn(output_offset, input_offset or -1) for every output element.
template <typename F>
void ForEachSource(const PadParam& p, const TShape& data, const TShape& out,
                   F fn) {
  const std::vector<std::vector<int64_t>> maps = SourceMaps(p, data);
  const std::vector<int64_t> strides = Strides(data);
  const int nd = out.ndim();
  std::vector<int64_t> pos(nd, 0);
  const int64_t total = out.Size();
  for (int64_t o = 0; o < total; ++o) {
    int64_t src = 0;
    for (int d = 0; d < nd && src >= 0; ++d) {
      const int64_t i = maps[d][pos[d]];
      src = i < 0 ? -1 : src + i * strides[d];
    }
    fn(o, src);
    for (int d = nd - 1; d >= 0; --d) {  // Next multi-index, row-major.
      if (++pos[d] < out[d]) break;
      pos[d] = 0;
    }
  }
}

void PadCompute(const OpContext&, const NodeAttrs& attrs,
                const std::vector<TBlob>& in, const std::vector<OpReqType>& req,
                const std::vector<TBlob>& out) {
  const OpReqType r = req[0];
  if (r == OpReqType::kNullOp || out[0].Size() == 0) return;
  const PadParam& p = attrs.get<PadParam>();
  CheckPadWidth(attrs, in[0].shape);
  MX_DTYPE_SWITCH(in[0].dtype, T, {
    const T* x = in[0].data<T>();
    T* y = out[0].data<T>();
    // Saturated into integer dtypes (a plain cast of 300 to int8, or of
    // NaN, is undefined).
    const T fill = static_cast<T>(SaturatingCast<AccType<T>>(p.constant_value));
    ForEachSource(p, in[0].shape, out[0].shape, [&](int64_t o, int64_t s) {
      Assign(y + o, r, s < 0 ? fill : x[s]);
    });
  });
}

MX_REGISTER_OP(Pad)
    .Describe(
        "Pads every axis by pad_width: a constant, the edge value, or a "
        "reflection.")
    .SetNumInputs(1)
    .SetInputNames({"data"})
    .SetParams<PadParam>()
    .SetInferShape(PadShape)
    .SetInferType([](const NodeAttrs& attrs, std::vector<DType>* in,
                     std::vector<DType>* out) {
      SameType(attrs, in, out);
      if ((*in)[0] != DType::kUnknown) RequireNumeric(attrs, (*in)[0]);
    })
    .SetCompute(Context::kCPU, PadCompute)
    .AddAlias("pad");

// Inputs (out_grad, data), data for its shape; output data_grad: each
// out_grad element added at the input position it was read from.
void PadBackwardCompute(const OpContext&, const NodeAttrs& attrs,
                        const std::vector<TBlob>& in,
                        const std::vector<OpReqType>& req,
                        const std::vector<TBlob>& out) {
  const OpReqType r = req[0];
  if (r == OpReqType::kNullOp || out[0].Size() == 0) return;
  const PadParam& p = attrs.get<PadParam>();
  CheckPadWidth(attrs, in[1].shape);
  MX_FLOAT_DTYPE_SWITCH(out[0].dtype, T, {
    using A = AccType<T>;
    const T* g = in[0].data<T>();
    std::vector<A> acc(static_cast<size_t>(out[0].Size()), A(0));
    ForEachSource(p, in[1].shape, in[0].shape, [&](int64_t o, int64_t s) {
      if (s >= 0) acc[s] += static_cast<A>(g[o]);
    });
    T* dx = out[0].data<T>();
    for (size_t i = 0; i < acc.size(); ++i) Assign(dx + i, r, acc[i]);
  });
}

MX_REGISTER_OP(_backward_Pad)
    .Describe("Gradient of Pad: (out_grad, data) -> data_grad.")
    .SetNumInputs(2)
    .SetInputNames({"out_grad", "data"})
    .SetParams<PadParam>()
    .SetInferShape([](const NodeAttrs& attrs, std::vector<TShape>* in,
                      std::vector<TShape>* out) {
      AssignShape(attrs, out, 0, (*in)[1], true);
      AssignShape(attrs, in, 1, (*out)[0], false);
      std::vector<TShape> pad_out{(*in)[0]};
      std::vector<TShape> pad_in{(*in)[1]};
      PadShape(attrs, &pad_in, &pad_out);
      AssignShape(attrs, in, 0, pad_out[0], false);
    })
    .SetInferType([](const NodeAttrs& attrs, std::vector<DType>* in,
                     std::vector<DType>* out) {
      SameType(attrs, in, out);
      if ((*in)[0] != DType::kUnknown) RequireFloat(attrs, (*in)[0]);
    })
    .SetCompute(Context::kCPU, PadBackwardCompute);

[[maybe_unused]] const bool kGradientRegistered = [] {
  using E = std::vector<NodeEntry>;
  SetGradient("Pad", [](GradBuilder& b, const E& g) {
    return E{b.Op("_backward_Pad", {g[0], b.x()}, b.n->attrs.dict)};
  });
  // The adjoint of the scatter is the gather with zero padding; data only
  // lends its shape.
  SetGradient("_backward_Pad", [](GradBuilder& b, const E& g) {
    AttrDict attrs = b.n->attrs.dict;
    attrs["constant_value"] = "0";
    return E{b.Op("Pad", {g[0]}, attrs), b.Op("zeros_like", {b.x(1)})};
  });
  return true;
}();

}  // namespace
}  // namespace cpu
}  // namespace mx
