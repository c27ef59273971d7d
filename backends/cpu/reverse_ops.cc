// reverse (alias flip): data with the order along each listed axis
// reversed, as MXNet's reverse; its own gradient.
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "backends/cpu/grad_util.h"
#include "backends/cpu/kernel_util.h"
#include "base/error.h"

namespace mx {
namespace cpu {
namespace {

struct ReverseParam {
  TShape axis;
  static void Declare(ParamSchema<ReverseParam>* s) {
    s->Field("axis", &ReverseParam::axis)
        .Required()
        .Describe("Axes to reverse (negative from the end).");
  }
};

// Which axes of `d` are reversed; throws on a bad axis. Each listed axis
// flips once more, so an axis listed twice is not reversed (as in MXNet).
std::vector<bool> ReversedAxes(const NodeAttrs& attrs, const TShape& d) {
  std::vector<bool> rev(static_cast<size_t>(d.ndim()), false);
  const TShape& axis = attrs.get<ReverseParam>().axis;
  if (!axis.ndim_known()) return rev;
  for (int64_t a : axis) {
    const size_t i = d.CheckAxis(static_cast<int>(a), OpLabel(attrs).c_str());
    rev[i] = !rev[i];
  }
  return rev;
}

void ReverseShape(const NodeAttrs& attrs, std::vector<TShape>* in,
                  std::vector<TShape>* out) {
  SameShape(attrs, in, out);
  if ((*in)[0].ndim_known()) ReversedAxes(attrs, (*in)[0]);
}

void ReverseCompute(const OpContext&, const NodeAttrs& attrs,
                    const std::vector<TBlob>& in,
                    const std::vector<OpReqType>& req,
                    const std::vector<TBlob>& out) {
  if (req[0] == OpReqType::kNullOp) return;
  const TShape& s = in[0].shape;
  const std::vector<bool> rev = ReversedAxes(attrs, s);
  const std::vector<int64_t> strides = Strides(s);
  MX_DTYPE_SWITCH(in[0].dtype, T, {
    const T* x = in[0].data<T>();
    T* y = out[0].data<T>();
    ParallelFor(in[0].Size(), 1 << 14, [&](int64_t b, int64_t e) {
      for (int64_t i = b; i < e; ++i) {
        int64_t rest = i, src = 0;
        for (int d = s.ndim() - 1; d >= 0; --d) {
          const int64_t o = rest % s[d];
          rest /= s[d];
          src += (rev[d] ? s[d] - 1 - o : o) * strides[d];
        }
        Assign(y + i, req[0], x[src]);
      }
    });
  });
}

MX_REGISTER_OP(reverse)
    .Describe("data with the element order along each of `axis` reversed.")
    .SetNumInputs(1)
    .SetInputNames({"data"})
    .SetParams<ReverseParam>()
    .SetInferShape(ReverseShape)
    .SetInferType(SameType)
    .SetCompute(Context::kCPU, ReverseCompute)
    .AddAlias("flip");

[[maybe_unused]] const bool kGradientRegistered = [] {
  SetGradient("reverse", [](GradBuilder& b, const std::vector<NodeEntry>& g) {
    return std::vector<NodeEntry>{b.Op("reverse", {g[0]}, b.n->attrs.dict)};
  });
  return true;
}();

}  // namespace
}  // namespace cpu
}  // namespace mx
