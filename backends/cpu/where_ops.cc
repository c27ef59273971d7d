// Selection by condition: MXNet's `where` and MXNet 2's NumPy forms
// `_npi_where` (np.where of three arrays), `_npi_where_lscalar` (x a
// scalar), `_npi_where_rscalar` (y a scalar) and `_npi_where_scalar2`
// (both). All broadcast their arrays NumPy-style; the condition (any dtype)
// is true where non-zero. Only the legacy `where` has MXNet 1.x's row form
// (a 1-D condition of length x.shape[0] selecting whole rows), which NumPy
// reads as a condition along the last axis. x, y and the output share one
// dtype (no promotion, as MXNet 2); a scalar is converted to it (truncated
// for integers); two scalars give float32. The condition gets no gradient.
#include <vector>

#include "backends/cpu/grad_util.h"
#include "backends/cpu/kernel_util.h"
#include "base/error.h"

namespace mx {
namespace cpu {
namespace {

constexpr int64_t kGrain = 1 << 14;

// MXNet's row form: a 1-D condition of length x.shape[0], with x and y of
// one shape of rank > 1, picks whole rows. It is read as shape (n, 1, ...)
// and then broadcast like any condition (so a square x takes rows, as in
// MXNet, where NumPy would take columns).
TShape RowFormConditionShape(const TShape& cond, const TShape& x,
                             const TShape& y) {
  if (cond.ndim() != 1 || x.ndim() < 2 || x != y || cond[0] != x[0]) {
    return cond;
  }
  TShape rows(std::vector<int64_t>(static_cast<size_t>(x.ndim()), 1));
  rows[0] = cond[0];
  return rows;
}

// out = condition ? x : y, each broadcast to out's shape; `cond_shape` is
// the shape the condition is read as.
template <typename C, typename T>
void WhereKernel(const TBlob& c_blob, const TShape& cond_shape,
                 const TBlob& x_blob, const TBlob& y_blob, OpReqType r,
                 const TBlob& out) {
  const C* c = c_blob.data<C>();
  const T* x = x_blob.data<T>();
  const T* y = y_blob.data<T>();
  T* o = out.data<T>();
  const TShape& os = out.shape;
  const int64_t n = os.Size();
  auto truth = [](C v) { return static_cast<AccType<C>>(v) != AccType<C>(0); };
  if (cond_shape == os && x_blob.shape == os && y_blob.shape == os) {
    ParallelFor(n, kGrain, [&](int64_t s, int64_t e) {
      for (int64_t i = s; i < e; ++i)
        Assign(o + i, r, truth(c[i]) ? x[i] : y[i]);
    });
    return;
  }
  const auto sc = BroadcastStrides(cond_shape, os);
  const auto sx = BroadcastStrides(x_blob.shape, os);
  const auto sy = BroadcastStrides(y_blob.shape, os);
  ParallelFor(n, kGrain / 4, [&](int64_t s, int64_t e) {
    for (int64_t i = s; i < e; ++i) {
      const bool pick = truth(c[BroadcastOffset(i, os, sc)]);
      Assign(
          o + i, r,
          pick ? x[BroadcastOffset(i, os, sx)] : y[BroadcastOffset(i, os, sy)]);
    }
  });
}

// Runs WhereKernel with x or y (or both) replaced by scalars where the
// pointers are given: a 0-d blob broadcasts to any shape.
void RunWhere(const std::vector<TBlob>& in, const TShape& cond_shape,
              const TBlob* x, const TBlob* y, const double* x_scalar,
              const double* y_scalar, OpReqType req, const TBlob& out) {
  if (out.Size() == 0 || req == OpReqType::kNullOp) return;
  MX_DTYPE_SWITCH(in[0].dtype, C, {
    MX_DTYPE_SWITCH(out.dtype, T, {
      T xs = x_scalar ? static_cast<T>(*x_scalar) : T();
      T ys = y_scalar ? static_cast<T>(*y_scalar) : T();
      const TBlob x_blob =
          x ? *x : TBlob{&xs, TShape::Scalar(), out.dtype, out.ctx, {}};
      const TBlob y_blob =
          y ? *y : TBlob{&ys, TShape::Scalar(), out.dtype, out.ctx, {}};
      WhereKernel<C, T>(in[0], cond_shape, x_blob, y_blob, req, out);
    });
  });
}

// Broadcasts every known input shape into the output's.
template <bool kRowForm>
void WhereShape(const NodeAttrs& attrs, std::vector<TShape>* in,
                std::vector<TShape>* out) {
  for (const TShape& s : *in) {
    if (!s.is_known()) return;
  }
  TShape shape = (*in)[0];
  if (kRowForm && in->size() == 3) {
    shape = RowFormConditionShape((*in)[0], (*in)[1], (*in)[2]);
  }
  for (size_t i = 1; i < in->size(); ++i) {
    shape = BroadcastShape(attrs, shape, (*in)[i]);
  }
  AssignShape(attrs, out, 0, shape, true);
}

// x, y (the array inputs after the condition) and the output share one
// dtype; the condition may have any.
void WhereType(const NodeAttrs& attrs, std::vector<DType>* in,
               std::vector<DType>* out) {
  DType t = (*out)[0];
  for (size_t i = 1; i < in->size(); ++i) {
    if (t == DType::kUnknown) t = (*in)[i];
  }
  for (size_t i = 1; i < in->size(); ++i) AssignType(attrs, in, i, t, false);
  AssignType(attrs, out, 0, t, true);
}

void RegisterWhere(const char* name, bool row_form, const char* doc) {
  OpRegistry::Get()
      ->Register(name)
      .Describe(doc)
      .SetNumInputs(3)
      .SetInputNames({"condition", "x", "y"})
      .SetInferShape(row_form ? WhereShape<true> : WhereShape<false>)
      .SetInferType(WhereType)
      .SetCompute(Context::kCPU, [row_form](const OpContext&, const NodeAttrs&,
                                            const std::vector<TBlob>& in,
                                            const std::vector<OpReqType>& req,
                                            const std::vector<TBlob>& out) {
        const TShape cond =
            row_form
                ? RowFormConditionShape(in[0].shape, in[1].shape, in[2].shape)
                : in[0].shape;
        RunWhere(in, cond, &in[1], &in[2], nullptr, nullptr, req[0], out[0]);
      });
}

struct WhereScalarParam {
  double scalar = 0;
  static void Declare(ParamSchema<WhereScalarParam>* s) {
    s->Field("scalar", &WhereScalarParam::scalar)
        .Describe("The value taken for the missing array.");
  }
};

struct WhereScalar2Param {
  double x = 0;
  double y = 0;
  static void Declare(ParamSchema<WhereScalar2Param>* s) {
    s->Field("x", &WhereScalar2Param::x).Describe("Where the condition holds.");
    s->Field("y", &WhereScalar2Param::y).Describe("Elsewhere.");
  }
};

// kScalarIsX: _npi_where_lscalar (condition ? scalar : array), else
// _npi_where_rscalar (condition ? array : scalar). MXNet names the array
// input "x" in the first and "y" in the second.
template <bool kScalarIsX>
void RegisterWhereScalar(const char* name, const char* doc) {
  OpRegistry::Get()
      ->Register(name)
      .Describe(doc)
      .SetNumInputs(2)
      .SetInputNames({"condition", kScalarIsX ? "x" : "y"})
      .SetParams<WhereScalarParam>()
      .SetInferShape(WhereShape<false>)
      .SetInferType(WhereType)
      .SetCompute(Context::kCPU, [](const OpContext&, const NodeAttrs& attrs,
                                    const std::vector<TBlob>& in,
                                    const std::vector<OpReqType>& req,
                                    const std::vector<TBlob>& out) {
        const double s = attrs.get<WhereScalarParam>().scalar;
        if (kScalarIsX) {
          RunWhere(in, in[0].shape, nullptr, &in[1], &s, nullptr, req[0],
                   out[0]);
        } else {
          RunWhere(in, in[0].shape, &in[1], nullptr, nullptr, &s, req[0],
                   out[0]);
        }
      });
}

[[maybe_unused]] const bool kRegistered = [] {
  RegisterWhere(
      "where", true,
      "condition ? x : y elementwise, with NumPy broadcasting of all three; "
      "the condition is true where non-zero. A 1-D condition of length "
      "x.shape[0] with x and y of one shape (rank > 1) selects whole rows "
      "(MXNet's form).");
  RegisterWhere("_npi_where", false,
                "np.where(condition, x, y): condition ? x : y with NumPy "
                "broadcasting of all three (a 1-D condition runs along the "
                "last axis); x and y of one dtype.");
  RegisterWhereScalar<true>("_npi_where_lscalar",
                            "condition ? scalar : x (the array is y), "
                            "broadcast; the array's dtype.");
  RegisterWhereScalar<false>("_npi_where_rscalar",
                             "condition ? y : scalar (the array is x), "
                             "broadcast; the array's dtype.");
  OpRegistry::Get()
      ->Register("_npi_where_scalar2")
      .Describe(
          "condition ? x : y for scalars x and y: float32, the "
          "condition's shape.")
      .SetNumInputs(1)
      .SetInputNames({"condition"})
      .SetParams<WhereScalar2Param>()
      .SetInferShape(WhereShape<false>)
      .SetInferType([](const NodeAttrs& attrs, std::vector<DType>*,
                       std::vector<DType>* out) {
        AssignType(attrs, out, 0, DType::kFloat32, true);
      })
      .SetCompute(Context::kCPU, [](const OpContext&, const NodeAttrs& attrs,
                                    const std::vector<TBlob>& in,
                                    const std::vector<OpReqType>& req,
                                    const std::vector<TBlob>& out) {
        const WhereScalar2Param& p = attrs.get<WhereScalar2Param>();
        RunWhere(in, in[0].shape, nullptr, nullptr, &p.x, &p.y, req[0], out[0]);
      });

  using B = GradBuilder;
  using E = std::vector<NodeEntry>;
  // x gets g where the condition holds, y elsewhere; each summed back to
  // its shape, since the inputs broadcast. The selection uses the op's own
  // rule (the legacy row form or NumPy's).
  for (const char* op : {"where", "_npi_where"}) {
    const std::string name = op;
    SetGradient(name, [name](B& b, const E& g) {
      const NodeEntry zeros = b.Op("zeros_like", {g[0]});
      const NodeEntry gx = b.Op(name, {b.x(0), g[0], zeros});
      const NodeEntry gy = b.Op(name, {b.x(0), zeros, g[0]});
      return E{NodeEntry{}, b.Op("_reduce_sum_like", {gx, b.x(1)}),
               b.Op("_reduce_sum_like", {gy, b.x(2)})};
    });
  }
  // The array is taken where the condition fails (lscalar) or holds
  // (rscalar).
  SetGradient("_npi_where_lscalar", [](B& b, const E& g) {
    const NodeEntry zeros = b.Op("zeros_like", {g[0]});
    return E{NodeEntry{},
             b.Op("_reduce_sum_like",
                  {b.Op("_npi_where", {b.x(0), zeros, g[0]}), b.x(1)})};
  });
  SetGradient("_npi_where_rscalar", [](B& b, const E& g) {
    const NodeEntry zeros = b.Op("zeros_like", {g[0]});
    return E{NodeEntry{},
             b.Op("_reduce_sum_like",
                  {b.Op("_npi_where", {b.x(0), g[0], zeros}), b.x(1)})};
  });
  SetGradient("_npi_where_scalar2",
              [](B&, const E&) { return E{NodeEntry{}}; });
  return true;
}();

}  // namespace
}  // namespace cpu
}  // namespace mx
