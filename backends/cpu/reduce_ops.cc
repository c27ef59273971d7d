// Reductions over axes: sum, mean, max, min, and argmax; their gradients,
// and _broadcast_reduced_like, which broadcasts a reduced array back.
//
// A reduction is planned once per call: the input's dims are split into kept
// and reduced ones, size-1 dims are dropped and neighbouring dims of the same
// kind are merged, so the kernel walks at most a few (extent, stride) pairs.
// Float types accumulate in double; integers in 64 bits (wrapping, as the
// output type does); mean of integers stays integer (truncated).
#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>

#include "absl/strings/str_cat.h"
#include "backends/cpu/grad_util.h"
#include "backends/cpu/kernel_util.h"
#include "base/error.h"

namespace mx {
namespace cpu {
namespace {

constexpr int64_t kGrain = 1 << 14;

// ---- Planning. ----

// The input's dims, split into kept and reduced groups (outer to inner).
struct ReducePlan {
  std::vector<int64_t> keep_extent, keep_stride;
  std::vector<int64_t> red_extent, red_stride;
  int64_t out_size = 1;
  int64_t red_size = 1;
};

ReducePlan MakePlan(const TShape& in, const std::vector<bool>& reduced) {
  ReducePlan plan;
  const std::vector<int64_t> strides = Strides(in);
  int last_kind = -1;  // 0 kept, 1 reduced.
  for (int d = 0; d < in.ndim(); ++d) {
    const int kind = reduced[d] ? 1 : 0;
    (kind ? plan.red_size : plan.out_size) *= in[d];
    if (in[d] == 1) continue;
    auto& ext = kind ? plan.red_extent : plan.keep_extent;
    auto& str = kind ? plan.red_stride : plan.keep_stride;
    if (kind == last_kind) {  // Contiguous with the previous dim: merge.
      ext.back() *= in[d];
      str.back() = strides[d];
    } else {
      ext.push_back(in[d]);
      str.push_back(strides[d]);
    }
    last_kind = kind;
  }
  return plan;
}

// Offset in the input of the first element reduced into output `o`.
inline int64_t KeptOffset(int64_t o, const ReducePlan& p) {
  int64_t offset = 0;
  for (int d = static_cast<int>(p.keep_extent.size()) - 1; d >= 0; --d) {
    offset += (o % p.keep_extent[d]) * p.keep_stride[d];
    o /= p.keep_extent[d];
  }
  return offset;
}

// Calls f(value) for every input element reduced into the output whose
// elements start at `base`, in row-major order of the reduced dims.
template <typename T, typename F>
inline void ForEachReduced(const T* base, const ReducePlan& p, F&& f) {
  const size_t nd = p.red_extent.size();
  if (nd == 0) {
    if (p.red_size > 0) f(base[0]);
    return;
  }
  if (nd == 1) {
    const int64_t n = p.red_extent[0], s = p.red_stride[0];
    for (int64_t i = 0; i < n; ++i) f(base[i * s]);
    return;
  }
  if (p.red_size == 0) return;
  std::vector<int64_t> idx(nd, 0);
  const int64_t inner = p.red_extent[nd - 1], inner_s = p.red_stride[nd - 1];
  int64_t offset = 0;
  while (true) {
    for (int64_t i = 0; i < inner; ++i) f(base[offset + i * inner_s]);
    int d = static_cast<int>(nd) - 2;
    for (; d >= 0; --d) {
      offset += p.red_stride[d];
      if (++idx[d] < p.red_extent[d]) break;
      offset -= idx[d] * p.red_stride[d];
      idx[d] = 0;
    }
    if (d < 0) return;
  }
}

// ---- sum / mean / max / min. ----

enum class ReduceKind { kSum, kMean, kMax, kMin };

struct ReduceParam {
  std::optional<TShape> axis;
  bool keepdims = false;
  bool exclude = false;
  static void Declare(ParamSchema<ReduceParam>* s) {
    s->Field("axis", &ReduceParam::axis)
        .Describe("axes to reduce; none or () reduces all axes");
    s->Field("keepdims", &ReduceParam::keepdims)
        .Describe("keep reduced axes with length 1");
    s->Field("exclude", &ReduceParam::exclude)
        .Describe("reduce the axes NOT listed in axis");
  }
};

// Which dims of `in` are reduced; throws on a bad or repeated axis.
std::vector<bool> ReducedAxes(const NodeAttrs& attrs, const TShape& in,
                              const std::optional<TShape>& axis, bool exclude) {
  std::vector<bool> reduced(in.ndim(), false);
  if (!axis || axis->ndim() <= 0) {
    std::fill(reduced.begin(), reduced.end(), true);
    return reduced;
  }
  const std::string label = OpLabel(attrs);
  for (int64_t a : *axis) {
    const int d = in.CheckAxis(static_cast<int>(a), label.c_str());
    if (reduced[d]) {
      throw InvalidArgument(
          absl::StrCat(label, ": axis=", axis->ToString(), " lists axis ", d,
                       " more than once (input shape ", in.ToString(), ")"));
    }
    reduced[d] = true;
  }
  if (exclude) reduced.flip();
  return reduced;
}

TShape ReducedShape(const TShape& in, const std::vector<bool>& reduced,
                    bool keepdims) {
  std::vector<int64_t> dims;
  for (int d = 0; d < in.ndim(); ++d) {
    if (!reduced[d]) {
      dims.push_back(in[d]);
    } else if (keepdims) {
      dims.push_back(1);
    }
  }
  return TShape(dims);
}

void ThrowEmptyReduction(const NodeAttrs& attrs, const TShape& in,
                         const std::string& axis) {
  throw InvalidArgument(absl::StrCat(
      OpLabel(attrs), ": cannot reduce input 0 (data) of shape ", in.ToString(),
      " over zero-length ", axis, "; the op has no identity"));
}

void ReduceShape(ReduceKind kind, const NodeAttrs& attrs,
                 std::vector<TShape>* in, std::vector<TShape>* out) {
  const TShape& ishape = (*in)[0];
  if (!ishape.ndim_known()) return;
  const ReduceParam& p = attrs.get<ReduceParam>();
  const std::vector<bool> reduced =
      ReducedAxes(attrs, ishape, p.axis, p.exclude);
  if (kind == ReduceKind::kMax || kind == ReduceKind::kMin) {
    for (int d = 0; d < ishape.ndim(); ++d) {
      if (reduced[d] && ishape[d] == 0) {
        ThrowEmptyReduction(attrs, ishape, absl::StrCat("axis ", d));
      }
    }
  }
  AssignShape(attrs, out, 0, ReducedShape(ishape, reduced, p.keepdims), true);
}

// Output dtype: the input's, except sum(bool) -> int64 (a count) and
// mean(bool) -> float32 (a fraction).
DType ReduceOutType(ReduceKind kind, DType in) {
  if (in != DType::kBool) return in;
  if (kind == ReduceKind::kSum) return DType::kInt64;
  if (kind == ReduceKind::kMean) return DType::kFloat32;
  return in;
}

void ReduceType(ReduceKind kind, const NodeAttrs& attrs, std::vector<DType>* in,
                std::vector<DType>* out) {
  if ((*in)[0] == DType::kUnknown) {
    // The output determines the input unless a bool input could explain it
    // (sum -> int64, mean -> float32).
    const DType o = (*out)[0];
    const bool ambiguous = ReduceOutType(kind, DType::kBool) != DType::kBool &&
                           o == ReduceOutType(kind, DType::kBool);
    if (!ambiguous) AssignType(attrs, in, 0, o, false);
    return;
  }
  AssignType(attrs, out, 0, ReduceOutType(kind, (*in)[0]), true);
}

// Accumulator of sums: double for floats, wrapping 64-bit for integers.
template <typename T>
using SumAcc =
    std::conditional_t<std::is_integral_v<T>, uint64_t, double>;  // bool too.

// A floating-point sum, or its mean over `count` elements (NaN for none).
inline double FloatSumResult(double sum, bool mean, int64_t count) {
  if (!mean) return sum;
  return count > 0 ? sum / static_cast<double>(count)
                   : std::numeric_limits<double>::quiet_NaN();
}

// Whether the plan sums the rows of a contiguous [rows, cols] input into
// cols outputs (a bias gradient: sum over the batch axis).
// Below 16 columns the general path, which splits per column, keeps the
// kernel threads busy where this one would not.
bool ReducesLeadingRows(const ReducePlan& p) {
  return p.red_extent.size() == 1 && p.keep_extent.size() == 1 &&
         p.keep_stride[0] == 1 && p.red_stride[0] == p.keep_extent[0] &&
         p.keep_extent[0] >= 16;
}

// The sum (or mean) over rows of a [rows, cols] input, a tile of columns
// at a time so the adds run down contiguous rows and vectorize. Each
// output adds its column's values in row order into a double, exactly as
// the general loop does.
template <typename T>
void SumLeadingRows(bool mean, const T* x, int64_t rows, int64_t cols,
                    OpReqType req, T* y) {
  constexpr int64_t kTile = 256;
  ParallelFor(
      cols, std::max<int64_t>(8, kGrain / (rows + 1)),
      [=](int64_t b, int64_t e) {
        double acc[kTile];
        for (int64_t c0 = b; c0 < e; c0 += kTile) {
          const int64_t n = std::min(kTile, e - c0);
          std::fill(acc, acc + n, 0.0);
          for (int64_t r = 0; r < rows; ++r) {
            const T* row = x + r * cols + c0;
            for (int64_t c = 0; c < n; ++c) {
              acc[c] += static_cast<double>(static_cast<AccType<T>>(row[c]));
            }
          }
          for (int64_t c = 0; c < n; ++c) {
            Assign(y + c0 + c, req,
                   static_cast<AccType<T>>(FloatSumResult(acc[c], mean, rows)));
          }
        }
      });
}

template <typename T, typename O>
void SumMeanKernel(bool mean, const TBlob& in, OpReqType req, const TBlob& out,
                   const ReducePlan& plan) {
  const T* x = in.data<T>();
  O* y = out.data<O>();
  const int64_t count = plan.red_size;
  if constexpr (std::is_floating_point_v<AccType<T>> && std::is_same_v<T, O>) {
    if (ReducesLeadingRows(plan)) {
      SumLeadingRows(mean, x, count, plan.out_size, req, y);
      return;
    }
  }
  ParallelFor(plan.out_size, std::max<int64_t>(1, kGrain / (count + 1)),
              [&](int64_t b, int64_t e) {
                for (int64_t o = b; o < e; ++o) {
                  SumAcc<T> acc = 0;
                  // An empty reduction has no data (x may be null).
                  if (count > 0) {
                    ForEachReduced(x + KeptOffset(o, plan), plan, [&](T v) {
                      acc += static_cast<SumAcc<T>>(static_cast<AccType<T>>(v));
                    });
                  }
                  if constexpr (std::is_integral_v<O>) {
                    // Integer results (also sum of bool) keep integer math.
                    int64_t s = static_cast<int64_t>(acc);
                    if (mean) s = count > 0 ? s / count : 0;
                    Assign(y + o, req, static_cast<O>(s));
                  } else {
                    Assign(y + o, req,
                           static_cast<AccType<O>>(FloatSumResult(
                               static_cast<double>(acc), mean, count)));
                  }
                }
              });
}

template <typename T>
void MaxMinKernel(bool is_max, const TBlob& in, OpReqType req, const TBlob& out,
                  const ReducePlan& plan) {
  using A = AccType<T>;
  const T* x = in.data<T>();
  T* y = out.data<T>();
  ParallelFor(plan.out_size, std::max<int64_t>(1, kGrain / (plan.red_size + 1)),
              [&](int64_t b, int64_t e) {
                for (int64_t o = b; o < e; ++o) {
                  const T* base = x + KeptOffset(o, plan);
                  A acc = static_cast<A>(base[0]);
                  ForEachReduced(base, plan, [&](T t) {
                    const A v = static_cast<A>(t);
                    if constexpr (std::is_floating_point_v<A>) {
                      if (std::isnan(acc))
                        return;  // NaN propagates, as in NumPy.
                      if (std::isnan(v)) {
                        acc = v;
                        return;
                      }
                    }
                    if (is_max ? v > acc : v < acc) acc = v;
                  });
                  Assign(y + o, req, acc);
                }
              });
}

void ReduceCompute(ReduceKind kind, const NodeAttrs& attrs,
                   const std::vector<TBlob>& in,
                   const std::vector<OpReqType>& req,
                   const std::vector<TBlob>& out) {
  const ReduceParam& p = attrs.get<ReduceParam>();
  const ReducePlan plan =
      MakePlan(in[0].shape, ReducedAxes(attrs, in[0].shape, p.axis, p.exclude));
  if (plan.out_size == 0) return;
  MX_DTYPE_SWITCH(in[0].dtype, T, {
    if (kind == ReduceKind::kMax || kind == ReduceKind::kMin) {
      MaxMinKernel<T>(kind == ReduceKind::kMax, in[0], req[0], out[0], plan);
    } else {
      const bool mean = kind == ReduceKind::kMean;
      if constexpr (std::is_same_v<T, bool>) {
        if (mean) {
          SumMeanKernel<bool, float>(true, in[0], req[0], out[0], plan);
        } else {
          SumMeanKernel<bool, int64_t>(false, in[0], req[0], out[0], plan);
        }
      } else {
        SumMeanKernel<T, T>(mean, in[0], req[0], out[0], plan);
      }
    }
  });
}

void RegisterReduce(const std::string& name, ReduceKind kind,
                    const std::vector<std::string>& aliases,
                    const std::string& doc) {
  Op& op =
      OpRegistry::Get()
          ->Register(name)
          .Describe(doc)
          .SetNumInputs(1)
          .SetInputNames({"data"})
          .SetParams<ReduceParam>()
          .SetInferShape([kind](const NodeAttrs& attrs, std::vector<TShape>* in,
                                std::vector<TShape>* out) {
            ReduceShape(kind, attrs, in, out);
          })
          .SetInferType([kind](const NodeAttrs& attrs, std::vector<DType>* in,
                               std::vector<DType>* out) {
            ReduceType(kind, attrs, in, out);
          })
          .SetCompute(Context::kCPU,
                      [kind](const OpContext&, const NodeAttrs& attrs,
                             const std::vector<TBlob>& in,
                             const std::vector<OpReqType>& req,
                             const std::vector<TBlob>& out) {
                        ReduceCompute(kind, attrs, in, req, out);
                      });
  for (const std::string& alias : aliases) op.AddAlias(alias);
}

[[maybe_unused]] const bool kReduceRegistered = [] {
  RegisterReduce("sum", ReduceKind::kSum, {"sum_axis"},
                 "Sum over axes (sum of bool counts, as int64).");
  RegisterReduce("mean", ReduceKind::kMean, {},
                 "Mean over axes (integer mean is truncated; mean of bool is "
                 "a float32 fraction).");
  RegisterReduce("max", ReduceKind::kMax, {"max_axis"},
                 "Maximum over axes; NaN propagates.");
  RegisterReduce("min", ReduceKind::kMin, {"min_axis"},
                 "Minimum over axes; NaN propagates.");
  return true;
}();

// ---- argmax. ----

struct ArgmaxParam {
  std::optional<int> axis;
  bool keepdims = false;
  static void Declare(ParamSchema<ArgmaxParam>* s) {
    s->Field("axis", &ArgmaxParam::axis)
        .Describe("axis to search; none searches the flattened array");
    s->Field("keepdims", &ArgmaxParam::keepdims)
        .Describe("keep the searched axis (or all axes) with length 1");
  }
};

std::vector<bool> ArgmaxAxes(const NodeAttrs& attrs, const TShape& in) {
  const ArgmaxParam& p = attrs.get<ArgmaxParam>();
  std::vector<bool> reduced(in.ndim(), !p.axis.has_value());
  if (p.axis) reduced[in.CheckAxis(*p.axis, OpLabel(attrs).c_str())] = true;
  return reduced;
}

void ArgmaxShape(const NodeAttrs& attrs, std::vector<TShape>* in,
                 std::vector<TShape>* out) {
  const TShape& ishape = (*in)[0];
  if (!ishape.ndim_known()) return;
  const std::vector<bool> reduced = ArgmaxAxes(attrs, ishape);
  const ArgmaxParam& p = attrs.get<ArgmaxParam>();
  for (int d = 0; d < ishape.ndim(); ++d) {
    if (reduced[d] && ishape[d] == 0) {
      ThrowEmptyReduction(
          attrs, ishape,
          p.axis ? absl::StrCat("axis ", d) : std::string("elements"));
    }
  }
  AssignShape(attrs, out, 0, ReducedShape(ishape, reduced, p.keepdims), true);
}

void ArgmaxCompute(const OpContext&, const NodeAttrs& attrs,
                   const std::vector<TBlob>& in,
                   const std::vector<OpReqType>& req,
                   const std::vector<TBlob>& out) {
  // Every reduced dim but one has length 1, or all are reduced: merged, the
  // reduced part is a single (extent, stride) pair or nothing.
  const ReducePlan plan = MakePlan(in[0].shape, ArgmaxAxes(attrs, in[0].shape));
  const int64_t n = plan.red_extent.empty() ? 1 : plan.red_extent[0];
  const int64_t s = plan.red_extent.empty() ? 0 : plan.red_stride[0];
  int64_t* y = out[0].data<int64_t>();
  const OpReqType r = req[0];
  MX_DTYPE_SWITCH(in[0].dtype, T, {
    using A = AccType<T>;
    const T* x = in[0].data<T>();
    ParallelFor(plan.out_size, std::max<int64_t>(1, kGrain / (n + 1)),
                [&](int64_t b, int64_t e) {
                  for (int64_t o = b; o < e; ++o) {
                    const T* base = x + KeptOffset(o, plan);
                    int64_t best_i = 0;
                    A best = static_cast<A>(base[0]);
                    bool found_nan = false;
                    if constexpr (std::is_floating_point_v<A>) {
                      found_nan = std::isnan(best);
                    }
                    for (int64_t i = 1; i < n && !found_nan; ++i) {
                      const A v = static_cast<A>(base[i * s]);
                      if constexpr (std::is_floating_point_v<A>) {
                        if (std::isnan(v)) {  // The first NaN is the maximum.
                          best_i = i;
                          found_nan = true;
                          break;
                        }
                      }
                      if (v > best) {
                        best = v;
                        best_i = i;
                      }
                    }
                    Assign(y + o, r, best_i);
                  }
                });
  });
}

MX_REGISTER_OP(argmax)
    .Describe(
        "Index (int64) of the maximum along an axis, or in the flattened "
        "array; the first wins on ties and NaN counts as the maximum.")
    .SetNumInputs(1)
    .SetInputNames({"data"})
    .SetParams<ArgmaxParam>()
    .SetInferShape(ArgmaxShape)
    .SetInferType([](const NodeAttrs& attrs, std::vector<DType>* in,
                     std::vector<DType>* out) {
      OutputTypeIs(DType::kInt64, attrs, in, out);
    })
    .SetCompute(Context::kCPU, ArgmaxCompute);

// ---- _broadcast_reduced_like: the adjoint of sum and mean. ----

struct BroadcastReducedParam {
  std::optional<TShape> axis;
  bool keepdims = false;
  bool exclude = false;
  bool normalize = false;
  static void Declare(ParamSchema<BroadcastReducedParam>* s) {
    s->Field("axis", &BroadcastReducedParam::axis)
        .Describe("the reduction's axes (none or (): all)");
    s->Field("keepdims", &BroadcastReducedParam::keepdims)
        .Describe("the reduction kept the reduced axes");
    s->Field("exclude", &BroadcastReducedParam::exclude)
        .Describe("the reduction reduced the axes NOT listed");
    s->Field("normalize", &BroadcastReducedParam::normalize)
        .Describe("divide by the number of elements reduced (mean)");
  }
};

// The reduced dims of `like` and data's shape with kept (length-1) dims.
std::pair<std::vector<bool>, TShape> BroadcastReducedPlan(
    const NodeAttrs& attrs, const TShape& like) {
  const BroadcastReducedParam& p = attrs.get<BroadcastReducedParam>();
  std::vector<bool> reduced = ReducedAxes(attrs, like, p.axis, p.exclude);
  TShape kept = ReducedShape(like, reduced, /*keepdims=*/true);
  return {std::move(reduced), std::move(kept)};
}

void BroadcastReducedCompute(const OpContext&, const NodeAttrs& attrs,
                             const std::vector<TBlob>& in,
                             const std::vector<OpReqType>& req,
                             const std::vector<TBlob>& out) {
  const OpReqType r = req[0];
  const TShape& os = out[0].shape;
  if (r == OpReqType::kNullOp || os.Size() == 0) return;
  const auto [reduced, kept] = BroadcastReducedPlan(attrs, os);
  int64_t count = 1;
  for (int d = 0; d < os.ndim(); ++d) count *= reduced[d] ? os[d] : 1;
  const bool normalize = attrs.get<BroadcastReducedParam>().normalize;
  const double scale = normalize ? 1.0 / static_cast<double>(count) : 1.0;
  const std::vector<int64_t> strides = BroadcastStrides(kept, os);
  MX_DTYPE_SWITCH(in[0].dtype, T, {
    using A = AccType<T>;
    const T* x = in[0].data<T>();
    T* y = out[0].data<T>();
    ParallelFor(os.Size(), kGrain / 4, [&](int64_t b, int64_t e) {
      for (int64_t i = b; i < e; ++i) {
        const double v = static_cast<double>(
            static_cast<A>(x[BroadcastOffset(i, os, strides)]));
        Assign(y + i, r, normalize ? v * scale : v);
      }
    });
  });
}

MX_REGISTER_OP(_broadcast_reduced_like)
    .Describe(
        "Broadcasts `data`, the result of reducing `like` with these "
        "attributes, back to like's shape (divided by the count when "
        "normalize).")
    .SetNumInputs(2)
    .SetInputNames({"data", "like"})
    .SetParams<BroadcastReducedParam>()
    .SetInferShape([](const NodeAttrs& attrs, std::vector<TShape>* in,
                      std::vector<TShape>* out) {
      AssignShape(attrs, out, 0, (*in)[1], true);
      AssignShape(attrs, in, 1, (*out)[0], false);
      const TShape& like = (*in)[1];
      if (!like.ndim_known()) return;
      const auto [reduced, kept] = BroadcastReducedPlan(attrs, like);
      const bool keepdims = attrs.get<BroadcastReducedParam>().keepdims;
      AssignShape(attrs, in, 0, ReducedShape(like, reduced, keepdims), false);
    })
    .SetInferType([](const NodeAttrs& attrs, std::vector<DType>* in,
                     std::vector<DType>* out) {
      AssignType(attrs, out, 0, (*in)[0], true);
      AssignType(attrs, in, 0, (*out)[0], false);
    })
    .SetCompute(Context::kCPU, BroadcastReducedCompute);

// ---- Gradients. ----

// The reduction attributes of `n` (axis, keepdims, exclude) as given.
AttrDict ReduceAttrs(const NodePtr& n) {
  AttrDict d;
  for (const char* key : {"axis", "keepdims", "exclude"}) {
    auto it = n->attrs.dict.find(key);
    if (it != n->attrs.dict.end()) d[key] = it->second;
  }
  return d;
}

[[maybe_unused]] const bool kGradientsRegistered = [] {
  using B = GradBuilder;
  using E = std::vector<NodeEntry>;
  SetGradient("sum", [](B& b, const E& g) {
    return E{b.Op("_broadcast_reduced_like", {g[0], b.x()}, ReduceAttrs(b.n))};
  });
  SetGradient("mean", [](B& b, const E& g) {
    AttrDict attrs = ReduceAttrs(b.n);
    attrs["normalize"] = "1";
    return E{b.Op("_broadcast_reduced_like", {g[0], b.x()}, attrs)};
  });
  // MXNet's definition, g * (x == max): every tied extremum gets the whole
  // head gradient (PyTorch's amax splits it instead).
  for (const char* op : {"max", "min"}) {
    SetGradient(op, [](B& b, const E& g) {
      const AttrDict attrs = ReduceAttrs(b.n);
      const NodeEntry x = b.x();
      const NodeEntry hit =
          b.Op("broadcast_equal",
               {x, b.Op("_broadcast_reduced_like", {b.y(), x}, attrs)});
      return E{
          b.Op("where", {hit, b.Op("_broadcast_reduced_like", {g[0], x}, attrs),
                         b.Op("zeros_like", {x})})};
    });
  }
  SetGradient("_broadcast_reduced_like", [](B& b, const E& g) {
    const bool normalize = b.n->attrs.get<BroadcastReducedParam>().normalize;
    return E{b.Op(normalize ? "mean" : "sum", {g[0]}, ReduceAttrs(b.n)),
             NodeEntry{}};
  });
  SetGradient("argmax",
              [](B& b, const E&) { return E{b.Op("zeros_like", {b.x()})}; });
  return true;
}();

}  // namespace
}  // namespace cpu
}  // namespace mx
