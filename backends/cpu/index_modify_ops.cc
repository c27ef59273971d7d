// npx.index_add and npx.index_update (MXNet 2's _npx_index_add,
// _npx_index_update): out = a with a[ind] += val, or a[ind] = val, where
// ind (int32 or int64) of shape (K, N) names N positions in a's first K
// axes and val broadcasts to (N,) + a.shape[K:]
// (backends/common/index_modify_geometry.h). Indices must lie in
// [0, extent): MXNet 2 refuses negative ones too. index_add adds every
// position, repeated ones included. index_update gives a position named
// twice the value of its last naming; MXNet 2 leaves that order undefined,
// mxcore fixes it so results and gradients are reproducible (on the GPU
// too). Gradients: a gets out_grad (index_add) or out_grad with the
// updated positions zeroed (_backward_index_update_a); val gets out_grad
// at its positions, summed where it was broadcast, and for index_update
// only from the positions it won (_backward_index_add_val,
// _backward_index_update_val); ind gets none.
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "backends/common/index_modify_geometry.h"
#include "backends/cpu/grad_util.h"
#include "backends/cpu/kernel_util.h"
#include "base/error.h"

namespace mx {
namespace cpu {
namespace {

constexpr int64_t kGrain = 1 << 14;

mx_math::IndexModifyGeometry GeometryOf(const NodeAttrs& attrs, const TShape& a,
                                        const TShape& ind, const TShape& val) {
  mx_math::IndexModifyGeometry g;
  const std::string why = mx_math::IndexModifyGeometryOf(
      std::vector<int64_t>(a.begin(), a.end()),
      std::vector<int64_t>(ind.begin(), ind.end()),
      std::vector<int64_t>(val.begin(), val.end()), &g);
  if (!why.empty()) {
    throw ShapeError(absl::StrCat(OpLabel(attrs), ": a ", a.ToString(),
                                  ", ind ", ind.ToString(), " and val ",
                                  val.ToString(), ": ", why));
  }
  return g;
}

void IndexModifyShape(const NodeAttrs& attrs, std::vector<TShape>* in,
                      std::vector<TShape>* out) {
  AssignShape(attrs, out, 0, (*in)[0], true);
  AssignShape(attrs, in, 0, (*out)[0], false);
  if ((*in)[0].is_known() && (*in)[1].is_known() && (*in)[2].is_known()) {
    GeometryOf(attrs, (*in)[0], (*in)[1], (*in)[2]);
  }
}

void RequireIndexDType(const NodeAttrs& attrs, DType t) {
  if (t != DType::kUnknown && t != DType::kInt32 && t != DType::kInt64) {
    throw DTypeError(absl::StrCat(OpLabel(attrs), ": input 1 (ind) has dtype ",
                                  DTypeName(t),
                                  " but int32 or int64 is required"));
  }
}

// a, val and the output share one numeric dtype (MXNet 2 does not
// promote); ind is int32 or int64.
void IndexModifyType(const NodeAttrs& attrs, std::vector<DType>* in,
                     std::vector<DType>* out) {
  const DType a = (*in)[0], val = (*in)[2];
  if (a != DType::kUnknown && val != DType::kUnknown && a != val) {
    throw DTypeError(absl::StrCat(OpLabel(attrs), ": input 2 (val) has dtype ",
                                  DTypeName(val), " but a has ", DTypeName(a),
                                  "; they must be one dtype"));
  }
  const DType t = a != DType::kUnknown ? a : val;
  AssignType(attrs, out, 0, t, true);
  AssignType(attrs, in, 0, (*out)[0], false);
  AssignType(attrs, in, 2, (*out)[0], false);
  if ((*out)[0] != DType::kUnknown) RequireNumeric(attrs, (*out)[0]);
  RequireIndexDType(attrs, (*in)[1]);
}

// The position (row of a's leading axes) each index column names,
// checked against the extents.
std::vector<int64_t> RowsOf(const NodeAttrs& attrs,
                            const mx_math::IndexModifyGeometry& g,
                            const TBlob& ind) {
  std::vector<int64_t> rows(static_cast<size_t>(g.count));
  auto read = [&](auto* ix) {
    for (int64_t i = 0; i < g.count; ++i) {
      int64_t row = 0;
      for (int64_t j = 0; j < g.k; ++j) {
        const int64_t v = static_cast<int64_t>(ix[j * g.count + i]);
        const int64_t extent = g.lead[static_cast<size_t>(j)];
        if (v < 0 || v >= extent) {
          throw InvalidArgument(
              absl::StrCat(OpLabel(attrs), ": input 1 (ind) holds ", v,
                           " for axis ", j, " of a, whose length is ", extent,
                           " (indices must lie in [0, length))"));
        }
        row = row * extent + v;
      }
      rows[static_cast<size_t>(i)] = row;
    }
  };
  if (ind.dtype == DType::kInt32) {
    read(ind.data<int32_t>());
  } else {
    read(ind.data<int64_t>());
  }
  return rows;
}

// val's offset for each tail element (the part of val_offset that does
// not depend on the position).
std::vector<int64_t> TailOffsets(const mx_math::IndexModifyGeometry& g) {
  std::vector<int64_t> off(static_cast<size_t>(g.tail));
  for (int64_t t = 0; t < g.tail; ++t) off[t] = g.val_offset(0, t);
  return off;
}

// For each row of a, the last position naming it, or -1.
std::vector<int64_t> LastWriters(const mx_math::IndexModifyGeometry& g,
                                 const std::vector<int64_t>& rows) {
  std::vector<int64_t> writer(static_cast<size_t>(g.rows), -1);
  for (size_t i = 0; i < rows.size(); ++i) {
    writer[rows[i]] = static_cast<int64_t>(i);
  }
  return writer;
}

// (a, ind, val) -> a with val added at the positions.
void IndexAddCompute(const OpContext&, const NodeAttrs& attrs,
                     const std::vector<TBlob>& in,
                     const std::vector<OpReqType>& req,
                     const std::vector<TBlob>& out) {
  const auto g = GeometryOf(attrs, in[0].shape, in[1].shape, in[2].shape);
  const std::vector<int64_t> rows = RowsOf(attrs, g, in[1]);
  if (req[0] == OpReqType::kNullOp || out[0].Size() == 0) return;
  const std::vector<int64_t> tail_off = TailOffsets(g);
  MX_DTYPE_SWITCH(in[0].dtype, T, {
    const T* a = in[0].data<T>();
    const T* val = in[2].data<T>();
    T* y = out[0].data<T>();
    if (y != a || req[0] == OpReqType::kAddTo) {
      CopyBlock(a, y, out[0].Size(), req[0]);
    }
    // Positions may repeat, so they are added one after another.
    for (int64_t i = 0; i < g.count; ++i) {
      T* row = y + rows[i] * g.tail;
      const T* v = val + i * g.val_index_step;
      ParallelFor(g.tail, kGrain, [&](int64_t s, int64_t e) {
        for (int64_t t = s; t < e; ++t) {
          Assign(row + t, OpReqType::kAddTo, v[tail_off[t]]);
        }
      });
    }
  });
}

// (a, ind, val) -> a with the positions replaced by val.
void IndexUpdateCompute(const OpContext&, const NodeAttrs& attrs,
                        const std::vector<TBlob>& in,
                        const std::vector<OpReqType>& req,
                        const std::vector<TBlob>& out) {
  const auto g = GeometryOf(attrs, in[0].shape, in[1].shape, in[2].shape);
  const std::vector<int64_t> rows = RowsOf(attrs, g, in[1]);
  if (req[0] == OpReqType::kNullOp || out[0].Size() == 0) return;
  const std::vector<int64_t> writer = LastWriters(g, rows);
  const std::vector<int64_t> tail_off = TailOffsets(g);
  MX_DTYPE_SWITCH(in[0].dtype, T, {
    const T* a = in[0].data<T>();
    const T* val = in[2].data<T>();
    T* y = out[0].data<T>();
    ParallelFor(
        g.rows, std::max<int64_t>(1, kGrain / g.tail),
        [&](int64_t s, int64_t e) {
          for (int64_t r = s; r < e; ++r) {
            const int64_t w = writer[r];
            const T* src = a + r * g.tail;
            for (int64_t t = 0; t < g.tail; ++t) {
              Assign(y + r * g.tail + t, req[0],
                     w < 0 ? src[t] : val[w * g.val_index_step + tail_off[t]]);
            }
          }
        });
  });
}

// (out_grad, ind, val) -> val_grad: out_grad at each position (only the
// positions a position's last naming won when `winners_only`), summed
// where val was broadcast.
void ValGradient(const NodeAttrs& attrs, const std::vector<TBlob>& in,
                 OpReqType req, const TBlob& out, bool winners_only) {
  const auto g = GeometryOf(attrs, in[0].shape, in[1].shape, in[2].shape);
  const std::vector<int64_t> rows = RowsOf(attrs, g, in[1]);
  if (req == OpReqType::kNullOp || out.Size() == 0) return;
  const std::vector<int64_t> writer = winners_only && in[0].Size() > 0
                                          ? LastWriters(g, rows)
                                          : std::vector<int64_t>();
  const std::vector<int64_t> tail_off = TailOffsets(g);
  MX_FLOAT_DTYPE_SWITCH(out.dtype, T, {
    using A = AccType<T>;
    const T* og = in[0].data<T>();
    std::vector<A> acc(static_cast<size_t>(out.Size()), A(0));
    for (int64_t i = 0; i < g.count; ++i) {
      if (winners_only && (writer.empty() || writer[rows[i]] != i)) continue;
      const T* row = og + rows[i] * g.tail;
      A* v = acc.data() + i * g.val_index_step;
      for (int64_t t = 0; t < g.tail; ++t) {
        v[tail_off[t]] += static_cast<A>(row[t]);
      }
    }
    T* dst = out.data<T>();
    for (size_t j = 0; j < acc.size(); ++j) Assign(dst + j, req, acc[j]);
  });
}

template <bool kWinnersOnly>
void ValGradientCompute(const OpContext&, const NodeAttrs& attrs,
                        const std::vector<TBlob>& in,
                        const std::vector<OpReqType>& req,
                        const std::vector<TBlob>& out) {
  ValGradient(attrs, in, req[0], out[0], kWinnersOnly);
}

// (out_grad, ind) -> a_grad of index_update: out_grad, 0 where updated.
void IndexUpdateAGradCompute(const OpContext&, const NodeAttrs& attrs,
                             const std::vector<TBlob>& in,
                             const std::vector<OpReqType>& req,
                             const std::vector<TBlob>& out) {
  const auto g = GeometryOf(attrs, in[0].shape, in[1].shape, TShape());
  const std::vector<int64_t> rows = RowsOf(attrs, g, in[1]);
  if (req[0] == OpReqType::kNullOp || out[0].Size() == 0) return;
  const std::vector<int64_t> writer = LastWriters(g, rows);
  MX_FLOAT_DTYPE_SWITCH(out[0].dtype, T, {
    const T* og = in[0].data<T>();
    T* y = out[0].data<T>();
    ParallelFor(g.rows, std::max<int64_t>(1, kGrain / g.tail),
                [&](int64_t s, int64_t e) {
                  for (int64_t r = s; r < e; ++r) {
                    const bool updated = writer[r] >= 0;
                    for (int64_t t = r * g.tail; t < (r + 1) * g.tail; ++t) {
                      Assign(y + t, req[0], updated ? T(0) : og[t]);
                    }
                  }
                });
  });
}

Op& RegisterIndexModify(const char* name) {
  return OpRegistry::Get()
      ->Register(name)
      .SetNumInputs(3)
      .SetInputNames({"a", "ind", "val"})
      .SetInferShape(IndexModifyShape)
      .SetInferType(IndexModifyType);
}

// The gradient ops: (out_grad, ind, ...) -> a float gradient of
// out_grad's dtype.
void GradientType(const NodeAttrs& attrs, std::vector<DType>* in,
                  std::vector<DType>* out) {
  AssignType(attrs, out, 0, (*in)[0], true);
  AssignType(attrs, in, 0, (*out)[0], false);
  if ((*out)[0] != DType::kUnknown) RequireFloat(attrs, (*out)[0]);
  RequireIndexDType(attrs, (*in)[1]);
}

// The gradient ops' val_grad: (out_grad, ind, val) -> val's shape.
Op& RegisterValGradient(const char* name) {
  return OpRegistry::Get()
      ->Register(name)
      .SetNumInputs(3)
      .SetInputNames({"out_grad", "ind", "val"})
      .SetInferShape([](const NodeAttrs& attrs, std::vector<TShape>* in,
                        std::vector<TShape>* out) {
        AssignShape(attrs, out, 0, (*in)[2], true);
        AssignShape(attrs, in, 2, (*out)[0], false);
      })
      .SetInferType(GradientType);
}

[[maybe_unused]] const bool kRegistered = [] {
  RegisterIndexModify("_npx_index_add")
      .Describe(
          "a with val added at the positions ind names (npx.index_add; "
          "repeated positions add up).")
      .SetCompute(Context::kCPU, IndexAddCompute);
  RegisterIndexModify("_npx_index_update")
      .Describe(
          "a with the positions ind names set to val (npx.index_update; a "
          "position named twice takes its last value).")
      .SetCompute(Context::kCPU, IndexUpdateCompute);
  RegisterValGradient("_backward_index_add_val")
      .Describe("Gradient of _npx_index_add for val.")
      .SetCompute(Context::kCPU, ValGradientCompute<false>);
  RegisterValGradient("_backward_index_update_val")
      .Describe("Gradient of _npx_index_update for val.")
      .SetCompute(Context::kCPU, ValGradientCompute<true>);
  OpRegistry::Get()
      ->Register("_backward_index_update_a")
      .Describe("Gradient of _npx_index_update for a.")
      .SetNumInputs(2)
      .SetInputNames({"out_grad", "ind"})
      .SetInferShape([](const NodeAttrs& attrs, std::vector<TShape>* in,
                        std::vector<TShape>* out) {
        AssignShape(attrs, out, 0, (*in)[0], true);
        AssignShape(attrs, in, 0, (*out)[0], false);
      })
      .SetInferType(GradientType)
      .SetCompute(Context::kCPU, IndexUpdateAGradCompute);

  using B = GradBuilder;
  using E = std::vector<NodeEntry>;
  SetGradient("_npx_index_add", [](B& b, const E& g) {
    return E{g[0], NodeEntry{},
             b.Op("_backward_index_add_val", {g[0], b.x(1), b.x(2)})};
  });
  SetGradient("_npx_index_update", [](B& b, const E& g) {
    return E{b.Op("_backward_index_update_a", {g[0], b.x(1)}), NodeEntry{},
             b.Op("_backward_index_update_val", {g[0], b.x(1), b.x(2)})};
  });
  return true;
}();

}  // namespace
}  // namespace cpu
}  // namespace mx
