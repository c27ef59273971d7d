// L2Normalization: x / sqrt(sum(x^2) + eps) over each instance (all axes
// but 0), each channel vector (axis 1 at every position) or each spatial
// plane (axes 2.. of every (n, c)), as MXNet's L2Normalization.
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

struct L2NormalizationParam {
  double eps = 1e-10;
  std::string mode = "instance";
  static void Declare(ParamSchema<L2NormalizationParam>* s) {
    s->Field("eps", &L2NormalizationParam::eps)
        .Describe("Added to the sum of squares.");
    s->Field("mode", &L2NormalizationParam::mode)
        .Choices({"instance", "channel", "spatial"});
  }
};

// Groups of `len` values `inner` apart: `outer` * `inner` of them.
struct Groups {
  int64_t outer, len, inner;
};

Groups GroupsOf(const std::string& mode, const TShape& d) {
  const int64_t n = d[0], c = d.ndim() > 1 ? d[1] : 1;
  const int64_t spatial = d.ProdDims(2, d.ndim());
  if (mode == "instance") return {n, c * spatial, 1};
  if (mode == "channel") return {n, c, spatial};
  return {n * c, spatial, 1};
}

void L2Shape(const NodeAttrs& attrs, std::vector<TShape>* in,
             std::vector<TShape>* out) {
  SameShape(attrs, in, out);
  const TShape& d = (*in)[0];
  const L2NormalizationParam& p = attrs.get<L2NormalizationParam>();
  const int need = p.mode == "instance" ? 2 : 3;
  if (d.ndim_known() && d.ndim() < need) {
    throw ShapeError(absl::StrCat(OpLabel(attrs), ": input 0 (data) has shape ",
                                  d.ToString(), " but mode=", p.mode,
                                  " needs at least ", need, " axes"));
  }
  if (!(p.eps >= 0)) {
    throw InvalidArgument(
        absl::StrCat(OpLabel(attrs), ": eps=", p.eps, " must be >= 0"));
  }
}

// Calls f(base, norm) for every group of x (base: its first element).
template <typename T, typename F>
void ForEachGroup(const Groups& gr, double eps, const T* x, F f) {
  ParallelFor(gr.outer * gr.inner, 16, [&](int64_t b, int64_t e) {
    for (int64_t g = b; g < e; ++g) {
      const int64_t base = (g / gr.inner) * gr.len * gr.inner + g % gr.inner;
      double sum = 0;
      for (int64_t i = 0; i < gr.len; ++i) {
        const double v = static_cast<double>(x[base + i * gr.inner]);
        sum += v * v;
      }
      f(base, std::sqrt(sum + eps));
    }
  });
}

void L2Compute(const OpContext&, const NodeAttrs& attrs,
               const std::vector<TBlob>& in, const std::vector<OpReqType>& req,
               const std::vector<TBlob>& out) {
  if (req[0] == OpReqType::kNullOp) return;
  const L2NormalizationParam& p = attrs.get<L2NormalizationParam>();
  const Groups gr = GroupsOf(p.mode, in[0].shape);
  MX_FLOAT_DTYPE_SWITCH(in[0].dtype, T, {
    using A = AccType<T>;
    const T* x = in[0].data<T>();
    T* y = out[0].data<T>();
    ForEachGroup(gr, p.eps, x, [&](int64_t base, double norm) {
      for (int64_t i = 0; i < gr.len; ++i) {
        const int64_t k = base + i * gr.inner;
        Assign(y + k, req[0], static_cast<A>(static_cast<double>(x[k]) / norm));
      }
    });
  });
}

MX_REGISTER_OP(L2Normalization)
    .Describe(
        "x / sqrt(sum(x^2) + eps) over each instance, channel vector "
        "(mode=channel) or spatial plane (mode=spatial).")
    .SetNumInputs(1)
    .SetInputNames({"data"})
    .SetParams<L2NormalizationParam>()
    .SetInferShape(L2Shape)
    .SetInferType([](const NodeAttrs& attrs, std::vector<DType>* in,
                     std::vector<DType>* out) {
      SameType(attrs, in, out);
      if ((*in)[0] != DType::kUnknown) RequireFloat(attrs, (*in)[0]);
    })
    .SetCompute(Context::kCPU, L2Compute);

// Inputs (out_grad, data): dx = (g - y * sum(g * y)) / norm per group.
void L2BackwardCompute(const OpContext&, const NodeAttrs& attrs,
                       const std::vector<TBlob>& in,
                       const std::vector<OpReqType>& req,
                       const std::vector<TBlob>& out) {
  if (req[0] == OpReqType::kNullOp) return;
  const L2NormalizationParam& p = attrs.get<L2NormalizationParam>();
  const Groups gr = GroupsOf(p.mode, in[1].shape);
  MX_FLOAT_DTYPE_SWITCH(in[1].dtype, T, {
    using A = AccType<T>;
    const T* g = in[0].data<T>();
    const T* x = in[1].data<T>();
    T* dx = out[0].data<T>();
    ForEachGroup(gr, p.eps, x, [&](int64_t base, double norm) {
      double gy = 0;
      for (int64_t i = 0; i < gr.len; ++i) {
        const int64_t k = base + i * gr.inner;
        gy += static_cast<double>(g[k]) * static_cast<double>(x[k]) / norm;
      }
      for (int64_t i = 0; i < gr.len; ++i) {
        const int64_t k = base + i * gr.inner;
        const double y = static_cast<double>(x[k]) / norm;
        Assign(dx + k, req[0],
               static_cast<A>((static_cast<double>(g[k]) - y * gy) / norm));
      }
    });
  });
}

MX_REGISTER_OP(_backward_L2Normalization)
    .Describe("Gradient of L2Normalization: (out_grad, data) -> data_grad.")
    .SetNumInputs(2)
    .SetInputNames({"out_grad", "data"})
    .SetParams<L2NormalizationParam>()
    // The forward's checks: the kernel indexes the axes the mode needs.
    .SetInferShape(L2Shape)
    .SetInferType([](const NodeAttrs& attrs, std::vector<DType>* in,
                     std::vector<DType>* out) {
      SameType(attrs, in, out);
      if ((*in)[1] != DType::kUnknown) RequireFloat(attrs, (*in)[1]);
    })
    .SetCompute(Context::kCPU, L2BackwardCompute);

[[maybe_unused]] const bool kGradientRegistered = [] {
  SetGradient(
      "L2Normalization", [](GradBuilder& b, const std::vector<NodeEntry>& g) {
        return std::vector<NodeEntry>{
            b.Op("_backward_L2Normalization", {g[0], b.x()}, b.n->attrs.dict)};
      });
  return true;
}();

}  // namespace
}  // namespace cpu
}  // namespace mx
