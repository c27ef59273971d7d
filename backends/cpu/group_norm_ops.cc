// GroupNorm and InstanceNorm, as MXNet's: data (N, C, ...) split into
// num_groups groups of channels (InstanceNorm: one group per channel), each
// (sample, group) normalized over its channels and positions, then
// gamma[c] * xh + beta[c] per channel (gamma and beta of shape (C,): MXNet
// 1.6's per-group GroupNorm gamma was a bug, fixed in apache/mxnet#18199).
// Biased variance, statistics in double. GroupNorm's outputs 1 and 2 (visible
// with output_mean_var) are the mean and the standard deviation, (N, G).
// Gradients: _backward_GroupNorm / _backward_InstanceNorm (first order).
#include <algorithm>
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

struct GroupNormParam {
  int num_groups = 1;
  double eps = 1e-5;
  bool output_mean_var = false;
  static void Declare(ParamSchema<GroupNormParam>* s) {
    s->Field("num_groups", &GroupNormParam::num_groups)
        .Describe("groups the channels are split into");
    s->Field("eps", &GroupNormParam::eps).Describe("Added to the variance.");
    s->Field("output_mean_var", &GroupNormParam::output_mean_var)
        .Describe("Expose the mean and standard deviation outputs.");
  }
};

struct InstanceNormParam {
  double eps = 1e-3;
  static void Declare(ParamSchema<InstanceNormParam>* s) {
    s->Field("eps", &InstanceNormParam::eps).Describe("Added to the variance.");
  }
};

bool IsInstanceNorm(const NodeAttrs& attrs) {
  return attrs.op->name().find("InstanceNorm") != std::string::npos;
}

double Eps(const NodeAttrs& attrs) {
  const double eps = IsInstanceNorm(attrs) ? attrs.get<InstanceNormParam>().eps
                                           : attrs.get<GroupNormParam>().eps;
  if (!(eps >= 0)) {
    throw InvalidArgument(
        absl::StrCat(OpLabel(attrs), ": eps=", eps, " must be >= 0"));
  }
  return eps;
}

// Data (N, C, S...) as N * G contiguous lines of (C / G) * S values.
struct Groups {
  int64_t n = 0, c = 0, groups = 1, spatial = 1;
  int64_t lines() const { return n * groups; }
  int64_t len() const { return c / groups * spatial; }
  // The channel of element k of a line of group g.
  int64_t channel(int64_t g, int64_t k) const {
    return g * (c / groups) + k / spatial;
  }
};

Groups GroupsOf(const NodeAttrs& attrs, const TShape& d) {
  const std::string label = OpLabel(attrs);
  const bool instance = IsInstanceNorm(attrs);
  if (d.ndim() < (instance ? 3 : 2)) {
    throw ShapeError(absl::StrCat(
        label, ": input 0 (data) has shape ", d.ToString(), "; (N, C",
        instance ? ", spatial...)" : ", ...)", " needed"));
  }
  Groups g;
  g.n = d[0];
  g.c = d[1];
  g.spatial = d.ProdDims(2, d.ndim());
  g.groups = instance ? d[1] : attrs.get<GroupNormParam>().num_groups;
  // At most one group for no channels: the (N, G) statistics are sized by
  // it.
  if (!instance && (g.groups <= 0 || g.groups > std::max<int64_t>(d[1], 1) ||
                    d[1] % g.groups != 0)) {
    throw ShapeError(absl::StrCat(
        label, ": num_groups=", g.groups, " does not divide the ", d[1],
        " channels of input 0 (data) of shape ", d.ToString()));
  }
  return g;
}

void GroupNormShape(const NodeAttrs& attrs, std::vector<TShape>* in,
                    std::vector<TShape>* out) {
  Eps(attrs);
  AssignShape(attrs, in, 0, (*out)[0], false);
  AssignShape(attrs, out, 0, (*in)[0], true);
  const TShape& d = (*in)[0];
  if (!d.ndim_known()) return;
  const Groups g = GroupsOf(attrs, d);
  AssignShape(attrs, in, 1, TShape{g.c}, false);
  AssignShape(attrs, in, 2, TShape{g.c}, false);
  if (out->size() > 1) {
    AssignShape(attrs, out, 1, TShape{g.n, g.groups}, true);
    AssignShape(attrs, out, 2, TShape{g.n, g.groups}, true);
  }
}

