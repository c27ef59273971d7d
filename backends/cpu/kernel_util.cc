#include "backends/cpu/kernel_util.h"

#include <algorithm>
#include <cmath>
#include <optional>

#include "absl/strings/str_cat.h"
#include "base/env.h"
#include "base/error.h"

namespace mx {
namespace cpu {

TShape BroadcastShape(const NodeAttrs& attrs, const TShape& a,
                      const TShape& b) {
  const int nd = std::max(a.ndim(), b.ndim());
  TShape out = TShape::Filled(nd, -1);
  for (int i = 0; i < nd; ++i) {
    const int ia = a.ndim() - nd + i, ib = b.ndim() - nd + i;
    const int64_t da = ia >= 0 ? a[ia] : 1, db = ib >= 0 ? b[ib] : 1;
    if (da == db || db == 1) {
      out[i] = da;
    } else if (da == 1) {
      out[i] = db;
    } else {
      throw ShapeError(absl::StrCat(OpLabel(attrs), ": shapes ", a.ToString(),
                                    " and ", b.ToString(),
                                    " cannot be broadcast together"));
    }
  }
  return out;
}

std::vector<int64_t> BroadcastStrides(const TShape& in, const TShape& out) {
  std::vector<int64_t> strides(out.ndim(), 0);
  int64_t stride = 1;
  for (int d = in.ndim() - 1; d >= 0; --d) {
    const int od = out.ndim() - in.ndim() + d;
    strides[od] = in[d] == 1 ? 0 : stride;
    stride *= in[d];
  }
  return strides;
}

std::vector<double> DoublesOf(const TBlob& b) {
  std::vector<double> v(b.Size());
  MX_DTYPE_SWITCH(b.dtype, T, {
    const T* x = b.data<T>();
    for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<double>(x[i]);
  });
  return v;
}

void ConvertBlob(const TBlob& in, OpReqType req, const TBlob& out) {
  if (req == OpReqType::kNullOp) return;
  MX_DTYPE_SWITCH(in.dtype, From, {
    MX_DTYPE_SWITCH(out.dtype, To, {
      const From* x = in.data<From>();
      To* y = out.data<To>();
      ParallelFor(out.Size(), int64_t{1} << 14, [&](int64_t b, int64_t e) {
        for (int64_t i = b; i < e; ++i) {
          Assign(y + i, req, ConvertElement<To>(x[i]));
        }
      });
    });
  });
}

void SplitAlongAxis(const TBlob& in, int axis,
                    const std::vector<std::pair<int64_t, int64_t>>& pieces,
                    const std::vector<OpReqType>& req,
                    const std::vector<TBlob>& out) {
  const TShape& is = in.shape;
  const int64_t outer = is.ProdDims(0, axis);
  const int64_t inner = is.ProdDims(axis + 1, is.ndim());
  const int64_t row = is[axis] * inner;
  if (in.Size() == 0) return;
  MX_DTYPE_SWITCH(in.dtype, T, {
    const T* x = in.data<T>();
    for (size_t k = 0; k < out.size(); ++k) {
      const int64_t begin = pieces[k].first * inner;
      const int64_t block = (pieces[k].second - pieces[k].first) * inner;
      if (block == 0 || req[k] == OpReqType::kNullOp) continue;
      T* y = out[k].data<T>();
      ParallelFor(outer, std::max<int64_t>(1, (int64_t{1} << 14) / block),
                  [&](int64_t s, int64_t e) {
                    for (int64_t o = s; o < e; ++o) {
                      CopyBlock(x + o * row + begin, y + o * block, block,
                                req[k]);
                    }
                  });
    }
  });
}

TBlob InDType(const OpContext& ctx, const TBlob& b, DType dtype) {
  if (b.dtype == dtype) return b;
  TBlob t;
  t.shape = b.shape;
  t.dtype = dtype;
  t.ctx = b.ctx;
  t.dptr = ctx.TempSpace(std::max<size_t>(1, b.Size() * DTypeSize(dtype)));
  ConvertBlob(b, OpReqType::kWriteTo, t);
  return t;
}

std::vector<ResourceRequest> TempSpaceRequest(const NodeAttrs&) {
  return {{ResourceRequest::kTempSpace}};
}

std::vector<int64_t> Strides(const TShape& shape) {
  std::vector<int64_t> strides(shape.ndim());
  int64_t stride = 1;
  for (int d = shape.ndim() - 1; d >= 0; --d) {
    strides[d] = stride;
    stride *= shape[d];
  }
  return strides;
}

std::string OpLabel(const NodeAttrs& attrs) {
  std::string label =
      absl::StrCat("op \"", attrs.op ? attrs.op->name() : "?", "\"");
  if (!attrs.name.empty())
    absl::StrAppend(&label, " (node \"", attrs.name, "\")");
  return label;
}

std::pair<int64_t, int64_t> TwoExtents(const NodeAttrs& attrs, const char* name,
                                       const TShape& s) {
  if (!s.ndim_known() || s.ndim() != 2 || s[0] < 1 || s[1] < 1) {
    throw InvalidArgument(absl::StrCat(OpLabel(attrs), ": ", name, "=",
                                       s.ToString(),
                                       " must be two values >= 1"));
  }
  return {s[0], s[1]};
}

void OutputTypeIs(DType t, const NodeAttrs& attrs, std::vector<DType>* /*in*/,
                  std::vector<DType>* out) {
  for (size_t i = 0; i < out->size(); ++i) {
    AssignType(attrs, out, static_cast<int>(i), t, true);
  }
}

void RequireFloat(const NodeAttrs& attrs, DType t) {
  if (!IsFloat(t)) {
    throw DTypeError(absl::StrCat(OpLabel(attrs), ": dtype ", DTypeName(t),
                                  " is not supported; a floating-point dtype "
                                  "(float32, float64, float16) is required"));
  }
}

void RequireTemperature(const NodeAttrs& attrs,
                        const std::optional<double>& temperature) {
  if (temperature && !(*temperature != 0 && std::isfinite(*temperature))) {
    throw InvalidArgument(absl::StrCat(OpLabel(attrs),
                                       ": temperature=", *temperature,
                                       " must be finite and non-zero"));
  }
}

void RequireNumeric(const NodeAttrs& attrs, DType t) {
  if (t == DType::kBool || t == DType::kUnknown) {
    throw DTypeError(absl::StrCat(OpLabel(attrs), ": dtype ", DTypeName(t),
                                  " is not supported; a numeric dtype is "
                                  "required"));
  }
}

void RequireIndexType(const NodeAttrs& attrs, DType t, int input,
                      const char* name) {
  if (t == DType::kBool) {
    throw DTypeError(absl::StrCat(OpLabel(attrs), ": input ", input, " (", name,
                                  ") has dtype bool but a numeric "
                                  "dtype is required for indices"));
  }
}

}  // namespace cpu
}  // namespace mx
