// masked_softmax and masked_log_softmax (MXNet 2; _npx_masked_softmax,
// _npx_masked_log_softmax), the attention softmax of GluonNLP 1.x: the
// softmax along `axis` over the elements whose bool `mask` is true (mask
// has the data's rank, each dimension the data's or 1). Masked elements
// give 0 (log: -inf) and no gradient; a line with every element masked
// gives all 0 (log: -inf), as MXNet's kernels. `temperature` divides the
// data; normalize=False skips subtracting the line's maximum (the
// documented meaning, which MXNet's GPU kernel follows; its CPU kernel
// always subtracts, which differs only where exp overflows).
#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "backends/cpu/grad_util.h"
#include "backends/cpu/kernel_util.h"
#include "base/error.h"

namespace mx {
namespace cpu {
namespace {

struct MaskedSoftmaxParam {
  int axis = -1;
  std::optional<double> temperature;
  std::optional<bool> normalize;
  static void Declare(ParamSchema<MaskedSoftmaxParam>* s) {
    s->Field("axis", &MaskedSoftmaxParam::axis);
    s->Field("temperature", &MaskedSoftmaxParam::temperature)
        .Describe("Divides the input first; default 1.");
    s->Field("normalize", &MaskedSoftmaxParam::normalize)
        .Describe("Subtract each line's maximum first; default True.");
  }
};

// The data's shape is the output's; the mask must have its rank with each
// dimension equal or 1.
void CheckMaskShape(const NodeAttrs& attrs, const TShape& data,
                    const TShape& mask) {
  const MaskedSoftmaxParam& p = attrs.get<MaskedSoftmaxParam>();
  RequireTemperature(attrs, p.temperature);
  if (!data.ndim_known()) return;
  data.CheckAxis(p.axis, OpLabel(attrs).c_str());
  if (!mask.is_known()) return;
  bool fits = mask.ndim() == data.ndim();
  for (int i = 0; fits && i < data.ndim(); ++i) {
    fits = mask[i] == data[i] || mask[i] == 1;
  }
  if (!fits) {
    throw ShapeError(absl::StrCat(OpLabel(attrs), ": mask ", mask.ToString(),
                                  " does not broadcast to data ",
                                  data.ToString(),
                                  " (same rank, each dimension equal or 1)"));
  }
}

void RequireBoolMask(const NodeAttrs& attrs, DType mask) {
  if (mask != DType::kUnknown && mask != DType::kBool) {
    throw DTypeError(absl::StrCat(OpLabel(attrs), ": mask must be bool, not ",
                                  DTypeName(mask)));
  }
}

// Calls line(base, stride, len, mask_offset) for every line along the axis
// of `s`, in parallel; mask_offset(j) is element j's offset in the mask.
template <typename F>
void ForEachMaskedLine(const NodeAttrs& attrs, const TShape& s,
                       const TShape& mask, F line) {
  const int ax =
      s.CheckAxis(attrs.get<MaskedSoftmaxParam>().axis, OpLabel(attrs).c_str());
  const int64_t len = s[ax], inner = s.ProdDims(ax + 1, s.ndim());
  if (len == 0 || s.Size() == 0) return;
  const int64_t lines = s.ProdDims(0, ax) * inner;
  const std::vector<int64_t> ms = BroadcastStrides(mask, s);
  ParallelFor(lines, std::max<int64_t>(1, 4096 / len),
              [&](int64_t b, int64_t e) {
                for (int64_t l = b; l < e; ++l) {
                  const int64_t base = (l / inner) * len * inner + l % inner;
                  line(base, inner, len, [&](int64_t j) {
                    return BroadcastOffset(base + j * inner, s, ms);
                  });
                }
              });
}

template <bool kLog>
void MaskedSoftmaxCompute(const OpContext&, const NodeAttrs& attrs,
                          const std::vector<TBlob>& in,
                          const std::vector<OpReqType>& req,
                          const std::vector<TBlob>& out) {
  if (req[0] == OpReqType::kNullOp) return;
  const MaskedSoftmaxParam& p = attrs.get<MaskedSoftmaxParam>();
  const bool* mask = in[1].data<bool>();
  MX_FLOAT_DTYPE_SWITCH(in[0].dtype, T, {
    using A = AccType<T>;
    const T* x = in[0].data<T>();
    T* y = out[0].data<T>();
    const A scale = static_cast<A>(1.0 / p.temperature.value_or(1.0));
    ForEachMaskedLine(
        attrs, in[0].shape, in[1].shape,
        [&](int64_t base, int64_t stride, int64_t len, auto mask_at) {
          A top = -std::numeric_limits<A>::infinity();
          for (int64_t j = 0; j < len; ++j) {
            if (mask[mask_at(j)]) {
              top = std::max(top, static_cast<A>(x[base + j * stride]) * scale);
            }
          }
          if (!p.normalize.value_or(true)) top = 0;
          double sum = 0;
          for (int64_t j = 0; j < len; ++j) {
            if (mask[mask_at(j)]) {
              sum +=
                  std::exp(static_cast<A>(x[base + j * stride]) * scale - top);
            }
          }
          const A log_sum = static_cast<A>(std::log(sum));
          const A inv_sum = static_cast<A>(1.0 / sum);
          const A masked = kLog ? -std::numeric_limits<A>::infinity() : A(0);
          for (int64_t j = 0; j < len; ++j) {
            const int64_t k = base + j * stride;
            const A z = static_cast<A>(x[k]) * scale - top;
            Assign(y + k, req[0],
                   !mask[mask_at(j)]
                       ? masked
                       : (kLog ? z - log_sum : std::exp(z) * inv_sum));
          }
        });
  });
}

// (out_grad, mask, output) -> data_grad: softmax dx = y (g - sum(g y)) / t,
// log_softmax dx = (g - e^y sum(g)) / t, the sums over unmasked elements;
// 0 where masked.
template <bool kLog>
void MaskedSoftmaxBackward(const OpContext&, const NodeAttrs& attrs,
                           const std::vector<TBlob>& in,
                           const std::vector<OpReqType>& req,
                           const std::vector<TBlob>& out) {
  if (req[0] == OpReqType::kNullOp) return;
  const double inv_t =
      1.0 / attrs.get<MaskedSoftmaxParam>().temperature.value_or(1.0);
  const bool* mask = in[1].data<bool>();
  MX_FLOAT_DTYPE_SWITCH(in[0].dtype, T, {
    const T* g = in[0].data<T>();
    const T* y = in[2].data<T>();
    T* dx = out[0].data<T>();
    ForEachMaskedLine(
        attrs, in[0].shape, in[1].shape,
        [&](int64_t base, int64_t stride, int64_t len, auto mask_at) {
          double dot = 0;
          for (int64_t j = 0; j < len; ++j) {
            const int64_t k = base + j * stride;
            if (!mask[mask_at(j)]) continue;
            const double gk = static_cast<double>(g[k]);
            dot += kLog ? gk : gk * static_cast<double>(y[k]);
          }
          for (int64_t j = 0; j < len; ++j) {
            const int64_t k = base + j * stride;
            const double gk = static_cast<double>(g[k]);
            const double yk = static_cast<double>(y[k]);
            const double v = !mask[mask_at(j)] ? 0.0
                             : kLog            ? gk - std::exp(yk) * dot
                                               : yk * (gk - dot);
            Assign(dx + k, req[0], static_cast<AccType<T>>(v * inv_t));
          }
        });
  });
}

void RegisterMaskedSoftmax(const std::string& name, const char* doc,
                           FCompute forward, FCompute backward) {
  OpRegistry::Get()
      ->Register(name)
      .Describe(doc)
      .AddAlias("_npx_" + name)
      .SetNumInputs(2)
      .SetInputNames({"data", "mask"})
      .SetParams<MaskedSoftmaxParam>()
      .SetInferShape([](const NodeAttrs& attrs, std::vector<TShape>* in,
                        std::vector<TShape>* out) {
        AssignShape(attrs, out, 0, (*in)[0], true);
        AssignShape(attrs, in, 0, (*out)[0], false);
        CheckMaskShape(attrs, (*in)[0], (*in)[1]);
      })
      .SetInferType([](const NodeAttrs& attrs, std::vector<DType>* in,
                       std::vector<DType>* out) {
        RequireBoolMask(attrs, (*in)[1]);
        AssignType(attrs, in, 1, DType::kBool, false);
        AssignType(attrs, out, 0, (*in)[0], true);
        AssignType(attrs, in, 0, (*out)[0], false);
        if ((*in)[0] != DType::kUnknown) RequireFloat(attrs, (*in)[0]);
      })
      .SetCompute(Context::kCPU, std::move(forward));
  OpRegistry::Get()
      ->Register("_backward_" + name)
      .Describe("Gradient of " + name +
                ": (out_grad, mask, output) -> data_grad.")
      .SetNumInputs(3)
      .SetInputNames({"out_grad", "mask", "output"})
      .SetParams<MaskedSoftmaxParam>()
      .SetInferShape([](const NodeAttrs& attrs, std::vector<TShape>* in,
                        std::vector<TShape>* out) {
        for (int i : {0, 2}) {
          AssignShape(attrs, out, 0, (*in)[i], true);
          AssignShape(attrs, in, i, (*out)[0], false);
        }
        CheckMaskShape(attrs, (*out)[0], (*in)[1]);
      })
      .SetInferType([](const NodeAttrs& attrs, std::vector<DType>* in,
                       std::vector<DType>* out) {
        RequireBoolMask(attrs, (*in)[1]);
        AssignType(attrs, in, 1, DType::kBool, false);
        for (int i : {0, 2}) {
          AssignType(attrs, out, 0, (*in)[i], true);
          AssignType(attrs, in, i, (*out)[0], false);
        }
        if ((*out)[0] != DType::kUnknown) RequireFloat(attrs, (*out)[0]);
      })
      .SetCompute(Context::kCPU, std::move(backward));
  // The mask gets no gradient.
  SetGradient(name, [name](GradBuilder& b, const std::vector<NodeEntry>& g) {
    return std::vector<NodeEntry>{
        b.Op("_backward_" + name, {g[0], b.x(1), b.y()}, b.n->attrs.dict),
        NodeEntry{}};
  });
}

[[maybe_unused]] const bool kRegistered = [] {
  RegisterMaskedSoftmax(
      "masked_softmax",
      "softmax along `axis` over the elements where the bool `mask` "
      "(broadcast to data) is true; 0 elsewhere.",
      MaskedSoftmaxCompute<false>, MaskedSoftmaxBackward<false>);
  RegisterMaskedSoftmax(
      "masked_log_softmax",
      "log_softmax along `axis` over the elements where the bool `mask` "
      "(broadcast to data) is true; -inf elsewhere.",
      MaskedSoftmaxCompute<true>, MaskedSoftmaxBackward<true>);
  return true;
}();

}  // namespace
}  // namespace cpu
}  // namespace mx
