// BatchNorm (with in-place moving statistics) and its gradient,
// _backward_BatchNorm.
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

// ---- BatchNorm. ----

struct BatchNormParam {
  double eps = 1e-3;
  double momentum = 0.9;
  bool fix_gamma = true;
  bool use_global_stats = false;
  int axis = 1;
  bool output_mean_var = false;
  bool cudnn_off = false;
  static void Declare(ParamSchema<BatchNormParam>* s) {
    s->Field("eps", &BatchNormParam::eps);
    s->Field("momentum", &BatchNormParam::momentum)
        .Describe("moving = moving * momentum + batch * (1 - momentum)");
    s->Field("fix_gamma", &BatchNormParam::fix_gamma)
        .Describe("Treat gamma as 1.");
    s->Field("use_global_stats", &BatchNormParam::use_global_stats)
        .Describe("Normalize with the moving statistics even in training.");
    s->Field("axis", &BatchNormParam::axis).Describe("The channel axis.");
    s->Field("output_mean_var", &BatchNormParam::output_mean_var)
        .Describe("Ignored: mean and var are always outputs 1 and 2.");
    s->Field("cudnn_off", &BatchNormParam::cudnn_off).Describe("Ignored.");
  }
};

constexpr int kBNParams[] = {1, 2, 3, 4};  // gamma, beta, moving mean/var.

void BatchNormShape(const NodeAttrs& attrs, std::vector<TShape>* in,
                    std::vector<TShape>* out) {
  const BatchNormParam& p = attrs.get<BatchNormParam>();
  AssignShape(attrs, in, 0, (*out)[0], false);
  AssignShape(attrs, out, 0, (*in)[0], true);
  const TShape& d = (*in)[0];
  if (!d.ndim_known()) return;
  const int ax = d.CheckAxis(p.axis, OpLabel(attrs).c_str());
  // The channel count may come from the data or any per-channel array.
  TShape channels{d[ax]};
  for (int i : kBNParams) MergeShape(&channels, (*in)[i]);
  for (int i : kBNParams) AssignShape(attrs, in, i, channels, false);
  AssignShape(attrs, out, 1, channels, true);
  AssignShape(attrs, out, 2, channels, true);
  TShape dc = TShape::Filled(d.ndim(), -1);
  dc[ax] = channels[0];
  AssignShape(attrs, in, 0, dc, false);
  AssignShape(attrs, out, 0, (*in)[0], true);
}

// The data and output 0 share a float dtype; the per-channel arrays are
// float32 for float16 data (as in MXNet) and the data's dtype otherwise.
void BatchNormType(const NodeAttrs& attrs, std::vector<DType>* in,
                   std::vector<DType>* out) {
  AssignType(attrs, in, 0, (*out)[0], false);
  const DType t = (*in)[0];
  if (t == DType::kUnknown) return;
  RequireFloat(attrs, t);
  AssignType(attrs, out, 0, t, true);
  const DType pt = t == DType::kFloat16 ? DType::kFloat32 : t;
  for (int i : kBNParams) AssignType(attrs, in, i, pt, false);
  AssignType(attrs, out, 1, pt, true);
  AssignType(attrs, out, 2, pt, true);
}

template <typename T>
void BatchNormImpl(const OpContext& ctx, const BatchNormParam& p,
                   const std::vector<TBlob>& in,
                   const std::vector<OpReqType>& req,
                   const std::vector<TBlob>& out) {
  using P = AccType<T>;
  const TShape& s = in[0].shape;
  const int ax = s.CheckAxis(p.axis, "BatchNorm");
  const int64_t channels = s[ax], outer = s.ProdDims(0, ax),
                inner = s.ProdDims(ax + 1, s.ndim());
  const int64_t count = outer * inner;
  // Batch statistics in training; none in an empty batch.
  const bool batch_stats = ctx.is_train && !p.use_global_stats && count > 0;
  const T* x = in[0].data<T>();
  const P* gamma = in[1].data<P>();
  const P* beta = in[2].data<P>();
  P* moving_mean = in[3].data<P>();
  P* moving_var = in[4].data<P>();
  T* y = out[0].data<T>();
  P* mean_out = out[1].data<P>();
  P* var_out = out[2].data<P>();
  ParallelFor(channels, 1, [&](int64_t b, int64_t e) {
    for (int64_t c = b; c < e; ++c) {
      double mean, var;
      if (batch_stats) {
        double sum = 0, sq = 0;
        for (int64_t o = 0; o < outer; ++o) {
          const T* row = x + (o * channels + c) * inner;
          for (int64_t i = 0; i < inner; ++i)
            sum += static_cast<double>(row[i]);
        }
        mean = sum / count;
        for (int64_t o = 0; o < outer; ++o) {
          const T* row = x + (o * channels + c) * inner;
          for (int64_t i = 0; i < inner; ++i) {
            const double dv = static_cast<double>(row[i]) - mean;
            sq += dv * dv;
          }
        }
        var = sq / count;
      } else {
        mean = static_cast<double>(moving_mean[c]);
        var = static_cast<double>(moving_var[c]);
      }
      const double g = p.fix_gamma ? 1.0 : static_cast<double>(gamma[c]);
      const double scale = g / std::sqrt(var + p.eps);
      const double shift = static_cast<double>(beta[c]) - mean * scale;
      if (req[0] != OpReqType::kNullOp) {
        for (int64_t o = 0; o < outer; ++o) {
          const int64_t base = (o * channels + c) * inner;
          for (int64_t i = 0; i < inner; ++i) {
            const double v = static_cast<double>(x[base + i]) * scale + shift;
            Assign(y + base + i, req[0], static_cast<P>(v));
          }
        }
      }
      Assign(mean_out + c, req[1], static_cast<P>(mean));
      Assign(var_out + c, req[2], static_cast<P>(var));
      if (batch_stats) {
        const double m = p.momentum;
        moving_mean[c] = static_cast<P>(
            static_cast<double>(moving_mean[c]) * m + mean * (1 - m));
        moving_var[c] = static_cast<P>(static_cast<double>(moving_var[c]) * m +
                                       var * (1 - m));
      }
    }
  });
}

