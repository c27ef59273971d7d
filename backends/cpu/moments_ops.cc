// moments: MXNet's mean and (biased) variance over axes in one op, two
// outputs; float inputs, statistics in double (two passes: the mean, then
// the squared deviations from it). An empty reduction gives NaN for both,
// as mean's.
#include <cmath>
#include <limits>
#include <optional>

#include "backends/cpu/grad_util.h"
#include "backends/cpu/kernel_util.h"
#include "backends/cpu/reduce_util.h"

namespace mx {
namespace cpu {
namespace {

struct MomentsParam {
  std::optional<TShape> axes;
  bool keepdims = false;
  static void Declare(ParamSchema<MomentsParam>* s) {
    s->Field("axes", &MomentsParam::axes)
        .Describe("axes to reduce; none or () reduces all axes");
    s->Field("keepdims", &MomentsParam::keepdims)
        .Describe("keep reduced axes with length 1");
  }
};

std::vector<bool> MomentAxes(const NodeAttrs& attrs, const TShape& in) {
  return ReducedAxes(attrs, in, attrs.get<MomentsParam>().axes,
                     /*exclude=*/false);
}

void MomentsCompute(const OpContext&, const NodeAttrs& attrs,
                    const std::vector<TBlob>& in,
                    const std::vector<OpReqType>& req,
                    const std::vector<TBlob>& out) {
  const ReducePlan plan = MakePlan(in[0].shape, MomentAxes(attrs, in[0].shape));
  const int64_t count = plan.red_size;
  MX_FLOAT_DTYPE_SWITCH(in[0].dtype, T, {
    using A = AccType<T>;
    const T* x = in[0].data<T>();
    T* mean_out = out[0].data<T>();
    T* var_out = out[1].data<T>();
    ParallelFor(plan.out_size, std::max<int64_t>(1, kReduceGrain / (count + 1)),
                [&](int64_t b, int64_t e) {
                  for (int64_t o = b; o < e; ++o) {
                    double mean = std::numeric_limits<double>::quiet_NaN();
                    double var = mean;
                    if (count > 0) {  // x may be null for no elements.
                      const T* base = x + KeptOffset(o, plan);
                      double sum = 0, sq = 0;
                      ForEachReduced(base, plan, [&](T v) {
                        sum += static_cast<double>(static_cast<A>(v));
                      });
                      mean = sum / static_cast<double>(count);
                      ForEachReduced(base, plan, [&](T v) {
                        const double d =
                            static_cast<double>(static_cast<A>(v)) - mean;
                        sq += d * d;
                      });
                      var = sq / static_cast<double>(count);
                    }
                    Assign(mean_out + o, req[0], static_cast<A>(mean));
                    Assign(var_out + o, req[1], static_cast<A>(var));
                  }
                });
  });
}

MX_REGISTER_OP(moments)
    .Describe(
        "Mean and biased variance over axes (outputs mean, var); float "
        "inputs.")
    .SetNumInputs(1)
    .SetInputNames({"data"})
    .SetNumOutputs(2)
    .SetOutputNames({"mean", "var"})
    .SetParams<MomentsParam>()
    .SetInferShape([](const NodeAttrs& attrs, std::vector<TShape>* in,
                      std::vector<TShape>* out) {
      const TShape& s = (*in)[0];
      if (!s.ndim_known()) return;
      const TShape r = ReducedShape(s, MomentAxes(attrs, s),
                                    attrs.get<MomentsParam>().keepdims);
      AssignShape(attrs, out, 0, r, true);
      AssignShape(attrs, out, 1, r, true);
    })
    .SetInferType([](const NodeAttrs& attrs, std::vector<DType>* in,
                     std::vector<DType>* out) {
      SameType(attrs, in, out);
      if ((*in)[0] != DType::kUnknown) RequireFloat(attrs, (*in)[0]);
    })
    .SetCompute(Context::kCPU, MomentsCompute);

// d/dx = g_mean / n + g_var * 2 (x - mean) / n, as a graph of ops.
[[maybe_unused]] const bool kGradientRegistered = [] {
  SetGradient("moments", [](GradBuilder& b, const std::vector<NodeEntry>& g) {
    const NodeEntry x = b.x();
    AttrDict attrs;
    const AttrDict& d = b.n->attrs.dict;
    if (d.count("axes")) attrs["axis"] = d.at("axes");
    if (d.count("keepdims")) attrs["keepdims"] = d.at("keepdims");
    AttrDict spread = attrs;
    spread["normalize"] = "1";
    const NodeEntry head_mean =
        b.Op("_broadcast_reduced_like", {g[0], x}, spread);
    const NodeEntry head_var =
        b.Op("_broadcast_reduced_like", {g[1], x}, spread);
    const NodeEntry centered =
        b.Op("elemwise_sub",
             {x, b.Op("_broadcast_reduced_like", {b.y(0), x}, attrs)});
    return std::vector<NodeEntry>{b.Op(
        "elemwise_add", {head_mean, b.Mul(b.Scale(head_var, 2), centered)})};
  });
  return true;
}();

}  // namespace
}  // namespace cpu
}  // namespace mx
