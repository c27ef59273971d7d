// Elementwise subgraphs compiled to a small register program, shared by
// the backends that fuse them: the fuse plugin evaluates the program block
// by block on the CPU, the CUDA plugin generates one kernel from it.
//
//   Program p = Compile(subgraph_view);       // in a property's CreateNode
//   node.attrs = ToAttrs(p);                  // num_inputs, program, outputs
//   plugin.RegisterOp(ProgramOpDef("_fused_elemwise", "..."));
#ifndef MXCORE_BACKENDS_COMMON_ELEMWISE_PROGRAM_H_
#define MXCORE_BACKENDS_COMMON_ELEMWISE_PROGRAM_H_

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "backends/plugin_api/mx_plugin_cpp.h"

namespace mx_elemwise {

enum class Code {
  kNegative,
  kAbs,
  kExp,
  kLog,
  kSqrt,
  kSquare,
  kReciprocal,
  kSin,
  kCos,
  kTanh,
  kSigmoid,
  kRelu,  // Unary.
  kAdd,
  kSub,
  kMul,
  kDiv,  // Binary, equal shapes.
  kPlusScalar,
  kMinusScalar,
  kRMinusScalar,
  kMulScalar,
  kDivScalar,
  kRDivScalar,  // With a scalar.
};

// Whether the fuse backend can compute op `name`.
bool IsFusable(const std::string& name);

struct Instr {
  Code code;
  int a = -1, b = -1;  // Source registers.
  int dst = -1;
  double scalar = 0;
};

// Registers 0..num_inputs-1 are the op's inputs; each instruction writes a
// new register; outputs name registers.
struct Program {
  int num_inputs = 0;
  int num_regs = 0;
  std::vector<bool> input_used;  // Ordering-only inputs are not read.
  std::vector<Instr> instrs;
  std::vector<int> outputs;
  std::string text;  // One line per instruction, for errors and DOT.
};

// The op's name in an instruction ("relu", "_mul_scalar", ...).
const char* NameOf(Code code);

// Compiles a subgraph the host handed to the property; throws
// mxplugin::Error naming the node when an op is not fusable.
Program Compile(const MxGraphView& subgraph);

// The program as the attributes of a fused node ("num_inputs", "program",
// "outputs"), and back (throws mxplugin::Error naming `op` on bad text, so
// a hand-edited graph file cannot index out of range).
std::vector<std::pair<std::string, std::string>> ToAttrs(const Program& p);
Program FromAttrs(const std::string& op, const mxplugin::Attrs& attrs);

// An op `name` running a program: its attributes, parsing, inference (one
// shape and one float dtype for every operand it reads or writes) and a
// CPU kernel (float32, float64, float16) that evaluates the program block
// by block, each input read once and each output written once (float16 in
// float, each instruction's result rounded to float16 as the unfused op
// would store it). Backends add their own device kernels.
mxplugin::OpDef ProgramOpDef(const std::string& name,
                             const std::string& description);

// The subgraph property `name` of a fusing backend: connected chains and
// trees of two or more fusable ops (no control dependencies) become one
// node of op `op` (registered with ProgramOpDef) running their program.
// Inference only: the fused op has no gradient.
std::shared_ptr<mxplugin::Property> FusionProperty(const std::string& name,
                                                   const std::string& op);

}  // namespace mx_elemwise

#endif  // MXCORE_BACKENDS_COMMON_ELEMWISE_PROGRAM_H_
