// _fused_elemwise: the kernel runs the program over blocks of kBlock
// elements; intermediates live in a few block-sized buffers that stay in
// cache, so each input is read once and each output written once however
// long the chain.
#include "backends/fuse/fused_op.h"

#include <algorithm>
#include <cmath>
#include <memory>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"

namespace mx {
namespace fuse {
namespace {

constexpr int64_t kBlock = 2048;

const absl::flat_hash_map<std::string, Code>& Codes() {
  static const auto* codes = new absl::flat_hash_map<std::string, Code>{
      {"negative", Code::kNegative},
      {"abs", Code::kAbs},
      {"exp", Code::kExp},
      {"log", Code::kLog},
      {"sqrt", Code::kSqrt},
      {"square", Code::kSquare},
      {"reciprocal", Code::kReciprocal},
      {"sin", Code::kSin},
      {"cos", Code::kCos},
      {"tanh", Code::kTanh},
      {"sigmoid", Code::kSigmoid},
      {"relu", Code::kRelu},
      {"elemwise_add", Code::kAdd},
      {"elemwise_sub", Code::kSub},
      {"elemwise_mul", Code::kMul},
      {"elemwise_div", Code::kDiv},
      {"_plus_scalar", Code::kPlusScalar},
      {"_minus_scalar", Code::kMinusScalar},
      {"_rminus_scalar", Code::kRMinusScalar},
      {"_mul_scalar", Code::kMulScalar},
      {"_div_scalar", Code::kDivScalar},
      {"_rdiv_scalar", Code::kRDivScalar},
  };
  return *codes;
}

// Registers never alias (each instruction writes a new one), which lets
// the compiler vectorize without runtime overlap checks.
template <typename T, typename F>
void Map1(const T* __restrict a, T* __restrict y, int64_t n, F f) {
  for (int64_t i = 0; i < n; ++i) y[i] = f(a[i]);
}
template <typename T, typename F>
void Map2(const T* __restrict a, const T* __restrict b, T* __restrict y,
          int64_t n, F f) {
  for (int64_t i = 0; i < n; ++i) y[i] = f(a[i], b[i]);
}

// The same expressions as the built-in CPU kernels, so results agree.
template <typename T>
void Exec(const Instr& in, const T* a, const T* b, T* y, int64_t n) {
  const T s = static_cast<T>(in.scalar);
  switch (in.code) {
    case Code::kNegative:
      return Map1(a, y, n, [](T x) { return -x; });
    case Code::kAbs:
      return Map1(a, y, n, [](T x) { return x < 0 ? -x : x; });
    case Code::kExp:
      return Map1(a, y, n, [](T x) { return std::exp(x); });
    case Code::kLog:
      return Map1(a, y, n, [](T x) { return std::log(x); });
    case Code::kSqrt:
      return Map1(a, y, n, [](T x) { return std::sqrt(x); });
    case Code::kSquare:
      return Map1(a, y, n, [](T x) { return x * x; });
    case Code::kReciprocal:
      return Map1(a, y, n, [](T x) { return T(1) / x; });
    case Code::kSin:
      return Map1(a, y, n, [](T x) { return std::sin(x); });
    case Code::kCos:
      return Map1(a, y, n, [](T x) { return std::cos(x); });
    case Code::kTanh:
      return Map1(a, y, n, [](T x) { return std::tanh(x); });
    case Code::kSigmoid:
      return Map1(a, y, n, [](T x) { return T(1) / (T(1) + std::exp(-x)); });
    case Code::kRelu:
      return Map1(a, y, n, [](T x) { return x > 0 ? x : T(0); });
    case Code::kAdd:
      return Map2(a, b, y, n, [](T x, T z) { return x + z; });
    case Code::kSub:
      return Map2(a, b, y, n, [](T x, T z) { return x - z; });
    case Code::kMul:
      return Map2(a, b, y, n, [](T x, T z) { return x * z; });
    case Code::kDiv:
      return Map2(a, b, y, n, [](T x, T z) { return x / z; });
    case Code::kPlusScalar:
      return Map1(a, y, n, [s](T x) { return x + s; });
    case Code::kMinusScalar:
      return Map1(a, y, n, [s](T x) { return x - s; });
    case Code::kRMinusScalar:
      return Map1(a, y, n, [s](T x) { return s - x; });
    case Code::kMulScalar:
      return Map1(a, y, n, [s](T x) { return x * s; });
    case Code::kDivScalar:
      return Map1(a, y, n, [s](T x) { return x / s; });
    case Code::kRDivScalar:
      return Map1(a, y, n, [s](T x) { return s / x; });
  }
}

template <typename T>
void Run(const Program& p, const std::vector<TBlob>& in,
         const std::vector<OpReqType>& req, const std::vector<TBlob>& out) {
  const int64_t n = out[0].Size();
  // Where each register's current block lives: inputs and outputs written
  // once by overwrite are used in place, the rest in scratch.
  std::vector<int> out_of_reg(p.num_regs, -1), uses(p.num_regs, 0);
  for (int r : p.outputs) ++uses[r];
  for (size_t k = 0; k < p.outputs.size(); ++k) {
    const int r = p.outputs[k];
    if (r >= p.num_inputs && uses[r] == 1 && req[k] == OpReqType::kWriteTo) {
      out_of_reg[r] = static_cast<int>(k);
    }
  }
  std::unique_ptr<T[]> scratch(new T[static_cast<size_t>(p.num_regs) * kBlock]);
  std::vector<T*> reg(p.num_regs);
  for (int64_t start = 0; start < n; start += kBlock) {
    const int64_t len = std::min(kBlock, n - start);
    for (int r = 0; r < p.num_regs; ++r) {
      if (r < p.num_inputs) {
        reg[r] = p.input_used[r] ? in[r].data<T>() + start : nullptr;
      } else if (out_of_reg[r] >= 0) {
        reg[r] = out[out_of_reg[r]].data<T>() + start;
      } else {
        reg[r] = scratch.get() + static_cast<int64_t>(r) * kBlock;
      }
    }
    for (const Instr& i : p.instrs) {
      Exec<T>(i, reg[i.a], i.b >= 0 ? reg[i.b] : nullptr, reg[i.dst], len);
    }
    for (size_t k = 0; k < p.outputs.size(); ++k) {
      const int r = p.outputs[k];
      if (out_of_reg[r] == static_cast<int>(k) ||
          req[k] == OpReqType::kNullOp) {
        continue;
      }
      T* y = out[k].data<T>() + start;
      const T* x = reg[r];
      if (req[k] == OpReqType::kAddTo) {
        for (int64_t e = 0; e < len; ++e) y[e] += x[e];
      } else if (x != y) {
        std::copy(x, x + len, y);
      }
    }
  }
}

std::shared_ptr<const Program> GetProgram(const NodeAttrs& attrs) {
  using Ptr = std::shared_ptr<const Program>;
  if (const Ptr* p = std::any_cast<Ptr>(&attrs.parsed)) return *p;
  if (attrs.subgraphs.empty()) {
    throw InvalidArgument("_fused_elemwise \"" + attrs.name +
                          "\" holds no subgraph");
  }
  return std::make_shared<const Program>(Compile(*attrs.subgraphs[0]));
}

// Every register an op reads or writes has one shape (or dtype).
template <typename V, typename Merge>
void Unify(const NodeAttrs& attrs, const char* what, std::vector<V>* in,
           std::vector<V>* out, Merge merge) {
  const std::shared_ptr<const Program> p = GetProgram(attrs);
  V common{};
  bool have = false;
  auto take = [&](const V& v, const std::string& where) {
    if (!have) {
      common = v;
      have = true;
    } else if (!merge(&common, v)) {
      throw ShapeError(absl::StrCat("_fused_elemwise \"", attrs.name,
                                    "\": ", where, " has another ", what,
                                    " than the other operands"));
    }
  };
  for (size_t i = 0; i < in->size(); ++i) {
    if (p->input_used[i]) take((*in)[i], absl::StrCat("input ", i));
  }
  for (size_t k = 0; k < out->size(); ++k) {
    take((*out)[k], absl::StrCat("output ", k));
  }
  for (size_t i = 0; i < in->size(); ++i) {
    if (p->input_used[i]) (*in)[i] = common;
  }
  for (V& v : *out) v = common;
}

}  // namespace

bool IsFusable(const std::string& name) { return Codes().contains(name); }

Program Compile(const Symbol& subgraph) {
  Program p;
  const std::vector<NodePtr> inputs = SubgraphInputs(subgraph);
  p.num_inputs = static_cast<int>(inputs.size());
  p.input_used.assign(inputs.size(), false);
  absl::flat_hash_map<const Node*, int> reg;
  for (size_t i = 0; i < inputs.size(); ++i) {
    reg[inputs[i].get()] = static_cast<int>(i);
  }
  int next = p.num_inputs;
  DFSVisit(subgraph.outputs, [&](const NodePtr& n) {
    if (n->is_variable()) return;
    auto code = Codes().find(n->op()->name());
    if (code == Codes().end()) {
      throw InvalidArgument(absl::StrCat("_fused_elemwise: node \"", n->name(),
                                         "\" (op ", n->op()->name(),
                                         ") is not elementwise-fusable"));
    }
    Instr in;
    in.code = code->second;
    in.a = reg.at(n->inputs[0].node.get());
    if (n->inputs.size() > 1) in.b = reg.at(n->inputs[1].node.get());
    for (int r : {in.a, in.b}) {
      if (r >= 0 && r < p.num_inputs) p.input_used[r] = true;
    }
    auto s = n->attrs.dict.find("scalar");
    if (s != n->attrs.dict.end()) in.scalar = std::stod(s->second);
    in.dst = next++;
    reg[n.get()] = in.dst;
    absl::StrAppend(&p.text, "r", in.dst, " = ", n->op()->name(), "(r", in.a,
                    in.b >= 0 ? absl::StrCat(", r", in.b) : "", ")\n");
    p.instrs.push_back(in);
  });
  p.num_regs = next;
  for (const NodeEntry& e : subgraph.outputs) {
    const int r = reg.at(e.node.get());
    if (r < p.num_inputs) p.input_used[r] = true;
    p.outputs.push_back(r);
  }
  return p;
}

void RegisterFusedOp(PluginRegistrar& r) {
  r.RegisterOp("_fused_elemwise")
      .Describe(
          "A chain or tree of elementwise ops (attrs.subgraphs[0]) computed "
          "in one pass over memory (fuse plugin); float32 and float64.")
      .SetNumInputs(
          [](const NodeAttrs& attrs) { return GetProgram(attrs)->num_inputs; })
      .SetNumOutputs([](const NodeAttrs& attrs) {
        return static_cast<int>(GetProgram(attrs)->outputs.size());
      })
      .SetInferShape([](const NodeAttrs& attrs, std::vector<TShape>* in,
                        std::vector<TShape>* out) {
        Unify<TShape>(attrs, "shape", in, out, MergeShape);
      })
      .SetInferType([](const NodeAttrs& attrs, std::vector<DType>* in,
                       std::vector<DType>* out) {
        Unify<DType>(attrs, "dtype", in, out, [](DType* d, const DType& s) {
          if (s == DType::kUnknown) return true;
          if (*d == DType::kUnknown) *d = s;
          return *d == s;
        });
        const DType t = out->empty() ? DType::kUnknown : (*out)[0];
        if (t != DType::kUnknown && t != DType::kFloat32 &&
            t != DType::kFloat64) {
          throw DTypeError(absl::StrCat("_fused_elemwise \"", attrs.name,
                                        "\": dtype ", DTypeName(t),
                                        " is not supported (float32, "
                                        "float64)"));
        }
      })
      .SetCompute(Context::kCPU, [](const OpContext&, const NodeAttrs& attrs,
                                    const std::vector<TBlob>& in,
                                    const std::vector<OpReqType>& req,
                                    const std::vector<TBlob>& out) {
        const std::shared_ptr<const Program> p = GetProgram(attrs);
        if (out[0].dtype == DType::kFloat64) {
          Run<double>(*p, in, req, out);
        } else {
          Run<float>(*p, in, req, out);
        }
      });
}

}  // namespace fuse
}  // namespace mx
