// The CPU kernel runs the program over blocks of kBlock elements;
// intermediates live in a few block-sized buffers that stay in cache, so
// each input is read once and each output written once however long the
// chain.
#include "backends/common/elemwise_program.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <memory>
#include <sstream>
#include <utility>

#include "Eigen/Core"

namespace mx_elemwise {
namespace {

using mxplugin::Error;

constexpr int64_t kBlock = 2048;

const std::map<std::string, Code, std::less<>>& Codes() {
  static const auto* codes = new std::map<std::string, Code, std::less<>>{
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
void Run(const Program& p, mxplugin::Tensors in, const int32_t* req,
         mxplugin::Tensors out) {
  const int64_t n = out[0].size();
  // Where each register's current block lives: inputs and outputs written
  // once by overwrite are used in place, the rest in scratch.
  std::vector<int> out_of_reg(p.num_regs, -1), uses(p.num_regs, 0);
  for (int r : p.outputs) ++uses[r];
  for (size_t k = 0; k < p.outputs.size(); ++k) {
    const int r = p.outputs[k];
    if (r >= p.num_inputs && uses[r] == 1 && req[k] == MX_REQ_WRITE) {
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
      if (out_of_reg[r] == static_cast<int>(k) || req[k] == MX_REQ_NULL) {
        continue;
      }
      T* y = out[k].data<T>() + start;
      const T* x = reg[r];
      if (req[k] == MX_REQ_ADD) {
        for (int64_t e = 0; e < len; ++e) y[e] += x[e];
      } else if (x != y) {
        std::copy(x, x + len, y);
      }
    }
  }
}

// float16: each block converted to float, each instruction computed in
// float and rounded to float16 as its own kernel would store it (so the
// fused result is the unfused graph's bit for bit), outputs stored as
// float16 (added in float, rounded, for MX_REQ_ADD, as Assign does).
void RunHalf(const Program& p, mxplugin::Tensors in, const int32_t* req,
             mxplugin::Tensors out) {
  using Half = Eigen::half;
  const int64_t n = out[0].size();
  std::unique_ptr<float[]> scratch(
      new float[static_cast<size_t>(p.num_regs) * kBlock]);
  const auto reg = [&](int r) {
    return scratch.get() + static_cast<int64_t>(r) * kBlock;
  };
  for (int64_t start = 0; start < n; start += kBlock) {
    const int64_t len = std::min(kBlock, n - start);
    for (int r = 0; r < p.num_inputs; ++r) {
      if (!p.input_used[r]) continue;
      const Half* x = in[r].data<Half>() + start;
      for (int64_t e = 0; e < len; ++e) reg(r)[e] = static_cast<float>(x[e]);
    }
    for (const Instr& i : p.instrs) {
      float* y = reg(i.dst);
      Exec<float>(i, reg(i.a), i.b >= 0 ? reg(i.b) : nullptr, y, len);
      for (int64_t e = 0; e < len; ++e) {
        y[e] = static_cast<float>(static_cast<Half>(y[e]));
      }
    }
    for (size_t k = 0; k < p.outputs.size(); ++k) {
      if (req[k] == MX_REQ_NULL) continue;
      Half* y = out[k].data<Half>() + start;
      const float* x = reg(p.outputs[k]);
      for (int64_t e = 0; e < len; ++e) {
        y[e] = static_cast<Half>(
            req[k] == MX_REQ_ADD ? static_cast<float>(y[e]) + x[e] : x[e]);
      }
    }
  }
}

bool IsBinary(Code c) {
  return c == Code::kAdd || c == Code::kSub || c == Code::kMul ||
         c == Code::kDiv;
}

// The registers each op reads must exist and precede it.
void Validate(const std::string& op, const Program& p) {
  int next = p.num_inputs;
  for (const Instr& i : p.instrs) {
    const bool binary = IsBinary(i.code);
    if (i.a < 0 || i.a >= next || (binary && (i.b < 0 || i.b >= next)) ||
        (!binary && i.b != -1) || i.dst != next) {
      throw Error(MX_STATUS_INVALID_ARGUMENT,
                  op + ": malformed program instruction");
    }
    ++next;
  }
  if (p.outputs.empty()) {
    throw Error(MX_STATUS_INVALID_ARGUMENT, op + ": no outputs");
  }
  for (int r : p.outputs) {
    if (r < 0 || r >= next) {
      throw Error(MX_STATUS_INVALID_ARGUMENT,
                  op + ": an output names no register");
    }
  }
}

void MarkUsed(Program* p) {
  p->input_used.assign(p->num_inputs, false);
  auto use = [&](int r) {
    if (r >= 0 && r < p->num_inputs) p->input_used[r] = true;
  };
  for (const Instr& i : p->instrs) {
    use(i.a);
    use(i.b);
  }
  for (int r : p->outputs) use(r);
}

// Every register an op reads or writes has one shape.
void InferShape(const std::string& op, const mxplugin::Attrs& attrs,
                mxplugin::ShapeSlots& in, mxplugin::ShapeSlots& out) {
  const Program& p = attrs.parsed<Program>();
  std::optional<mxplugin::Shape> common;
  auto take = [&](const std::optional<mxplugin::Shape>& s) {
    if (!s) return;
    if (!common) {
      common = s;
      return;
    }
    if (s->size() != common->size()) {
      throw Error(MX_STATUS_SHAPE_ERROR,
                  op + ": operands have different ranks");
    }
    for (size_t d = 0; d < s->size(); ++d) {
      if ((*common)[d] < 0) (*common)[d] = (*s)[d];
      if ((*s)[d] >= 0 && (*s)[d] != (*common)[d]) {
        throw Error(MX_STATUS_SHAPE_ERROR,
                    op + ": operands have different shapes");
      }
    }
  };
  for (size_t i = 0; i < in.size(); ++i) {
    if (p.input_used[i]) take(in[i]);
  }
  for (const auto& s : out) take(s);
  if (!common) return;
  for (size_t i = 0; i < in.size(); ++i) {
    if (p.input_used[i]) in[i] = common;
  }
  for (auto& s : out) s = common;
}

void InferType(const std::string& op, const mxplugin::Attrs& attrs,
               std::vector<int>& in, std::vector<int>& out) {
  const Program& p = attrs.parsed<Program>();
  int t = MX_DTYPE_UNKNOWN;
  auto take = [&](int v) {
    if (v == MX_DTYPE_UNKNOWN) return;
    if (t == MX_DTYPE_UNKNOWN) t = v;
    if (v != t) {
      throw Error(MX_STATUS_DTYPE_ERROR,
                  op + ": operands have different dtypes");
    }
  };
  for (size_t i = 0; i < in.size(); ++i) {
    if (p.input_used[i]) take(in[i]);
  }
  for (int v : out) take(v);
  if (t == MX_DTYPE_UNKNOWN) return;
  if (t != MX_DTYPE_FLOAT32 && t != MX_DTYPE_FLOAT64 && t != MX_DTYPE_FLOAT16) {
    throw Error(MX_STATUS_DTYPE_ERROR,
                op + ": only float32, float64 and float16 are supported");
  }
  for (size_t i = 0; i < in.size(); ++i) {
    if (p.input_used[i]) in[i] = t;
  }
  for (int& v : out) v = t;
}

}  // namespace

const char* NameOf(Code code) {
  for (const auto& [name, c] : Codes()) {
    if (c == code) return name.c_str();
  }
  return "?";
}

bool IsFusable(const std::string& name) { return Codes().count(name) > 0; }

Program Compile(const MxGraphView& g) {
  Program p;
  p.num_inputs = g.num_inputs;
  // Register of each graph node (inputs first, then one per op).
  std::vector<int> reg(g.num_nodes, -1);
  for (int i = 0; i < g.num_inputs; ++i) {
    if (g.input_nodes[i] >= 0) reg[g.input_nodes[i]] = i;
  }
  int next = p.num_inputs;
  for (int k = 0; k < g.num_nodes; ++k) {
    const MxNodeView& n = g.nodes[k];
    if (n.op_name[0] == '\0') continue;  // A variable: an input.
    auto code = Codes().find(n.op_name);
    if (code == Codes().end()) {
      throw Error(MX_STATUS_INVALID_ARGUMENT,
                  std::string("fused elementwise program: node \"") +
                      n.node_name + "\" (op " + n.op_name +
                      ") is not elementwise-fusable");
    }
    Instr in;
    in.code = code->second;
    in.a = reg[n.input_nodes[0]];
    if (n.num_inputs > 1) in.b = reg[n.input_nodes[1]];
    in.scalar = mxplugin::Attrs(&n.attrs).GetFloat("scalar", 0);
    in.dst = next++;
    reg[k] = in.dst;
    p.instrs.push_back(in);
  }
  p.num_regs = next;
  for (int i = 0; i < g.num_outputs; ++i)
    p.outputs.push_back(reg[g.output_nodes[i]]);
  Validate("fused elementwise program", p);
  MarkUsed(&p);
  for (const Instr& i : p.instrs) {
    p.text += "r" + std::to_string(i.dst) + " = " + NameOf(i.code) + "(r" +
              std::to_string(i.a) +
              (i.b >= 0 ? ", r" + std::to_string(i.b) : "") + ")\n";
  }
  return p;
}

std::vector<std::pair<std::string, std::string>> ToAttrs(const Program& p) {
  std::string program, outputs;
  char scalar[32];
  for (const Instr& i : p.instrs) {
    std::snprintf(scalar, sizeof(scalar), "%.17g", i.scalar);
    program += std::string(program.empty() ? "" : ";") + NameOf(i.code) + " " +
               std::to_string(i.a) + " " + std::to_string(i.b) + " " + scalar;
  }
  for (int r : p.outputs) {
    outputs += (outputs.empty() ? "" : ",") + std::to_string(r);
  }
  return {{"num_inputs", std::to_string(p.num_inputs)},
          {"program", program},
          {"outputs", outputs}};
}

Program FromAttrs(const std::string& op, const mxplugin::Attrs& attrs) {
  Program p;
  const int64_t num_inputs = attrs.GetInt("num_inputs", -1);
  if (num_inputs < 0 || num_inputs > 65536) {
    throw Error(MX_STATUS_INVALID_ARGUMENT,
                op + ": num_inputs must be 0 to 65536");
  }
  p.num_inputs = static_cast<int>(num_inputs);
  int next = p.num_inputs;
  std::stringstream program(attrs.Get("program"));
  std::string line;
  while (std::getline(program, line, ';')) {
    std::istringstream fields(line);
    std::string name;
    Instr in;
    if (!(fields >> name >> in.a >> in.b >> in.scalar)) {
      throw Error(MX_STATUS_INVALID_ARGUMENT,
                  op + ": cannot read instruction \"" + line + "\"");
    }
    auto code = Codes().find(name);
    if (code == Codes().end()) {
      throw Error(MX_STATUS_INVALID_ARGUMENT,
                  op + ": unknown instruction \"" + name + "\"");
    }
    in.code = code->second;
    in.dst = next++;
    p.instrs.push_back(in);
  }
  std::stringstream outputs(attrs.Get("outputs"));
  while (std::getline(outputs, line, ',')) {
    char* end = nullptr;
    const long r = std::strtol(line.c_str(), &end, 10);
    if (end == line.c_str() || *end != '\0' || r < 0 || r >= next) {
      throw Error(MX_STATUS_INVALID_ARGUMENT,
                  op + ": bad output register \"" + line + "\"");
    }
    p.outputs.push_back(static_cast<int>(r));
  }
  p.num_regs = next;
  Validate(op, p);
  MarkUsed(&p);
  return p;
}

namespace {

// Chains and trees of fusable ops; a single op gains nothing from fusion.
class FusableSelector : public mxplugin::PredicateSelector {
 public:
  FusableSelector()
      : PredicateSelector([](const mxplugin::NodeView& n) {
          return !n.is_variable() && !n.has_control_deps() &&
                 IsFusable(std::string(n.op()));
        }) {}
  std::vector<bool> Filter(
      const std::vector<mxplugin::NodeView>& candidates) override {
    return std::vector<bool>(candidates.size(), candidates.size() > 1);
  }
};

class ProgramFusion : public mxplugin::Property {
 public:
  ProgramFusion(std::string name, std::string op)
      : name_(std::move(name)), op_(std::move(op)) {}
  std::string name() const override { return name_; }
  bool inference_only() const override { return true; }
  std::unique_ptr<mxplugin::Selector> CreateSelector() override {
    return std::make_unique<FusableSelector>();
  }
  mxplugin::SubgraphNode CreateNode(const MxGraphView& graph, int) override {
    mxplugin::SubgraphNode node;
    node.op = op_;
    node.attrs = ToAttrs(Compile(graph));
    return node;
  }

 private:
  std::string name_, op_;
};

}  // namespace

std::shared_ptr<mxplugin::Property> FusionProperty(const std::string& name,
                                                   const std::string& op) {
  return std::make_shared<ProgramFusion>(name, op);
}

mxplugin::OpDef ProgramOpDef(const std::string& name,
                             const std::string& description) {
  return mxplugin::OpDef(name)
      .Describe(description)
      .Attr("num_inputs", MX_ATTR_INT, std::nullopt, "inputs")
      .Attr("program", MX_ATTR_STRING, std::nullopt,
            "instructions \"op a b scalar\" separated by ';'")
      .Attr("outputs", MX_ATTR_STRING, std::nullopt,
            "registers of the outputs, comma separated")
      .Parse([name](const mxplugin::Attrs& attrs) {
        return std::static_pointer_cast<void>(
            std::make_shared<Program>(FromAttrs(name, attrs)));
      })
      .NumInputs([](const mxplugin::Attrs& attrs) {
        return attrs.parsed<Program>().num_inputs;
      })
      .NumOutputs([](const mxplugin::Attrs& attrs) {
        return static_cast<int>(attrs.parsed<Program>().outputs.size());
      })
      .InferShape([name](const mxplugin::Attrs& attrs, mxplugin::ShapeSlots& in,
                         mxplugin::ShapeSlots& out) {
        InferShape(name, attrs, in, out);
      })
      .InferType(
          [name](const mxplugin::Attrs& attrs, std::vector<int>& in,
                 std::vector<int>& out) { InferType(name, attrs, in, out); })
      .Kernel(
          MX_DEVICE_CPU,
          [](const mxplugin::KernelContext&, const mxplugin::Attrs& attrs,
             mxplugin::Tensors in, const int32_t* req, mxplugin::Tensors out) {
            const Program& p = attrs.parsed<Program>();
            if (out[0].dtype() == MX_DTYPE_FLOAT64) {
              Run<double>(p, in, req, out);
            } else if (out[0].dtype() == MX_DTYPE_FLOAT16) {
              RunHalf(p, in, req, out);
            } else {
              Run<float>(p, in, req, out);
            }
          });
}

}  // namespace mx_elemwise
