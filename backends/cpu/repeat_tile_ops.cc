// repeat (each element `repeats` times along an axis, or over the
// flattened array) and tile (the whole array `reps` times per axis), as
// MXNet's. Both map every output element to one input element; the
// gradients (_backward_repeat, _backward_tile) add each output gradient
// back into that element.
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

struct RepeatParam {
  int64_t repeats = 0;
  std::optional<int> axis;
  static void Declare(ParamSchema<RepeatParam>* s) {
    s->Field("repeats", &RepeatParam::repeats).Required();
    s->Field("axis", &RepeatParam::axis)
        .Describe("None: repeat the flattened array.");
  }
};

struct TileParam {
  TShape reps;
  static void Declare(ParamSchema<TileParam>* s) {
    s->Field("reps", &TileParam::reps).Required();
  }
};

// The input shape as the kernels see it (flattened for repeat without
// axis; tile's input padded with leading 1s to reps' rank) and the output.
struct Mapping {
  TShape in, out;
};

// a * b; throws ShapeError when it does not fit in int64_t.
int64_t Product(const NodeAttrs& attrs, int64_t a, int64_t b) {
  const std::optional<int64_t> p = CheckedProduct({a, b});
  if (!p) {
    throw ShapeError(absl::StrCat(OpLabel(attrs), ": an output extent ", a,
                                  " * ", b, " does not fit in 64 bits"));
  }
  return *p;
}

Mapping RepeatMapping(const NodeAttrs& attrs, const TShape& d) {
  const RepeatParam& p = attrs.get<RepeatParam>();
  if (p.repeats < 0) {
    throw InvalidArgument(
        absl::StrCat(OpLabel(attrs), ": repeats=", p.repeats, " must be >= 0"));
  }
  if (!p.axis) {
    const TShape flat{d.Size()};
    return {flat, TShape{Product(attrs, d.Size(), p.repeats)}};
  }
  const int a = d.CheckAxis(*p.axis, OpLabel(attrs).c_str());
  TShape out = d;
  out[a] = Product(attrs, d[a], p.repeats);
  return {d, out};
}

Mapping TileMapping(const NodeAttrs& attrs, const TShape& d) {
  const TShape& reps = attrs.get<TileParam>().reps;
  const int nr = reps.ndim_known() ? reps.ndim() : 0;
  for (int i = 0; i < nr; ++i) {
    if (reps[i] < 0) {
      throw InvalidArgument(absl::StrCat(
          OpLabel(attrs), ": reps=", reps.ToString(), " must be >= 0"));
    }
  }
  const int nd = std::max(d.ndim(), nr);
  std::vector<int64_t> in(nd, 1), out(nd, 1);
  for (int i = 0; i < d.ndim(); ++i) in[nd - d.ndim() + i] = d[i];
  for (int i = 0; i < nd; ++i) {
    const int r = i - (nd - nr);
    out[i] = Product(attrs, in[i], r >= 0 ? reps[r] : 1);
  }
  return {TShape(in), TShape(out)};
}

// Input offset of output element i.
int64_t SourceOf(bool tile, int64_t i, const Mapping& m,
                 const std::vector<int64_t>& in_strides, int repeat_axis,
                 int64_t repeats) {
  int64_t off = 0;
  for (int d = m.out.ndim() - 1; d >= 0; --d) {
    const int64_t o = i % m.out[d];
    i /= m.out[d];
    int64_t s;
    if (tile) {
      s = o % m.in[d];
    } else {
      s = d == repeat_axis ? o / repeats : o;
    }
    off += s * in_strides[d];
  }
  return off;
}

template <bool kTile>
Mapping MappingOf(const NodeAttrs& attrs, const TShape& d) {
  return kTile ? TileMapping(attrs, d) : RepeatMapping(attrs, d);
}

template <bool kTile>
void ForwardShape(const NodeAttrs& attrs, std::vector<TShape>* in,
                  std::vector<TShape>* out) {
  if (!(*in)[0].is_known()) return;
  AssignShape(attrs, out, 0, MappingOf<kTile>(attrs, (*in)[0]).out, true);
}

// Calls f(output index, input offset) for every output element.
template <bool kTile, typename F>
void ForEachElement(const NodeAttrs& attrs, const TShape& data, F f) {
  const Mapping m = MappingOf<kTile>(attrs, data);
  int axis = 0;
  int64_t repeats = 1;
  if constexpr (!kTile) {
    const RepeatParam& p = attrs.get<RepeatParam>();
    axis = p.axis ? data.CheckAxis(*p.axis, "repeat") : 0;
    repeats = p.repeats;
  }
  const std::vector<int64_t> strides = Strides(m.in);
  const int64_t n = m.out.Size();
  for (int64_t i = 0; i < n; ++i) {
    f(i, SourceOf(kTile, i, m, strides, axis, repeats));
  }
}

