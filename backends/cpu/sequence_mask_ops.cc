// SequenceMask: with use_sequence_length, sets data[t, b, ...] (axis=0) or
// data[b, t, ...] (axis=1) to `value` wherever t >= sequence_length[b];
// the identity otherwise. The gradient masks the head gradient the same
// way (with 0); sequence_length gets none.
#include <cmath>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "backends/cpu/grad_util.h"
#include "backends/cpu/kernel_util.h"
#include "base/error.h"

namespace mx {
namespace cpu {
namespace {

struct SequenceMaskParam {
  bool use_sequence_length = false;
  double value = 0;
  int axis = 0;
  static void Declare(ParamSchema<SequenceMaskParam>* s) {
    s->Field("use_sequence_length", &SequenceMaskParam::use_sequence_length)
        .Describe("Take sequence_length as input 1; else the identity.");
    s->Field("value", &SequenceMaskParam::value)
        .Describe("Written past each sequence's end.");
    s->Field("axis", &SequenceMaskParam::axis)
        .Describe("The time axis: 0 (T, B, ...) or 1 (B, T, ...).");
  }
};

void SequenceMaskShape(const NodeAttrs& attrs, std::vector<TShape>* in,
                       std::vector<TShape>* out) {
  const SequenceMaskParam& p = attrs.get<SequenceMaskParam>();
  if (p.axis != 0 && p.axis != 1) {
    throw InvalidArgument(
        absl::StrCat(OpLabel(attrs), ": axis=", p.axis, " must be 0 or 1"));
  }
  AssignShape(attrs, in, 0, (*out)[0], false);
  AssignShape(attrs, out, 0, (*in)[0], true);
  const TShape& d = (*in)[0];
  if (!d.ndim_known()) return;
  if (d.ndim() < 2) {
    throw ShapeError(absl::StrCat(OpLabel(attrs), ": input 0 (data) has shape ",
                                  d.ToString(),
                                  " but at least 2 axes (time, batch) are "
                                  "required"));
  }
  if (p.use_sequence_length) {
    AssignShape(attrs, in, 1, TShape{d[1 - p.axis]}, false);
  }
}

void SequenceMaskCompute(const OpContext&, const NodeAttrs& attrs,
                         const std::vector<TBlob>& in,
                         const std::vector<OpReqType>& req,
                         const std::vector<TBlob>& out) {
  if (req[0] == OpReqType::kNullOp) return;
  const SequenceMaskParam& p = attrs.get<SequenceMaskParam>();
  const TShape& s = in[0].shape;
  const int64_t inner = s.ProdDims(2, s.ndim());
  const int64_t d0 = s[0], d1 = s[1];
  MX_DTYPE_SWITCH(in[0].dtype, T, {
    const T* x = in[0].data<T>();
    T* y = out[0].data<T>();
    std::vector<double> len(static_cast<size_t>(p.axis == 0 ? d1 : d0),
                            HUGE_VAL);
    if (p.use_sequence_length) {
      MX_DTYPE_SWITCH(in[1].dtype, L, {
        const L* l = in[1].data<L>();
        // MXNet truncates lengths to integers (2.5 keeps 2 steps).
        for (size_t b = 0; b < len.size(); ++b) {
          len[b] = std::trunc(static_cast<double>(l[b]));
        }
      });
    }
    const T fill = SaturatingCast<T>(p.value);
    for (int64_t i0 = 0; i0 < d0; ++i0) {
      for (int64_t i1 = 0; i1 < d1; ++i1) {
        const int64_t t = p.axis == 0 ? i0 : i1, b = p.axis == 0 ? i1 : i0;
        const bool masked = static_cast<double>(t) >= len[b];
        const int64_t base = (i0 * d1 + i1) * inner;
        for (int64_t j = 0; j < inner; ++j) {
          Assign(y + base + j, req[0], masked ? fill : x[base + j]);
        }
      }
    }
  });
}

MX_REGISTER_OP(SequenceMask)
    .Describe(
        "Sets steps at or past each sequence's length to `value` (axis 0: "
        "(T, B, ...), axis 1: (B, T, ...)).")
    .SetNumInputs([](const NodeAttrs& attrs) {
      return attrs.get<SequenceMaskParam>().use_sequence_length ? 2 : 1;
    })
    .SetInputNames([](const NodeAttrs& attrs) {
      if (attrs.get<SequenceMaskParam>().use_sequence_length) {
        return std::vector<std::string>{"data", "sequence_length"};
      }
      return std::vector<std::string>{"data"};
    })
    .SetParams<SequenceMaskParam>()
    .SetInferShape(SequenceMaskShape)
    .SetInferType([](const NodeAttrs& attrs, std::vector<DType>* in,
                     std::vector<DType>* out) {
      AssignType(attrs, in, 0, (*out)[0], false);
      AssignType(attrs, out, 0, (*in)[0], true);
    })
    .SetInplaceOption([](const NodeAttrs&) {
      return std::vector<std::pair<int, int>>{{0, 0}};
    })
    .SetCompute(Context::kCPU, SequenceMaskCompute);

[[maybe_unused]] const bool kGradientRegistered = [] {
  SetGradient("SequenceMask",
              [](GradBuilder& b, const std::vector<NodeEntry>& g) {
                AttrDict attrs = b.n->attrs.dict;
                attrs["value"] = "0";
                std::vector<NodeEntry> in{g[0]};
                if (b.n->inputs.size() > 1) in.push_back(b.x(1));
                std::vector<NodeEntry> grads{b.Op("SequenceMask", in, attrs)};
                if (b.n->inputs.size() > 1) grads.push_back(NodeEntry{});
                return grads;
              });
  return true;
}();

}  // namespace
}  // namespace cpu
}  // namespace mx
