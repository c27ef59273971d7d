// Internal to the fuse plugin: an elementwise subgraph compiled to a small
// register program, evaluated block by block in one pass over memory.
#ifndef MXCORE_BACKENDS_FUSE_FUSED_OP_H_
#define MXCORE_BACKENDS_FUSE_FUSED_OP_H_

#include <string>
#include <vector>

#include "graph/symbol.h"
#include "subgraph/plugin.h"

namespace mx {
namespace fuse {

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

// Throws InvalidArgument naming the node when an op is not fusable.
Program Compile(const Symbol& subgraph);

// Registers op "_fused_elemwise".
void RegisterFusedOp(PluginRegistrar& r);

}  // namespace fuse
}  // namespace mx

#endif  // MXCORE_BACKENDS_FUSE_FUSED_OP_H_
