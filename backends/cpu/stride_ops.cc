// Ops that gather through per-dim strides: transpose, SwapAxis, slice (NumPy
// rules, negative steps included) and slice_axis; and the scatters that are
// their gradients, _backward_slice and _backward_slice_axis (the gradient into
// zeros of the input's shape).
#include <algorithm>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "backends/cpu/grad_util.h"
#include "backends/cpu/kernel_util.h"
#include "backends/cpu/strided_gather.h"
#include "base/error.h"

namespace mx {
namespace cpu {
namespace {

// Output shape from a known input shape through `fn`; partial inputs are
// left for later.
template <typename F>
void ShapeFromKnownInput(const NodeAttrs& attrs, std::vector<TShape>* in,
                         std::vector<TShape>* out, F fn) {
  if ((*in)[0].is_known()) AssignShape(attrs, out, 0, fn((*in)[0]), true);
}

// out's axis d is in's axis perm[d].
void PermuteCompute(const std::vector<int>& perm, const TBlob& in,
                    OpReqType req, const TBlob& out) {
  const std::vector<int64_t> is = Strides(in.shape);
  std::vector<int64_t> strides(perm.size());
  for (size_t d = 0; d < perm.size(); ++d) strides[d] = is[perm[d]];
  GatherCompute(in, 0, strides, req, out);
}

// ---- transpose. ----

struct TransposeParam {
  std::optional<TShape> axes;
  static void Declare(ParamSchema<TransposeParam>* s) {
    s->Field("axes", &TransposeParam::axes)
        .Describe("permutation of the axes; none or () reverses them");
  }
};

// The permutation for an input of rank nd; throws unless it is one.
std::vector<int> Permutation(const NodeAttrs& attrs, const TShape& shape) {
  const std::optional<TShape>& axes = attrs.get<TransposeParam>().axes;
  const int nd = shape.ndim();
  std::vector<int> perm(nd);
  if (!axes || axes->ndim() <= 0) {
    for (int i = 0; i < nd; ++i) perm[i] = nd - 1 - i;
    return perm;
  }
  if (axes->ndim() != nd) {
    throw ShapeError(absl::StrCat(
        OpLabel(attrs), ": axes=", axes->ToString(), " has ", axes->ndim(),
        " entries but input 0 (data) has shape ", shape.ToString()));
  }
  const std::string label = OpLabel(attrs);
  std::vector<bool> seen(nd, false);
  for (int i = 0; i < nd; ++i) {
    perm[i] = shape.CheckAxis(static_cast<int>((*axes)[i]), label.c_str());
    if (seen[perm[i]]) {
      throw InvalidArgument(absl::StrCat(
          label, ": axes=", axes->ToString(), " repeats axis ", perm[i],
          " (input 0 (data) has shape ", shape.ToString(), ")"));
    }
    seen[perm[i]] = true;
  }
  return perm;
}

MX_REGISTER_OP(transpose)
    .AddAlias("_np_transpose")
    .Describe("Permutes the axes (reverses them by default).")
    .SetNumInputs(1)
    .SetInputNames({"data"})
    .SetParams<TransposeParam>()
    .SetInferShape([](const NodeAttrs& attrs, std::vector<TShape>* in,
                      std::vector<TShape>* out) {
      const TShape& s = (*in)[0].ndim_known() ? (*in)[0] : (*out)[0];
      if (!s.ndim_known()) return;
      const std::vector<int> perm = Permutation(attrs, s);
      TShape o = TShape::Filled(s.ndim(), -1), i = o;
      for (int d = 0; d < s.ndim(); ++d) {
        o[d] = (*in)[0].ndim_known() ? (*in)[0][perm[d]] : -1;
        if ((*out)[0].ndim_known()) i[perm[d]] = (*out)[0][d];
      }
      AssignShape(attrs, out, 0, o, true);
      AssignShape(attrs, in, 0, i, false);
    })
    .SetInferType(SameType)
    .SetCompute(Context::kCPU, [](const OpContext&, const NodeAttrs& attrs,
                                  const std::vector<TBlob>& in,
                                  const std::vector<OpReqType>& req,
                                  const std::vector<TBlob>& out) {
      PermuteCompute(Permutation(attrs, in[0].shape), in[0], req[0], out[0]);
    });

// ---- SwapAxis: the transpose exchanging two axes. ----

struct SwapAxisParam {
  int dim1 = 0;
  int dim2 = 0;
  static void Declare(ParamSchema<SwapAxisParam>* s) {
    s->Field("dim1", &SwapAxisParam::dim1);
    s->Field("dim2", &SwapAxisParam::dim2);
  }
};

std::vector<int> SwapPermutation(const NodeAttrs& attrs, const TShape& shape) {
  const SwapAxisParam& p = attrs.get<SwapAxisParam>();
  const std::string label = OpLabel(attrs);
  std::vector<int> perm(shape.ndim());
  for (int d = 0; d < shape.ndim(); ++d) perm[d] = d;
  std::swap(perm[shape.CheckAxis(p.dim1, label.c_str())],
            perm[shape.CheckAxis(p.dim2, label.c_str())]);
  return perm;
}

MX_REGISTER_OP(SwapAxis)
    .Describe("Exchanges axes dim1 and dim2 (MXNet's SwapAxis).")
    .SetNumInputs(1)
    .SetInputNames({"data"})
    .SetParams<SwapAxisParam>()
    .SetInferShape([](const NodeAttrs& attrs, std::vector<TShape>* in,
                      std::vector<TShape>* out) {
      // An involution: each shape is the other's with two extents swapped.
      for (auto [from, to] : {std::pair{in, out}, std::pair{out, in}}) {
        const TShape& s = (*from)[0];
        if (!s.ndim_known()) continue;
        const std::vector<int> perm = SwapPermutation(attrs, s);
        TShape t = s;
        for (int d = 0; d < s.ndim(); ++d) t[d] = s[perm[d]];
        AssignShape(attrs, to, 0, t, from == in);
      }
    })
    .SetInferType(SameType)
    .SetCompute(Context::kCPU,
                [](const OpContext&, const NodeAttrs& attrs,
                   const std::vector<TBlob>& in,
                   const std::vector<OpReqType>& req,
                   const std::vector<TBlob>& out) {
                  PermuteCompute(SwapPermutation(attrs, in[0].shape), in[0],
                                 req[0], out[0]);
                })
    .AddAlias("swapaxes");

// ---- slice, slice_axis. ----

// One axis of a slice: the first input index, the step, and the length.
struct AxisRange {
  int64_t begin = 0, step = 1, length = 0;
};

// NumPy's rules: negative indices count from the end, then clamp.
AxisRange ResolveRange(int64_t n, std::optional<int64_t> b,
                       std::optional<int64_t> e, int64_t step) {
  AxisRange r;
  r.step = step;
  auto wrap = [n](int64_t v, int64_t lo, int64_t hi) {
    if (v < 0) v += n;
    return std::clamp(v, lo, hi);
  };
  if (step > 0) {
    r.begin = b ? wrap(*b, 0, n) : 0;
    const int64_t end = e ? wrap(*e, 0, n) : n;
    r.length = end > r.begin ? (end - r.begin + step - 1) / step : 0;
  } else {
    r.begin = b ? wrap(*b, -1, n - 1) : n - 1;
    const int64_t end = e ? wrap(*e, -1, n - 1) : -1;
    r.length = r.begin > end ? (r.begin - end - step - 1) / -step : 0;
  }
  return r;
}

struct SliceParam {
  OptionalIntTuple begin, end, step;
  static void Declare(ParamSchema<SliceParam>* s) {
    s->Field("begin", &SliceParam::begin)
        .Required()
        .Describe("first index per axis (None: from the start)");
    s->Field("end", &SliceParam::end)
        .Required()
        .Describe("end index per axis, excluded (None: to the end)");
    s->Field("step", &SliceParam::step)
        .Describe("step per axis (None or missing: 1)");
  }
};

std::vector<AxisRange> SliceRanges(const NodeAttrs& attrs, const TShape& s) {
  const SliceParam& p = attrs.get<SliceParam>();
  auto fail = [&](const std::string& why) -> void {
    throw ShapeError(absl::StrCat(
        OpLabel(attrs), ": begin=", param_internal::PrintValue(p.begin),
        " end=", param_internal::PrintValue(p.end),
        " step=", param_internal::PrintValue(p.step),
        " for input 0 (data) of shape ", s.ToString(), ": ", why));
  };
  if (p.begin.size() != p.end.size()) fail("begin and end differ in length");
  if (!p.step.empty() && p.step.size() != p.begin.size()) {
    fail("step and begin differ in length");
  }
  if (static_cast<int>(p.begin.size()) > s.ndim()) fail("too many axes");
  std::vector<AxisRange> ranges;
  for (int d = 0; d < s.ndim(); ++d) {
    const bool given = d < static_cast<int>(p.begin.size());
    const int64_t step = given && !p.step.empty() && p.step[d] ? *p.step[d] : 1;
    if (step == 0) {
      throw InvalidArgument(absl::StrCat(
          OpLabel(attrs), ": step=", param_internal::PrintValue(p.step),
          " has a zero step for axis ", d, " (input shape ", s.ToString(),
          ")"));
    }
    ranges.push_back(given ? ResolveRange(s[d], p.begin[d], p.end[d], step)
                           : ResolveRange(s[d], std::nullopt, std::nullopt, 1));
  }
  return ranges;
}

// Output shape of a slice, and the gather that computes it.
TShape RangesShape(const std::vector<AxisRange>& ranges) {
  std::vector<int64_t> dims;
  for (const AxisRange& r : ranges) dims.push_back(r.length);
  return TShape(dims);
}

void SliceGather(const std::vector<AxisRange>& ranges, const TBlob& in,
                 OpReqType req, const TBlob& out) {
  const std::vector<int64_t> is = Strides(in.shape);
  int64_t base = 0;
  std::vector<int64_t> strides(ranges.size());
  for (size_t d = 0; d < ranges.size(); ++d) {
    base += ranges[d].begin * is[d];
    strides[d] = ranges[d].step * is[d];
  }
  GatherCompute(in, base, strides, req, out);
}

MX_REGISTER_OP(slice)
    .Describe("NumPy basic slicing: begin, end and step per leading axis.")
    .SetNumInputs(1)
    .SetInputNames({"data"})
    .SetParams<SliceParam>()
    .SetInferShape([](const NodeAttrs& attrs, std::vector<TShape>* in,
                      std::vector<TShape>* out) {
      ShapeFromKnownInput(attrs, in, out, [&](const TShape& s) {
        return RangesShape(SliceRanges(attrs, s));
      });
    })
    .SetInferType(SameType)
    .SetCompute(Context::kCPU, [](const OpContext&, const NodeAttrs& attrs,
                                  const std::vector<TBlob>& in,
                                  const std::vector<OpReqType>& req,
                                  const std::vector<TBlob>& out) {
      SliceGather(SliceRanges(attrs, in[0].shape), in[0], req[0], out[0]);
    });

struct SliceAxisParam {
  int axis = 0;
  int64_t begin = 0;
  std::optional<int64_t> end;
  static void Declare(ParamSchema<SliceAxisParam>* s) {
    s->Field("axis", &SliceAxisParam::axis).Required();
    s->Field("begin", &SliceAxisParam::begin).Required();
    s->Field("end", &SliceAxisParam::end)
        .Required()
        .Describe("excluded; None means the end of the axis");
  }
};

std::vector<AxisRange> SliceAxisRanges(const NodeAttrs& attrs,
                                       const TShape& s) {
  const SliceAxisParam& p = attrs.get<SliceAxisParam>();
  const int axis = s.CheckAxis(p.axis, OpLabel(attrs).c_str());
  std::vector<AxisRange> ranges;
  for (int d = 0; d < s.ndim(); ++d) {
    ranges.push_back(d == axis ? ResolveRange(s[d], p.begin, p.end, 1)
                               : ResolveRange(s[d], 0, std::nullopt, 1));
  }
  return ranges;
}

MX_REGISTER_OP(slice_axis)
    .Describe("[begin, end) along one axis (NumPy index rules).")
    .SetNumInputs(1)
    .SetInputNames({"data"})
    .SetParams<SliceAxisParam>()
    .SetInferShape([](const NodeAttrs& attrs, std::vector<TShape>* in,
                      std::vector<TShape>* out) {
      ShapeFromKnownInput(attrs, in, out, [&](const TShape& s) {
        return RangesShape(SliceAxisRanges(attrs, s));
      });
    })
    .SetInferType(SameType)
    .SetCompute(Context::kCPU, [](const OpContext&, const NodeAttrs& attrs,
                                  const std::vector<TBlob>& in,
                                  const std::vector<OpReqType>& req,
                                  const std::vector<TBlob>& out) {
      SliceGather(SliceAxisRanges(attrs, in[0].shape), in[0], req[0], out[0]);
    });

// ---- _backward_slice, _backward_slice_axis. ----

// out = zeros of out's shape with `in` written at the slice `ranges` of it
// (added to out for kAddTo). Slice positions are distinct, so it is a plain
// scatter.
void SliceScatter(const std::vector<AxisRange>& ranges, const TBlob& in,
                  OpReqType req, const TBlob& out) {
  if (req == OpReqType::kNullOp) return;
  const std::vector<int64_t> os = Strides(out.shape);
  const int nd = static_cast<int>(ranges.size());
  int64_t base = 0;
  std::vector<int64_t> strides(nd);
  for (int d = 0; d < nd; ++d) {
    base += ranges[d].begin * os[d];
    strides[d] = ranges[d].step * os[d];
  }
  ScatterCompute(in, base, strides, req, out);
}

// Shapes of a scatter op (data, like) -> like: data has the slice's shape.
template <typename Ranges>
FInferShape ScatterShape(Ranges ranges) {
  return [ranges](const NodeAttrs& attrs, std::vector<TShape>* in,
                  std::vector<TShape>* out) {
    AssignShape(attrs, out, 0, (*in)[1], true);
    AssignShape(attrs, in, 1, (*out)[0], false);
    const TShape& like = (*in)[1];
    if (like.is_known()) {
      AssignShape(attrs, in, 0, RangesShape(ranges(attrs, like)), false);
    }
  };
}

void ScatterType(const NodeAttrs& attrs, std::vector<DType>* in,
                 std::vector<DType>* out) {
  AssignType(attrs, out, 0, (*in)[0], true);
  AssignType(attrs, in, 0, (*out)[0], false);
}

MX_REGISTER_OP(_backward_slice)
    .Describe(
        "Zeros of like's shape with `data` at slice(begin, end, step) "
        "(the gradient of slice).")
    .SetNumInputs(2)
    .SetInputNames({"data", "like"})
    .SetParams<SliceParam>()
    .SetInferShape(ScatterShape(SliceRanges))
    .SetInferType(ScatterType)
    .SetCompute(Context::kCPU, [](const OpContext&, const NodeAttrs& attrs,
                                  const std::vector<TBlob>& in,
                                  const std::vector<OpReqType>& req,
                                  const std::vector<TBlob>& out) {
      SliceScatter(SliceRanges(attrs, out[0].shape), in[0], req[0], out[0]);
    });

MX_REGISTER_OP(_backward_slice_axis)
    .Describe(
        "Zeros of like's shape with `data` at [begin, end) along axis (the "
        "gradient of slice_axis).")
    .SetNumInputs(2)
    .SetInputNames({"data", "like"})
    .SetParams<SliceAxisParam>()
    .SetInferShape(ScatterShape(SliceAxisRanges))
    .SetInferType(ScatterType)
    .SetCompute(Context::kCPU, [](const OpContext&, const NodeAttrs& attrs,
                                  const std::vector<TBlob>& in,
                                  const std::vector<OpReqType>& req,
                                  const std::vector<TBlob>& out) {
      SliceScatter(SliceAxisRanges(attrs, out[0].shape), in[0], req[0], out[0]);
    });

// ---- Gradients. ----

[[maybe_unused]] const bool kGradientsRegistered = [] {
  using B = GradBuilder;
  using E = std::vector<NodeEntry>;
  SetGradient("SwapAxis", [](B& b, const E& g) {
    return E{b.Op("SwapAxis", {g[0]}, b.n->attrs.dict)};
  });
  SetGradient("transpose", [](B& b, const E& g) {
    const std::optional<TShape>& axes = b.n->attrs.get<TransposeParam>().axes;
    if (!axes || axes->ndim() <= 0) {  // Reversal is its own inverse.
      return E{b.Op("transpose", {g[0]})};
    }
    const int nd = axes->ndim();
    TShape inverse = TShape::Filled(nd, 0);
    for (int d = 0; d < nd; ++d) {
      const int64_t a = (*axes)[d];
      if (a < -nd || a >= nd) {
        throw InvalidArgument(
            absl::StrCat(OpLabel(b.n->attrs), ": axes=", axes->ToString(),
                         " is not a permutation of ", nd, " axes"));
      }
      inverse[a < 0 ? a + nd : a] = d;
    }
    return E{b.Op("transpose", {g[0]},
                  {{"axes", param_internal::PrintValue(inverse)}})};
  });
  // The slice's attributes describe the scatter back, and the scatter's the
  // slice: each is the other's adjoint.
  for (const auto& [fwd, bwd] :
       {std::pair<const char*, const char*>{"slice", "_backward_slice"},
        {"slice_axis", "_backward_slice_axis"}}) {
    const std::string scatter = bwd, gather = fwd;
    SetGradient(fwd, [scatter](B& b, const E& g) {
      return E{b.Op(scatter, {g[0], b.x()}, b.n->attrs.dict)};
    });
    SetGradient(bwd, [gather](B& b, const E& g) {
      return E{b.Op(gather, {g[0]}, b.n->attrs.dict), NodeEntry{}};
    });
  }
  return true;
}();

}  // namespace
}  // namespace cpu
}  // namespace mx
