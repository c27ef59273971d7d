// Ops joining several arrays or splitting one: Concat, stack, SliceChannel
// (split), add_n, and _split_like (Concat's gradient: pieces shaped like
// Concat's inputs). Gradients: each join's is the matching split, and back.
//
// Concat, stack and split move contiguous blocks: with `outer` the product
// of the dims before the axis, each input (or output) contributes one block
// per outer index.
#include <algorithm>
#include <cstring>
#include <optional>

#include "absl/strings/str_cat.h"
#include "backends/cpu/grad_util.h"
#include "backends/cpu/kernel_util.h"
#include "base/error.h"

namespace mx {
namespace cpu {
namespace {

constexpr int64_t kGrain = 1 << 14;

std::vector<std::string> ArgNames(int n) {
  std::vector<std::string> names;
  for (int i = 0; i < n; ++i) names.push_back(absl::StrCat("arg", i));
  return names;
}

// The inputs arg0 ... of an op counted by its parameter P's num_args.
template <typename P>
int NumArgsOf(const NodeAttrs& a) {
  return std::max(0, a.get<P>().num_args);
}
template <typename P>
std::vector<std::string> ArgNamesOf(const NodeAttrs& a) {
  return ArgNames(NumArgsOf<P>(a));
}

void RequireArgs(const NodeAttrs& attrs, int num_args) {
  if (num_args < 1) {
    throw InvalidArgument(absl::StrCat(OpLabel(attrs), ": num_args=", num_args,
                                       " but at least 1 input is required"));
  }
}

// The first shape of known rank among `a` then `b`, or null.
const TShape* FirstRanked(const std::vector<TShape>& a,
                          const std::vector<TShape>& b) {
  for (const auto* v : {&a, &b}) {
    for (const TShape& s : *v) {
      if (s.ndim_known()) return &s;
    }
  }
  return nullptr;
}

// ---- Concat. ----

struct ConcatParam {
  int num_args = 0;
  int dim = 1;
  // np.concatenate's axis=None: the inputs flattened and joined (set by
  // _npi_concatenate's parser, not an attribute).
  bool flatten = false;
  static void Declare(ParamSchema<ConcatParam>* s) {
    s->Field("num_args", &ConcatParam::num_args)
        .Required()
        .AtMost(kMaxOpArity)
        .Describe("number of inputs");
    s->Field("dim", &ConcatParam::dim).Describe("axis to join along");
  }
};

// axis=None: a vector of every input's elements.
void FlatConcatShape(const NodeAttrs& attrs, std::vector<TShape>* in,
                     std::vector<TShape>* out) {
  int64_t total = 0;
  for (const TShape& s : *in) {
    if (!s.is_known()) return;
    total += s.Size();
  }
  AssignShape(attrs, out, 0, TShape{total}, true);
}

void ConcatShape(const NodeAttrs& attrs, std::vector<TShape>* in,
                 std::vector<TShape>* out) {
  const ConcatParam& p = attrs.get<ConcatParam>();
  RequireArgs(attrs, p.num_args);
  if (p.flatten) {
    FlatConcatShape(attrs, in, out);
    return;
  }
  const TShape* ranked = FirstRanked(*in, *out);
  if (ranked == nullptr) return;
  const int nd = ranked->ndim();
  const int dim = ranked->CheckAxis(p.dim, OpLabel(attrs).c_str());
  // Every dim but `dim` is shared by all inputs and the output.
  TShape common = TShape::Filled(nd, -1);
  int first = -1;
  for (int i = 0; i < p.num_args; ++i) {
    TShape s = (*in)[i];
    if (s.ndim_known() && s.ndim() == nd) s[dim] = -1;
    if (!MergeShape(&common, s)) {
      const std::string other =
          first >= 0
              ? absl::StrCat("input ", first, " (arg", first, ") has shape ",
                             (*in)[first].ToString())
              : absl::StrCat("the output has shape ", (*out)[0].ToString());
      throw ShapeError(absl::StrCat(OpLabel(attrs), ": input ", i, " (arg", i,
                                    ") has shape ", (*in)[i].ToString(),
                                    " but ", other,
                                    "; shapes must match except on dim ", dim));
    }
    if (first < 0 && s.ndim_known()) first = i;
  }
  TShape o = (*out)[0];
  if (o.ndim_known() && o.ndim() == nd) o[dim] = -1;
  if (!MergeShape(&common, o)) {
    AssignShape(attrs, out, 0, common, true);  // Throws, naming the output.
  }
  // The joined length: the sum, or one unknown input length from the output.
  int64_t total = 0;
  int unknown = -1, n_unknown = 0;
  for (int i = 0; i < p.num_args; ++i) {
    const TShape& s = (*in)[i];
    if (s.ndim_known() && s[dim] >= 0) {
      total += s[dim];
    } else {
      unknown = i;
      ++n_unknown;
    }
  }
  for (int i = 0; i < p.num_args; ++i) {
    TShape s = common;
    if ((*in)[i].ndim_known()) s[dim] = (*in)[i][dim];
    const int64_t out_len = (*out)[0].ndim_known() ? (*out)[0][dim] : -1;
    if (i == unknown && n_unknown == 1 && out_len >= total) {
      s[dim] = out_len - total;
    }
    AssignShape(attrs, in, i, s, false);
  }
  TShape s = common;
  s[dim] = n_unknown == 0 ? total : -1;
  AssignShape(attrs, out, 0, s, true);
}

void ConcatCompute(const OpContext&, const NodeAttrs& attrs,
                   const std::vector<TBlob>& in,
                   const std::vector<OpReqType>& req,
                   const std::vector<TBlob>& out) {
  const TShape& os = out[0].shape;
  const bool flat = attrs.get<ConcatParam>().flatten;
  const int dim =
      flat ? 0 : os.CheckAxis(attrs.get<ConcatParam>().dim, "Concat");
  const int64_t outer = os.ProdDims(0, dim);
  const int64_t inner = os.ProdDims(dim + 1, os.ndim());
  const int64_t out_block = os[dim] * inner;
  if (out[0].Size() == 0) return;
  MX_DTYPE_SWITCH(out[0].dtype, T, {
    T* y = out[0].data<T>();
    int64_t offset = 0;
    for (const TBlob& b : in) {
      // Flattened, each input is one block of the (total,) output.
      const int64_t block = flat ? b.Size() : b.shape[dim] * inner;
      const T* x = b.data<T>();
      if (block > 0) {
        ParallelFor(outer, std::max<int64_t>(1, kGrain / block),
                    [&](int64_t s, int64_t e) {
                      for (int64_t o = s; o < e; ++o) {
                        CopyBlock(x + o * block, y + o * out_block + offset,
                                  block, req[0]);
                      }
                    });
      }
      offset += block;
    }
  });
}

MX_REGISTER_OP(Concat)
    .Describe("Joins arrays along an existing axis `dim`.")
    .SetParams<ConcatParam>()
    .SetNumInputs(NumArgsOf<ConcatParam>)
    .SetKeyVarNumArgs("num_args")
    .SetInputNames(ArgNamesOf<ConcatParam>)
    .SetInferShape(ConcatShape)
    .SetInferType(SameType)
    .SetCompute(Context::kCPU, ConcatCompute)
    .AddAlias("concat")
    // Gluon's recurrent layers join their flattened parameters with it.
    .AddAlias("_rnn_param_concat")
    .AddAlias("_npi_rnn_param_concat");

// MXNet 2's np.concatenate: Concat with `axis` (default 0) for `dim`, so
// the same shape rules, kernel and gradient serve (the attributes parse to
// a ConcatParam); axis=None joins the flattened arrays into a vector.
struct NumpyConcatParam {
  int num_args = 0;
  std::optional<int> axis = 0;
  static void Declare(ParamSchema<NumpyConcatParam>* s) {
    s->Field("num_args", &NumpyConcatParam::num_args)
        .Required()
        .AtMost(kMaxOpArity)
        .Describe("number of inputs");
    s->Field("axis", &NumpyConcatParam::axis).Describe("axis to join along");
  }
};

MX_REGISTER_OP(_npi_concatenate)
    .Describe("Joins arrays along an existing axis (NumPy's concatenate).")
    .SetParamParser([](const std::string& op, const AttrDict& dict) {
      const NumpyConcatParam p = ParseParams<NumpyConcatParam>(op, dict);
      ConcatParam c;
      c.num_args = p.num_args;
      c.dim = p.axis.value_or(0);
      c.flatten = !p.axis;
      return std::any(c);
    })
    .SetNumInputs(NumArgsOf<ConcatParam>)
    .SetKeyVarNumArgs("num_args")
    .SetInputNames(ArgNamesOf<ConcatParam>)
    .SetInferShape(ConcatShape)
    .SetInferType(SameType)
    .SetCompute(Context::kCPU, ConcatCompute);

// ---- stack. ----

struct StackParam {
  int num_args = 0;
  int axis = 0;
  static void Declare(ParamSchema<StackParam>* s) {
    s->Field("num_args", &StackParam::num_args)
        .Required()
        .AtMost(kMaxOpArity)
        .Describe("number of inputs");
    s->Field("axis", &StackParam::axis)
        .Describe("position of the new axis, in [-ndim-1, ndim]");
  }
};

// The new axis for inputs of rank nd; throws when out of range.
int StackAxis(const NodeAttrs& attrs, int nd, const TShape& shape) {
  const int axis = attrs.get<StackParam>().axis;
  const int a = axis < 0 ? axis + nd + 1 : axis;
  if (a < 0 || a > nd) {
    throw ShapeError(absl::StrCat(OpLabel(attrs), ": axis=", axis,
                                  " is out of range for inputs of shape ",
                                  shape.ToString(), "; allowed: [", -nd - 1,
                                  ", ", nd, "]"));
  }
  return a;
}

void StackShape(const NodeAttrs& attrs, std::vector<TShape>* in,
                std::vector<TShape>* out) {
  const int n = attrs.get<StackParam>().num_args;
  RequireArgs(attrs, n);
  TShape common;
  for (int i = 0; i < n; ++i) {
    if (!MergeShape(&common, (*in)[i])) {
      throw ShapeError(absl::StrCat(
          OpLabel(attrs), ": input ", i, " (arg", i, ") has shape ",
          (*in)[i].ToString(), " but the inputs before it have shape ",
          common.ToString(), "; all inputs must have one shape"));
    }
  }
  const TShape& o = (*out)[0];
  if (!common.ndim_known() && o.ndim_known() && o.ndim() > 0) {
    // Recover the input shape from the output.
    const int a =
        StackAxis(attrs, o.ndim() - 1, TShape::Filled(o.ndim() - 1, -1));
    std::vector<int64_t> dims(o.begin(), o.end());
    dims.erase(dims.begin() + a);
    common = TShape(dims);
  }
  if (!common.ndim_known()) return;
  const int a = StackAxis(attrs, common.ndim(), common);
  for (int i = 0; i < n; ++i) AssignShape(attrs, in, i, common, false);
  std::vector<int64_t> dims(common.begin(), common.end());
  dims.insert(dims.begin() + a, n);
  AssignShape(attrs, out, 0, TShape(dims), true);
}

void StackCompute(const OpContext&, const NodeAttrs& attrs,
                  const std::vector<TBlob>& in,
                  const std::vector<OpReqType>& req,
                  const std::vector<TBlob>& out) {
  const TShape& is = in[0].shape;
  const int a = StackAxis(attrs, is.ndim(), is);
  const int64_t outer = is.ProdDims(0, a);
  const int64_t block = is.ProdDims(a, is.ndim());
  const int64_t n = static_cast<int64_t>(in.size());
  if (out[0].Size() == 0) return;
  MX_DTYPE_SWITCH(out[0].dtype, T, {
    T* y = out[0].data<T>();
    ParallelFor(outer * n, std::max<int64_t>(1, kGrain / block),
                [&](int64_t s, int64_t e) {
                  for (int64_t k = s; k < e; ++k) {
                    const T* x = in[k % n].data<T>();
                    CopyBlock(x + (k / n) * block, y + k * block, block,
                              req[0]);
                  }
                });
  });
}

MX_REGISTER_OP(stack)
    .AddAlias("_npi_stack")
    .Describe("Joins same-shape arrays along a new axis.")
    .SetParams<StackParam>()
    .SetNumInputs(NumArgsOf<StackParam>)
    .SetKeyVarNumArgs("num_args")
    .SetInputNames(ArgNamesOf<StackParam>)
    .SetInferShape(StackShape)
    .SetInferType(SameType)
    .SetCompute(Context::kCPU, StackCompute);

// ---- SliceChannel (split). ----

struct SplitParam {
  int num_outputs = 0;
  int axis = 1;
  bool squeeze_axis = false;
  static void Declare(ParamSchema<SplitParam>* s) {
    s->Field("num_outputs", &SplitParam::num_outputs)
        .Required()
        .AtMost(kMaxOpArity)
        .Describe("number of equal pieces");
    s->Field("axis", &SplitParam::axis).Describe("axis to split");
    s->Field("squeeze_axis", &SplitParam::squeeze_axis)
        .Describe("drop the split axis (each piece must have length 1)");
  }
};

void SplitShape(const NodeAttrs& attrs, std::vector<TShape>* in,
                std::vector<TShape>* out) {
  const SplitParam& p = attrs.get<SplitParam>();
  const std::string label = OpLabel(attrs);
  if (p.num_outputs < 1) {
    throw InvalidArgument(absl::StrCat(label, ": num_outputs=", p.num_outputs,
                                       " but at least 1 is required"));
  }
  const TShape& s = (*in)[0];
  if (!s.ndim_known()) return;
  const int a = s.CheckAxis(p.axis, label.c_str());
  const int64_t len = s[a];
  std::vector<int64_t> dims(s.begin(), s.end());
  if (len >= 0) {
    if (len % p.num_outputs != 0) {
      throw ShapeError(absl::StrCat(
          label, ": input 0 (data) of shape ", s.ToString(), " has length ",
          len, " on axis ", a, ", which does not split into ", p.num_outputs,
          " equal pieces"));
    }
    if (p.squeeze_axis && len != p.num_outputs) {
      throw ShapeError(absl::StrCat(
          label,
          ": squeeze_axis needs pieces of length 1 but input 0 (data) "
          "of shape ",
          s.ToString(), " splits into ", p.num_outputs, " pieces of length ",
          len / p.num_outputs, " on axis ", a));
    }
    dims[a] = len / p.num_outputs;
  }
  if (p.squeeze_axis) dims.erase(dims.begin() + a);
  for (int i = 0; i < p.num_outputs; ++i) {
    AssignShape(attrs, out, i, TShape(dims), true);
  }
}

void SplitCompute(const OpContext&, const NodeAttrs& attrs,
                  const std::vector<TBlob>& in,
                  const std::vector<OpReqType>& req,
                  const std::vector<TBlob>& out) {
  const TShape& is = in[0].shape;
  const int a = is.CheckAxis(attrs.get<SplitParam>().axis, "SliceChannel");
  const int64_t n = static_cast<int64_t>(out.size());
  const int64_t piece = is[a] / n;
  std::vector<std::pair<int64_t, int64_t>> pieces;
  for (int64_t k = 0; k < n; ++k)
    pieces.emplace_back(k * piece, (k + 1) * piece);
  SplitAlongAxis(in[0], a, pieces, req, out);
}

MX_REGISTER_OP(SliceChannel)
    .Describe("Splits an array into equal pieces along an axis.")
    .SetNumInputs(1)
    .SetInputNames({"data"})
    .SetParams<SplitParam>()
    .SetNumOutputs([](const NodeAttrs& a) {
      return std::max(0, a.get<SplitParam>().num_outputs);
    })
    .SetInferShape(SplitShape)
    .SetInferType(SameType)
    .SetCompute(Context::kCPU, SplitCompute)
    .AddAlias("split");

// ---- add_n. ----

struct AddNParam {
  int num_args = 0;
  static void Declare(ParamSchema<AddNParam>* s) {
    s->Field("num_args", &AddNParam::num_args)
        .Required()
        .AtMost(kMaxOpArity)
        .Describe("number of inputs");
  }
};

// Sums accumulate in double for floats and in wrapping 64-bit integers
// otherwise (bool: any input true).
template <typename T>
using AddNAcc = std::conditional_t<std::is_integral_v<T>, uint64_t, double>;

void AddNCompute(const OpContext&, const NodeAttrs&,
                 const std::vector<TBlob>& in,
                 const std::vector<OpReqType>& req,
                 const std::vector<TBlob>& out) {
  const OpReqType r = req[0];
  if (r == OpReqType::kNullOp) return;
  MX_DTYPE_SWITCH(out[0].dtype, T, {
    using Acc = AddNAcc<T>;
    std::vector<const T*> xs;
    for (const TBlob& b : in) xs.push_back(b.data<T>());
    T* y = out[0].data<T>();
    ParallelFor(out[0].Size(), kGrain / static_cast<int64_t>(xs.size()),
                [&](int64_t s, int64_t e) {
                  for (int64_t i = s; i < e; ++i) {
                    Acc acc = 0;
                    for (const T* x : xs) {
                      acc += static_cast<Acc>(static_cast<AccType<T>>(x[i]));
                    }
                    if constexpr (std::is_same_v<T, bool>) {
                      Assign(y + i, r, acc != 0);
                    } else if constexpr (std::is_integral_v<T>) {
                      Assign(y + i, r, static_cast<T>(acc));
                    } else {
                      Assign(y + i, r, static_cast<AccType<T>>(acc));
                    }
                  }
                });
  });
}

MX_REGISTER_OP(add_n)
    .Describe("Elementwise sum of same-shape, same-dtype arrays.")
    .SetParams<AddNParam>()
    .SetNumInputs(NumArgsOf<AddNParam>)
    .SetKeyVarNumArgs("num_args")
    .SetInputNames(ArgNamesOf<AddNParam>)
    .SetInferShape([](const NodeAttrs& attrs, std::vector<TShape>* in,
                      std::vector<TShape>* out) {
      RequireArgs(attrs, attrs.get<AddNParam>().num_args);
      SameShape(attrs, in, out);
    })
    .SetInferType(SameType)
    .SetInplaceOption([](const NodeAttrs&) {
      return std::vector<std::pair<int, int>>{{0, 0}};
    })
    .SetCompute(Context::kCPU, AddNCompute)
    .AddAlias("ElementWiseSum");

// ---- _split_like. ----

// Inputs (data, like0, ..., like{n-1}); outputs the n consecutive pieces of
// data along `dim` whose shapes are the likes'.
void SplitLikeShape(const NodeAttrs& attrs, std::vector<TShape>* in,
                    std::vector<TShape>* out) {
  const ConcatParam& p = attrs.get<ConcatParam>();
  RequireArgs(attrs, p.num_args);
  for (int i = 0; i < p.num_args; ++i) {
    AssignShape(attrs, out, i, (*in)[i + 1], true);
    AssignShape(attrs, in, i + 1, (*out)[i], false);
  }
  // The likes joined must be the data: Concat's inference checks it.
  std::vector<TShape> pieces(in->begin() + 1, in->end());
  std::vector<TShape> joined{(*in)[0]};
  ConcatShape(attrs, &pieces, &joined);
  AssignShape(attrs, in, 0, joined[0], false);
}

void SplitLikeCompute(const OpContext&, const NodeAttrs& attrs,
                      const std::vector<TBlob>& in,
                      const std::vector<OpReqType>& req,
                      const std::vector<TBlob>& out) {
  const int dim =
      in[0].shape.CheckAxis(attrs.get<ConcatParam>().dim, "_split_like");
  std::vector<std::pair<int64_t, int64_t>> pieces;
  int64_t begin = 0;
  for (const TBlob& o : out) {
    pieces.emplace_back(begin, begin + o.shape[dim]);
    begin += o.shape[dim];
  }
  SplitAlongAxis(in[0], dim, pieces, req, out);
}

MX_REGISTER_OP(_split_like)
    .Describe(
        "Splits data along `dim` into pieces shaped like the other inputs "
        "(the gradient of Concat).")
    .SetParams<ConcatParam>()
    .SetNumInputs([](const NodeAttrs& a) {
      return std::max(0, a.get<ConcatParam>().num_args) + 1;
    })
    .SetNumOutputs([](const NodeAttrs& a) {
      return std::max(0, a.get<ConcatParam>().num_args);
    })
    .SetInputNames([](const NodeAttrs& a) {
      std::vector<std::string> names{"data"};
      for (int i = 0; i < a.get<ConcatParam>().num_args; ++i) {
        names.push_back(absl::StrCat("like", i));
      }
      return names;
    })
    .SetInferShape(SplitLikeShape)
    .SetInferType([](const NodeAttrs& attrs, std::vector<DType>* in,
                     std::vector<DType>* out) {
      for (size_t i = 0; i < out->size(); ++i) {
        AssignType(attrs, out, static_cast<int>(i), (*in)[0], true);
        AssignType(attrs, in, 0, (*out)[i], false);
      }
    })
    .SetCompute(Context::kCPU, SplitLikeCompute);

// ---- Gradients. ----

// The outputs of the node behind `e`.
std::vector<NodeEntry> Outputs(const NodeEntry& e, int n) {
  std::vector<NodeEntry> outs;
  for (int i = 0; i < n; ++i) {
    outs.push_back(NodeEntry{e.node, static_cast<uint32_t>(i), 0});
  }
  return outs;
}

[[maybe_unused]] const bool kGradientsRegistered = [] {
  using B = GradBuilder;
  using E = std::vector<NodeEntry>;
  // axis=None splits along the flattened inputs and reshapes the pieces
  // back.
  for (const char* op : {"Concat", "_npi_concatenate"}) {
    SetGradient(op, [](B& b, const E& g) {
      const ConcatParam& p = b.n->attrs.get<ConcatParam>();
      E in{g[0]};
      for (const NodeEntry& x : b.n->inputs) {
        in.push_back(p.flatten ? b.Op("Reshape", {x}, {{"shape", "(-1,)"}})
                               : x);
      }
      E pieces = Outputs(b.Op("_split_like", in,
                              {{"num_args", absl::StrCat(p.num_args)},
                               {"dim", p.flatten ? "0" : absl::StrCat(p.dim)}}),
                         p.num_args);
      if (p.flatten) {
        for (int i = 0; i < p.num_args; ++i) {
          pieces[i] = b.Op("reshape_like", {pieces[i], b.n->inputs[i]});
        }
      }
      return pieces;
    });
  }
  SetGradient("_split_like", [](B& b, const E& g) {
    const ConcatParam& p = b.n->attrs.get<ConcatParam>();
    E grads{b.Op("Concat", g,
                 {{"num_args", absl::StrCat(p.num_args)},
                  {"dim", absl::StrCat(p.dim)}})};
    grads.resize(b.n->inputs.size());  // The likes get none.
    return grads;
  });
  // stack's axis counts in the output's rank, as split's does.
  SetGradient("stack", [](B& b, const E& g) {
    const StackParam& p = b.n->attrs.get<StackParam>();
    return Outputs(b.Op("SliceChannel", {g[0]},
                        {{"num_outputs", absl::StrCat(p.num_args)},
                         {"axis", absl::StrCat(p.axis)},
                         {"squeeze_axis", "1"}}),
                   p.num_args);
  });
  SetGradient("SliceChannel", [](B& b, const E& g) {
    const SplitParam& p = b.n->attrs.get<SplitParam>();
    const std::string n = absl::StrCat(p.num_outputs);
    const std::string axis = absl::StrCat(p.axis);
    if (p.squeeze_axis) {
      return E{b.Op("stack", g, {{"num_args", n}, {"axis", axis}})};
    }
    return E{b.Op("Concat", g, {{"num_args", n}, {"dim", axis}})};
  });
  SetGradient("add_n",
              [](B& b, const E& g) { return E(b.n->inputs.size(), g[0]); });
  return true;
}();

}  // namespace
}  // namespace cpu
}  // namespace mx
