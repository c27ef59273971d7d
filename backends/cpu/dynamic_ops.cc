// Dynamic-shape ops: the output's size depends on the input values, so the
// kernel counts first and then allocates the output with AllocDynamic.
// Shape inference gives what is known beforehand (rank and trailing dims,
// with -1 for the value-dependent length; nothing for
// _npi_advanced_indexing, whose rank depends on its indices' dtype).
// Gradients: boolean_mask and _npi_advanced_indexing scatter the head
// gradient back to the rows they picked (_backward_boolean_mask,
// _backward_np_advanced_indexing); flatnonzero's and _npx_nonzero's
// outputs are integer indices, so their gradient is zero (as in MXNet).
#include <algorithm>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "backends/cpu/grad_util.h"
#include "backends/cpu/kernel_util.h"
#include "base/error.h"

namespace mx {
namespace cpu {
namespace {

template <typename T>
inline bool NonZero(T v) {
  return static_cast<AccType<T>>(v) != AccType<T>(0);
}

// Flat indices of the non-zero elements of `x`.
std::vector<int64_t> NonZeroIndices(const TBlob& x) {
  std::vector<int64_t> idx;
  MX_DTYPE_SWITCH(x.dtype, T, {
    const T* p = x.data<T>();
    const int64_t n = x.Size();
    for (int64_t i = 0; i < n; ++i) {
      if (NonZero(p[i])) idx.push_back(i);
    }
  });
  return idx;
}

// ---- flatnonzero. ----

void FlatNonzeroShape(const NodeAttrs& attrs, std::vector<TShape>*,
                      std::vector<TShape>* out) {
  AssignShape(attrs, out, 0, TShape::Filled(1, -1), true);
}

void FlatNonzeroCompute(const OpContext&, const NodeAttrs&,
                        const std::vector<TBlob>& in,
                        const std::vector<NDArray>& out) {
  const std::vector<int64_t> idx = NonZeroIndices(in[0]);
  const TBlob y = out[0].AllocDynamic(TShape{static_cast<int64_t>(idx.size())});
  if (!idx.empty()) {
    std::memcpy(y.dptr, idx.data(), idx.size() * sizeof(int64_t));
  }
}

MX_REGISTER_OP(flatnonzero)
    .Describe(
        "Indices (int64) of the non-zero elements of the flattened input; "
        "the output length depends on the values.")
    .SetNumInputs(1)
    .SetInputNames({"data"})
    .SetInferShape(FlatNonzeroShape)
    .SetInferType([](const NodeAttrs& attrs, std::vector<DType>* in,
                     std::vector<DType>* out) {
      OutputTypeIs(DType::kInt64, attrs, in, out);
    })
    .SetComputeDynamic(Context::kCPU, FlatNonzeroCompute);

// ---- _npx_nonzero (np.nonzero / np.argwhere). ----

// (N, ndim) int64: row k holds the coordinates of the k-th non-zero
// element in C order (MXNet 2's layout; np.nonzero returns its columns).
void NonzeroShape(const NodeAttrs& attrs, std::vector<TShape>* in,
                  std::vector<TShape>* out) {
  if (!(*in)[0].ndim_known()) return;
  AssignShape(attrs, out, 0, TShape{-1, (*in)[0].ndim()}, true);
}

void NonzeroCompute(const OpContext&, const NodeAttrs&,
                    const std::vector<TBlob>& in,
                    const std::vector<NDArray>& out) {
  const std::vector<int64_t> idx = NonZeroIndices(in[0]);
  const TShape& s = in[0].shape;
  const int nd = s.ndim();
  const TBlob y =
      out[0].AllocDynamic(TShape{static_cast<int64_t>(idx.size()), nd});
  int64_t* coords = y.data<int64_t>();
  for (size_t k = 0; k < idx.size(); ++k) {
    int64_t rest = idx[k];
    for (int d = nd - 1; d >= 0; --d) {
      coords[k * nd + d] = rest % s[d];
      rest /= s[d];
    }
  }
}

MX_REGISTER_OP(_npx_nonzero)
    .AddAlias("_npi_nonzero")
    .Describe(
        "Coordinates (int64, one row per element) of the non-zero elements: "
        "shape (N, ndim), N depending on the values.")
    .SetNumInputs(1)
    .SetInputNames({"x"})
    .SetInferShape(NonzeroShape)
    .SetInferType([](const NodeAttrs& attrs, std::vector<DType>* in,
                     std::vector<DType>* out) {
      OutputTypeIs(DType::kInt64, attrs, in, out);
    })
    .SetComputeDynamic(Context::kCPU, NonzeroCompute);

// ---- boolean_mask. ----

struct BooleanMaskParam {
  int axis = 0;
  static void Declare(ParamSchema<BooleanMaskParam>* s) {
    s->Field("axis", &BooleanMaskParam::axis)
        .Describe("axis the mask selects along; only 0 is supported");
  }
};

void BooleanMaskShape(const NodeAttrs& attrs, std::vector<TShape>* in,
                      std::vector<TShape>* out) {
  const int axis = attrs.get<BooleanMaskParam>().axis;
  if (axis != 0) {
    throw NotImplemented(absl::StrCat(OpLabel(attrs), ": axis=", axis,
                                      " is not supported; only axis=0"));
  }
  const TShape& data = (*in)[0];
  const TShape& index = (*in)[1];
  if (data.ndim_known() && data.ndim() == 0) {
    throw ShapeError(absl::StrCat(OpLabel(attrs),
                                  ": input 0 (data) must have at least one "
                                  "dimension; got shape ",
                                  data.ToString()));
  }
  if (index.ndim_known() && index.ndim() != 1) {
    throw ShapeError(absl::StrCat(OpLabel(attrs),
                                  ": input 1 (index) must be 1-D; got shape ",
                                  index.ToString()));
  }
  if (data.ndim_known() && index.ndim_known() && data[0] >= 0 &&
      index[0] >= 0 && data[0] != index[0]) {
    throw ShapeError(absl::StrCat(
        OpLabel(attrs), ": input 1 (index) has shape ", index.ToString(),
        " but its length must equal data.shape[0] = ", data[0],
        " (data has shape ", data.ToString(), ")"));
  }
  if (!data.ndim_known()) return;
  AssignShape(attrs, in, 1, TShape{data[0]}, false);
  TShape result = data;
  result[0] = -1;
  AssignShape(attrs, out, 0, result, true);
}

void BooleanMaskType(const NodeAttrs& attrs, std::vector<DType>* in,
                     std::vector<DType>* out) {
  // The index may be bool or any numeric dtype; non-zero keeps the row.
  AssignType(attrs, out, 0, (*in)[0], true);
  AssignType(attrs, in, 0, (*out)[0], false);
}

// y's row k = data's row rows[k] (rows along axis 0).
void CopyRows(const TBlob& data, const std::vector<int64_t>& rows,
              const TBlob& y) {
  const size_t row_bytes =
      static_cast<size_t>(data.shape.ProdDims(1, data.shape.ndim())) *
      DTypeSize(data.dtype);
  if (row_bytes == 0) return;
  const char* src = static_cast<const char*>(data.dptr);
  char* dst = static_cast<char*>(y.dptr);
  for (size_t k = 0; k < rows.size(); ++k) {
    std::memcpy(dst + k * row_bytes, src + rows[k] * row_bytes, row_bytes);
  }
}

// The gradient of CopyRows: ograd's row k added to row rows[k] of `out`
// (rows may repeat), the others 0 unless `req` adds.
void ScatterRows(const TBlob& ograd, const std::vector<int64_t>& rows,
                 OpReqType req, const TBlob& out) {
  if (req == OpReqType::kNullOp) return;
  const int64_t row = out.shape.ProdDims(1, out.shape.ndim());
  MX_DTYPE_SWITCH(out.dtype, T, {
    const T* g = ograd.data<T>();
    T* y = out.data<T>();
    if (req != OpReqType::kAddTo) std::fill(y, y + out.Size(), T{});
    for (size_t k = 0; k < rows.size(); ++k) {
      const T* src = g + static_cast<int64_t>(k) * row;
      T* dst = y + rows[k] * row;
      for (int64_t t = 0; t < row; ++t)
        Assign(dst + t, OpReqType::kAddTo, src[t]);
    }
  });
}

void BooleanMaskCompute(const OpContext&, const NodeAttrs&,
                        const std::vector<TBlob>& in,
                        const std::vector<NDArray>& out) {
  const TBlob& data = in[0];
  const std::vector<int64_t> rows = NonZeroIndices(in[1]);
  TShape shape = data.shape;
  shape[0] = static_cast<int64_t>(rows.size());
  CopyRows(data, rows, out[0].AllocDynamic(shape));
}

MX_REGISTER_OP(boolean_mask)
    .Describe(
        "The rows of `data` (along axis 0) where the 1-D `index` is non-zero; "
        "the output length depends on the values.")
    .SetNumInputs(2)
    .SetInputNames({"data", "index"})
    .SetParams<BooleanMaskParam>()
    .SetInferShape(BooleanMaskShape)
    .SetInferType(BooleanMaskType)
    .SetComputeDynamic(Context::kCPU, BooleanMaskCompute)
    .AddAlias("_contrib_boolean_mask");

// ---- _backward_boolean_mask. ----

// Inputs (ograd, data, index): ograd's row k goes to row rows[k] of a
// data-shaped output, the rows `index` dropped get zeros.
void BackwardBooleanMaskCompute(const OpContext&, const NodeAttrs& attrs,
                                const std::vector<TBlob>& in,
                                const std::vector<OpReqType>& req,
                                const std::vector<TBlob>& out) {
  const OpReqType r = req[0];
  if (r == OpReqType::kNullOp) return;
  const TBlob& ograd = in[0];
  const std::vector<int64_t> rows = NonZeroIndices(in[2]);
  const TShape& shape = out[0].shape;
  // InferShape checked the ranks and index length; this guards direct
  // kernel calls too (no TShape index out of range, no row past the end).
  if (shape.ndim() == 0 || ograd.shape.ndim() != shape.ndim() ||
      in[2].Size() != shape[0] ||
      ograd.shape[0] != static_cast<int64_t>(rows.size()) ||
      ograd.shape.ProdDims(1, ograd.shape.ndim()) !=
          shape.ProdDims(1, shape.ndim())) {
    throw ShapeError(
        absl::StrCat(OpLabel(attrs), ": input 0 (ograd) has shape ",
                     ograd.shape.ToString(), " but the mask keeps ",
                     rows.size(), " rows of data of shape ", shape.ToString()));
  }
  ScatterRows(ograd, rows, r, out[0]);
}

MX_REGISTER_OP(_backward_boolean_mask)
    .Describe(
        "The gradient of boolean_mask: `ograd`'s rows written to the rows of "
        "a data-shaped output that `index` keeps, zeros elsewhere.")
    .SetNumInputs(3)
    .SetInputNames({"ograd", "data", "index"})
    .SetParams<BooleanMaskParam>()
    .SetInferShape([](const NodeAttrs& attrs, std::vector<TShape>* in,
                      std::vector<TShape>* out) {
      // data and index as boolean_mask takes them: data of rank >= 1, a 1-D
      // index of length data.shape[0] (a rank-0 data reached the kernel's
      // shape[0]: found by //fuzz:op_attrs_fuzzer).
      std::vector<TShape> fwd_in{(*in)[1], (*in)[2]}, fwd_out(1);
      BooleanMaskShape(attrs, &fwd_in, &fwd_out);
      AssignShape(attrs, in, 2, fwd_in[1], false);
      const TShape& ograd = (*in)[0];
      const TShape& data = (*in)[1];
      if (ograd.ndim_known() && data.ndim_known() &&
          ograd.ndim() != data.ndim()) {
        throw ShapeError(absl::StrCat(
            OpLabel(attrs), ": input 0 (ograd) has shape ", ograd.ToString(),
            " but must have the rank of input 1 (data), shape ",
            data.ToString()));
      }
      AssignShape(attrs, out, 0, (*in)[1], true);
      AssignShape(attrs, in, 1, (*out)[0], false);
    })
    .SetInferType([](const NodeAttrs& attrs, std::vector<DType>* in,
                     std::vector<DType>* out) {
      AssignType(attrs, out, 0, (*in)[1], true);
      AssignType(attrs, out, 0, (*in)[0], true);
      AssignType(attrs, in, 0, (*out)[0], false);
      AssignType(attrs, in, 1, (*out)[0], false);
    })
    .SetCompute(Context::kCPU, BackwardBooleanMaskCompute);

// ---- _npi_advanced_indexing: MXNet 2's x[index] in Symbol graphs. ----

// The rows of data (axis 0) that `index` picks and the output's shape: a
// bool index (1-D, data's first length) keeps its true rows, as
// boolean_mask; integer indices take rows, shape index.shape +
// data.shape[1:], negative ones counting from the end as in NumPy (MXNet 2
// refuses them), others out of range an InvalidArgument.
std::vector<int64_t> PickedRows(const NodeAttrs& attrs, const TShape& data,
                                const TBlob& index, TShape* out_shape) {
  if (data.ndim() == 0) {
    throw ShapeError(absl::StrCat(OpLabel(attrs),
                                  ": input 0 (data) is 0-d; an array index "
                                  "needs an axis to pick from"));
  }
  std::vector<int64_t> dims;
  std::vector<int64_t> rows;
  if (index.dtype == DType::kBool) {
    if (index.shape.ndim() != 1 || index.shape[0] != data[0]) {
      throw ShapeError(absl::StrCat(
          OpLabel(attrs), ": a bool input 1 (indices) of shape ",
          index.shape.ToString(), " must be 1-D with the length of axis 0 ",
          "of data, shape ", data.ToString()));
    }
    rows = NonZeroIndices(index);
    dims.push_back(static_cast<int64_t>(rows.size()));
  } else {
    const std::vector<double> v = DoublesOf(index);
    for (double x : v) {
      if (!(x >= -static_cast<double>(data[0]) &&
            x < static_cast<double>(data[0]))) {
        throw InvalidArgument(absl::StrCat(
            OpLabel(attrs), ": input 1 (indices) holds ", x,
            ", out of range for axis 0 of data, shape ", data.ToString()));
      }
      const int64_t i = static_cast<int64_t>(x);
      rows.push_back(i < 0 ? i + data[0] : i);
    }
    dims.assign(index.shape.begin(), index.shape.end());
  }
  dims.insert(dims.end(), data.begin() + 1, data.end());
  *out_shape = TShape(dims);
  return rows;
}

void AdvancedIndexingType(const NodeAttrs& attrs, std::vector<DType>* in,
                          std::vector<DType>* out) {
  AssignType(attrs, out, 0, (*in)[0], true);
  AssignType(attrs, in, 0, (*out)[0], false);
  const DType t = (*in)[1];
  if (t == DType::kFloat16 || t == DType::kFloat32 || t == DType::kFloat64) {
    throw DTypeError(absl::StrCat(
        OpLabel(attrs), ": input 1 (indices) has dtype ", DTypeName(t),
        "; arrays used as indices must be integer or bool"));
  }
}

void AdvancedIndexingCompute(const OpContext&, const NodeAttrs& attrs,
                             const std::vector<TBlob>& in,
                             const std::vector<NDArray>& out) {
  TShape shape;
  const std::vector<int64_t> rows =
      PickedRows(attrs, in[0].shape, in[1], &shape);
  CopyRows(in[0], rows, out[0].AllocDynamic(shape));
}

MX_REGISTER_OP(_npi_advanced_indexing)
    .Describe(
        "data[indices] along axis 0 for one integer array (rows taken, "
        "shape indices.shape + data.shape[1:]) or a bool array (the true "
        "rows, as boolean_mask); the output shape depends on the values.")
    .SetNumInputs(2)
    .SetInputNames({"data", "indices"})
    .SetInferShape([](const NodeAttrs& attrs, std::vector<TShape>* in,
                      std::vector<TShape>*) {
      // The output's rank depends on the indices' dtype: left unknown.
      const TShape& data = (*in)[0];
      if (data.ndim_known() && data.ndim() == 0) {
        throw ShapeError(absl::StrCat(OpLabel(attrs),
                                      ": input 0 (data) is 0-d; an array "
                                      "index needs an axis to pick from"));
      }
    })
    .SetInferType(AdvancedIndexingType)
    .SetComputeDynamic(Context::kCPU, AdvancedIndexingCompute);

// (ograd, data, indices) -> data-shaped gradient: ograd's rows added to
// the rows picked (repeats add up).
void AdvancedIndexingBackwardCompute(const OpContext&, const NodeAttrs& attrs,
                                     const std::vector<TBlob>& in,
                                     const std::vector<OpReqType>& req,
                                     const std::vector<TBlob>& out) {
  TShape picked;
  const std::vector<int64_t> rows =
      PickedRows(attrs, out[0].shape, in[2], &picked);
  if (in[0].shape != picked) {
    throw ShapeError(absl::StrCat(
        OpLabel(attrs), ": input 0 (ograd) has shape ", in[0].shape.ToString(),
        " but the indices pick ", picked.ToString()));
  }
  ScatterRows(in[0], rows, req[0], out[0]);
}

MX_REGISTER_OP(_backward_np_advanced_indexing)
    .Describe("The gradient of _npi_advanced_indexing for data.")
    .SetNumInputs(3)
    .SetInputNames({"ograd", "data", "indices"})
    .SetInferShape([](const NodeAttrs& attrs, std::vector<TShape>* in,
                      std::vector<TShape>* out) {
      AssignShape(attrs, out, 0, (*in)[1], true);
      AssignShape(attrs, in, 1, (*out)[0], false);
    })
    .SetInferType([](const NodeAttrs& attrs, std::vector<DType>* in,
                     std::vector<DType>* out) {
      AssignType(attrs, out, 0, (*in)[0], true);
      AssignType(attrs, out, 0, (*in)[1], true);
      AssignType(attrs, in, 0, (*out)[0], false);
      AssignType(attrs, in, 1, (*out)[0], false);
      std::vector<DType> fwd_in{(*in)[1], (*in)[2]}, fwd_out{(*in)[0]};
      AdvancedIndexingType(attrs, &fwd_in, &fwd_out);
    })
    .SetCompute(Context::kCPU, AdvancedIndexingBackwardCompute);

// ---- Gradients. ----

[[maybe_unused]] const bool kGradientsRegistered = [] {
  using B = GradBuilder;
  using E = std::vector<NodeEntry>;
  // The mask (index) gets no gradient: it only selects.
  SetGradient("boolean_mask", [](B& b, const E& g) {
    return E{
        b.Op("_backward_boolean_mask", {g[0], b.x(0), b.x(1)}, b.n->attrs.dict),
        NodeEntry{}};
  });
  // Linear in ograd: its adjoint selects the same rows again.
  SetGradient("_backward_boolean_mask", [](B& b, const E& g) {
    return E{b.Op("boolean_mask", {g[0], b.x(2)}, b.n->attrs.dict), NodeEntry{},
             NodeEntry{}};
  });
  SetGradient("_npi_advanced_indexing", [](B& b, const E& g) {
    return E{b.Op("_backward_np_advanced_indexing", {g[0], b.x(0), b.x(1)}),
             NodeEntry{}};
  });
  SetGradient("_backward_np_advanced_indexing", [](B& b, const E& g) {
    return E{b.Op("_npi_advanced_indexing", {g[0], b.x(2)}), NodeEntry{},
             NodeEntry{}};
  });
  // Integer indices: piecewise constant in the data, zero gradient.
  SetGradient("flatnonzero", [](B&, const E&) { return E{NodeEntry{}}; });
  SetGradient("_npx_nonzero", [](B&, const E&) { return E{NodeEntry{}}; });
  return true;
}();

}  // namespace
}  // namespace cpu
}  // namespace mx