void FloatType(const NodeAttrs& attrs, std::vector<DType>* in,
               std::vector<DType>* out) {
  SameType(attrs, in, out);
  if ((*in)[0] != DType::kUnknown) RequireFloat(attrs, (*in)[0]);
}

// The moments of line `line` (contiguous), as LayerNorm's.
template <typename T>
LineMoments LineStats(const Groups& g, double eps, const T* x, int64_t line) {
  return MomentsOf(x + line * g.len(), g.len(), 1, eps);
}

void GroupNormCompute(const OpContext&, const NodeAttrs& attrs,
                      const std::vector<TBlob>& in,
                      const std::vector<OpReqType>& req,
                      const std::vector<TBlob>& out) {
  const Groups g = GroupsOf(attrs, in[0].shape);
  const double eps = Eps(attrs);
  const int64_t len = g.len();
  MX_FLOAT_DTYPE_SWITCH(in[0].dtype, T, {
    using A = AccType<T>;
    const T* x = in[0].data<T>();
    const T* gamma = in[1].data<T>();
    const T* beta = in[2].data<T>();
    T* y = out[0].data<T>();
    ParallelFor(g.lines(), 4, [&](int64_t b, int64_t e) {
      for (int64_t line = b; line < e; ++line) {
        const LineMoments m = LineStats(g, eps, x, line);
        const double mean = m.mean, inv_std = m.inv_std;
        if (out.size() > 1) {
          Assign(out[1].data<T>() + line, req[1], static_cast<A>(mean));
          Assign(out[2].data<T>() + line, req[2],
                 static_cast<A>(1.0 / inv_std));
        }
        if (req[0] == OpReqType::kNullOp) continue;
        const int64_t group = line % g.groups;
        for (int64_t k = 0; k < len; ++k) {
          const int64_t i = line * len + k, c = g.channel(group, k);
          const double xh = (static_cast<double>(x[i]) - mean) * inv_std;
          Assign(y + i, req[0],
                 static_cast<A>(xh * static_cast<double>(gamma[c]) +
                                static_cast<double>(beta[c])));
        }
      }
    });
  });
}

// (out_grad, data, gamma) -> (data_grad, gamma_grad, beta_grad). With xh
// the normalized x and gh = g * gamma[c], per line:
// dx = inv_std * (gh - mean(gh) - xh * mean(gh * xh)); per channel:
// dgamma = sum g * xh, dbeta = sum g.
void GroupNormBackwardCompute(const OpContext&, const NodeAttrs& attrs,
                              const std::vector<TBlob>& in,
                              const std::vector<OpReqType>& req,
                              const std::vector<TBlob>& out) {
  const Groups g = GroupsOf(attrs, in[1].shape);
  const double eps = Eps(attrs);
  const int64_t len = g.len();
  std::vector<double> means(g.lines()), inv_stds(g.lines());
  MX_FLOAT_DTYPE_SWITCH(in[1].dtype, T, {
    using A = AccType<T>;
    const T* og = in[0].data<T>();
    const T* x = in[1].data<T>();
    const T* gamma = in[2].data<T>();
    T* dx = out[0].data<T>();
    ParallelFor(g.lines(), 4, [&](int64_t b, int64_t e) {
      for (int64_t line = b; line < e; ++line) {
        const LineMoments m = LineStats(g, eps, x, line);
        const double mean = means[line] = m.mean;
        const double inv_std = inv_stds[line] = m.inv_std;
        if (req[0] == OpReqType::kNullOp || len == 0) continue;
        const int64_t group = line % g.groups;
        const auto xh = [&](int64_t i) {
          return (static_cast<double>(x[i]) - mean) * inv_std;
        };
        const auto gh = [&](int64_t i, int64_t k) {
          return static_cast<double>(og[i]) *
                 static_cast<double>(gamma[g.channel(group, k)]);
        };
        double sum_gh = 0, sum_ghxh = 0;
        for (int64_t k = 0; k < len; ++k) {
          const int64_t i = line * len + k;
          sum_gh += gh(i, k);
          sum_ghxh += gh(i, k) * xh(i);
        }
        const double n = static_cast<double>(len);
        for (int64_t k = 0; k < len; ++k) {
          const int64_t i = line * len + k;
          Assign(dx + i, req[0],
                 static_cast<A>(
                     inv_std * (gh(i, k) - sum_gh / n - xh(i) * sum_ghxh / n)));
        }
      }
    });
    // Per channel, over the samples and positions: each task owns its
    // channels' sums.
    const int64_t per_group = g.c / g.groups;
    ParallelFor(g.c, 1, [&](int64_t b, int64_t e) {
      for (int64_t c = b; c < e; ++c) {
        double dgamma = 0, dbeta = 0;
        for (int64_t s = 0; s < g.n; ++s) {
          const int64_t line = s * g.groups + c / per_group;
          for (int64_t p = 0; p < g.spatial; ++p) {
            const int64_t i = (s * g.c + c) * g.spatial + p;
            const double gi = static_cast<double>(og[i]);
            dgamma +=
                gi * (static_cast<double>(x[i]) - means[line]) * inv_stds[line];
            dbeta += gi;
          }
        }
        Assign(out[1].data<T>() + c, req[1], static_cast<A>(dgamma));
        Assign(out[2].data<T>() + c, req[2], static_cast<A>(dbeta));
      }
    });
  });
}

