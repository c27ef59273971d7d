// Reductions over axes: sum, mean, max, min, nansum, prod and nanprod;
// their gradients, and _broadcast_reduced_like, which broadcasts a reduced
// array back. (argmax/argmin: arg_reduce_ops.cc; norm: norm_ops.cc.)
//
// Float types accumulate in double; integers in 64 bits (wrapping, as the
// output type does); mean of integers stays integer (truncated). nansum and
// nanprod skip NaN (a NaN-only or empty group gives 0 and 1).
#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>

#include "absl/strings/str_cat.h"
#include "backends/cpu/grad_util.h"
#include "backends/cpu/kernel_util.h"
#include "backends/cpu/reduce_util.h"
#include "base/error.h"

namespace mx {
namespace cpu {
namespace {

// ---- sum / mean / max / min / nansum / prod / nanprod. ----

bool IsProduct(ReduceKind kind) {
  return kind == ReduceKind::kProd || kind == ReduceKind::kNanProd;
}

void ReduceShape(ReduceKind kind, const NodeAttrs& attrs,
                 std::vector<TShape>* in, std::vector<TShape>* out) {
  const TShape& ishape = (*in)[0];
  if (!ishape.ndim_known()) return;
  const ReduceParam& p = attrs.get<ReduceParam>();
  const std::vector<bool> reduced =
      ReducedAxes(attrs, ishape, p.axis, p.exclude);
  if (kind == ReduceKind::kMax || kind == ReduceKind::kMin) {
    RequireNonEmptyReduction(attrs, ishape, reduced);
  }
  AssignShape(attrs, out, 0, ReducedShape(ishape, reduced, p.keepdims), true);
}

// Output dtype: the input's, except sum(bool) -> int64 (a count; prod
// likewise, as NumPy's) and mean(bool) -> float32 (a fraction).
DType ReduceOutType(ReduceKind kind, DType in) {
  if (in != DType::kBool) return in;
  if (kind == ReduceKind::kSum || kind == ReduceKind::kNanSum ||
      IsProduct(kind)) {
    return DType::kInt64;
  }
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

// Accumulator of sums and products: double for floats, wrapping 64-bit for
// integers (bool too).
template <typename T>
using SumAcc = std::conditional_t<std::is_integral_v<T>, uint64_t, double>;

// Whether element value `v` is left out: NaN, by nansum and nanprod.
template <bool kSkipNan, typename A>
inline bool Skipped(A v) {
  if constexpr (kSkipNan && std::is_floating_point_v<A>) return std::isnan(v);
  return false;
}

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
template <bool kSkipNan, typename T>
void SumLeadingRows(bool mean, const T* x, int64_t rows, int64_t cols,
                    OpReqType req, T* y) {
  constexpr int64_t kTile = 256;
  ParallelFor(
      cols, std::max<int64_t>(8, kReduceGrain / (rows + 1)),
      [=](int64_t b, int64_t e) {
        double acc[kTile];
        for (int64_t c0 = b; c0 < e; c0 += kTile) {
          const int64_t n = std::min(kTile, e - c0);
          std::fill(acc, acc + n, 0.0);
          for (int64_t r = 0; r < rows; ++r) {
            const T* row = x + r * cols + c0;
            for (int64_t c = 0; c < n; ++c) {
              const double v =
                  static_cast<double>(static_cast<AccType<T>>(row[c]));
              acc[c] += Skipped<kSkipNan>(v) ? 0.0 : v;
            }
          }
          for (int64_t c = 0; c < n; ++c) {
            Assign(y + c0 + c, req,
                   static_cast<AccType<T>>(FloatSumResult(acc[c], mean, rows)));
          }
        }
      });
}

template <typename T, typename O, bool kSkipNan = false>
void SumMeanKernel(bool mean, const TBlob& in, OpReqType req, const TBlob& out,
                   const ReducePlan& plan) {
  const T* x = in.data<T>();
  O* y = out.data<O>();
  const int64_t count = plan.red_size;
  if constexpr (std::is_floating_point_v<AccType<T>> && std::is_same_v<T, O>) {
    if (ReducesLeadingRows(plan)) {
      SumLeadingRows<kSkipNan>(mean, x, count, plan.out_size, req, y);
      return;
    }
  }
  ParallelFor(plan.out_size, std::max<int64_t>(1, kReduceGrain / (count + 1)),
              [&](int64_t b, int64_t e) {
                for (int64_t o = b; o < e; ++o) {
                  SumAcc<T> acc = 0;
                  // An empty reduction has no data (x may be null).
                  if (count > 0) {
                    ForEachReduced(x + KeptOffset(o, plan), plan, [&](T t) {
                      const AccType<T> v = static_cast<AccType<T>>(t);
                      if (!Skipped<kSkipNan>(v))
                        acc += static_cast<SumAcc<T>>(v);
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

template <typename T, typename O, bool kSkipNan>
void ProdKernel(const TBlob& in, OpReqType req, const TBlob& out,
                const ReducePlan& plan) {
  const T* x = in.data<T>();
  O* y = out.data<O>();
  const int64_t count = plan.red_size;
  ParallelFor(plan.out_size, std::max<int64_t>(1, kReduceGrain / (count + 1)),
              [&](int64_t b, int64_t e) {
                for (int64_t o = b; o < e; ++o) {
                  SumAcc<T> acc = 1;
                  if (count > 0) {
                    ForEachReduced(x + KeptOffset(o, plan), plan, [&](T t) {
                      const AccType<T> v = static_cast<AccType<T>>(t);
                      if (!Skipped<kSkipNan>(v))
                        acc *= static_cast<SumAcc<T>>(v);
                    });
                  }
                  if constexpr (std::is_integral_v<O>) {
                    Assign(y + o, req,
                           static_cast<O>(static_cast<int64_t>(acc)));
                  } else {
                    Assign(y + o, req, static_cast<AccType<O>>(acc));
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
  ParallelFor(plan.out_size,
              std::max<int64_t>(1, kReduceGrain / (plan.red_size + 1)),
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

// Runs the sum-like or product kernel of `kind` (not max/min) for input
// type T and output type O.
template <typename T, typename O>
void AccumulateKernel(ReduceKind kind, const TBlob& in, OpReqType req,
                      const TBlob& out, const ReducePlan& plan) {
  switch (kind) {
    case ReduceKind::kProd:
      return ProdKernel<T, O, false>(in, req, out, plan);
    case ReduceKind::kNanProd:
      return ProdKernel<T, O, true>(in, req, out, plan);
    case ReduceKind::kNanSum:
      return SumMeanKernel<T, O, true>(false, in, req, out, plan);
    default:
      return SumMeanKernel<T, O>(kind == ReduceKind::kMean, in, req, out, plan);
  }
}

}  // namespace

void ReduceInto(ReduceKind kind, const NodeAttrs& attrs,
                const std::optional<TShape>& axis, bool exclude,
                const TBlob& in, OpReqType req, const TBlob& out) {
  const ReducePlan plan =
      MakePlan(in.shape, ReducedAxes(attrs, in.shape, axis, exclude));
  if (plan.out_size == 0) return;
  MX_DTYPE_SWITCH(in.dtype, T, {
    if (kind == ReduceKind::kMax || kind == ReduceKind::kMin) {
      MaxMinKernel<T>(kind == ReduceKind::kMax, in, req, out, plan);
    } else if constexpr (std::is_same_v<T, bool>) {
      // Counts as int64, a fraction (mean) as float32.
      if (kind == ReduceKind::kMean) {
        AccumulateKernel<bool, float>(kind, in, req, out, plan);
      } else {
        AccumulateKernel<bool, int64_t>(kind, in, req, out, plan);
      }
    } else {
      AccumulateKernel<T, T>(kind, in, req, out, plan);
    }
  });
}

namespace {

void ReduceCompute(ReduceKind kind, const NodeAttrs& attrs,
                   const std::vector<TBlob>& in,
                   const std::vector<OpReqType>& req,
                   const std::vector<TBlob>& out) {
  const ReduceParam& p = attrs.get<ReduceParam>();
  ReduceInto(kind, attrs, p.axis, p.exclude, in[0], req[0], out[0]);
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
  RegisterReduce("nansum", ReduceKind::kNanSum, {},
                 "Sum over axes treating NaN as 0.");
  RegisterReduce("prod", ReduceKind::kProd, {},
                 "Product over axes (an empty product is 1).");
  RegisterReduce("nanprod", ReduceKind::kNanProd, {},
                 "Product over axes treating NaN as 1.");
  return true;
}();

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
    ParallelFor(os.Size(), kReduceGrain / 4, [&](int64_t b, int64_t e) {
      for (int64_t i = b; i < e; ++i) {
        const A v = static_cast<A>(x[BroadcastOffset(i, os, strides)]);
        // Without normalize a copy (exact for int64 past 2^53).
        if (normalize) {
          Assign(y + i, r, static_cast<double>(v) * scale);
        } else {
          Assign(y + i, r, v);
        }
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

// ---- _backward_prod: the gradient of prod and nanprod. ----

struct ProdGradParam {
  std::optional<TShape> axis;
  bool keepdims = false;
  bool exclude = false;
  bool skip_nan = false;
  static void Declare(ParamSchema<ProdGradParam>* s) {
    s->Field("axis", &ProdGradParam::axis)
        .Describe("the product's axes (none or (): all)");
    s->Field("keepdims", &ProdGradParam::keepdims)
        .Describe("the product kept the reduced axes");
    s->Field("exclude", &ProdGradParam::exclude)
        .Describe("the product reduced the axes NOT listed");
    s->Field("skip_nan", &ProdGradParam::skip_nan)
        .Describe("nanprod's: NaN elements count as 1 and get 0");
  }
};

// dx_i = g * (the product of the other elements of i's group), computed
// from the group's zero count and the product of its non-zero elements, so
// a zero input gets the product of the others instead of MXNet's g*y/x =
// 0/0 (PyTorch's answer).
template <typename T>
void ProdGradKernel(bool skip_nan, const T* g, const T* x, OpReqType req, T* dx,
                    const ReducePlan& plan) {
  using A = std::conditional_t<std::is_integral_v<T>, int64_t, double>;
  ParallelFor(
      plan.out_size, std::max<int64_t>(1, kReduceGrain / (plan.red_size + 1)),
      [&](int64_t b, int64_t e) {
        for (int64_t o = b; o < e; ++o) {
          const int64_t base = KeptOffset(o, plan);
          const auto value = [&](int64_t offset) {
            return static_cast<A>(static_cast<AccType<T>>(x[base + offset]));
          };
          const auto skipped = [&](A v) {
            if constexpr (std::is_floating_point_v<A>) {
              return skip_nan && std::isnan(v);
            }
            return false;
          };
          int64_t zeros = 0;
          SumAcc<T> nonzero_product = 1;
          ForEachReducedOffset(plan, [&](int64_t offset) {
            const A v = value(offset);
            if (skipped(v)) return;
            if (v == 0) {
              ++zeros;
            } else {
              nonzero_product *= static_cast<SumAcc<T>>(v);
            }
          });
          const A p = static_cast<A>(nonzero_product);
          const A head = static_cast<A>(static_cast<AccType<T>>(g[o]));
          ForEachReducedOffset(plan, [&](int64_t offset) {
            const A v = value(offset);
            A others = 0;
            if (skipped(v) || zeros > 1) {
              others = 0;
            } else if (zeros == 1) {
              others = v == 0 ? p : 0;
            } else {
              others = p / v;
            }
            Assign(dx + base + offset, req,
                   static_cast<AccType<T>>(head * others));
          });
        }
      });
}

void ProdGradCompute(const OpContext&, const NodeAttrs& attrs,
                     const std::vector<TBlob>& in,
                     const std::vector<OpReqType>& req,
                     const std::vector<TBlob>& out) {
  const ProdGradParam& p = attrs.get<ProdGradParam>();
  const TShape& xs = in[1].shape;
  if (req[0] == OpReqType::kNullOp || xs.Size() == 0) return;
  const ReducePlan plan =
      MakePlan(xs, ReducedAxes(attrs, xs, p.axis, p.exclude));
  MX_DTYPE_SWITCH(in[1].dtype, T, {
    ProdGradKernel<T>(p.skip_nan, in[0].data<T>(), in[1].data<T>(), req[0],
                      out[0].data<T>(), plan);
  });
}

MX_REGISTER_OP(_backward_prod)
    .Describe(
        "The gradient of prod (skip_nan: of nanprod) for head gradient "
        "`ograd` and input `data`: ograd times the product of the other "
        "elements, exact where data has zeros. First order only.")
    .SetNumInputs(2)
    .SetInputNames({"ograd", "data"})
    .SetParams<ProdGradParam>()
    .SetInferShape([](const NodeAttrs& attrs, std::vector<TShape>* in,
                      std::vector<TShape>* out) {
      AssignShape(attrs, out, 0, (*in)[1], true);
      AssignShape(attrs, in, 1, (*out)[0], false);
      const TShape& xs = (*in)[1];
      if (!xs.ndim_known()) return;
      const ProdGradParam& p = attrs.get<ProdGradParam>();
      AssignShape(attrs, in, 0,
                  ReducedShape(xs, ReducedAxes(attrs, xs, p.axis, p.exclude),
                               p.keepdims),
                  false);
    })
    .SetInferType([](const NodeAttrs& attrs, std::vector<DType>* in,
                     std::vector<DType>* out) {
      for (DType t : {(*in)[0], (*in)[1], (*out)[0]}) {
        if (t == DType::kBool) {
          throw InvalidArgument(OpLabel(attrs) +
                                ": a product of bool has no gradient");
        }
      }
      AssignType(attrs, out, 0, (*in)[1], true);
      AssignType(attrs, in, 1, (*out)[0], false);
      AssignType(attrs, in, 0, (*out)[0], false);
      AssignType(attrs, out, 0, (*in)[0], true);
    })
    .SetCompute(Context::kCPU, ProdGradCompute);

// ---- Gradients. ----

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
  // nansum: NaN elements (x != x) get 0.
  SetGradient("nansum", [](B& b, const E& g) {
    const NodeEntry x = b.x();
    return E{b.Op("where",
                  {b.Op("broadcast_equal", {x, x}),
                   b.Op("_broadcast_reduced_like", {g[0], x}, ReduceAttrs(b.n)),
                   b.Op("zeros_like", {x})})};
  });
  for (const char* op : {"prod", "nanprod"}) {
    SetGradient(op, [op](B& b, const E& g) {
      AttrDict attrs = ReduceAttrs(b.n);
      attrs["skip_nan"] = std::string(op) == "nanprod" ? "1" : "0";
      return E{b.Op("_backward_prod", {g[0], b.x()}, attrs)};
    });
  }
  SetGradient("_broadcast_reduced_like", [](B& b, const E& g) {
    const bool normalize = b.n->attrs.get<BroadcastReducedParam>().normalize;
    return E{b.Op(normalize ? "mean" : "sum", {g[0]}, ReduceAttrs(b.n)),
             NodeEntry{}};
  });
  return true;
}();

}  // namespace
}  // namespace cpu
}  // namespace mx
