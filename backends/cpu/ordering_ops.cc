// argsort, sort and topk: one order of each line along an axis (the
// flattened array when axis is None), ties kept in input order and NaN
// last, ascending or descending; as MXNet's ordering ops. topk returns
// the first k of that order as values, indices, both, or a 0/1 mask of the
// data's shape. _backward_topk sends the values' gradient back to where
// they came from (sort's too); indices and masks have zero gradient.
#include <algorithm>
#include <numeric>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "backends/common/mxnet_math.h"
#include "backends/cpu/grad_util.h"
#include "backends/cpu/kernel_util.h"
#include "base/error.h"

namespace mx {
namespace cpu {
namespace {

enum class Returns { kValue, kIndices, kMask, kBoth };

// What an ordering op computes, whichever of the three it is.
struct Ordering {
  std::optional<int> axis;
  int64_t k = 0;  // < 1: the whole line.
  Returns ret = Returns::kIndices;
  bool ascend = true;
  DType index_dtype = DType::kFloat32;
};

struct ArgsortParam {
  std::optional<int> axis = -1;
  bool is_ascend = true;
  DType dtype = DType::kFloat32;
  static void Declare(ParamSchema<ArgsortParam>* s) {
    s->Field("axis", &ArgsortParam::axis)
        .Describe("None: sort the flattened array.");
    s->Field("is_ascend", &ArgsortParam::is_ascend);
    s->Field("dtype", &ArgsortParam::dtype).Describe("Of the indices.");
  }
  Ordering ordering() const {
    return {axis, 0, Returns::kIndices, is_ascend, dtype};
  }
};

struct SortParam {
  std::optional<int> axis = -1;
  bool is_ascend = true;
  static void Declare(ParamSchema<SortParam>* s) {
    s->Field("axis", &SortParam::axis)
        .Describe("None: sort the flattened array.");
    s->Field("is_ascend", &SortParam::is_ascend);
  }
  // The hidden indices (for the gradient) are int64: always exact.
  Ordering ordering() const {
    return {axis, 0, Returns::kValue, is_ascend, DType::kInt64};
  }
};

struct TopKParam {
  std::optional<int> axis = -1;
  int k = 1;
  std::string ret_typ = "indices";
  bool is_ascend = false;
  DType dtype = DType::kFloat32;
  static void Declare(ParamSchema<TopKParam>* s) {
    s->Field("axis", &TopKParam::axis).Describe("None: the flattened array.");
    s->Field("k", &TopKParam::k)
        .Describe("How many to keep; < 1: the whole line (a full sort).");
    s->Field("ret_typ", &TopKParam::ret_typ)
        .Choices({"value", "indices", "mask", "both"})
        .Describe(
            "value, indices, both (values then indices), or mask (1 where "
            "the kept elements are, data's shape).");
    s->Field("is_ascend", &TopKParam::is_ascend)
        .Describe("Keep the k smallest rather than the k largest.");
    s->Field("dtype", &TopKParam::dtype)
        .Describe("Of the indices (ret_typ indices or both).");
  }
  Ordering ordering() const {
    Ordering o{axis, k, Returns::kIndices, is_ascend, dtype};
    if (ret_typ == "value") o.ret = Returns::kValue;
    if (ret_typ == "mask") o.ret = Returns::kMask;
    if (ret_typ == "both") o.ret = Returns::kBoth;
    // Hidden indices of "value" (for the gradient) are int64: always exact.
    if (o.ret == Returns::kValue) o.index_dtype = DType::kInt64;
    return o;
  }
};

// Lines of the order: (outer, len, inner) around the axis, and how many of
// each line the outputs keep.
struct Lines {
  int64_t outer, len, inner, keep;
};

Lines LinesOf(const NodeAttrs& attrs, const Ordering& o, const TShape& s) {
  Lines l{1, s.Size(), 1, 0};
  if (o.axis) {
    const int a = s.CheckAxis(*o.axis, OpLabel(attrs).c_str());
    l = {s.ProdDims(0, a), s[a], s.ProdDims(a + 1, s.ndim()), 0};
  }
  l.keep = o.k < 1 ? l.len : o.k;
  if (l.keep > l.len) {
    throw InvalidArgument(absl::StrCat(OpLabel(attrs), ": k=", o.k,
                                       " but the axis has ", l.len,
                                       " elements (data ", s.ToString(), ")"));
  }
  return l;
}

// The output shape of values and indices (the mask has the data's).
TShape KeptShape(const Ordering& o, const Lines& l, const TShape& data) {
  if (!o.axis) return TShape{l.keep};
  TShape s = data;
  s[data.CheckAxis(*o.axis, "")] = l.keep;
  return s;
}

// Output slots: values (-1: none), indices (-1: none).
int ValuesOut(const Ordering& o) {
  return o.ret == Returns::kValue || o.ret == Returns::kBoth ? 0 : -1;
}
int IndicesOut(const Ordering& o) {
  if (o.ret == Returns::kIndices) return 0;
  return ValuesOut(o) == 0 ? 1 : -1;
}

template <typename P>
Ordering OrderingOf(const NodeAttrs& attrs) {
  return attrs.get<P>().ordering();
}

template <typename P>
int NumOutputs(const NodeAttrs& attrs) {
  return IndicesOut(OrderingOf<P>(attrs)) == 1 ? 2 : 1;
}

template <typename P>
int NumVisibleOutputs(const NodeAttrs& attrs) {
  return OrderingOf<P>(attrs).ret == Returns::kBoth ? 2 : 1;
}

template <typename P>
void OrderShape(const NodeAttrs& attrs, std::vector<TShape>* in,
                std::vector<TShape>* out) {
  const TShape& d = (*in)[0];
  const Ordering o = OrderingOf<P>(attrs);
  if (!d.ndim_known()) return;
  if (o.axis) d.CheckAxis(*o.axis, OpLabel(attrs).c_str());
  if (!d.is_known()) return;
  const Lines l = LinesOf(attrs, o, d);
  if (o.ret == Returns::kMask) {
    AssignShape(attrs, out, 0, d, true);
    return;
  }
  for (size_t i = 0; i < out->size(); ++i) {
    AssignShape(attrs, out, static_cast<int>(i), KeptShape(o, l, d), true);
  }
}

template <typename P>
void OrderType(const NodeAttrs& attrs, std::vector<DType>* in,
               std::vector<DType>* out) {
  const Ordering o = OrderingOf<P>(attrs);
  const DType data = (*in)[0];
  if (data != DType::kUnknown) RequireNumeric(attrs, data);
  const int values = o.ret == Returns::kMask ? 0 : ValuesOut(o);
  if (values >= 0) {
    AssignType(attrs, out, values, data, true);
    AssignType(attrs, in, 0, (*out)[values], false);
  }
  if (IndicesOut(o) >= 0)
    AssignType(attrs, out, IndicesOut(o), o.index_dtype, true);
}

// Puts into (*all)[0, keep) the positions that come first in the stable
// order of one line of x (`len` elements `stride` apart), NaN last. The
// order is total (ties by position), so a partial sort gives the stable
// sort's first elements.
template <typename T>
void OrderLine(const T* x, int64_t len, int64_t stride, bool ascend,
               std::vector<int64_t>* all, int64_t keep) {
  using A = AccType<T>;
  const auto at = [&](int64_t i) { return static_cast<A>(x[i * stride]); };
  std::iota(all->begin(), all->end(), 0);
  const auto before = [&](int64_t a, int64_t b) {
    const A va = at(a), vb = at(b);
    if (IsNan(va) || IsNan(vb)) {
      if (IsNan(va) != IsNan(vb)) return IsNan(vb);
    } else if (va != vb) {
      return ascend ? va < vb : vb < va;
    }
    return a < b;
  };
  if (keep * 8 < len) {
    std::partial_sort(all->begin(), all->begin() + keep, all->end(), before);
  } else {
    std::sort(all->begin(), all->end(), before);
  }
}

// Every index up to len - 1 exact in the indices' dtype (float16 holds
// 2050 but not 2049), else InvalidArgument rather than rounded indices.
void RequireExactIndices(const NodeAttrs& attrs, DType dtype, int64_t len) {
  if (len - 1 > mx_math::LargestExactIndex(static_cast<int>(dtype))) {
    throw InvalidArgument(absl::StrCat(OpLabel(attrs),
                                       ": dtype=", DTypeName(dtype),
                                       " cannot hold indices up to ", len - 1));
  }
}

// The sort depends on the data's dtype and the indices on theirs: each is
// dispatched on its own (8 sorts compiled, not 8 x 8, and once for the
// three ops).
void ComputeOrdering(const NodeAttrs& attrs, const Ordering& o,
                     const std::vector<TBlob>& in,
                     const std::vector<OpReqType>& req,
                     const std::vector<TBlob>& out) {
  const Lines l = LinesOf(attrs, o, in[0].shape);
  const int values = ValuesOut(o), indices = IndicesOut(o);
  const bool mask = o.ret == Returns::kMask;
  if (indices >= 0) RequireExactIndices(attrs, out[indices].dtype, l.len);
  // Empty data leaves empty outputs, and lines of an empty axis (e.g. (0,
  // 2) along 0) would offset its null pointer (found by op_attrs_fuzzer).
  if (in[0].Size() == 0) return;
  std::vector<int64_t> order(static_cast<size_t>(l.len));
  for (int64_t line = 0; line < l.outer * l.inner; ++line) {
    const int64_t outer = line / l.inner, inner = line % l.inner;
    const int64_t base = outer * l.len * l.inner + inner;
    const int64_t kept = outer * l.keep * l.inner + inner;
    MX_DTYPE_SWITCH(in[0].dtype, T, {
      const T* x = in[0].data<T>() + base;
      OrderLine(x, l.len, l.inner, o.ascend, &order, l.keep);
      if (values >= 0) {
        T* y = out[values].data<T>() + kept;
        for (int64_t j = 0; j < l.keep; ++j) {
          Assign(y + j * l.inner, req[values], x[order[j] * l.inner]);
        }
      }
      if (mask) {
        // 0 everywhere then 1 at the kept: right for writes and additions.
        T* y = out[0].data<T>() + base;
        for (int64_t i = 0; i < l.len; ++i) {
          Assign(y + i * l.inner, req[0], 0);
        }
        for (int64_t j = 0; j < l.keep; ++j) {
          Assign(y + order[j] * l.inner, req[0], 1);
        }
      }
    });
    if (indices >= 0) {
      MX_DTYPE_SWITCH(out[indices].dtype, I, {
        I* y = out[indices].data<I>() + kept;
        for (int64_t j = 0; j < l.keep; ++j) {
          Assign(y + j * l.inner, req[indices], static_cast<I>(order[j]));
        }
      });
    }
  }
}

template <typename P>
void OrderCompute(const OpContext&, const NodeAttrs& attrs,
                  const std::vector<TBlob>& in,
                  const std::vector<OpReqType>& req,
                  const std::vector<TBlob>& out) {
  ComputeOrdering(attrs, OrderingOf<P>(attrs), in, req, out);
}

// ---- _backward_topk: (out_grad, indices, data) -> data_grad, the kept
// values' gradient added where they came from, zero elsewhere. ----

void BackwardShape(const NodeAttrs& attrs, std::vector<TShape>* in,
                   std::vector<TShape>* out) {
  const TShape& d = (*in)[2];
  if (!d.is_known()) return;
  Ordering o = OrderingOf<TopKParam>(attrs);
  o.k = 0;  // How many were kept is the indices' (or out_grad's) length.
  Lines l = LinesOf(attrs, o, d);
  const int axis = o.axis ? d.CheckAxis(*o.axis, OpLabel(attrs).c_str()) : 0;
  for (int i : {1, 0}) {
    const TShape& kept = (*in)[i];
    if (!kept.is_known()) continue;
    l.keep = !o.axis ? kept.Size() : kept.ndim() == d.ndim() ? kept[axis] : -1;
    if (l.keep < 0 || l.keep > l.len) {
      throw ShapeError(
          absl::StrCat(OpLabel(attrs), ": ", i ? "indices" : "out_grad", " ",
                       kept.ToString(), " do not fit data ", d.ToString()));
    }
    AssignShape(attrs, in, 0, KeptShape(o, l, d), false);
    AssignShape(attrs, in, 1, KeptShape(o, l, d), false);
    break;
  }
  AssignShape(attrs, out, 0, d, true);
}

void BackwardCompute(const OpContext&, const NodeAttrs& attrs,
                     const std::vector<TBlob>& in,
                     const std::vector<OpReqType>& req,
                     const std::vector<TBlob>& out) {
  if (req[0] == OpReqType::kNullOp) return;
  Ordering o = OrderingOf<TopKParam>(attrs);
  o.k = 0;
  Lines l = LinesOf(attrs, o, out[0].shape);
  l.keep = o.axis ? in[1].shape[out[0].shape.CheckAxis(*o.axis, "")]
                  : in[1].shape.Size();
  const std::vector<double> where = DoublesOf(in[1]);
  MX_DTYPE_SWITCH(out[0].dtype, T, {
    const T* g = in[0].data<T>();
    T* dx = out[0].data<T>();
    if (req[0] != OpReqType::kAddTo) {
      std::fill(dx, dx + out[0].shape.Size(), T(0));
    }
    for (int64_t line = 0; line < l.outer * l.inner; ++line) {
      const int64_t outer = line / l.inner, inner = line % l.inner;
      const int64_t base = outer * l.len * l.inner + inner;
      const int64_t kept = outer * l.keep * l.inner + inner;
      for (int64_t j = 0; j < l.keep; ++j) {
        const double at = where[kept + j * l.inner];
        if (!(at >= 0 && at < l.len && at == static_cast<int64_t>(at))) {
          throw InvalidArgument(absl::StrCat(OpLabel(attrs), ": index ", at,
                                             " outside [0, ", l.len, ")"));
        }
        T* d = dx + base + static_cast<int64_t>(at) * l.inner;
        Assign(d, OpReqType::kAddTo, g[kept + j * l.inner]);
      }
    }
  });
}

template <typename P>
void RegisterOrdering(const char* name, const char* doc) {
  OpRegistry::Get()
      ->Register(name)
      .Describe(doc)
      .SetNumInputs(1)
      .SetInputNames({"data"})
      .SetNumOutputs(NumOutputs<P>)
      .SetNumVisibleOutputs(NumVisibleOutputs<P>)
      .template SetParams<P>()
      .SetInferShape(OrderShape<P>)
      .SetInferType(OrderType<P>)
      .SetCompute(Context::kCPU, OrderCompute<P>);
}

[[maybe_unused]] const bool kRegistered = [] {
  RegisterOrdering<ArgsortParam>(
      "argsort",
      "Indices sorting data along axis (flattened when None); ties keep "
      "their order, NaN sorts last.");
  RegisterOrdering<SortParam>(
      "sort",
      "data sorted along axis (flattened when None), NaN last; a hidden "
      "second output holds the int64 indices.");
  RegisterOrdering<TopKParam>(
      "topk",
      "The k largest (smallest with is_ascend) along axis (flattened when "
      "None), in order, ties by position, NaN last: values, indices, both, "
      "or a mask.");
  OpRegistry::Get()
      ->Register("_backward_topk")
      .Describe(
          "Gradient of topk's and sort's values: (out_grad, indices, data) "
          "-> data_grad.")
      .SetNumInputs(3)
      .SetInputNames({"out_grad", "indices", "data"})
      .SetParams<TopKParam>()
      .SetInferShape(BackwardShape)
      .SetInferType([](const NodeAttrs& attrs, std::vector<DType>* in,
                       std::vector<DType>* out) {
        if ((*in)[1] != DType::kUnknown) {
          RequireIndexType(attrs, (*in)[1], 1, "indices");
        }
        AssignType(attrs, out, 0, (*in)[2], true);
        AssignType(attrs, out, 0, (*in)[0], true);
        AssignType(attrs, in, 0, (*out)[0], false);
        AssignType(attrs, in, 2, (*out)[0], false);
        if ((*out)[0] != DType::kUnknown) RequireNumeric(attrs, (*out)[0]);
      })
      .SetCompute(Context::kCPU, BackwardCompute);

  const auto zero = [](GradBuilder& b, const std::vector<NodeEntry>&) {
    return std::vector<NodeEntry>{b.Op("zeros_like", {b.x()})};
  };
  SetGradient("argsort", zero);
  // The values' gradient goes back through the hidden (or visible) indices.
  SetGradient("sort", [](GradBuilder& b, const std::vector<NodeEntry>& g) {
    AttrDict attrs = b.n->attrs.dict;
    attrs["k"] = "0";
    attrs["ret_typ"] = "value";
    return std::vector<NodeEntry>{
        b.Op("_backward_topk", {g[0], b.y(1), b.x()}, attrs)};
  });
  SetGradient("topk", [zero](GradBuilder& b, const std::vector<NodeEntry>& g) {
    const Ordering o = OrderingOf<TopKParam>(b.n->attrs);
    if (ValuesOut(o) < 0) return zero(b, g);
    return std::vector<NodeEntry>{
        b.Op("_backward_topk", {g[0], b.y(1), b.x()}, b.n->attrs.dict)};
  });
  return true;
}();

}  // namespace
}  // namespace cpu
}  // namespace mx
