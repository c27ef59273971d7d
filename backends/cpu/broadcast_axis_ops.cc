// broadcast_axis (alias broadcast_axes): size-1 axes of data repeated to
// the given sizes, as MXNet's broadcast_axis; the gradient sums them back.
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "backends/cpu/grad_util.h"
#include "backends/cpu/kernel_util.h"
#include "base/error.h"

namespace mx {
namespace cpu {
namespace {

struct BroadcastAxisParam {
  TShape axis;
  TShape size;
  static void Declare(ParamSchema<BroadcastAxisParam>* s) {
    s->Field("axis", &BroadcastAxisParam::axis)
        .Describe("Axes to broadcast (each of extent 1 in data).");
    s->Field("size", &BroadcastAxisParam::size)
        .Describe("Target extent of each listed axis.");
  }
};

TShape BroadcastAxisShape(const NodeAttrs& attrs, const TShape& d) {
  const BroadcastAxisParam& p = attrs.get<BroadcastAxisParam>();
  const int na = p.axis.ndim_known() ? p.axis.ndim() : 0;
  const int ns = p.size.ndim_known() ? p.size.ndim() : 0;
  if (na != ns) {
    throw InvalidArgument(absl::StrCat(
        OpLabel(attrs), ": axis=", p.axis.ToString(), " and size=",
        p.size.ToString(), " must have the same number of entries"));
  }
  TShape out = d;
  for (int i = 0; i < na; ++i) {
    const int a =
        d.CheckAxis(static_cast<int>(p.axis[i]), OpLabel(attrs).c_str());
    if (p.size[i] < 0) {
      throw InvalidArgument(absl::StrCat(
          OpLabel(attrs), ": size=", p.size.ToString(), " must be >= 0"));
    }
    if (d[a] != 1 && d[a] != p.size[i]) {
      throw ShapeError(absl::StrCat(
          OpLabel(attrs), ": input 0 (data) has shape ", d.ToString(),
          " but axis ", a, " must have extent 1 to broadcast to ", p.size[i]));
    }
    out[a] = p.size[i];
  }
  return out;
}

void ForwardShape(const NodeAttrs& attrs, std::vector<TShape>* in,
                  std::vector<TShape>* out) {
  const TShape& d = (*in)[0];
  if (!d.is_known()) return;
  AssignShape(attrs, out, 0, BroadcastAxisShape(attrs, d), true);
}

void BroadcastAxisCompute(const OpContext&, const NodeAttrs&,
                          const std::vector<TBlob>& in,
                          const std::vector<OpReqType>& req,
                          const std::vector<TBlob>& out) {
  if (req[0] == OpReqType::kNullOp) return;
  const std::vector<int64_t> strides =
      BroadcastStrides(in[0].shape, out[0].shape);
  MX_DTYPE_SWITCH(in[0].dtype, T, {
    const T* x = in[0].data<T>();
    T* y = out[0].data<T>();
    const TShape& os = out[0].shape;
    ParallelFor(out[0].Size(), 1 << 14, [&](int64_t b, int64_t e) {
      for (int64_t i = b; i < e; ++i) {
        Assign(y + i, req[0], x[BroadcastOffset(i, os, strides)]);
      }
    });
  });
}

MX_REGISTER_OP(broadcast_axis)
    .Describe("Repeats size-1 axes of data to the given sizes.")
    .SetNumInputs(1)
    .SetInputNames({"data"})
    .SetParams<BroadcastAxisParam>()
    .SetInferShape(ForwardShape)
    .SetInferType(SameType)
    .SetCompute(Context::kCPU, BroadcastAxisCompute)
    .AddAlias("broadcast_axes");

[[maybe_unused]] const bool kGradientRegistered = [] {
  SetGradient(
      "broadcast_axis", [](GradBuilder& b, const std::vector<NodeEntry>& g) {
        const TShape& axis = b.n->attrs.get<BroadcastAxisParam>().axis;
        return std::vector<NodeEntry>{b.Op(
            "sum", {g[0]},
            {{"axis", param_internal::PrintValue(axis)}, {"keepdims", "1"}})};
      });
  return true;
}();

}  // namespace
}  // namespace cpu
}  // namespace mx
