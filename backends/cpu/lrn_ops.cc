// LRN, MXNet's local response normalization across channels (AlexNet,
// GoogLeNet v1, Caffe models): data (N, C, H, W); y = x * norm^-beta with
// norm = knorm + alpha / nsize * (sum of x^2 over the nsize channels
// around each one). A hidden second output keeps norm (MXNet's tmp_norm)
// for _backward_LRN (out_grad, data, tmp_norm) -> data_grad, first order
// as MXNet's. The per-element rules are backends/common/lrn.h's, shared
// with the CUDA plugin.
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "backends/common/lrn.h"
#include "backends/cpu/grad_util.h"
#include "backends/cpu/kernel_util.h"
#include "base/error.h"

namespace mx {
namespace cpu {
namespace {

struct LRNParam {
  double alpha = 1e-4;
  double beta = 0.75;
  double knorm = 2;
  int64_t nsize = 0;
  static void Declare(ParamSchema<LRNParam>* s) {
    s->Field("alpha", &LRNParam::alpha).Describe("The variance scaling.");
    s->Field("beta", &LRNParam::beta).Describe("The power.");
    s->Field("knorm", &LRNParam::knorm).Describe("The offset k.");
    s->Field("nsize", &LRNParam::nsize)
        .Required()
        .Describe("Channels in the normalization window.");
  }
};

// The window and constants for data `d`, checking both (shape inference
// and the kernels share it).
mx_lrn::LrnSpec SpecOf(const NodeAttrs& attrs, const TShape& d) {
  if (d.ndim() != 4) {
    throw ShapeError(absl::StrCat(
        OpLabel(attrs), ": data must be 4-D (N, C, H, W), got ", d.ToString()));
  }
  const LRNParam& p = attrs.get<LRNParam>();
  if (p.nsize < 1) {
    throw InvalidArgument(
        absl::StrCat(OpLabel(attrs), ": nsize=", p.nsize, " must be >= 1"));
  }
  return {d[1], d[2] * d[3], p.nsize, p.alpha, p.beta, p.knorm};
}

void LRNShape(const NodeAttrs& attrs, std::vector<TShape>* in,
              std::vector<TShape>* out) {
  const TShape& d = (*in)[0];
  if (!d.ndim_known()) return;
  SpecOf(attrs, d);
  AssignShape(attrs, out, 0, d, true);
  AssignShape(attrs, out, 1, d, true);
}

void LRNCompute(const OpContext&, const NodeAttrs& attrs,
                const std::vector<TBlob>& in, const std::vector<OpReqType>& req,
                const std::vector<TBlob>& out) {
  const mx_lrn::LrnSpec s = SpecOf(attrs, in[0].shape);
  MX_FLOAT_DTYPE_SWITCH(in[0].dtype, T, {
    using A = AccType<T>;
    const T* x = in[0].data<T>();
    T* y = out[0].data<T>();
    T* norm = out[1].data<T>();
    ParallelFor(in[0].Size(), 4096, [&](int64_t b, int64_t e) {
      for (int64_t i = b; i < e; ++i) {
        A n;
        const A v = mx_lrn::LrnForwardAt<A>(s, x, i, &n);
        Assign(y + i, req[0], static_cast<T>(v));
        Assign(norm + i, req[1], static_cast<T>(n));
      }
    });
  });
}

void LRNBackwardShape(const NodeAttrs& attrs, std::vector<TShape>* in,
                      std::vector<TShape>* out) {
  AssignShape(attrs, in, 0, (*in)[1], false);
  AssignShape(attrs, in, 2, (*in)[1], false);
  AssignShape(attrs, out, 0, (*in)[1], true);
  if ((*in)[1].ndim_known()) SpecOf(attrs, (*in)[1]);
}

void LRNBackwardCompute(const OpContext&, const NodeAttrs& attrs,
                        const std::vector<TBlob>& in,
                        const std::vector<OpReqType>& req,
                        const std::vector<TBlob>& out) {
  const mx_lrn::LrnSpec s = SpecOf(attrs, in[1].shape);
  MX_FLOAT_DTYPE_SWITCH(in[1].dtype, T, {
    using A = AccType<T>;
    const T* g = in[0].data<T>();
    const T* x = in[1].data<T>();
    const T* norm = in[2].data<T>();
    T* dx = out[0].data<T>();
    ParallelFor(in[1].Size(), 4096, [&](int64_t b, int64_t e) {
      for (int64_t i = b; i < e; ++i) {
        Assign(dx + i, req[0],
               static_cast<T>(mx_lrn::LrnBackwardAt<A>(s, g, x, norm, i)));
      }
    });
  });
}

[[maybe_unused]] const bool kRegistered = [] {
  OpRegistry::Get()
      ->Register("LRN")
      .Describe(
          "Local response normalization across channels (MXNet's): x * "
          "(knorm + alpha / nsize * sum of x^2 over the nsize channels "
          "around)^-beta; data (N, C, H, W).")
      .SetNumInputs(1)
      .SetInputNames({"data"})
      .SetNumOutputs(2)
      .SetOutputNames({"output", "tmp_norm"})
      .SetNumVisibleOutputs([](const NodeAttrs&) { return 1; })
      .SetParams<LRNParam>()
      .SetInferShape(LRNShape)
      .SetInferType(SameFloatType)
      .SetCompute(Context::kCPU, LRNCompute);
  OpRegistry::Get()
      ->Register("_backward_LRN")
      .Describe("Gradient of LRN: (out_grad, data, tmp_norm) -> data_grad.")
      .SetNumInputs(3)
      .SetInputNames({"out_grad", "data", "tmp_norm"})
      .SetParams<LRNParam>()
      .SetInferShape(LRNBackwardShape)
      .SetInferType(SameFloatType)
      .SetCompute(Context::kCPU, LRNBackwardCompute);
  // The gradient reaching tmp_norm is dropped, as MXNet's backward does.
  SetGradient("LRN", [](GradBuilder& b, const std::vector<NodeEntry>& g) {
    return std::vector<NodeEntry>{
        b.Op("_backward_LRN", {g[0], b.x(0), b.y(1)}, b.n->attrs.dict)};
  });
  return true;
}();

}  // namespace
}  // namespace cpu
}  // namespace mx
