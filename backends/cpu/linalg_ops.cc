// Matrix products: dot, batch_dot and FullyConnected, and their gradients.
// float32 and float64 multiply through Eigen on the arrays' memory; float16
// goes through float buffers.
#include <Eigen/Core>
#include <string>
#include <type_traits>
#include <vector>

#include "absl/strings/str_cat.h"
#include "backends/cpu/gemm.h"
#include "backends/cpu/grad_util.h"
#include "backends/cpu/kernel_util.h"
#include "base/error.h"

namespace mx {
namespace cpu {
namespace {

// Product of dims [b, e); -1 when any is unknown.
int64_t Prod(const TShape& s, int b, int e) {
  int64_t p = 1;
  for (int i = b; i < e; ++i) {
    if (s[i] < 0) return -1;
    p *= s[i];
  }
  return p;
}

TShape Concat(const TShape& a, const TShape& b) {
  std::vector<int64_t> dims(a.begin(), a.end());
  dims.insert(dims.end(), b.begin(), b.end());
  return TShape(dims);
}

TShape Sub(const TShape& s, int b, int e) {
  return TShape(s.begin() + b, s.begin() + e);
}

// ---- dot. ----

struct DotParam {
  bool transpose_a = false;
  bool transpose_b = false;
  static void Declare(ParamSchema<DotParam>* s) {
    s->Field("transpose_a", &DotParam::transpose_a)
        .Describe("Transpose lhs (viewed as 2-D) first.");
    s->Field("transpose_b", &DotParam::transpose_b)
        .Describe("Transpose rhs (viewed as 2-D) first.");
  }
};

// dot's view of lhs as an (m x k) matrix and rhs as (k x n), and the output
// shape. A transposed N-D lhs is viewed as (shape[0], rest) and contracted
// on axis 0; a transposed N-D rhs as (rest, shape[-1]) and contracted on its
// last axis (MXNet's rule). Transposing a 1-D operand changes nothing.
struct DotGeometry {
  int64_t m, n, k_lhs, k_rhs;
  TShape out;
};

DotGeometry DotView(const TShape& l, const TShape& r, const DotParam& p) {
  DotGeometry g;
  const int nl = l.ndim(), nr = r.ndim();
  TShape lrest, rrest;
  if (nl == 1) {
    g.k_lhs = l[0];
    lrest = TShape(std::vector<int64_t>{});
  } else if (p.transpose_a) {
    g.k_lhs = l[0];
    lrest = Sub(l, 1, nl);
  } else {
    g.k_lhs = l[nl - 1];
    lrest = Sub(l, 0, nl - 1);
  }
  if (nr == 1) {
    g.k_rhs = r[0];
    rrest = TShape(std::vector<int64_t>{});
  } else if (p.transpose_b) {
    g.k_rhs = r[nr - 1];
    rrest = Sub(r, 0, nr - 1);
  } else {
    g.k_rhs = r[0];
    rrest = Sub(r, 1, nr);
  }
  g.m = Prod(lrest, 0, lrest.ndim());
  g.n = Prod(rrest, 0, rrest.ndim());
  g.out = (nl == 1 && nr == 1) ? TShape{1} : Concat(lrest, rrest);
  return g;
}

void DotShape(const NodeAttrs& attrs, std::vector<TShape>* in,
              std::vector<TShape>* out) {
  const DotParam& p = attrs.get<DotParam>();
  const TShape &l = (*in)[0], &r = (*in)[1];
  if (!l.ndim_known() || !r.ndim_known()) return;
  if (l.ndim() == 0 || r.ndim() == 0) {
    throw ShapeError(absl::StrCat(OpLabel(attrs), ": lhs has shape ",
                                  l.ToString(), " and rhs has shape ",
                                  r.ToString(), "; scalars are not supported"));
  }
  if (l.ndim() == 1 && r.ndim() == 1 && (p.transpose_a || p.transpose_b)) {
    throw InvalidArgument(absl::StrCat(OpLabel(attrs), ": lhs ", l.ToString(),
                                       " and rhs ", r.ToString(),
                                       " are vectors, which cannot be "
                                       "transposed"));
  }
  const DotGeometry g = DotView(l, r, p);
  if (g.k_lhs >= 0 && g.k_rhs >= 0 && g.k_lhs != g.k_rhs) {
    throw ShapeError(absl::StrCat(
        OpLabel(attrs), ": lhs ", l.ToString(), " and rhs ", r.ToString(),
        " do not fit (transpose_a=", p.transpose_a ? "True" : "False",
        ", transpose_b=", p.transpose_b ? "True" : "False", "): lhs gives ",
        g.k_lhs, " to contract, rhs ", g.k_rhs));
  }
  AssignShape(attrs, out, 0, g.out, true);
}

void DotCompute(const OpContext&, const NodeAttrs& attrs,
                const std::vector<TBlob>& in, const std::vector<OpReqType>& req,
                const std::vector<TBlob>& out) {
  const DotParam& p = attrs.get<DotParam>();
  const DotGeometry g = DotView(in[0].shape, in[1].shape, p);
  const bool ta = p.transpose_a && in[0].shape.ndim() > 1;
  const bool tb = p.transpose_b && in[1].shape.ndim() > 1;
  MX_FLOAT_DTYPE_SWITCH(in[0].dtype, T, {
    GemmReq(in[0].data<T>(), in[1].data<T>(), out[0].data<T>(), g.m, g.n,
            g.k_lhs, ta, tb, req[0], kNoEpilogue);
  });
}

MX_REGISTER_OP(dot)
    .Describe(
        "Matrix product: contracts the last axis of lhs with the first "
        "axis of rhs; vector . vector gives shape (1,).")
    .SetNumInputs(2)
    .SetInputNames({"lhs", "rhs"})
    .SetParams<DotParam>()
    .SetInferShape(DotShape)
    .SetInferType(SameFloatType)
    .SetCompute(Context::kCPU, DotCompute);

// Gradients of dot: inputs (out_grad, lhs, rhs), outputs (lhs_grad,
// rhs_grad). A kernel rather than a graph of dots because dot's N-D views
// need the operands' ranks, which are unknown when the graph is built.
void DotBackwardShape(const NodeAttrs& attrs, std::vector<TShape>* in,
                      std::vector<TShape>* out) {
  AssignShape(attrs, out, 0, (*in)[1], true);
  AssignShape(attrs, out, 1, (*in)[2], true);
  AssignShape(attrs, in, 1, (*out)[0], false);
  AssignShape(attrs, in, 2, (*out)[1], false);
  // The kernel takes dot's geometry from lhs and rhs: they must fit as for
  // dot, and out_grad must have dot's output shape.
  std::vector<TShape> operands{(*in)[1], (*in)[2]}, product{TShape()};
  DotShape(attrs, &operands, &product);
  AssignShape(attrs, in, 0, product[0], false);
}

void DotBackwardCompute(const OpContext&, const NodeAttrs& attrs,
                        const std::vector<TBlob>& in,
                        const std::vector<OpReqType>& req,
                        const std::vector<TBlob>& out) {
  const DotParam& p = attrs.get<DotParam>();
  const DotGeometry g = DotView(in[1].shape, in[2].shape, p);
  const bool ta = p.transpose_a && in[1].shape.ndim() > 1;
  const bool tb = p.transpose_b && in[2].shape.ndim() > 1;
  const int64_t m = g.m, n = g.n, k = g.k_lhs;
  MX_FLOAT_DTYPE_SWITCH(in[0].dtype, T, {
    const T* dc = in[0].data<T>();
    const T* a = in[1].data<T>();
    const T* b = in[2].data<T>();
    // lhs is stored (m x k), or (k x m) when ta; rhs (k x n), or (n x k).
    if (!ta) {
      GemmReq(dc, b, out[0].data<T>(), m, k, n, false, !tb, req[0],
              kNoEpilogue);
    } else {
      GemmReq(b, dc, out[0].data<T>(), k, m, n, tb, true, req[0], kNoEpilogue);
    }
    if (!tb) {
      GemmReq(a, dc, out[1].data<T>(), k, n, m, !ta, false, req[1],
              kNoEpilogue);
    } else {
      GemmReq(dc, a, out[1].data<T>(), n, k, m, true, ta, req[1], kNoEpilogue);
    }
  });
}

MX_REGISTER_OP(_backward_dot)
    .Describe(
        "Gradients of dot: (out_grad, lhs, rhs) -> (lhs_grad, "
        "rhs_grad).")
    .SetNumInputs(3)
    .SetInputNames({"out_grad", "lhs", "rhs"})
    .SetNumOutputs(2)
    .SetOutputNames({"lhs_grad", "rhs_grad"})
    .SetParams<DotParam>()
    .SetInferShape(DotBackwardShape)
    .SetInferType(SameFloatType)
    .SetCompute(Context::kCPU, DotBackwardCompute);

// ---- batch_dot. ----

void BatchDotShape(const NodeAttrs& attrs, std::vector<TShape>* in,
                   std::vector<TShape>* out) {
  const DotParam& p = attrs.get<DotParam>();
  const TShape &l = (*in)[0], &r = (*in)[1];
  if (!l.ndim_known() || !r.ndim_known()) return;
  const int nd = l.ndim();
  if (nd < 3 || r.ndim() != nd) {
    throw ShapeError(absl::StrCat(
        OpLabel(attrs), ": lhs has shape ", l.ToString(), " and rhs has shape ",
        r.ToString(),
        " but both must have the same rank, at least 3 (batch..., rows, "
        "cols)"));
  }
  TShape batch = Sub(l, 0, nd - 2);
  if (!MergeShape(&batch, Sub(r, 0, nd - 2))) {
    throw ShapeError(absl::StrCat(OpLabel(attrs), ": lhs ", l.ToString(),
                                  " and rhs ", r.ToString(),
                                  " have different batch dimensions"));
  }
  const int64_t m = p.transpose_a ? l[nd - 1] : l[nd - 2];
  const int64_t kl = p.transpose_a ? l[nd - 2] : l[nd - 1];
  const int64_t kr = p.transpose_b ? r[nd - 1] : r[nd - 2];
  const int64_t n = p.transpose_b ? r[nd - 2] : r[nd - 1];
  if (kl >= 0 && kr >= 0 && kl != kr) {
    throw ShapeError(absl::StrCat(
        OpLabel(attrs), ": lhs ", l.ToString(), " and rhs ", r.ToString(),
        " do not fit (transpose_a=", p.transpose_a ? "True" : "False",
        ", transpose_b=", p.transpose_b ? "True" : "False", "): lhs gives ", kl,
        " to contract, rhs ", kr));
  }
  AssignShape(attrs, out, 0, Concat(batch, TShape{m, n}), true);
}

void BatchDotCompute(const OpContext&, const NodeAttrs& attrs,
                     const std::vector<TBlob>& in,
                     const std::vector<OpReqType>& req,
                     const std::vector<TBlob>& out) {
  const DotParam& p = attrs.get<DotParam>();
  const TShape &l = in[0].shape, &o = out[0].shape;
  const int nd = l.ndim();
  const int64_t batch = l.ProdDims(0, nd - 2);
  const int64_t m = o[nd - 2], n = o[nd - 1];
  const int64_t k = p.transpose_a ? l[nd - 2] : l[nd - 1];
  MX_FLOAT_DTYPE_SWITCH(in[0].dtype, T, {
    const T* a = in[0].data<T>();
    const T* b = in[1].data<T>();
    T* c = out[0].data<T>();
    ParallelFor(batch, 1, [&](int64_t s, int64_t e) {
      for (int64_t i = s; i < e; ++i) {
        GemmReq(a + i * m * k, b + i * k * n, c + i * m * n, m, n, k,
                p.transpose_a, p.transpose_b, req[0], kNoEpilogue);
      }
    });
  });
}

MX_REGISTER_OP(batch_dot)
    .Describe(
        "Batched matrix product: (B, M, K) x (B, K, N) -> (B, M, N); "
        "transposes apply to the last two axes.")
    .SetNumInputs(2)
    .SetInputNames({"lhs", "rhs"})
    .SetParams<DotParam>()
    .SetInferShape(BatchDotShape)
    .SetInferType(SameFloatType)
    .SetCompute(Context::kCPU, BatchDotCompute);

// ---- FullyConnected. ----

struct FullyConnectedParam {
  int64_t num_hidden = 0;
  bool no_bias = false;
  bool flatten = true;
  static void Declare(ParamSchema<FullyConnectedParam>* s) {
    s->Field("num_hidden", &FullyConnectedParam::num_hidden)
        .Required()
        .Describe("Number of output units.");
    s->Field("no_bias", &FullyConnectedParam::no_bias)
        .Describe("Leave out the bias input.");
    s->Field("flatten", &FullyConnectedParam::flatten)
        .Describe(
            "View data (N, ...) as (N, K); otherwise apply to the last "
            "axis.");
  }
};

void FullyConnectedShape(const NodeAttrs& attrs, std::vector<TShape>* in,
                         std::vector<TShape>* out) {
  const FullyConnectedParam& p = attrs.get<FullyConnectedParam>();
  const int64_t nh = p.num_hidden;
  if (nh <= 0) {
    throw InvalidArgument(absl::StrCat(OpLabel(attrs), ": num_hidden=", nh,
                                       " but it must be positive"));
  }
  const TShape& o = (*out)[0];
  // From the output back to data.
  if (o.ndim_known()) {
    if (p.flatten) {
      AssignShape(attrs, out, 0, TShape{-1, nh}, true);
      if ((*in)[0].ndim() >= 1) {
        TShape d = TShape::Filled((*in)[0].ndim(), -1);
        d[0] = o[0];
        AssignShape(attrs, in, 0, d, false);
      }
    } else if (o.ndim() >= 1) {
      TShape last = TShape::Filled(o.ndim(), -1);
      last[o.ndim() - 1] = nh;
      AssignShape(attrs, out, 0, last, true);
      TShape d = (*out)[0];
      d[o.ndim() - 1] = -1;
      AssignShape(attrs, in, 0, d, false);
    }
  }
  if (!p.no_bias) AssignShape(attrs, in, 2, TShape{nh}, false);
  if (!(*in)[0].ndim_known()) {
    AssignShape(attrs, in, 1, TShape{nh, -1}, false);
    return;
  }
  TShape& d = (*in)[0];
  const int nd = d.ndim();
  if (nd == 0) {
    throw ShapeError(absl::StrCat(OpLabel(attrs), ": input 0 (data) has shape ",
                                  d.ToString(),
                                  " but at least 1-D is required"));
  }
  const int64_t k = p.flatten ? Prod(d, 1, nd) : d[nd - 1];
  AssignShape(attrs, in, 1, TShape{nh, k}, false);
  // The weight gives K back to data where one dim holds all of it.
  const int64_t wk = (*in)[1][1];
  if (k < 0 && wk >= 0 && (!p.flatten || nd == 2)) {
    TShape dk = TShape::Filled(nd, -1);
    dk[nd - 1] = wk;
    AssignShape(attrs, in, 0, dk, false);
  }
  TShape o_shape = p.flatten ? TShape{d[0], nh} : d;
  if (!p.flatten) o_shape[nd - 1] = nh;
  AssignShape(attrs, out, 0, o_shape, true);
}

void FullyConnectedCompute(const OpContext&, const NodeAttrs& attrs,
                           const std::vector<TBlob>& in,
                           const std::vector<OpReqType>& req,
                           const std::vector<TBlob>& out) {
  const FullyConnectedParam& p = attrs.get<FullyConnectedParam>();
  const TShape& d = in[0].shape;
  const int64_t nh = p.num_hidden;
  const int64_t m = p.flatten ? d[0] : d.ProdDims(0, d.ndim() - 1);
  const int64_t k = in[1].shape[1];
  MX_FLOAT_DTYPE_SWITCH(in[0].dtype, T, {
    const T* bias = p.no_bias ? nullptr : in[2].data<T>();
    // c is float or double here (float16 products go through float).
    auto add_bias = [bias](auto* c, int64_t rows, int64_t cols) {
      if (bias == nullptr) return;
      using A = std::remove_pointer_t<decltype(c)>;
      for (int64_t i = 0; i < rows; ++i) {
        for (int64_t j = 0; j < cols; ++j) {
          c[i * cols + j] += static_cast<A>(bias[j]);
        }
      }
    };
    GemmReq(in[0].data<T>(), in[1].data<T>(), out[0].data<T>(), m, nh, k, false,
            true, req[0], add_bias);
  });
}

MX_REGISTER_OP(FullyConnected)
    .Describe(
        "Dense layer: out = data . weight^T + bias, with weight "
        "(num_hidden, K) and bias (num_hidden,).")
    .SetNumInputs([](const NodeAttrs& attrs) {
      return attrs.get<FullyConnectedParam>().no_bias ? 2 : 3;
    })
    .SetInputNames([](const NodeAttrs& attrs) {
      if (attrs.get<FullyConnectedParam>().no_bias) {
        return std::vector<std::string>{"data", "weight"};
      }
      return std::vector<std::string>{"data", "weight", "bias"};
    })
    .SetParams<FullyConnectedParam>()
    .SetInferShape(FullyConnectedShape)
    .SetInferType(SameFloatType)
    .SetCompute(Context::kCPU, FullyConnectedCompute);

// ---- Gradients. ----

AttrDict Transposes(bool ta, bool tb) {
  return {{"transpose_a", ta ? "True" : "False"},
          {"transpose_b", tb ? "True" : "False"}};
}

std::vector<NodeEntry> DotGradient(GradBuilder& b,
                                   const std::vector<NodeEntry>& g) {
  const NodeEntry both =
      b.Op("_backward_dot", {g[0], b.x(0), b.x(1)}, b.n->attrs.dict);
  return {both, NodeEntry{both.node, 1, 0}};
}

// C = op(A) op(B) on the last two axes; each gradient is another batch_dot,
// so it can be differentiated again.
std::vector<NodeEntry> BatchDotGradient(GradBuilder& b,
                                        const std::vector<NodeEntry>& g) {
  const DotParam& p = b.n->attrs.get<DotParam>();
  const NodeEntry &c = g[0], a = b.x(0), r = b.x(1);
  auto bd = [&](const NodeEntry& l, const NodeEntry& rr, bool ta, bool tb) {
    return b.Op("batch_dot", {l, rr}, Transposes(ta, tb));
  };
  if (!p.transpose_a && !p.transpose_b) {
    return {bd(c, r, false, true), bd(a, c, true, false)};
  }
  if (!p.transpose_a) {  // C = A B^T
    return {bd(c, r, false, false), bd(c, a, true, false)};
  }
  if (!p.transpose_b) {  // C = A^T B
    return {bd(r, c, false, true), bd(a, c, false, false)};
  }
  return {bd(r, c, true, true), bd(c, a, true, true)};  // C = A^T B^T
}

// out = data2 . W^T + b with data2 = data viewed as (M, K).
std::vector<NodeEntry> FullyConnectedGradient(GradBuilder& b,
                                              const std::vector<NodeEntry>& g) {
  const FullyConnectedParam& p = b.n->attrs.get<FullyConnectedParam>();
  const NodeEntry &x = b.x(0), w = b.x(1);
  NodeEntry og = g[0], x2;
  NodeEntry dx = b.Op("dot", {og, w});
  if (p.flatten) {
    // og is (N, num_hidden); dot(og, W) is (N, K), data is (N, ...).
    x2 = b.Op("Flatten", {x});
    dx = b.Op("reshape_like", {dx, x});
  } else {
    // dot(og, W) already has data's shape (..., K).
    og = b.Op("Reshape", {og},
              {{"shape", absl::StrCat("(-1,", p.num_hidden, ")")}});
    x2 = b.Op("Reshape", {x}, {{"shape", "(-1,0)"}, {"reverse", "True"}});
  }
  std::vector<NodeEntry> grads{dx,
                               b.Op("dot", {og, x2}, Transposes(true, false))};
  if (!p.no_bias) {
    grads.push_back(b.Op("sum", {og}, {{"axis", "(0,)"}}));
  }
  return grads;
}

[[maybe_unused]] const bool kGradientsRegistered = [] {
  SetGradient("dot", DotGradient);
  SetGradient("batch_dot", BatchDotGradient);
  SetGradient("FullyConnected", FullyConnectedGradient);
  return true;
}();

}  // namespace
}  // namespace cpu
}  // namespace mx
