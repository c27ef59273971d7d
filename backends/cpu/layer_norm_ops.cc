// LayerNorm: (x - mean) / sqrt(var + eps) * gamma + beta, statistics over
// one axis, gamma and beta of that axis' extent, as MXNet's LayerNorm.
// Outputs 1 and 2 (visible with output_mean_var) are the mean and the
// standard deviation, with the normalized axis kept as extent 1.
#include <cmath>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "backends/cpu/grad_util.h"
#include "backends/cpu/kernel_util.h"
#include "backends/cpu/line_moments.h"
#include "base/error.h"

namespace mx {
namespace cpu {
namespace {

struct LayerNormParam {
  int axis = -1;
  double eps = 1e-5;
  bool output_mean_var = false;
  static void Declare(ParamSchema<LayerNormParam>* s) {
    s->Field("axis", &LayerNormParam::axis);
    s->Field("eps", &LayerNormParam::eps).Describe("Added to the variance.");
    s->Field("output_mean_var", &LayerNormParam::output_mean_var)
        .Describe("Expose the mean and standard deviation outputs.");
  }
};

void LayerNormShape(const NodeAttrs& attrs, std::vector<TShape>* in,
                    std::vector<TShape>* out) {
  const LayerNormParam& p = attrs.get<LayerNormParam>();
  if (!(p.eps >= 0)) {
    throw InvalidArgument(
        absl::StrCat(OpLabel(attrs), ": eps=", p.eps, " must be >= 0"));
  }
  AssignShape(attrs, in, 0, (*out)[0], false);
  AssignShape(attrs, out, 0, (*in)[0], true);
  const TShape& d = (*in)[0];
  if (!d.ndim_known()) return;
  const int ax = d.CheckAxis(p.axis, OpLabel(attrs).c_str());
  AssignShape(attrs, in, 1, TShape{d[ax]}, false);
  AssignShape(attrs, in, 2, TShape{d[ax]}, false);
  TShape stat = d;
  stat[ax] = 1;
  AssignShape(attrs, out, 1, stat, true);
  AssignShape(attrs, out, 2, stat, true);
}

// The (outer, len, inner) view of shape d around the normalized axis.
struct Lines {
  int64_t outer, len, inner;
};
Lines LinesOf(const NodeAttrs& attrs, const TShape& d) {
  const int ax =
      d.CheckAxis(attrs.get<LayerNormParam>().axis, OpLabel(attrs).c_str());
  return {d.ProdDims(0, ax), d[ax], d.ProdDims(ax + 1, d.ndim())};
}

// Calls f(base, mean, inv_std) for each line of x, in parallel.
template <typename T, typename F>
void ForEachLine(const Lines& l, double eps, const T* x, F f) {
  ParallelFor(l.outer * l.inner, 16, [&](int64_t b, int64_t e) {
    for (int64_t line = b; line < e; ++line) {
      const int64_t base = (line / l.inner) * l.len * l.inner + line % l.inner;
      const LineMoments m = MomentsOf(x + base, l.len, l.inner, eps);
      f(line, base, m.mean, m.inv_std);
    }
  });
}

void LayerNormCompute(const OpContext&, const NodeAttrs& attrs,
                      const std::vector<TBlob>& in,
                      const std::vector<OpReqType>& req,
                      const std::vector<TBlob>& out) {
  const Lines l = LinesOf(attrs, in[0].shape);
  const double eps = attrs.get<LayerNormParam>().eps;
  MX_FLOAT_DTYPE_SWITCH(in[0].dtype, T, {
    using A = AccType<T>;
    const T* x = in[0].data<T>();
    const T* gamma = in[1].data<T>();
    const T* beta = in[2].data<T>();
    T* y = out[0].data<T>();
    T* mean_out = out[1].data<T>();
    T* std_out = out[2].data<T>();
    ForEachLine(l, eps, x,
                [&](int64_t line, int64_t base, double mean, double inv_std) {
                  Assign(mean_out + line, req[1], static_cast<A>(mean));
                  Assign(std_out + line, req[2], static_cast<A>(1.0 / inv_std));
                  if (req[0] == OpReqType::kNullOp) return;
                  for (int64_t i = 0; i < l.len; ++i) {
                    const int64_t k = base + i * l.inner;
                    const double v =
                        (static_cast<double>(x[k]) - mean) * inv_std;
                    Assign(y + k, req[0],
                           static_cast<A>(v * static_cast<double>(gamma[i]) +
                                          static_cast<double>(beta[i])));
                  }
                });
  });
}

MX_REGISTER_OP(LayerNorm)
    .Describe(
        "(x - mean) / sqrt(var + eps) * gamma + beta with statistics over "
        "`axis`; outputs mean and std too (visible with output_mean_var).")
    .SetNumInputs(3)
    .SetInputNames({"data", "gamma", "beta"})
    .SetNumOutputs(3)
    .SetOutputNames({"output", "mean", "std"})
    .SetNumVisibleOutputs([](const NodeAttrs& attrs) {
      return attrs.get<LayerNormParam>().output_mean_var ? 3 : 1;
    })
    .SetParams<LayerNormParam>()
    .SetInferShape(LayerNormShape)
    .SetInferType([](const NodeAttrs& attrs, std::vector<DType>* in,
                     std::vector<DType>* out) {
      SameType(attrs, in, out);
      if ((*in)[0] != DType::kUnknown) RequireFloat(attrs, (*in)[0]);
    })
    .SetCompute(Context::kCPU, LayerNormCompute);

// Inputs (out_grad, data, gamma); outputs (data_grad, gamma_grad,
// beta_grad). With xh the normalized x and gh = g * gamma:
// dx = inv_std * (gh - mean(gh) - xh * mean(gh * xh)).
void LayerNormBackwardCompute(const OpContext&, const NodeAttrs& attrs,
                              const std::vector<TBlob>& in,
                              const std::vector<OpReqType>& req,
                              const std::vector<TBlob>& out) {
  const Lines l = LinesOf(attrs, in[1].shape);
  const double eps = attrs.get<LayerNormParam>().eps;
  MX_FLOAT_DTYPE_SWITCH(in[1].dtype, T, {
    using A = AccType<T>;
    const T* g = in[0].data<T>();
    const T* x = in[1].data<T>();
    const T* gamma = in[2].data<T>();
    T* dx = out[0].data<T>();
    std::vector<double> dgamma(static_cast<size_t>(l.len), 0.0);
    std::vector<double> dbeta(static_cast<size_t>(l.len), 0.0);
    std::vector<double> xh_line(static_cast<size_t>(l.len));
    // Serial: the gamma and beta sums are shared across lines.
    for (int64_t line = 0; line < l.outer * l.inner; ++line) {
      const int64_t base = (line / l.inner) * l.len * l.inner + line % l.inner;
      const LineMoments m = MomentsOf(x + base, l.len, l.inner, eps);
      const double mean = m.mean, inv_std = m.inv_std;
      double sum_gh = 0, sum_ghxh = 0;
      for (int64_t i = 0; i < l.len; ++i) {
        const int64_t k = base + i * l.inner;
        const double xh = (static_cast<double>(x[k]) - mean) * inv_std;
        const double gk = static_cast<double>(g[k]);
        const double gh = gk * static_cast<double>(gamma[i]);
        xh_line[i] = xh;
        sum_gh += gh;
        sum_ghxh += gh * xh;
        dgamma[i] += gk * xh;
        dbeta[i] += gk;
      }
      const double n = static_cast<double>(l.len);
      for (int64_t i = 0; i < l.len; ++i) {
        const int64_t k = base + i * l.inner;
        const double gh =
            static_cast<double>(g[k]) * static_cast<double>(gamma[i]);
        Assign(dx + k, req[0],
               static_cast<A>(inv_std *
                              (gh - sum_gh / n - xh_line[i] * sum_ghxh / n)));
      }
    }
    T* dg = out[1].data<T>();
    T* db = out[2].data<T>();
    for (int64_t i = 0; i < l.len; ++i) {
      Assign(dg + i, req[1], static_cast<A>(dgamma[i]));
      Assign(db + i, req[2], static_cast<A>(dbeta[i]));
    }
  });
}

MX_REGISTER_OP(_backward_LayerNorm)
    .Describe(
        "Gradient of LayerNorm: (out_grad, data, gamma) -> (data_grad, "
        "gamma_grad, beta_grad).")
    .SetNumInputs(3)
    .SetInputNames({"out_grad", "data", "gamma"})
    .SetNumOutputs(3)
    .SetParams<LayerNormParam>()
    .SetInferShape([](const NodeAttrs& attrs, std::vector<TShape>* in,
                      std::vector<TShape>* out) {
      AssignShape(attrs, in, 0, (*in)[1], false);
      AssignShape(attrs, out, 0, (*in)[1], true);
      AssignShape(attrs, out, 1, (*in)[2], true);
      AssignShape(attrs, out, 2, (*in)[2], true);
      // The kernel indexes data's axis and gamma along it.
      const TShape& d = (*in)[1];
      if (d.ndim_known()) {
        const int ax = d.CheckAxis(attrs.get<LayerNormParam>().axis,
                                   OpLabel(attrs).c_str());
        AssignShape(attrs, in, 2, TShape{d[ax]}, false);
      }
    })
    .SetInferType(SameType)
    .SetCompute(Context::kCPU, LayerNormBackwardCompute);

[[maybe_unused]] const bool kGradientRegistered = [] {
  // Gradients reaching the mean and std outputs are not propagated
  // (MXNet's LayerNorm backward ignores them as well).
  SetGradient("LayerNorm", [](GradBuilder& b, const std::vector<NodeEntry>& g) {
    const NodeEntry d =
        b.Op("_backward_LayerNorm", {g[0], b.x(0), b.x(1)}, b.n->attrs.dict);
    return OutputsOf(d, 3);
  });
  return true;
}();

}  // namespace
}  // namespace cpu
}  // namespace mx
