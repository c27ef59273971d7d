// MXNet's fused attention products (GluonNLP's BERT and transformer):
// _contrib_interleaved_matmul_{selfatt,encdec}_{qk,valatt} and their
// gradients _backward_interleaved_matmul_..., each the per-head products
// of backends/common/interleaved_matmul.h, run here by gathering every
// head's matrices and multiplying them with Gemm.
#include <algorithm>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "backends/common/interleaved_matmul.h"
#include "backends/cpu/gemm.h"
#include "backends/cpu/grad_util.h"
#include "backends/cpu/kernel_util.h"
#include "base/error.h"

namespace mx {
namespace cpu {
namespace {

using mx_attention::HeadMatrix;
using mx_attention::Kind;
using mx_attention::Plan;
using mx_attention::Shape3;

struct InterleavedParam {
  int heads = 0;
  static void Declare(ParamSchema<InterleavedParam>* s) {
    s->Field("heads", &InterleavedParam::heads)
        .Required()
        .Describe("The number of attention heads.");
  }
};

// The plan for these shapes, or a typed error naming the op.
Plan PlanFor(const NodeAttrs& attrs, Kind kind, bool backward,
             const std::vector<TShape>& shapes, std::vector<Shape3>* outputs) {
  std::vector<Shape3> in;
  for (size_t i = 0; i < shapes.size(); ++i) {
    const TShape& s = shapes[i];
    if (s.ndim() != 3) {
      throw ShapeError(absl::StrCat(OpLabel(attrs), ": input ", i,
                                    " has shape ", s.ToString(),
                                    " but 3 axes are required"));
    }
    in.push_back({s[0], s[1], s[2]});
  }
  Plan plan;
  const std::string why = mx_attention::PlanOf(
      kind, backward, attrs.get<InterleavedParam>().heads, in, &plan, outputs);
  if (!why.empty()) throw ShapeError(absl::StrCat(OpLabel(attrs), ": ", why));
  return plan;
}

void InferShapes(const NodeAttrs& attrs, Kind kind, bool backward,
                 std::vector<TShape>* in, std::vector<TShape>* out) {
  for (const TShape& s : *in) {
    if (!s.is_known()) return;
  }
  std::vector<Shape3> outputs;
  PlanFor(attrs, kind, backward, *in, &outputs);
  for (size_t i = 0; i < outputs.size(); ++i) {
    const Shape3& o = outputs[i];
    AssignShape(attrs, out, static_cast<int>(i), TShape{o[0], o[1], o[2]},
                true);
  }
}

// Head matrix bh of `m` in x, copied row by row into dst (rows x cols).
template <typename T, typename A>
void Gather(const T* x, const HeadMatrix& m, int64_t bh, A* dst) {
  const T* base = x + m.offset + bh * m.stride;
  for (int64_t i = 0; i < m.rows; ++i) {
    for (int64_t j = 0; j < m.cols; ++j) {
      dst[i * m.cols + j] = static_cast<A>(base[i * m.ld + j]);
    }
  }
}

template <typename T>
void RunPlan(const Plan& plan, const std::vector<TBlob>& in,
             const std::vector<OpReqType>& req, const std::vector<TBlob>& out) {
  using A = AccType<T>;
  // A written output starts at 0: the gradients leave parts untouched.
  for (size_t o = 0; o < out.size(); ++o) {
    if (req[o] == OpReqType::kWriteTo || req[o] == OpReqType::kWriteInplace) {
      std::fill(out[o].data<T>(), out[o].data<T>() + out[o].Size(), T(0));
    }
  }
  std::vector<A> a, b, c;
  for (const mx_attention::Product& p : plan.products) {
    const OpReqType r = req[p.c.index];
    if (r == OpReqType::kNullOp) continue;
    // An empty operand adds nothing (and its data pointer is null: no
    // offsets from it).
    if (in[p.a.index].Size() == 0 || in[p.b.index].Size() == 0 ||
        out[p.c.index].Size() == 0) {
      continue;
    }
    const int64_t m = p.c.m.rows, n = p.c.m.cols;
    const int64_t k = p.ta ? p.a.m.rows : p.a.m.cols;
    a.resize(static_cast<size_t>(p.a.m.rows * p.a.m.cols));
    b.resize(static_cast<size_t>(p.b.m.rows * p.b.m.cols));
    c.resize(static_cast<size_t>(m * n));
    const T* xa = in[p.a.index].data<T>();
    const T* xb = in[p.b.index].data<T>();
    T* y = out[p.c.index].data<T>();
    for (int64_t bh = 0; bh < plan.matrices; ++bh) {
      Gather(xa, p.a.m, bh, a.data());
      Gather(xb, p.b.m, bh, b.data());
      Gemm<A>(a.data(), b.data(), c.data(), m, n, k, p.ta, p.tb, false);
      T* dst = y + p.c.m.offset + bh * p.c.m.stride;
      const A scale = static_cast<A>(p.scale);
      for (int64_t i = 0; i < m; ++i) {
        for (int64_t j = 0; j < n; ++j) {
          // Outputs were zeroed: every product adds to its own part.
          Assign(dst + i * p.c.m.ld + j, OpReqType::kAddTo,
                 scale * c[static_cast<size_t>(i * n + j)]);
        }
      }
    }
  }
}

template <Kind kKind, bool kBackward>
void Compute(const OpContext&, const NodeAttrs& attrs,
             const std::vector<TBlob>& in, const std::vector<OpReqType>& req,
             const std::vector<TBlob>& out) {
  std::vector<TShape> shapes;
  for (const TBlob& b : in) shapes.push_back(b.shape);
  std::vector<Shape3> outputs;
  const Plan plan = PlanFor(attrs, kKind, kBackward, shapes, &outputs);
  MX_FLOAT_DTYPE_SWITCH(in[0].dtype, T, { RunPlan<T>(plan, in, req, out); });
}

std::vector<std::string> InputNames(Kind kind, bool backward) {
  std::vector<std::string> names;
  if (backward) names.push_back("out_grad");
  switch (kind) {
    case Kind::kSelfAttQK:
      names.push_back("queries_keys_values");
      break;
    case Kind::kSelfAttValAtt:
      names.insert(names.end(), {"queries_keys_values", "attention"});
      break;
    case Kind::kEncDecQK:
      names.insert(names.end(), {"queries", "keys_values"});
      break;
    case Kind::kEncDecValAtt:
      names.insert(names.end(), {"keys_values", "attention"});
      break;
  }
  return names;
}

template <Kind kKind, bool kBackward>
void Register(const char* doc) {
  const std::vector<std::string> names = InputNames(kKind, kBackward);
  const int outputs = kBackward && kKind != Kind::kSelfAttQK ? 2 : 1;
  OpRegistry::Get()
      ->Register(mx_attention::OpName(kKind, kBackward))
      .Describe(doc)
      .SetNumInputs(static_cast<int>(names.size()))
      .SetInputNames(names)
      .SetNumOutputs(outputs)
      .template SetParams<InterleavedParam>()
      .SetInferShape([](const NodeAttrs& attrs, std::vector<TShape>* in,
                        std::vector<TShape>* out) {
        InferShapes(attrs, kKind, kBackward, in, out);
      })
      .SetInferType(SameFloatType)
      .SetCompute(Context::kCPU, Compute<kKind, kBackward>);
  if (kBackward) return;
  // The gradient takes out_grad and the forward's inputs; one gradient per
  // input.
  SetGradient(
      mx_attention::OpName(kKind, false),
      [](GradBuilder& b, const std::vector<NodeEntry>& g) {
        std::vector<NodeEntry> in{g[0]};
        for (const NodeEntry& x : b.n->inputs) in.push_back(x);
        const NodeEntry bw =
            b.Op(mx_attention::OpName(kKind, true), in, b.n->attrs.dict);
        std::vector<NodeEntry> grads;
        for (size_t i = 0; i < b.n->inputs.size(); ++i) {
          grads.push_back(NodeEntry{bw.node, static_cast<uint32_t>(i), 0});
        }
        return grads;
      });
}

[[maybe_unused]] const bool kRegistered = [] {
  Register<Kind::kSelfAttQK, false>(
      "Per-head q k^T / sqrt(head_dim) of interleaved (seq, batch, 3 * heads "
      "* head_dim) projections: (batch * heads, seq, seq).");
  Register<Kind::kSelfAttValAtt, false>(
      "Per-head attention v of interleaved projections: (seq, batch, heads "
      "* head_dim).");
  Register<Kind::kEncDecQK, false>(
      "Per-head q k^T / sqrt(head_dim) of queries (q_seq, batch, heads * "
      "head_dim) and interleaved keys_values (k_seq, batch, 2 * heads * "
      "head_dim): (batch * heads, q_seq, k_seq).");
  Register<Kind::kEncDecValAtt, false>(
      "Per-head attention v of interleaved keys_values: (q_seq, batch, "
      "heads * head_dim).");
  Register<Kind::kSelfAttQK, true>(
      "Gradient of interleaved_matmul_selfatt_qk.");
  Register<Kind::kSelfAttValAtt, true>(
      "Gradient of interleaved_matmul_selfatt_valatt.");
  Register<Kind::kEncDecQK, true>("Gradient of interleaved_matmul_encdec_qk.");
  Register<Kind::kEncDecValAtt, true>(
      "Gradient of interleaved_matmul_encdec_valatt.");
  return true;
}();

}  // namespace
}  // namespace cpu
}  // namespace mx
