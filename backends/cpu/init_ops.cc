// Creation ops (_zeros, _ones, _full, _arange, _contrib_arange_like,
// zeros_like, ones_like) and
// random sampling ops (_random_uniform, _random_normal).
//
// Ops without inputs take their shape and dtype from attributes and run on
// InvokeOptions::ctx. MXNet symbol files carry a `ctx` attribute on them; it
// is accepted and ignored (the context comes from the caller).
#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "backends/cpu/grad_util.h"
#include "backends/cpu/kernel_util.h"
#include "backends/cpu/random_draws.h"
#include "base/error.h"

namespace mx {
namespace cpu {
namespace {

constexpr int64_t kGrain = 1 << 14;

// `v` as element type T: bool is v != 0; integers truncate toward zero and
// wrap modulo 2^bits (NaN gives 0), so no conversion is undefined.
template <typename T>
T FromDouble(double v) {
  if constexpr (std::is_same_v<T, bool>) {
    return v != 0;
  } else if constexpr (std::is_same_v<T, float16>) {
    return float16(static_cast<float>(v));
  } else if constexpr (std::is_floating_point_v<T>) {
    return static_cast<T>(v);
  } else {
    if (std::isnan(v)) return T(0);
    constexpr double kLimit = 9.2233720368547758e18;  // 2^63
    const int64_t i = v >= kLimit    ? std::numeric_limits<int64_t>::max()
                      : v <= -kLimit ? std::numeric_limits<int64_t>::min()
                                     : static_cast<int64_t>(v);
    return static_cast<T>(static_cast<uint64_t>(i));
  }
}

// Writes `value` to every element of out[0].
void Fill(const TBlob& out, OpReqType req, double value) {
  if (req == OpReqType::kNullOp) return;
  MX_DTYPE_SWITCH(out.dtype, T, {
    T* y = out.data<T>();
    const T v = FromDouble<T>(value);
    ParallelFor(out.Size(), kGrain, [&](int64_t b, int64_t e) {
      for (int64_t i = b; i < e; ++i) Assign(y + i, req, v);
    });
  });
}

// Shape attribute of a no-input op into output 0; dims below -1 are errors.
void ShapeFromAttr(const NodeAttrs& attrs, const TShape& shape,
                   std::vector<TShape>* out) {
  for (int i = 0; i < shape.ndim(); ++i) {
    if (shape[i] < -1) {
      throw ShapeError(absl::StrCat(OpLabel(attrs),
                                    ": attribute shape=", shape.ToString(),
                                    " has a negative dimension"));
    }
  }
  AssignShape(attrs, out, 0, shape, true);
}

// ---- _zeros, _ones, _full. ----

struct InitParam {
  TShape shape = TShape::Scalar();
  DType dtype = DType::kFloat32;
  std::optional<std::string> ctx;
  static void Declare(ParamSchema<InitParam>* s) {
    s->Field("shape", &InitParam::shape).Describe("output shape");
    s->Field("dtype", &InitParam::dtype).Describe("output dtype");
    s->Field("ctx", &InitParam::ctx).Describe("ignored; from symbol files");
  }
};

struct FullParam {
  TShape shape = TShape::Scalar();
  DType dtype = DType::kFloat32;
  std::optional<std::string> ctx;
  double value = 0;
  static void Declare(ParamSchema<FullParam>* s) {
    s->Field("shape", &FullParam::shape).Describe("output shape");
    s->Field("dtype", &FullParam::dtype).Describe("output dtype");
    s->Field("ctx", &FullParam::ctx).Describe("ignored; from symbol files");
    s->Field("value", &FullParam::value).Required().Describe("fill value");
  }
};

template <typename P>
void AttrShape(const NodeAttrs& attrs, std::vector<TShape>*,
               std::vector<TShape>* out) {
  ShapeFromAttr(attrs, attrs.get<P>().shape, out);
}

template <typename P>
void AttrType(const NodeAttrs& attrs, std::vector<DType>*,
              std::vector<DType>* out) {
  AssignType(attrs, out, 0, attrs.get<P>().dtype, true);
}

FCompute FillKernel(double value) {
  return
      [value](const OpContext&, const NodeAttrs&, const std::vector<TBlob>&,
              const std::vector<OpReqType>& req,
              const std::vector<TBlob>& out) { Fill(out[0], req[0], value); };
}

template <typename P>
Op& RegisterNoInput(const std::string& name, const std::string& doc) {
  return OpRegistry::Get()
      ->Register(name)
      .Describe(doc)
      .SetNumInputs(0)
      .SetParams<P>()
      .SetInferShape(AttrShape<P>)
      .SetInferType(AttrType<P>);
}

[[maybe_unused]] const bool kFillRegistered = [] {
  // The _npi_ names are MXNet 2's (np.zeros, ...), with the same
  // attributes.
  RegisterNoInput<InitParam>("_zeros", "An array of zeros.")
      .SetCompute(Context::kCPU, FillKernel(0))
      .AddAlias("_npi_zeros");
  RegisterNoInput<InitParam>("_ones", "An array of ones.")
      .SetCompute(Context::kCPU, FillKernel(1))
      .AddAlias("_npi_ones");
  RegisterNoInput<FullParam>("_full", "An array filled with `value`.")
      .AddAlias("_npi_full")
      .SetCompute(Context::kCPU, [](const OpContext&, const NodeAttrs& attrs,
                                    const std::vector<TBlob>&,
                                    const std::vector<OpReqType>& req,
                                    const std::vector<TBlob>& out) {
        Fill(out[0], req[0], attrs.get<FullParam>().value);
      });

  const auto inplace = [](const NodeAttrs&) {
    return std::vector<std::pair<int, int>>{{0, 0}};
  };
  for (const auto& [name, value] :
       {std::pair<const char*, double>{"zeros_like", 0}, {"ones_like", 1}}) {
    OpRegistry::Get()
        ->Register(name)
        .Describe(absl::StrCat("An array of ", value == 0 ? "zeros" : "ones",
                               " with the shape and dtype of `data`."))
        .SetNumInputs(1)
        .SetInputNames({"data"})
        .SetInferShape(SameShape)
        .SetInferType(SameType)
        .SetInplaceOption(inplace)
        .SetCompute(Context::kCPU, FillKernel(value));
    // Constant in `data`'s values: a zero gradient.
    SetGradient(name, [](GradBuilder& b, const std::vector<NodeEntry>&) {
      return std::vector<NodeEntry>{b.Op("zeros_like", {b.x()})};
    });
  }
  return true;
}();

// ---- _arange. ----

struct ArangeParam {
  double start = 0;
  std::optional<double> stop;
  double step = 1;
  int repeat = 1;
  bool infer_range = false;
  DType dtype = DType::kFloat32;
  std::optional<std::string> ctx;
  static void Declare(ParamSchema<ArangeParam>* s) {
    s->Field("start", &ArangeParam::start)
        .Required()
        .Describe("first value; the end when stop is unset");
    s->Field("stop", &ArangeParam::stop).Describe("end (exclusive)");
    s->Field("step", &ArangeParam::step).Describe("spacing, non-zero");
    s->Field("repeat", &ArangeParam::repeat).Describe("copies of each value");
    s->Field("infer_range", &ArangeParam::infer_range)
        .Describe("infer stop from the output shape (not supported)");
    s->Field("dtype", &ArangeParam::dtype).Describe("output dtype");
    s->Field("ctx", &ArangeParam::ctx).Describe("ignored; from symbol files");
  }
};

// First value and number of distinct values; validates the attributes.
std::pair<double, int64_t> ArangeRange(const NodeAttrs& attrs) {
  const ArangeParam& p = attrs.get<ArangeParam>();
  if (p.infer_range) {
    throw NotImplemented(absl::StrCat(
        OpLabel(attrs), ": infer_range=True is not supported; give stop"));
  }
  const double lo = p.stop ? p.start : 0, hi = p.stop ? *p.stop : p.start;
  const std::string args = absl::StrCat(
      "start=", p.start, ", stop=", p.stop ? absl::StrCat(*p.stop) : "None",
      ", step=", p.step);
  if (p.step == 0) {
    throw InvalidArgument(
        absl::StrCat(OpLabel(attrs), ": step must be non-zero (", args, ")"));
  }
  if (p.repeat < 1) {
    throw InvalidArgument(absl::StrCat(OpLabel(attrs), ": repeat=", p.repeat,
                                       " must be at least 1"));
  }
  const double n = std::ceil((hi - lo) / p.step);
  if (!std::isfinite(lo) || !std::isfinite(hi) || !std::isfinite(n)) {
    throw InvalidArgument(absl::StrCat(OpLabel(attrs),
                                       ": start, stop and step must be "
                                       "finite (",
                                       args, ")"));
  }
  if (n < 0) {
    throw InvalidArgument(absl::StrCat(OpLabel(attrs), ": ", args,
                                       " give a negative length ", n));
  }
  if (n * p.repeat > 9.0e15) {
    throw InvalidArgument(
        absl::StrCat(OpLabel(attrs), ": ", args, " give too many values"));
  }
  return {lo, static_cast<int64_t>(n)};
}

void ArangeShape(const NodeAttrs& attrs, std::vector<TShape>*,
                 std::vector<TShape>* out) {
  const int64_t n = ArangeRange(attrs).second;
  AssignShape(attrs, out, 0, TShape{n * attrs.get<ArangeParam>().repeat}, true);
}

void ArangeCompute(const OpContext&, const NodeAttrs& attrs,
                   const std::vector<TBlob>&, const std::vector<OpReqType>& req,
                   const std::vector<TBlob>& out) {
  const ArangeParam& p = attrs.get<ArangeParam>();
  const double lo = ArangeRange(attrs).first;
  const OpReqType r = req[0];
  if (r == OpReqType::kNullOp) return;
  MX_DTYPE_SWITCH(out[0].dtype, T, {
    T* y = out[0].data<T>();
    ParallelFor(out[0].Size(), kGrain, [&](int64_t b, int64_t e) {
      for (int64_t i = b; i < e; ++i) {
        const double v = lo + static_cast<double>(i / p.repeat) * p.step;
        Assign(y + i, r, FromDouble<T>(v));
      }
    });
  });
}

MX_REGISTER_OP(_arange)
    .AddAlias("_npi_arange")
    .Describe(
        "Evenly spaced values in [start, stop) by step (in [0, start) when "
        "stop is unset), each repeated `repeat` times.")
    .SetNumInputs(0)
    .SetParams<ArangeParam>()
    .SetInferShape(ArangeShape)
    .SetInferType(AttrType<ArangeParam>)
    .SetCompute(Context::kCPU, ArangeCompute);

// ---- _contrib_arange_like: _arange shaped like its input. ----

struct ArangeLikeParam {
  double start = 0;
  double step = 1;
  int repeat = 1;
  std::optional<int> axis;
  std::optional<std::string> ctx;
  static void Declare(ParamSchema<ArangeLikeParam>* s) {
    s->Field("start", &ArangeLikeParam::start).Describe("first value");
    s->Field("step", &ArangeLikeParam::step).Describe("spacing");
    s->Field("repeat", &ArangeLikeParam::repeat)
        .Describe("copies of each value, >= 1");
    s->Field("axis", &ArangeLikeParam::axis)
        .Describe("None: data's shape; else a 1-D array as long as it");
    s->Field("ctx", &ArangeLikeParam::ctx)
        .Describe("ignored; from symbol files");
  }
};

void ArangeLikeShape(const NodeAttrs& attrs, std::vector<TShape>* in,
                     std::vector<TShape>* out) {
  const ArangeLikeParam& p = attrs.get<ArangeLikeParam>();
  if (p.repeat < 1) {
    throw InvalidArgument(absl::StrCat(OpLabel(attrs), ": repeat=", p.repeat,
                                       " must be at least 1"));
  }
  const TShape& d = (*in)[0];
  if (!d.ndim_known()) return;
  if (!p.axis) {
    AssignShape(attrs, out, 0, d, true);
    return;
  }
  const int a = d.CheckAxis(*p.axis, OpLabel(attrs).c_str());
  if (d[a] >= 0) AssignShape(attrs, out, 0, TShape{d[a]}, true);
}

void ArangeLikeCompute(const OpContext&, const NodeAttrs& attrs,
                       const std::vector<TBlob>&,
                       const std::vector<OpReqType>& req,
                       const std::vector<TBlob>& out) {
  const ArangeLikeParam& p = attrs.get<ArangeLikeParam>();
  const OpReqType r = req[0];
  if (r == OpReqType::kNullOp) return;
  MX_DTYPE_SWITCH(out[0].dtype, T, {
    T* y = out[0].data<T>();
    ParallelFor(out[0].Size(), kGrain, [&](int64_t b, int64_t e) {
      for (int64_t i = b; i < e; ++i) {
        const double v = p.start + static_cast<double>(i / p.repeat) * p.step;
        Assign(y + i, r, FromDouble<T>(v));
      }
    });
  });
}

MX_REGISTER_OP(_contrib_arange_like)
    .Describe(
        "start + step * (i / repeat) in data's shape (a 1-D array as long "
        "as data's `axis` with axis); data's dtype, data's values unused.")
    .SetNumInputs(1)
    .SetInputNames({"data"})
    .SetParams<ArangeLikeParam>()
    .SetInferShape(ArangeLikeShape)
    .SetInferType([](const NodeAttrs& attrs, std::vector<DType>* in,
                     std::vector<DType>* out) {
      AssignType(attrs, out, 0, (*in)[0], true);
    })
    .SetCompute(Context::kCPU, ArangeLikeCompute)
    .AddAlias("_npx_arange_like");

[[maybe_unused]] const bool kArangeLikeGradient = [] {
  SetZeroGrad("_contrib_arange_like");
  return true;
}();

// ---- Random sampling. ----

struct UniformParam {
  double low = 0;
  double high = 1;
  TShape shape = TShape::Scalar();
  DType dtype = DType::kFloat32;
  std::optional<std::string> ctx;
  static void Declare(ParamSchema<UniformParam>* s) {
    s->Field("low", &UniformParam::low).Describe("lower bound (inclusive)");
    s->Field("high", &UniformParam::high).Describe("upper bound (exclusive)");
    s->Field("shape", &UniformParam::shape).Describe("output shape");
    s->Field("dtype", &UniformParam::dtype).Describe("float output dtype");
    s->Field("ctx", &UniformParam::ctx).Describe("ignored; from symbol files");
  }
};

struct NormalParam {
  double loc = 0;
  double scale = 1;
  TShape shape = TShape::Scalar();
  DType dtype = DType::kFloat32;
  std::optional<std::string> ctx;
  static void Declare(ParamSchema<NormalParam>* s) {
    s->Field("loc", &NormalParam::loc).Describe("mean");
    s->Field("scale", &NormalParam::scale).Describe("standard deviation");
    s->Field("shape", &NormalParam::shape).Describe("output shape");
    s->Field("dtype", &NormalParam::dtype).Describe("float output dtype");
    s->Field("ctx", &NormalParam::ctx).Describe("ignored; from symbol files");
  }
};

void CheckUniform(const NodeAttrs& attrs) {
  const UniformParam& p = attrs.get<UniformParam>();
  if (!(p.low <= p.high) || !std::isfinite(p.low) || !std::isfinite(p.high)) {
    throw InvalidArgument(absl::StrCat(OpLabel(attrs), ": low=", p.low,
                                       " and high=", p.high,
                                       " must be finite with low <= high"));
  }
}

void CheckNormal(const NodeAttrs& attrs) {
  const NormalParam& p = attrs.get<NormalParam>();
  if (!(p.scale >= 0) || !std::isfinite(p.scale) || !std::isfinite(p.loc)) {
    throw InvalidArgument(absl::StrCat(OpLabel(attrs), ": loc=", p.loc,
                                       " and scale=", p.scale,
                                       " must be finite with scale >= 0"));
  }
}

template <typename P, void (*Check)(const NodeAttrs&)>
void RandomShape(const NodeAttrs& attrs, std::vector<TShape>* in,
                 std::vector<TShape>* out) {
  Check(attrs);
  AttrShape<P>(attrs, in, out);
}

template <typename P>
void RandomType(const NodeAttrs& attrs, std::vector<DType>* in,
                std::vector<DType>* out) {
  RequireFloat(attrs, attrs.get<P>().dtype);
  AttrType<P>(attrs, in, out);
}

void UniformCompute(const OpContext& ctx, const NodeAttrs& attrs,
                    const std::vector<TBlob>&,
                    const std::vector<OpReqType>& req,
                    const std::vector<TBlob>& out) {
  CheckUniform(attrs);
  const UniformParam& p = attrs.get<UniformParam>();
  RandomEngine& rng = ctx.random();
  const OpReqType r = req[0];
  MX_FLOAT_DTYPE_SWITCH(out[0].dtype, T, {
    T* y = out[0].data<T>();
    const T low = FromDouble<T>(p.low);
    const int64_t n = out[0].Size();
    for (int64_t i = 0; i < n; ++i) {
      T v = FromDouble<T>(p.low + (p.high - p.low) * Canonical(rng));
      // Rounding to T may reach `high`; keep the interval half-open.
      if (p.high > p.low && static_cast<double>(v) >= p.high) v = low;
      Assign(y + i, r, v);
    }
  });
}

void NormalCompute(const OpContext& ctx, const NodeAttrs& attrs,
                   const std::vector<TBlob>&, const std::vector<OpReqType>& req,
                   const std::vector<TBlob>& out) {
  CheckNormal(attrs);
  const NormalParam& p = attrs.get<NormalParam>();
  RandomEngine& rng = ctx.random();
  const OpReqType r = req[0];
  const int64_t n = out[0].Size();
  constexpr double kTwoPi = 6.283185307179586476925;
  MX_FLOAT_DTYPE_SWITCH(out[0].dtype, T, {
    T* y = out[0].data<T>();
    // Box-Muller: two independent standard normals per pair of uniforms.
    for (int64_t i = 0; i < n; i += 2) {
      const double u1 = 1.0 - Canonical(rng);  // (0, 1]: log is finite.
      const double u2 = Canonical(rng);
      const double radius = std::sqrt(-2.0 * std::log(u1));
      Assign(y + i, r,
             FromDouble<T>(p.loc + p.scale * radius * std::cos(kTwoPi * u2)));
      if (i + 1 < n) {
        Assign(y + i + 1, r,
               FromDouble<T>(p.loc + p.scale * radius * std::sin(kTwoPi * u2)));
      }
    }
  });
}

std::vector<ResourceRequest> NeedsRandom(const NodeAttrs&) {
  return {ResourceRequest{ResourceRequest::kRandom}};
}

MX_REGISTER_OP(_random_uniform)
    .Describe("Samples uniformly from [low, high).")
    .SetNumInputs(0)
    .SetParams<UniformParam>()
    .SetInferShape(RandomShape<UniformParam, CheckUniform>)
    .SetInferType(RandomType<UniformParam>)
    .SetResourceRequest(NeedsRandom)
    .SetCompute(Context::kCPU, UniformCompute);

MX_REGISTER_OP(_random_normal)
    .Describe("Samples from a normal distribution N(loc, scale^2).")
    .SetNumInputs(0)
    .SetParams<NormalParam>()
    .SetInferShape(RandomShape<NormalParam, CheckNormal>)
    .SetInferType(RandomType<NormalParam>)
    .SetResourceRequest(NeedsRandom)
    .SetCompute(Context::kCPU, NormalCompute);

}  // namespace
}  // namespace cpu
}  // namespace mx
