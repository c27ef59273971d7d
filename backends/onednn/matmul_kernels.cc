#include "backends/onednn/matmul_kernels.h"

#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include "backends/common/attr_parse.h"
#include "backends/onednn/dnnl_context.h"
#include "backends/onednn/primitive_cache.h"

namespace mx_onednn {
namespace {

using mxplugin::Attrs;
using mxplugin::KernelContext;
using mxplugin::Tensors;

struct MatmulPrim {
  dnnl::matmul prim;
  dnnl::memory::desc a, b, bias, c, scratchpad;
};

// (rows x cols) stored row-major, or its transpose stored row-major.
dnnl::memory::desc MatrixDesc(int64_t batch, int64_t rows, int64_t cols,
                              bool transposed) {
  const Dims strides =
      transposed ? Dims{rows * cols, 1, rows} : Dims{rows * cols, cols, 1};
  if (batch == 1) return StridedDesc({rows, cols}, {strides[1], strides[2]});
  return StridedDesc({batch, rows, cols}, strides);
}

std::shared_ptr<const MatmulPrim> MakeMatmul(const GemmSpec& s) {
  auto p = std::make_shared<MatmulPrim>();
  p->a = MatrixDesc(s.batch, s.m, s.k, s.ta);
  p->b = MatrixDesc(s.batch, s.k, s.n, s.tb);
  p->c = MatrixDesc(s.batch, s.m, s.n, false);
  if (s.bias) {
    p->bias = s.batch == 1 ? PlainDesc({1, s.n}) : PlainDesc({1, 1, s.n});
  }
  dnnl::matmul::desc desc(p->a, p->b, p->bias, p->c);
  dnnl::matmul::primitive_desc pd(desc, UserScratchpadAttr(), Engine());
  p->scratchpad = pd.scratchpad_desc();
  p->prim = dnnl::matmul(pd);
  return p;
}

bool Flag(const Attrs& attrs, const char* key, bool fallback,
          const std::string& op) {
  const std::optional<bool> v =
      mxplugin::ParseBool(attrs.Get(key, fallback ? "1" : "0"));
  if (!v) Decline(op, std::string("cannot read attribute ") + key);
  return *v;
}

int64_t Prod(const std::vector<int64_t>& s, size_t b, size_t e) {
  int64_t p = 1;
  for (size_t i = b; i < e; ++i) p *= s[i];
  return p;
}

// dot's 2-D view (see DotView in backends/cpu/linalg_ops.cc): lhs as
// (m x k) or, transposed N-D, stored (k x m); rhs as (k x n) or stored
// (n x k).
GemmSpec DotSpec(const std::vector<int64_t>& l, const std::vector<int64_t>& r,
                 bool transpose_a, bool transpose_b) {
  GemmSpec s;
  s.ta = transpose_a && l.size() > 1;
  s.tb = transpose_b && r.size() > 1;
  s.k = l.size() == 1 ? l[0] : s.ta ? l[0] : l.back();
  s.m = l.size() == 1 ? 1
        : s.ta        ? Prod(l, 1, l.size())
                      : Prod(l, 0, l.size() - 1);
  s.n = r.size() == 1 ? 1
        : s.tb        ? Prod(r, 0, r.size() - 1)
                      : Prod(r, 1, r.size());
  return s;
}

void Dot(const KernelContext&, const Attrs& attrs, Tensors in,
         const int32_t* req, Tensors out) {
  RequireFloat32("dot", in, out);
  const GemmSpec s = DotSpec(in[0].shape(), in[1].shape(),
                             Flag(attrs, "transpose_a", false, "dot"),
                             Flag(attrs, "transpose_b", false, "dot"));
  OutputBuffer c(out[0], req[0], {in[0].data<float>(), in[1].data<float>()});
  if (c.skip()) return;
  Gemm(s, in[0].data<float>(), in[1].data<float>(), nullptr, c.data());
  c.Finish();
}

// (out_grad, lhs, rhs) -> (lhs_grad, rhs_grad), as the built-in
// DotBackwardCompute: each gradient is one product of out_grad and the
// other operand.
void DotBackward(const KernelContext&, const Attrs& attrs, Tensors in,
                 const int32_t* req, Tensors out) {
  RequireFloat32("_backward_dot", in, out);
  const GemmSpec s =
      DotSpec(in[1].shape(), in[2].shape(),
              Flag(attrs, "transpose_a", false, "_backward_dot"),
              Flag(attrs, "transpose_b", false, "_backward_dot"));
  const float* dc = in[0].data<float>();
  const float* a = in[1].data<float>();
  const float* b = in[2].data<float>();
  const std::vector<const void*> inputs{dc, a, b};
  OutputBuffer da(out[0], req[0], inputs), db(out[1], req[1], inputs);
  const int64_t m = s.m, n = s.n, k = s.k;
  if (!da.skip()) {
    if (!s.ta) {
      Gemm({1, m, k, n, false, !s.tb, false}, dc, b, nullptr, da.data());
    } else {
      Gemm({1, k, m, n, s.tb, true, false}, b, dc, nullptr, da.data());
    }
    da.Finish();
  }
  if (!db.skip()) {
    if (!s.tb) {
      Gemm({1, k, n, m, !s.ta, false, false}, a, dc, nullptr, db.data());
    } else {
      Gemm({1, n, k, m, true, s.ta, false}, dc, a, nullptr, db.data());
    }
    db.Finish();
  }
}

void BatchDot(const KernelContext&, const Attrs& attrs, Tensors in,
              const int32_t* req, Tensors out) {
  RequireFloat32("batch_dot", in, out);
  const std::vector<int64_t> l = in[0].shape(), o = out[0].shape();
  const size_t nd = l.size();
  if (nd < 3 || o.size() != nd) Decline("batch_dot", "unexpected ranks");
  GemmSpec s;
  s.ta = Flag(attrs, "transpose_a", false, "batch_dot");
  s.tb = Flag(attrs, "transpose_b", false, "batch_dot");
  s.batch = Prod(l, 0, nd - 2);
  s.m = o[nd - 2];
  s.n = o[nd - 1];
  s.k = s.ta ? l[nd - 2] : l[nd - 1];
  OutputBuffer c(out[0], req[0], {in[0].data<float>(), in[1].data<float>()});
  if (c.skip()) return;
  Gemm(s, in[0].data<float>(), in[1].data<float>(), nullptr, c.data());
  c.Finish();
}

// out = data . weight^T + bias, data viewed as (m x k).
void FullyConnected(const KernelContext&, const Attrs& attrs, Tensors in,
                    const int32_t* req, Tensors out) {
  const std::string op = "FullyConnected";
  RequireFloat32(op, in, out);
  const bool no_bias = Flag(attrs, "no_bias", false, op);
  const bool flatten = Flag(attrs, "flatten", true, op);
  const std::vector<int64_t> d = in[0].shape(), w = in[1].shape();
  if (w.size() != 2 || in.size() != (no_bias ? 2 : 3)) {
    Decline(op, "unexpected inputs");
  }
  GemmSpec s;
  s.m = flatten ? d[0] : Prod(d, 0, d.size() - 1);
  s.n = w[0];
  s.k = w[1];
  s.tb = true;
  s.bias = !no_bias;
  if (s.m * s.k != in[0].size() || s.m * s.n != out[0].size()) {
    Decline(op, "data does not match the weight");
  }
  OutputBuffer c(out[0], req[0], {in[0].data<float>(), in[1].data<float>()});
  if (c.skip()) return;
  Gemm(s, in[0].data<float>(), in[1].data<float>(),
       no_bias ? nullptr : in[2].data<float>(), c.data());
  c.Finish();
}

}  // namespace

void Gemm(const GemmSpec& s, const float* a, const float* b, const float* bias,
          float* c) {
  if (s.batch == 1) {
    // One product: oneDNN's sgemm (row-major), which runs faster than the
    // matmul primitive on plain layouts (and needs no cached primitive).
    PrepareThread();
    CountOnednnCall();
    float beta = 0.f;
    if (s.bias) {
      for (int64_t i = 0; i < s.m; ++i) {
        std::copy(bias, bias + s.n, c + i * s.n);
      }
      beta = 1.f;
    }
    const dnnl_status_t status =
        dnnl_sgemm(s.ta ? 'T' : 'N', s.tb ? 'T' : 'N', s.m, s.n, s.k, 1.f, a,
                   s.ta ? s.m : s.k, b, s.tb ? s.k : s.n, beta, c, s.n);
    if (status != dnnl_success) {
      throw mxplugin::Error(MX_STATUS_RUNTIME_ERROR,
                            "dnnl_sgemm failed with status " +
                                std::to_string(static_cast<int>(status)));
    }
    return;
  }
  const std::string key = "matmul:" + DimsKey({s.batch, s.m, s.n, s.k}) +
                          (s.ta ? ":ta" : "") + (s.tb ? ":tb" : "") +
                          (s.bias ? ":bias" : "");
  std::shared_ptr<const MatmulPrim> p =
      CachedPrimitive<MatmulPrim>(key, [&] { return MakeMatmul(s); });
  std::unordered_map<int, dnnl::memory> args{{DNNL_ARG_SRC, Wrap(p->a, a)},
                                             {DNNL_ARG_WEIGHTS, Wrap(p->b, b)},
                                             {DNNL_ARG_DST, Wrap(p->c, c)}};
  if (s.bias) args.emplace(DNNL_ARG_BIAS, Wrap(p->bias, bias));
  Execute(p->prim, p->scratchpad, std::move(args));
}

void RegisterMatmulKernels(mxplugin::Plugin& plugin) {
  RegisterCpuKernel(plugin, "dot", Dot);
  RegisterCpuKernel(plugin, "_backward_dot", DotBackward);
  RegisterCpuKernel(plugin, "batch_dot", BatchDot);
  RegisterCpuKernel(plugin, "FullyConnected", FullyConnected);
}

}  // namespace mx_onednn
