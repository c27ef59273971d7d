// softmax, softmin (softmax of -x) and log_softmax, stabilized by
// subtracting the maximum before exponentiating, and their gradients as
// one-pass backward kernels (_backward_<op>). As MXNet's: `dtype` gives
// the output another float dtype (float16 data, float32 probabilities),
// and with use_length a second input `length` (the data's shape without
// the axis) limits each line to its first length elements, the rest of
// the line 0 (and their gradient 0).
#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "backends/cpu/grad_util.h"
#include "backends/cpu/kernel_util.h"
#include "base/error.h"

namespace mx {
namespace cpu {
namespace {

struct SoftmaxParam {
  int axis = -1;
  std::optional<double> temperature;
  std::optional<DType> dtype;
  bool use_length = false;
  static void Declare(ParamSchema<SoftmaxParam>* s) {
    s->Field("axis", &SoftmaxParam::axis);
    s->Field("temperature", &SoftmaxParam::temperature)
        .Describe("Divides the input first; default 1.");
    s->Field("dtype", &SoftmaxParam::dtype)
        .Describe("Of the output (a float dtype); default the data's.");
    s->Field("use_length", &SoftmaxParam::use_length)
        .Describe("Take input 1 `length`: each line's first elements.");
  }
};

int NumSoftmaxInputs(const NodeAttrs& attrs) {
  return attrs.get<SoftmaxParam>().use_length ? 2 : 1;
}

std::vector<std::string> SoftmaxInputNames(const NodeAttrs& attrs) {
  if (attrs.get<SoftmaxParam>().use_length) return {"data", "length"};
  return {"data"};
}

// Checks the temperature and axis; `length` (input `length_input` with
// use_length) has data's shape without the axis.
void CheckSoftmaxShapes(const NodeAttrs& attrs, std::vector<TShape>* in,
                        const TShape& data, int length_input) {
  const SoftmaxParam& p = attrs.get<SoftmaxParam>();
  RequireTemperature(attrs, p.temperature);
  if (!data.ndim_known()) return;
  const int ax = data.CheckAxis(p.axis, OpLabel(attrs).c_str());
  if (!p.use_length) return;
  std::vector<int64_t> dims;
  for (int i = 0; i < data.ndim(); ++i) {
    if (i != ax) dims.push_back(data[i]);
  }
  AssignShape(attrs, in, length_input, TShape(dims), false);
}

void SoftmaxShape(const NodeAttrs& attrs, std::vector<TShape>* in,
                  std::vector<TShape>* out) {
  AssignShape(attrs, out, 0, (*in)[0], true);
  AssignShape(attrs, in, 0, (*out)[0], false);
  CheckSoftmaxShapes(attrs, in, (*in)[0], 1);
}

// The output has `dtype` when given, else the data's; both float.
void SoftmaxType(const NodeAttrs& attrs, std::vector<DType>* in,
                 std::vector<DType>* out) {
  const SoftmaxParam& p = attrs.get<SoftmaxParam>();
  if (p.dtype) {
    RequireFloat(attrs, *p.dtype);
    AssignType(attrs, out, 0, *p.dtype, true);
  } else {
    AssignType(attrs, in, 0, (*out)[0], false);
  }
  if (p.use_length && (*in)[1] != DType::kUnknown) {
    RequireIndexType(attrs, (*in)[1], 1, "length");
  }
  if ((*in)[0] == DType::kUnknown) return;
  RequireFloat(attrs, (*in)[0]);
  if (!p.dtype) AssignType(attrs, out, 0, (*in)[0], true);
}

// In place only without a dtype of its own (the output's element size may
// differ).
std::vector<std::pair<int, int>> SoftmaxInplace(const NodeAttrs& attrs) {
  if (attrs.get<SoftmaxParam>().dtype) return {};
  return {{0, 0}};
}

// Softmax (or its log) of the first `valid` of `len` values `stride`
// apart, computed in A; the rest of the line is 0.
template <bool kLog, typename T, typename O>
void SoftmaxLine(const T* x, O* y, int64_t valid, int64_t len, int64_t stride,
                 double inv_t, OpReqType req) {
  using A = AccType<T>;
  const A scale = static_cast<A>(inv_t);
  A mx = -std::numeric_limits<A>::infinity();
  for (int64_t i = 0; i < valid; ++i) {
    mx = std::max(mx, static_cast<A>(x[i * stride]) * scale);
  }
  double sum = 0;
  for (int64_t i = 0; i < valid; ++i) {
    sum += std::exp(static_cast<A>(x[i * stride]) * scale - mx);
  }
  const A log_sum = static_cast<A>(std::log(sum));
  const A inv_sum = static_cast<A>(1.0 / sum);
  for (int64_t i = 0; i < valid; ++i) {
    const A z = static_cast<A>(x[i * stride]) * scale - mx;
    Assign(y + i * stride, req, kLog ? z - log_sum : std::exp(z) * inv_sum);
  }
  for (int64_t i = valid; i < len; ++i) Assign(y + i * stride, req, 0);
}

// Each line's length: the whole axis, or `length` truncated (as MXNet),
// which must lie in [0, len].
std::vector<int64_t> ValidLengths(const NodeAttrs& attrs, const TBlob* length,
                                  int64_t lines, int64_t len) {
  std::vector<int64_t> valid(static_cast<size_t>(lines), len);
  if (length == nullptr) return valid;
  MX_DTYPE_SWITCH(length->dtype, L, {
    const L* l = length->data<L>();
    for (int64_t i = 0; i < lines; ++i) {
      const double v = static_cast<double>(l[i]);
      if (!(v >= 0 && std::trunc(v) <= static_cast<double>(len))) {
        throw InvalidArgument(absl::StrCat(OpLabel(attrs), ": length[", i, "]=",
                                           v, " is outside [0, ", len, "]"));
      }
      valid[static_cast<size_t>(i)] = static_cast<int64_t>(v);
    }
  });
  return valid;
}

// Calls line(base, valid, len, stride, inv_t) for every line along the
// softmax axis of `s` (base: offset of the line's first element; valid:
// how many of its elements count), in parallel.
template <typename F>
void ForEachSoftmaxLine(const NodeAttrs& attrs, const TShape& s,
                        const TBlob* length, F line) {
  const SoftmaxParam& p = attrs.get<SoftmaxParam>();
  const int ax = s.CheckAxis(p.axis, OpLabel(attrs).c_str());
  const int64_t len = s[ax], inner = s.ProdDims(ax + 1, s.ndim());
  // An empty axis leaves empty lines (and arrays without memory: a line's
  // base offset from a null pointer is undefined behaviour).
  if (len == 0) return;
  const int64_t lines = s.ProdDims(0, ax) * inner;
  const std::vector<int64_t> valid = ValidLengths(attrs, length, lines, len);
  // softmin (and its gradient) is softmax of -x / t.
  const bool negate = absl::EndsWith(attrs.op->name(), "softmin");
  const double inv_t = (negate ? -1.0 : 1.0) / p.temperature.value_or(1.0);
  ParallelFor(lines, std::max<int64_t>(1, 4096 / std::max<int64_t>(1, len)),
              [&](int64_t b, int64_t e) {
                for (int64_t l = b; l < e; ++l) {
                  line((l / inner) * len * inner + l % inner,
                       valid[static_cast<size_t>(l)], len, inner, inv_t);
                }
              });
}

// The length input of a softmax (at `index`), or null.
const TBlob* LengthOf(const NodeAttrs& attrs, const std::vector<TBlob>& in,
                      size_t index) {
  return attrs.get<SoftmaxParam>().use_length ? &in[index] : nullptr;
}

template <bool kLog>
void SoftmaxCompute(const OpContext&, const NodeAttrs& attrs,
                    const std::vector<TBlob>& in,
                    const std::vector<OpReqType>& req,
                    const std::vector<TBlob>& out) {
  if (req[0] == OpReqType::kNullOp) return;
  MX_FLOAT_DTYPE_SWITCH(in[0].dtype, T, {
    MX_FLOAT_DTYPE_SWITCH(out[0].dtype, O, {
      const T* x = in[0].data<T>();
      O* y = out[0].data<O>();
      ForEachSoftmaxLine(attrs, in[0].shape, LengthOf(attrs, in, 1),
                         [&](int64_t base, int64_t valid, int64_t len,
                             int64_t stride, double inv_t) {
                           SoftmaxLine<kLog>(x + base, y + base, valid, len,
                                             stride, inv_t, req[0]);
                         });
    });
  });
}

void RegisterSoftmax(const char* name, const char* doc, FCompute compute) {
  OpRegistry::Get()
      ->Register(name)
      .Describe(doc)
      .SetNumInputs(NumSoftmaxInputs)
      .SetInputNames(SoftmaxInputNames)
      .SetParams<SoftmaxParam>()
      .SetInferShape(SoftmaxShape)
      .SetInferType(SoftmaxType)
      .SetInplaceOption(SoftmaxInplace)
      .SetCompute(Context::kCPU, std::move(compute));
}

// dx = y * (g - sum(g * y)) / t and log_softmax dx = (g - e^y sum(g)) / t,
// over the first `valid` elements; 0 for the rest.
template <bool kLog, typename T>
void SoftmaxGradLine(const T* g, const T* y, T* dx, int64_t valid, int64_t len,
                     int64_t stride, double inv_t, OpReqType req) {
  using A = AccType<T>;
  double dot = 0;
  for (int64_t i = 0; i < valid; ++i) {
    const double gi = static_cast<double>(g[i * stride]);
    dot += kLog ? gi : gi * static_cast<double>(y[i * stride]);
  }
  for (int64_t i = 0; i < valid; ++i) {
    const double gi = static_cast<double>(g[i * stride]);
    const double yi = static_cast<double>(y[i * stride]);
    const double v = kLog ? gi - std::exp(yi) * dot : yi * (gi - dot);
    Assign(dx + i * stride, req, static_cast<A>(v * inv_t));
  }
  for (int64_t i = valid; i < len; ++i) Assign(dx + i * stride, req, 0);
}

// (out_grad, output[, length]) -> data_grad, in the output's dtype (the
// gradient casts it to the data's when `dtype` made them differ).
template <bool kLog>
void SoftmaxBackwardCompute(const OpContext&, const NodeAttrs& attrs,
                            const std::vector<TBlob>& in,
                            const std::vector<OpReqType>& req,
                            const std::vector<TBlob>& out) {
  if (req[0] == OpReqType::kNullOp) return;
  MX_FLOAT_DTYPE_SWITCH(in[0].dtype, T, {
    const T* g = in[0].data<T>();
    const T* y = in[1].data<T>();
    T* dx = out[0].data<T>();
    ForEachSoftmaxLine(attrs, in[0].shape, LengthOf(attrs, in, 2),
                       [&](int64_t base, int64_t valid, int64_t len,
                           int64_t stride, double inv_t) {
                         SoftmaxGradLine<kLog>(g + base, y + base, dx + base,
                                               valid, len, stride, inv_t,
                                               req[0]);
                       });
  });
}

void RegisterSoftmaxBackward(const std::string& name, FCompute compute) {
  OpRegistry::Get()
      ->Register("_backward_" + name)
      .Describe("Gradient of " + name +
                ": (out_grad, output[, length]) -> data_grad.")
      .SetNumInputs(
          [](const NodeAttrs& attrs) { return NumSoftmaxInputs(attrs) + 1; })
      .SetInputNames([](const NodeAttrs& attrs) {
        std::vector<std::string> names{"out_grad", "output"};
        if (attrs.get<SoftmaxParam>().use_length) names.push_back("length");
        return names;
      })
      .SetParams<SoftmaxParam>()
      .SetInferShape([](const NodeAttrs& attrs, std::vector<TShape>* in,
                        std::vector<TShape>* out) {
        for (int i : {0, 1}) {
          AssignShape(attrs, out, 0, (*in)[i], true);
        }
        AssignShape(attrs, in, 0, (*out)[0], false);
        AssignShape(attrs, in, 1, (*out)[0], false);
        CheckSoftmaxShapes(attrs, in, (*out)[0], 2);
      })
      .SetInferType([](const NodeAttrs& attrs, std::vector<DType>* in,
                       std::vector<DType>* out) {
        for (int i : {0, 1}) {
          AssignType(attrs, out, 0, (*in)[i], true);
          AssignType(attrs, in, i, (*out)[0], false);
        }
        if ((*out)[0] != DType::kUnknown) RequireFloat(attrs, (*out)[0]);
      })
      .SetInplaceOption([](const NodeAttrs&) {
        return std::vector<std::pair<int, int>>{{0, 0}};
      })
      .SetCompute(Context::kCPU, std::move(compute));
  // length gets no gradient; with `dtype` the gradient goes back to the
  // data's dtype.
  SetGradient(name, [name](GradBuilder& b, const std::vector<NodeEntry>& g) {
    const SoftmaxParam& p = b.n->attrs.get<SoftmaxParam>();
    std::vector<NodeEntry> in{g[0], b.y()};
    if (p.use_length) in.push_back(b.x(1));
    NodeEntry dx = b.Op("_backward_" + name, in, b.n->attrs.dict);
    if (p.dtype) dx = b.Op("_cast_like", {dx, b.x(0)});
    std::vector<NodeEntry> grads{dx};
    if (p.use_length) grads.push_back(NodeEntry{});
    return grads;
  });
}

[[maybe_unused]] const bool kRegistered = [] {
  RegisterSoftmax("softmax", "exp(x/t) / sum(exp(x/t)) along `axis`.",
                  SoftmaxCompute<false>);
  RegisterSoftmax("softmin",
                  "softmax(-x/t) along `axis`: exp(-x/t) / sum(exp(-x/t)).",
                  SoftmaxCompute<false>);
  RegisterSoftmax("log_softmax", "log(softmax(x/t)) along `axis`.",
                  SoftmaxCompute<true>);
  RegisterSoftmaxBackward("softmax", SoftmaxBackwardCompute<false>);
  RegisterSoftmaxBackward("log_softmax", SoftmaxBackwardCompute<true>);
  RegisterSoftmaxBackward("softmin", SoftmaxBackwardCompute<false>);
  return true;
}();

}  // namespace
}  // namespace cpu
}  // namespace mx
