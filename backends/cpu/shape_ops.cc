// Ops that keep the data and change the shape: Reshape (with MXNet's special
// codes), Flatten, expand_dims, squeeze and reshape_like; and Cast, which
// keeps the shape and changes the dtype (_cast_like: to another array's;
// amp_cast and amp_multicast: MXNet's mixed-precision casts).
// The gradients are the inverse reshape or cast, of the gradient.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/types/span.h"
#include "backends/cpu/grad_util.h"
#include "backends/cpu/kernel_util.h"
#include "base/error.h"
#include "ndarray/reshape.h"

namespace mx {
namespace cpu {
namespace {

constexpr int64_t kGrain = 1 << 14;

// ---- Kernels shared by the ops of this file. ----

// out = in, element for element (same size, same dtype).
void CopyCompute(const OpContext&, const NodeAttrs&,
                 const std::vector<TBlob>& in,
                 const std::vector<OpReqType>& req,
                 const std::vector<TBlob>& out) {
  const int64_t n = out[0].Size();
  const OpReqType r = req[0];
  if (n == 0 || r == OpReqType::kNullOp) return;
  if (r == OpReqType::kWriteInplace && in[0].dptr == out[0].dptr) return;
  MX_DTYPE_SWITCH(in[0].dtype, T, {
    const T* x = in[0].data<T>();
    T* y = out[0].data<T>();
    if (r == OpReqType::kAddTo) {
      ParallelFor(n, kGrain, [&](int64_t b, int64_t e) {
        for (int64_t i = b; i < e; ++i) Assign(y + i, r, x[i]);
      });
    } else {
      std::memmove(y, x, static_cast<size_t>(n) * sizeof(T));
    }
  });
}

std::vector<std::pair<int, int>> InplaceFirst(const NodeAttrs&) {
  return {{0, 0}};
}

// Output shape from a known input shape through `fn`; partial inputs are
// left for later.
template <typename F>
void ShapeFromKnownInput(const NodeAttrs& attrs, std::vector<TShape>* in,
                         std::vector<TShape>* out, F fn) {
  if ((*in)[0].is_known()) AssignShape(attrs, out, 0, fn((*in)[0]), true);
}

std::vector<bool> AxisSet(const NodeAttrs& attrs, const TShape& shape,
                          const TShape& axes, const char* key) {
  std::vector<bool> seen(shape.ndim(), false);
  const std::string label = OpLabel(attrs);
  for (int64_t a : axes) {
    const int d = shape.CheckAxis(static_cast<int>(a), label.c_str());
    if (seen[d]) {
      throw InvalidArgument(absl::StrCat(label, ": ", key, "=", axes.ToString(),
                                         " repeats axis ", d, " (input shape ",
                                         shape.ToString(), ")"));
    }
    seen[d] = true;
  }
  return seen;
}

// ---- Reshape. ----

struct ReshapeParam {
  TShape shape;
  bool reverse = false;
  static void Declare(ParamSchema<ReshapeParam>* s) {
    s->Field("shape", &ReshapeParam::shape)
        .Required()
        .Describe(
            "target; 0 copies a dim, -1 infers one, -2 copies the rest, -3 "
            "merges two, -4 splits one into the next two values");
    s->Field("reverse", &ReshapeParam::reverse)
        .Describe("apply the codes from the right");
  }
};

TShape ReshapeTarget(const NodeAttrs& attrs, const TShape& ishape) {
  const ReshapeParam& p = attrs.get<ReshapeParam>();
  return InferReshape(ishape, p.shape, p.reverse,
                      absl::StrCat(OpLabel(attrs), ", input 0 (data)"));
}

MX_REGISTER_OP(Reshape)
    .Describe("Same data, new shape (MXNet's codes 0, -1, -2, -3, -4).")
    .SetNumInputs(1)
    .SetInputNames({"data"})
    .SetParams<ReshapeParam>()
    .SetInferShape([](const NodeAttrs& attrs, std::vector<TShape>* in,
                      std::vector<TShape>* out) {
      ShapeFromKnownInput(attrs, in, out, [&](const TShape& s) {
        return ReshapeTarget(attrs, s);
      });
    })
    .SetInferType(SameType)
    .SetInplaceOption(InplaceFirst)
    .SetCompute(Context::kCPU, CopyCompute)
    .AddAlias("reshape");

// MXNet 2's NumPy-interface reshapes: npx.reshape's codes (-1 ... -6) and
// NumPy's plain one (-1 only). Only C order, as MXNet.
struct NumpyReshapeParam {
  TShape newshape;
  bool reverse = false;
  std::string order = "C";
  static void Declare(ParamSchema<NumpyReshapeParam>* s) {
    s->Field("newshape", &NumpyReshapeParam::newshape).Required();
    s->Field("reverse", &NumpyReshapeParam::reverse)
        .Describe("apply the codes from the right (_npx_reshape only)");
    s->Field("order", &NumpyReshapeParam::order).Choices({"C"});
  }
};

template <bool kNpx>
void RegisterNumpyReshape(const char* name) {
  OpRegistry::Get()
      ->Register(name)
      .Describe(kNpx ? "Same data, new shape (npx.reshape's codes -1 ... -6)."
                     : "Same data, new shape (NumPy's: one -1 inferred).")
      .SetNumInputs(1)
      .SetInputNames({"a"})
      .SetParams<NumpyReshapeParam>()
      .SetInferShape([](const NodeAttrs& attrs, std::vector<TShape>* in,
                        std::vector<TShape>* out) {
        const NumpyReshapeParam& p = attrs.get<NumpyReshapeParam>();
        if (!kNpx && p.reverse) {
          throw InvalidArgument(
              absl::StrCat(OpLabel(attrs), ": reverse is _npx_reshape's"));
        }
        ShapeFromKnownInput(attrs, in, out, [&](const TShape& s) {
          const std::string who = absl::StrCat(OpLabel(attrs), ", input 0 (a)");
          return kNpx ? InferNumpyXReshape(s, p.newshape, p.reverse, who)
                      : InferNumpyReshape(s, p.newshape, who);
        });
      })
      .SetInferType(SameType)
      .SetInplaceOption(InplaceFirst)
      .SetCompute(Context::kCPU, CopyCompute);
}

[[maybe_unused]] const bool kNumpyReshapeRegistered = [] {
  RegisterNumpyReshape<true>("_npx_reshape");
  OpRegistry::Get()->Mutable("_npx_reshape").AddAlias("_npi_reshape");
  RegisterNumpyReshape<false>("_np_reshape");
  return true;
}();

// ---- Flatten, expand_dims, squeeze. ----

MX_REGISTER_OP(Flatten)
    .Describe("Collapses all but the first axis: (N, prod(rest)).")
    .SetNumInputs(1)
    .SetInputNames({"data"})
    .SetInferShape([](const NodeAttrs& attrs, std::vector<TShape>* in,
                      std::vector<TShape>* out) {
      const TShape& s = (*in)[0];
      if (!s.ndim_known()) return;
      if (s.ndim() == 0) {
        throw ShapeError(absl::StrCat(OpLabel(attrs),
                                      ": input 0 (data) has shape () but at "
                                      "least 1 dim is required"));
      }
      int64_t rest = 1;
      for (int d = 1; d < s.ndim(); ++d) rest = s[d] < 0 ? -1 : rest * s[d];
      AssignShape(attrs, out, 0, TShape{s[0], rest}, true);
    })
    .SetInferType(SameType)
    .SetInplaceOption(InplaceFirst)
    .SetCompute(Context::kCPU, CopyCompute)
    .AddAlias("flatten");

// Gradients reshape back to the input's shape, so they need no shape
// arithmetic at graph-building time.
MX_REGISTER_OP(reshape_like)
    .Describe("lhs's data in rhs's shape (the sizes must match).")
    .SetNumInputs(2)
    .SetInputNames({"lhs", "rhs"})
    .SetInferShape([](const NodeAttrs& attrs, std::vector<TShape>* in,
                      std::vector<TShape>* out) {
      const TShape &l = (*in)[0], &r = (*in)[1];
      if (l.is_known() && r.is_known() && l.Size() != r.Size()) {
        throw ShapeError(absl::StrCat(
            OpLabel(attrs), ": input 0 (lhs) has shape ", l.ToString(), " (",
            l.Size(), " elements) but input 1 (rhs) has shape ", r.ToString(),
            " (", r.Size(), " elements); the sizes must match"));
      }
      AssignShape(attrs, out, 0, r, true);
      AssignShape(attrs, in, 1, (*out)[0], false);
    })
    .SetInferType([](const NodeAttrs& attrs, std::vector<DType>* in,
                     std::vector<DType>* out) {
      AssignType(attrs, out, 0, (*in)[0], true);
      AssignType(attrs, in, 0, (*out)[0], false);
    })
    .SetInplaceOption(InplaceFirst)
    .SetCompute(Context::kCPU, CopyCompute);

struct ExpandDimsParam {
  int axis = 0;
  static void Declare(ParamSchema<ExpandDimsParam>* s) {
    s->Field("axis", &ExpandDimsParam::axis)
        .Required()
        .Describe("position of the new axis, in [-ndim-1, ndim]");
  }
};

MX_REGISTER_OP(expand_dims)
    .AddAlias("_npi_expand_dims")
    .Describe("Inserts an axis of length 1.")
    .SetNumInputs(1)
    .SetInputNames({"data"})
    .SetParams<ExpandDimsParam>()
    .SetInferShape([](const NodeAttrs& attrs, std::vector<TShape>* in,
                      std::vector<TShape>* out) {
      const TShape& s = (*in)[0];
      if (!s.ndim_known()) return;
      const int axis = attrs.get<ExpandDimsParam>().axis;
      const int nd = s.ndim();
      const int a = axis < 0 ? axis + nd + 1 : axis;
      if (a < 0 || a > nd) {
        throw ShapeError(absl::StrCat(OpLabel(attrs), ": axis=", axis,
                                      " is out of range for input 0 (data) "
                                      "of shape ",
                                      s.ToString(), "; allowed: [", -nd - 1,
                                      ", ", nd, "]"));
      }
      std::vector<int64_t> dims(s.begin(), s.end());
      dims.insert(dims.begin() + a, 1);
      AssignShape(attrs, out, 0, TShape(dims), true);
    })
    .SetInferType(SameType)
    .SetInplaceOption(InplaceFirst)
    .SetCompute(Context::kCPU, CopyCompute);

struct SqueezeParam {
  std::optional<TShape> axis;
  static void Declare(ParamSchema<SqueezeParam>* s) {
    s->Field("axis", &SqueezeParam::axis)
        .Describe("axes of length 1 to drop; none drops every such axis");
  }
};

// The dropped axes' output shape. MXNet's legacy squeeze keeps one axis
// when every axis would go ((1, 1) -> (1,), as its SqueezeShape does);
// NumPy's (_npi_squeeze) leaves a 0-d array.
void SqueezeShape(const NodeAttrs& attrs, std::vector<TShape>* in,
                  std::vector<TShape>* out, bool keep_one_axis) {
  const TShape& s = (*in)[0];
  if (!s.ndim_known()) return;
  const std::optional<TShape>& axis = attrs.get<SqueezeParam>().axis;
  std::vector<bool> drop(s.ndim(), false);
  if (axis && axis->ndim() > 0) {
    drop = AxisSet(attrs, s, *axis, "axis");
    for (int d = 0; d < s.ndim(); ++d) {
      if (drop[d] && s[d] != 1 && s[d] >= 0) {
        throw ShapeError(
            absl::StrCat(OpLabel(attrs), ": cannot squeeze axis ", d,
                         " of length ", s[d], " (input 0 (data) has shape ",
                         s.ToString(), ", axis=", axis->ToString(), ")"));
      }
    }
  } else {
    for (int d = 0; d < s.ndim(); ++d) {
      if (s[d] < 0) return;  // Cannot tell yet whether it is dropped.
      drop[d] = s[d] == 1;
    }
  }
  std::vector<int64_t> dims;
  for (int d = 0; d < s.ndim(); ++d) {
    if (!drop[d]) dims.push_back(s[d]);
  }
  if (dims.empty() && keep_one_axis) dims.push_back(1);
  AssignShape(attrs, out, 0, TShape(dims), true);
}

// squeeze (MXNet's legacy rule, keep_one_axis) and _npi_squeeze (NumPy's):
// one registration, the shape rule differing.
void RegisterSqueeze(const char* name, bool keep_one_axis, const char* doc) {
  OpRegistry::Get()
      ->Register(name)
      .Describe(doc)
      .SetNumInputs(1)
      .SetInputNames({"data"})
      .SetParams<SqueezeParam>()
      .SetInferShape([keep_one_axis](const NodeAttrs& attrs,
                                     std::vector<TShape>* in,
                                     std::vector<TShape>* out) {
        SqueezeShape(attrs, in, out, keep_one_axis);
      })
      .SetInferType(SameType)
      .SetInplaceOption(InplaceFirst)
      .SetCompute(Context::kCPU, CopyCompute);
}

[[maybe_unused]] const bool kSqueezeRegistered = [] {
  RegisterSqueeze("squeeze", /*keep_one_axis=*/true,
                  "Drops axes of length 1; keeps one if all would go.");
  RegisterSqueeze("_npi_squeeze", /*keep_one_axis=*/false,
                  "NumPy's squeeze: drops axes of length 1, down to 0-d.");
  return true;
}();

// ---- Cast. ----

struct CastParam {
  DType dtype = DType::kFloat32;
  static void Declare(ParamSchema<CastParam>* s) {
    s->Field("dtype", &CastParam::dtype).Required().Describe("output dtype");
  }
};

void CastCompute(const OpContext& ctx, const NodeAttrs& attrs,
                 const std::vector<TBlob>& in,
                 const std::vector<OpReqType>& req,
                 const std::vector<TBlob>& out) {
  if (in[0].dtype == out[0].dtype) return CopyCompute(ctx, attrs, in, req, out);
  ConvertBlob(in[0], req[0], out[0]);
}

MX_REGISTER_OP(Cast)
    .Describe(
        "Converts to another dtype (to bool: x != 0; float to int: "
        "truncates, saturates, NaN gives 0).")
    .SetNumInputs(1)
    .SetInputNames({"data"})
    .SetParams<CastParam>()
    .SetInferShape(SameShape)
    .SetInferType([](const NodeAttrs& attrs, std::vector<DType>* in,
                     std::vector<DType>* out) {
      OutputTypeIs(attrs.get<CastParam>().dtype, attrs, in, out);
    })
    .SetInplaceOption(InplaceFirst)
    .SetCompute(Context::kCPU, CastCompute)
    .AddAlias("cast");

MX_REGISTER_OP(_cast_like)
    .Describe("Converts data to the dtype of `like` (as Cast does).")
    .SetNumInputs(2)
    .SetInputNames({"data", "like"})
    .SetInferShape([](const NodeAttrs& attrs, std::vector<TShape>* in,
                      std::vector<TShape>* out) {
      AssignShape(attrs, out, 0, (*in)[0], true);
      AssignShape(attrs, in, 0, (*out)[0], false);
    })
    .SetInferType([](const NodeAttrs& attrs, std::vector<DType>* in,
                     std::vector<DType>* out) {
      AssignType(attrs, out, 0, (*in)[1], true);
      AssignType(attrs, in, 1, (*out)[0], false);
    })
    .SetCompute(Context::kCPU, CastCompute);

// ---- amp_cast, amp_multicast: the casts MXNet's automatic mixed
// precision puts into a converted graph. As in MXNet, only float16 and
// float32 data are cast; any other dtype passes through unchanged. ----

bool AmpCastable(DType t) {
  return t == DType::kFloat16 || t == DType::kFloat32;
}

struct AmpCastParam {
  DType dtype = DType::kFloat32;
  static void Declare(ParamSchema<AmpCastParam>* s) {
    s->Field("dtype", &AmpCastParam::dtype)
        .Required()
        .Describe("For float16 and float32 data; others pass through.");
  }
};

struct AmpMultiCastParam {
  int num_outputs = 0;
  bool cast_narrow = false;
  static void Declare(ParamSchema<AmpMultiCastParam>* s) {
    s->Field("num_outputs", &AmpMultiCastParam::num_outputs)
        .Required()
        .Describe("The number of inputs (and outputs), >= 1.");
    s->Field("cast_narrow", &AmpMultiCastParam::cast_narrow)
        .Describe("Cast to the narrowest float dtype present, not the widest.");
  }
};

int AmpOutputs(const NodeAttrs& attrs) {
  const int n = attrs.get<AmpMultiCastParam>().num_outputs;
  if (n < 1) {
    throw InvalidArgument(absl::StrCat(OpLabel(attrs), ": num_outputs=", n,
                                       " must be at least 1"));
  }
  return n;
}

MX_REGISTER_OP(amp_cast)
    .Describe(
        "Casts float16 and float32 data to dtype (MXNet's AMP); other "
        "dtypes pass through unchanged.")
    .SetNumInputs(1)
    .SetInputNames({"data"})
    .SetParams<AmpCastParam>()
    .SetInferShape(SameShape)
    .SetInferType([](const NodeAttrs& attrs, std::vector<DType>* in,
                     std::vector<DType>* out) {
      const DType t = (*in)[0];
      if (t == DType::kUnknown) return;
      AssignType(attrs, out, 0,
                 AmpCastable(t) ? attrs.get<AmpCastParam>().dtype : t, true);
    })
    .SetCompute(Context::kCPU, CastCompute);

MX_REGISTER_OP(amp_multicast)
    .Describe(
        "Casts its float16 and float32 inputs to the widest float dtype "
        "among them (the narrowest with cast_narrow); others pass through.")
    .SetNumInputs(AmpOutputs)
    .SetNumOutputs(AmpOutputs)
    .SetInputNames([](const NodeAttrs& attrs) {
      std::vector<std::string> names;
      for (int i = 0; i < AmpOutputs(attrs); ++i) {
        names.push_back(absl::StrCat("data_", i));
      }
      return names;
    })
    .SetParams<AmpMultiCastParam>()
    .SetInferShape([](const NodeAttrs& attrs, std::vector<TShape>* in,
                      std::vector<TShape>* out) {
      for (size_t i = 0; i < in->size(); ++i) {
        AssignShape(attrs, out, static_cast<int>(i), (*in)[i], true);
        AssignShape(attrs, in, static_cast<int>(i), (*out)[i], false);
      }
    })
    .SetInferType([](const NodeAttrs& attrs, std::vector<DType>* in,
                     std::vector<DType>* out) {
      const bool narrow = attrs.get<AmpMultiCastParam>().cast_narrow;
      DType target = DType::kUnknown;
      for (DType t : *in) {
        if (t == DType::kUnknown) return;  // The target needs them all.
        if (!AmpCastable(t)) continue;
        const DType keep = narrow ? DType::kFloat16 : DType::kFloat32;
        if (target == DType::kUnknown || t == keep) target = t;
      }
      for (size_t i = 0; i < in->size(); ++i) {
        const DType t = (*in)[i];
        AssignType(attrs, out, static_cast<int>(i), AmpCastable(t) ? target : t,
                   true);
      }
    })
    .SetCompute(Context::kCPU, [](const OpContext& ctx, const NodeAttrs& attrs,
                                  const std::vector<TBlob>& in,
                                  const std::vector<OpReqType>& req,
                                  const std::vector<TBlob>& out) {
      for (size_t i = 0; i < in.size(); ++i) {
        CastCompute(ctx, attrs, {in[i]}, {req[i]}, {out[i]});
      }
    });

// ---- Gradients. ----

[[maybe_unused]] const bool kGradientsRegistered = [] {
  using B = GradBuilder;
  using E = std::vector<NodeEntry>;
  for (const char* op : {"Reshape", "_npx_reshape", "_np_reshape", "Flatten",
                         "expand_dims", "squeeze", "_npi_squeeze"}) {
    SetGradient(op, [](B& b, const E& g) {
      return E{b.Op("reshape_like", {g[0], b.x()})};
    });
  }
  SetGradient("reshape_like", [](B& b, const E& g) {
    return E{b.Op("reshape_like", {g[0], b.x(0)}), NodeEntry{}};
  });
  // The gradient goes back to the input's dtype.
  SetGradient("Cast", [](B& b, const E& g) {
    return E{b.Op("_cast_like", {g[0], b.x()})};
  });
  SetGradient("amp_cast", [](B& b, const E& g) {
    return E{b.Op("_cast_like", {g[0], b.x()})};
  });
  SetGradient("amp_multicast", [](B& b, const E& g) {
    E grads;
    for (size_t i = 0; i < b.n->inputs.size(); ++i) {
      grads.push_back(b.Op("_cast_like", {g[i], b.x(static_cast<int>(i))}));
    }
    return grads;
  });
  SetGradient("_cast_like", [](B& b, const E& g) {
    return E{b.Op("_cast_like", {g[0], b.x(0)}), NodeEntry{}};
  });
  return true;
}();

}  // namespace
}  // namespace cpu
}  // namespace mx