void BatchNormCompute(const OpContext& ctx, const NodeAttrs& attrs,
                      const std::vector<TBlob>& in,
                      const std::vector<OpReqType>& req,
                      const std::vector<TBlob>& out) {
  const BatchNormParam& p = attrs.get<BatchNormParam>();
  MX_FLOAT_DTYPE_SWITCH(in[0].dtype, T,
                        { BatchNormImpl<T>(ctx, p, in, req, out); });
}

MX_REGISTER_OP(BatchNorm)
    .Describe(
        "Batch normalization over every axis but `axis`. In training "
        "(unless use_global_stats) it normalizes with the batch mean and "
        "biased variance, returns them as outputs 1 and 2 and updates "
        "moving_mean / moving_var in place; otherwise it uses the moving "
        "statistics, which outputs 1 and 2 then copy.")
    .SetNumInputs(5)
    .SetInputNames({"data", "gamma", "beta", "moving_mean", "moving_var"})
    .SetNumOutputs(3)
    // Composed symbols expose the saved statistics only on request.
    .SetNumVisibleOutputs([](const NodeAttrs& attrs) {
      return attrs.get<BatchNormParam>().output_mean_var ? 3 : 1;
    })
    .SetOutputNames({"output", "mean", "var"})
    .SetParams<BatchNormParam>()
    .SetInferShape(BatchNormShape)
    .SetInferType(BatchNormType)
    .SetMutateInputs([](const NodeAttrs&) {
      return std::vector<int>{3, 4};
    })
    .SetCompute(Context::kCPU, BatchNormCompute);

// ---- _backward_BatchNorm. ----

// Inputs (out_grad, data, gamma, mean, var) where mean and var are the
// forward's outputs 1 and 2 (the statistics it normalized with); outputs
// (data_grad, gamma_grad, beta_grad). With batch statistics (training,
// unless use_global_stats) the mean and var depend on the data, which adds
// the two centering terms to data_grad; otherwise they are constants.
void BatchNormBackwardShape(const NodeAttrs& attrs, std::vector<TShape>* in,
                            std::vector<TShape>* out) {
  AssignShape(attrs, in, 0, (*in)[1], false);
  AssignShape(attrs, in, 1, (*in)[0], false);
  AssignShape(attrs, out, 0, (*in)[1], true);
  for (int i = 1; i < 3; ++i) AssignShape(attrs, out, i, (*in)[2], true);
  for (int i = 3; i < 5; ++i) AssignShape(attrs, in, i, (*in)[2], false);
}

void BatchNormBackwardType(const NodeAttrs& attrs, std::vector<DType>* in,
                           std::vector<DType>* out) {
  AssignType(attrs, in, 0, (*in)[1], false);
  AssignType(attrs, in, 1, (*in)[0], false);
  const DType t = (*in)[0];
  if (t == DType::kUnknown) return;
  RequireFloat(attrs, t);
  const DType pt = t == DType::kFloat16 ? DType::kFloat32 : t;
  AssignType(attrs, out, 0, t, true);
  for (int i = 2; i < 5; ++i) AssignType(attrs, in, i, pt, false);
  for (int i = 1; i < 3; ++i) AssignType(attrs, out, i, pt, true);
}