template <bool kTile>
void ForwardCompute(const OpContext&, const NodeAttrs& attrs,
                    const std::vector<TBlob>& in,
                    const std::vector<OpReqType>& req,
                    const std::vector<TBlob>& out) {
  if (req[0] == OpReqType::kNullOp) return;
  MX_DTYPE_SWITCH(in[0].dtype, T, {
    const T* x = in[0].data<T>();
    T* y = out[0].data<T>();
    ForEachElement<kTile>(attrs, in[0].shape, [&](int64_t i, int64_t s) {
      Assign(y + i, req[0], x[s]);
    });
  });
}

// Inputs (out_grad, data); output data_grad.
template <bool kTile>
void BackwardCompute(const OpContext&, const NodeAttrs& attrs,
                     const std::vector<TBlob>& in,
                     const std::vector<OpReqType>& req,
                     const std::vector<TBlob>& out) {
  if (req[0] == OpReqType::kNullOp) return;
  MX_FLOAT_DTYPE_SWITCH(in[1].dtype, T, {
    using A = AccType<T>;
    const T* g = in[0].data<T>();
    std::vector<A> dx(static_cast<size_t>(in[1].Size()), A(0));
    ForEachElement<kTile>(attrs, in[1].shape, [&](int64_t i, int64_t s) {
      dx[s] += static_cast<A>(g[i]);
    });
    T* dst = out[0].data<T>();
    for (size_t i = 0; i < dx.size(); ++i) Assign(dst + i, req[0], dx[i]);
  });
}

template <bool kTile>
void BackwardShape(const NodeAttrs& attrs, std::vector<TShape>* in,
                   std::vector<TShape>* out) {
  AssignShape(attrs, out, 0, (*in)[1], true);
  if ((*in)[1].is_known()) {
    AssignShape(attrs, in, 0, MappingOf<kTile>(attrs, (*in)[1]).out, false);
  }
}

void BackwardType(const NodeAttrs& attrs, std::vector<DType>* in,
                  std::vector<DType>* out) {
  AssignType(attrs, in, 0, (*in)[1], false);
  AssignType(attrs, out, 0, (*in)[1], true);
}

void SameTypeForward(const NodeAttrs& attrs, std::vector<DType>* in,
                     std::vector<DType>* out) {
  SameType(attrs, in, out);
}

MX_REGISTER_OP(repeat)
    .Describe(
        "Each element `repeats` times along `axis` (over the flattened "
        "array when axis is None).")
    .SetNumInputs(1)
    .SetInputNames({"data"})
    .SetParams<RepeatParam>()
    .SetInferShape(ForwardShape<false>)
    .SetInferType(SameTypeForward)
    .SetCompute(Context::kCPU, ForwardCompute<false>);

MX_REGISTER_OP(tile)
    .Describe(
        "The array repeated reps[i] times along each axis (the shorter of "
        "data's shape and reps padded with leading 1s).")
    .SetNumInputs(1)
    .SetInputNames({"data"})
    .SetParams<TileParam>()
    .SetInferShape(ForwardShape<true>)
    .SetInferType(SameTypeForward)
    .SetCompute(Context::kCPU, ForwardCompute<true>);

MX_REGISTER_OP(_backward_repeat)
    .Describe("Gradient of repeat: (out_grad, data) -> data_grad.")
    .SetNumInputs(2)
    .SetInputNames({"out_grad", "data"})
    .SetParams<RepeatParam>()
    .SetInferShape(BackwardShape<false>)
    .SetInferType(BackwardType)
    .SetCompute(Context::kCPU, BackwardCompute<false>);

MX_REGISTER_OP(_backward_tile)
    .Describe("Gradient of tile: (out_grad, data) -> data_grad.")
    .SetNumInputs(2)
    .SetInputNames({"out_grad", "data"})
    .SetParams<TileParam>()
    .SetInferShape(BackwardShape<true>)
    .SetInferType(BackwardType)
    .SetCompute(Context::kCPU, BackwardCompute<true>);

[[maybe_unused]] const bool kGradientsRegistered = [] {
  for (const char* op : {"repeat", "tile"}) {
    const std::string bwd = std::string("_backward_") + op;
    SetGradient(op, [bwd](GradBuilder& b, const std::vector<NodeEntry>& g) {
      return std::vector<NodeEntry>{b.Op(bwd, {g[0], b.x()}, b.n->attrs.dict)};
    });
  }
  return true;
}();

}  // namespace
}  // namespace cpu
}  // namespace mx
