// Internal to the fuse plugin: an elementwise subgraph compiled to a small
// register program, evaluated block by block in one pass over memory.
#ifndef MXCORE_BACKENDS_FUSE_FUSED_OP_H_
#define MXCORE_BACKENDS_FUSE_FUSED_OP_H_

#include <string>
#include <utility>
#include <vector>

#include "backends/plugin_api/mx_plugin_cpp.h"

namespace mxfuse {

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

// Compiles a subgraph the host handed to the property; throws
// mxplugin::Error naming the node when an op is not fusable.
Program Compile(const MxGraphView& subgraph);

// The program as the attributes of a _fused_elemwise node ("num_inputs",
// "program", "outputs"), and back (throws mxplugin::Error on bad text, so
// a hand-edited graph file cannot index out of range).
std::vector<std::pair<std::string, std::string>> ToAttrs(const Program& p);
Program FromAttrs(const mxplugin::Attrs& attrs);

// Registers op "_fused_elemwise".
void RegisterFusedOp(mxplugin::Plugin& p);

}  // namespace mxfuse

#endif  // MXCORE_BACKENDS_FUSE_FUSED_OP_H_
