// The fused kernels' CUDA source compiles: every instruction, in float32,
// float64 and float16, with written, added and unwritten outputs, compiled
// by NVRTC for sm_90 on the host (NVRTC needs no GPU), so a generator
// change that only a GPU would run is checked here.
#include "backends/cuda/fusion_source.h"

#include <nvrtc.h>

#include <memory>
#include <string>
#include <vector>

#include "gtest/gtest.h"

namespace mx_cuda {
namespace {

using mx_elemwise::Code;
using mx_elemwise::Instr;
using mx_elemwise::Program;

// Inputs r0, r1; each instruction of `codes` in turn, unary ones on the
// previous result, binary ones on it and r1; outputs: the last result and
// the first.
Program ProgramOf(const std::vector<Code>& codes) {
  Program p;
  p.num_inputs = 2;
  p.input_used = {true, true};
  int last = 0;
  for (Code c : codes) {
    Instr i;
    i.code = c;
    i.a = last;
    const bool binary = c == Code::kAdd || c == Code::kSub || c == Code::kMul ||
                        c == Code::kDiv;
    if (binary) i.b = 1;
    i.dst = p.num_inputs + static_cast<int>(p.instrs.size());
    i.scalar = 0.75;
    p.instrs.push_back(i);
    last = i.dst;
  }
  p.num_regs = p.num_inputs + static_cast<int>(p.instrs.size());
  p.outputs = {last, p.num_inputs};
  return p;
}

// NVRTC's log, empty when the source compiled.
std::string CompileErrors(const std::string& source) {
  nvrtcProgram prog;
  if (nvrtcCreateProgram(&prog, source.c_str(), "mx_fused.cu", 0, nullptr,
                         nullptr) != NVRTC_SUCCESS) {
    return "nvrtcCreateProgram failed";
  }
  std::unique_ptr<nvrtcProgram, void (*)(nvrtcProgram*)> guard(
      &prog, [](nvrtcProgram* p) { nvrtcDestroyProgram(p); });
  const char* options[] = {"--gpu-architecture=sm_90", "--std=c++17"};
  if (nvrtcCompileProgram(prog, 2, options) == NVRTC_SUCCESS) return "";
  size_t size = 0;
  nvrtcGetProgramLogSize(prog, &size);
  std::string log(size, '\0');
  nvrtcGetProgramLog(prog, log.data());
  return log.empty() ? "failed without a log" : log;
}

TEST(FusedKernelSource, EveryInstructionDTypeAndRequestCompiles) {
  const Program p =
      ProgramOf({Code::kNegative,     Code::kAbs,        Code::kExp,
                 Code::kLog,          Code::kSqrt,       Code::kSquare,
                 Code::kReciprocal,   Code::kSin,        Code::kCos,
                 Code::kTanh,         Code::kSigmoid,    Code::kRelu,
                 Code::kAdd,          Code::kSub,        Code::kMul,
                 Code::kDiv,          Code::kPlusScalar, Code::kMinusScalar,
                 Code::kRMinusScalar, Code::kMulScalar,  Code::kDivScalar,
                 Code::kRDivScalar});
  for (int dtype : {MX_DTYPE_FLOAT32, MX_DTYPE_FLOAT64, MX_DTYPE_FLOAT16}) {
    for (const std::vector<int32_t>& req :
         {std::vector<int32_t>{MX_REQ_WRITE, MX_REQ_ADD},
          std::vector<int32_t>{MX_REQ_ADD, MX_REQ_NULL}}) {
      const std::string source = FusedKernelSource(p, dtype, req);
      SCOPED_TRACE(source);
      EXPECT_EQ(CompileErrors(source), "");
    }
  }
}

// float16 rounds every instruction's result (R) and stores through F2H; the
// wider types do neither.
TEST(FusedKernelSource, Float16RoundsEachInstruction) {
  const Program p = ProgramOf({Code::kExp, Code::kMulScalar});
  const std::string half =
      FusedKernelSource(p, MX_DTYPE_FLOAT16, {MX_REQ_WRITE, MX_REQ_ADD});
  EXPECT_NE(half.find("const T r2 = R(exp(r0));"), std::string::npos) << half;
  EXPECT_NE(half.find("out0[i] = F2H(r3);"), std::string::npos) << half;
  EXPECT_NE(half.find("out1[i] = F2H(H2F(out1[i]) + r2);"), std::string::npos)
      << half;
  const std::string wide =
      FusedKernelSource(p, MX_DTYPE_FLOAT32, {MX_REQ_WRITE, MX_REQ_ADD});
  EXPECT_EQ(wide.find("R("), std::string::npos) << wide;
  EXPECT_NE(wide.find("out1[i] += r2;"), std::string::npos) << wide;
}

}  // namespace
}  // namespace mx_cuda
