// The CUDA source of a fused elementwise program (fusion_source.h).
#include "backends/cuda/fusion_source.h"

#include <cstdio>
#include <string>
#include <vector>

namespace mx_cuda {
namespace {

using mx_elemwise::Code;
using mx_elemwise::Instr;
using mx_elemwise::Program;

std::string Literal(double v) {
  char buf[40];
  std::snprintf(buf, sizeof(buf), "T(%.17g)", v);
  return buf;
}

// The expression of one instruction over registers (the same formulas as
// the built-in kernels: relu keeps NaN).
std::string Expr(const Instr& i) {
  const std::string a = "r" + std::to_string(i.a);
  const std::string b = "r" + std::to_string(i.b);
  const std::string s = Literal(i.scalar);
  switch (i.code) {
    case Code::kNegative:
      return "-" + a;
    case Code::kAbs:
      return "(" + a + " < T(0) ? -" + a + " : " + a + ")";
    case Code::kExp:
      return "exp(" + a + ")";
    case Code::kLog:
      return "log(" + a + ")";
    case Code::kSqrt:
      return "sqrt(" + a + ")";
    case Code::kSquare:
      return a + " * " + a;
    case Code::kReciprocal:
      return "T(1) / " + a;
    case Code::kSin:
      return "sin(" + a + ")";
    case Code::kCos:
      return "cos(" + a + ")";
    case Code::kTanh:
      return "tanh(" + a + ")";
    case Code::kSigmoid:
      return "T(1) / (T(1) + exp(-" + a + "))";
    case Code::kRelu:
      return "((" + a + " > T(0) || " + a + " != " + a + ") ? " + a +
             " : T(0))";
    case Code::kAdd:
      return a + " + " + b;
    case Code::kSub:
      return a + " - " + b;
    case Code::kMul:
      return a + " * " + b;
    case Code::kDiv:
      return a + " / " + b;
    case Code::kPlusScalar:
      return a + " + " + s;
    case Code::kMinusScalar:
      return a + " - " + s;
    case Code::kRMinusScalar:
      return s + " - " + a;
    case Code::kMulScalar:
      return a + " * " + s;
    case Code::kDivScalar:
      return a + " / " + s;
    case Code::kRDivScalar:
      return s + " / " + a;
  }
  return a;
}

// float16 in the generated source (no headers: NVRTC is given none): the
// bits as unsigned short, converted by PTX (round to nearest even), and R,
// an instruction's float result rounded as its unfused kernel stores it.
constexpr char kHalfHelpers[] =
    "__device__ __forceinline__ float H2F(unsigned short h) {\n"
    "  float f; asm(\"cvt.f32.f16 %0, %1;\" : \"=f\"(f) : \"h\"(h)); "
    "return f;\n}\n"
    "__device__ __forceinline__ unsigned short F2H(float f) {\n"
    "  unsigned short h; asm(\"cvt.rn.f16.f32 %0, %1;\" : \"=h\"(h) : "
    "\"f\"(f)); return h;\n}\n"
    "__device__ __forceinline__ float R(float f) { return H2F(F2H(f)); }\n";

}  // namespace

// CUDA source of the fused kernel for dtype (float32, float64, float16:
// computed in float, each instruction rounded to float16 as the unfused
// kernels store it, so results are theirs bit for bit); parameters: each
// used input, each written output, then the element count.
std::string FusedKernelSource(const Program& p, int dtype,
                              const std::vector<int32_t>& req) {
  const bool half = dtype == MX_DTYPE_FLOAT16;
  const std::string load = half ? "H2F(" : "(";
  std::string params, body;
  for (int i = 0; i < p.num_inputs; ++i) {
    if (!p.input_used[i]) continue;
    params += "const S* __restrict__ in" + std::to_string(i) + ", ";
    body += "    const T r" + std::to_string(i) + " = " + load + "in" +
            std::to_string(i) + "[i]);\n";
  }
  for (size_t k = 0; k < p.outputs.size(); ++k) {
    if (req[k] == MX_REQ_NULL) continue;
    params += "S* __restrict__ out" + std::to_string(k) + ", ";
  }
  for (const Instr& i : p.instrs) {
    body += "    const T r" + std::to_string(i.dst) + " = " +
            (half ? "R(" + Expr(i) + ")" : Expr(i)) + ";\n";
  }
  for (size_t k = 0; k < p.outputs.size(); ++k) {
    if (req[k] == MX_REQ_NULL) continue;
    const std::string out = "out" + std::to_string(k) + "[i]";
    const std::string r = "r" + std::to_string(p.outputs[k]);
    if (!half) {
      body +=
          "    " + out + (req[k] == MX_REQ_ADD ? " += " : " = ") + r + ";\n";
    } else if (req[k] == MX_REQ_ADD) {
      body += "    " + out + " = F2H(H2F(" + out + ") + " + r + ");\n";
    } else {
      body += "    " + out + " = F2H(" + r + ");\n";
    }
  }
  const std::string types =
      dtype == MX_DTYPE_FLOAT64 ? "typedef double T;\ntypedef double S;\n"
      : half ? std::string("typedef float T;\ntypedef unsigned short S;\n") +
                   kHalfHelpers
             : "typedef float T;\ntypedef float S;\n";
  return types + "extern \"C\" __global__ void mx_fused(" + params +
         "long long n) {\n" +
         "  for (long long i = blockIdx.x * (long long)blockDim.x + "
         "threadIdx.x; i < n;\n       i += (long long)blockDim.x * gridDim.x) "
         "{\n" +
         body + "  }\n}\n";
}

}  // namespace mx_cuda