void BackwardShape(const NodeAttrs& attrs, std::vector<TShape>* in,
                   std::vector<TShape>* out) {
  AssignShape(attrs, in, 0, (*in)[1], false);
  AssignShape(attrs, out, 0, (*in)[1], true);
  const TShape& d = (*in)[1];
  if (d.ndim_known()) {
    AssignShape(attrs, in, 2, TShape{GroupsOf(attrs, d).c}, false);
  }
  AssignShape(attrs, out, 1, (*in)[2], true);
  AssignShape(attrs, out, 2, (*in)[2], true);
}

template <typename Param>
void RegisterNorm(const char* name, int outputs, const char* doc) {
  Op& op = OpRegistry::Get()
               ->Register(name)
               .Describe(doc)
               .SetNumInputs(3)
               .SetInputNames({"data", "gamma", "beta"})
               .SetNumOutputs(outputs)
               .SetParams<Param>()
               .SetInferShape(GroupNormShape)
               .SetInferType(FloatType)
               .SetCompute(Context::kCPU, GroupNormCompute);
  if (outputs == 3) {
    op.SetOutputNames({"output", "mean", "std"})
        .SetNumVisibleOutputs([](const NodeAttrs& attrs) {
          return attrs.get<GroupNormParam>().output_mean_var ? 3 : 1;
        });
  }
  const std::string backward = absl::StrCat("_backward_", name);
  OpRegistry::Get()
      ->Register(backward)
      .Describe(absl::StrCat("Gradient of ", name,
                             ": (out_grad, data, gamma) -> (data_grad, "
                             "gamma_grad, beta_grad)."))
      .SetNumInputs(3)
      .SetInputNames({"out_grad", "data", "gamma"})
      .SetNumOutputs(3)
      .SetParams<Param>()
      .SetInferShape(BackwardShape)
      .SetInferType(FloatType)
      .SetCompute(Context::kCPU, GroupNormBackwardCompute);
  // Gradients reaching GroupNorm's mean and std outputs are not propagated
  // (MXNet's backward ignores them as well).
  SetGradient(name,
              [backward](GradBuilder& b, const std::vector<NodeEntry>& g) {
                return OutputsOf(
                    b.Op(backward, {g[0], b.x(0), b.x(1)}, b.n->attrs.dict), 3);
              });
}

[[maybe_unused]] const bool kRegistered = [] {
  RegisterNorm<GroupNormParam>(
      "GroupNorm", 3,
      "Normalizes each (sample, group of channels) over its channels and "
      "positions, then gamma[c] * x + beta[c]; outputs mean and std (N, G) "
      "too (visible with output_mean_var).");
  RegisterNorm<InstanceNormParam>(
      "InstanceNorm", 1,
      "Normalizes each (sample, channel) over its positions, then "
      "gamma[c] * x + beta[c] (eps 1e-3 by default, as MXNet's).");
  return true;
}();

}  // namespace
}  // namespace cpu
}  // namespace mx