template <typename T>
void BatchNormBackwardImpl(const OpContext& ctx, const BatchNormParam& p,
                           const std::vector<TBlob>& in,
                           const std::vector<OpReqType>& req,
                           const std::vector<TBlob>& out) {
  using P = AccType<T>;
  const TShape& s = in[1].shape;
  const int ax = s.CheckAxis(p.axis, "_backward_BatchNorm");
  const int64_t channels = s[ax], outer = s.ProdDims(0, ax),
                inner = s.ProdDims(ax + 1, s.ndim());
  const int64_t count = outer * inner;
  const bool batch_stats = ctx.is_train && !p.use_global_stats && count > 0;
  const T* og = in[0].data<T>();
  const T* x = in[1].data<T>();
  const P* gamma = in[2].data<P>();
  const P* mean = in[3].data<P>();
  const P* var = in[4].data<P>();
  T* dx = out[0].data<T>();
  P* dgamma = out[1].data<P>();
  P* dbeta = out[2].data<P>();
  ParallelFor(channels, 1, [&](int64_t b, int64_t e) {
    for (int64_t c = b; c < e; ++c) {
      const double m = static_cast<double>(mean[c]);
      const double inv_std =
          1.0 / std::sqrt(static_cast<double>(var[c]) + p.eps);
      double sum_g = 0, sum_gx = 0;  // sum(og), sum(og * xhat)
      for (int64_t o = 0; o < outer; ++o) {
        const int64_t base = (o * channels + c) * inner;
        for (int64_t i = 0; i < inner; ++i) {
          const double g = static_cast<double>(og[base + i]);
          sum_g += g;
          sum_gx += g * (static_cast<double>(x[base + i]) - m) * inv_std;
        }
      }
      const double gm = p.fix_gamma ? 1.0 : static_cast<double>(gamma[c]);
      const double scale = gm * inv_std;
      // Batch statistics: dx = scale * (og - mean(og) - xhat *
      // mean(og * xhat)).
      const double mean_g = batch_stats ? sum_g / count : 0;
      const double mean_gx = batch_stats ? sum_gx / count : 0;
      if (req[0] != OpReqType::kNullOp) {
        for (int64_t o = 0; o < outer; ++o) {
          const int64_t base = (o * channels + c) * inner;
          for (int64_t i = 0; i < inner; ++i) {
            const double xhat =
                (static_cast<double>(x[base + i]) - m) * inv_std;
            const double v = scale * (static_cast<double>(og[base + i]) -
                                      mean_g - xhat * mean_gx);
            Assign(dx + base + i, req[0], static_cast<P>(v));
          }
        }
      }
      // A fixed gamma gets no gradient (MXNet writes zeros).
      Assign(dgamma + c, req[1], static_cast<P>(p.fix_gamma ? 0.0 : sum_gx));
      Assign(dbeta + c, req[2], static_cast<P>(sum_g));
    }
  });
}

void BatchNormBackwardCompute(const OpContext& ctx, const NodeAttrs& attrs,
                              const std::vector<TBlob>& in,
                              const std::vector<OpReqType>& req,
                              const std::vector<TBlob>& out) {
  const BatchNormParam& p = attrs.get<BatchNormParam>();
  MX_FLOAT_DTYPE_SWITCH(in[1].dtype, T,
                        { BatchNormBackwardImpl<T>(ctx, p, in, req, out); });
}

MX_REGISTER_OP(_backward_BatchNorm)
    .Describe(
        "Gradients of BatchNorm: (out_grad, data, gamma, mean, var) -> "
        "(data_grad, gamma_grad, beta_grad); batch statistics when run in "
        "training mode without use_global_stats.")
    .SetNumInputs(5)
    .SetInputNames({"out_grad", "data", "gamma", "mean", "var"})
    .SetNumOutputs(3)
    .SetOutputNames({"data_grad", "gamma_grad", "beta_grad"})
    .SetParams<BatchNormParam>()
    .SetInferShape(BatchNormBackwardShape)
    .SetInferType(BatchNormBackwardType)
    .SetCompute(Context::kCPU, BatchNormBackwardCompute);

// Gradients of the saved mean and var outputs are ignored (as in MXNet);
// the moving statistics are auxiliary states and get none.
[[maybe_unused]] const bool kGradientRegistered = [] {
  SetGradient("BatchNorm", [](GradBuilder& b, const std::vector<NodeEntry>& g) {
    const NodeEntry d =
        b.Op("_backward_BatchNorm", {g[0], b.x(0), b.x(1), b.y(1), b.y(2)},
             b.n->attrs.dict);
    return std::vector<NodeEntry>{d, NodeEntry{d.node, 1, 0},
                                  NodeEntry{d.node, 2, 0}, NodeEntry{},
                                  NodeEntry{}};
  });
  return true;
}();

}  // namespace
}  // namespace cpu
}  // namespace mx
