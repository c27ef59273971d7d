// Test helpers: run a symbol before and after partitioning and compare.
#ifndef MXCORE_TESTING_SUBGRAPH_TEST_UTIL_H_
#define MXCORE_TESTING_SUBGRAPH_TEST_UTIL_H_

#include <map>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "graph/symbol.h"
#include "gtest/gtest.h"
#include "imperative/executor.h"

namespace mx {
namespace testing {

// Sets an environment variable for the scope's lifetime.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const std::string& value);
  ~ScopedEnv();

 private:
  std::string name_;
  bool had_ = false;
  std::string old_;
};

// `net` bound on the CPU for inference (SimpleBind) with
// MX_SUBGRAPH_BACKEND=backend, so partitioned as a user's bind partitions
// it: after shapes and dtypes are inferred from `shapes` and `dtypes`.
std::unique_ptr<Executor> SimpleBindWithBackend(
    const Symbol& net, const std::string& backend,
    const std::map<std::string, TShape>& shapes,
    const std::map<std::string, DType>& dtypes);

// Fills every argument and auxiliary state of `exec` with uniform values
// in [lo, hi) (deterministic per name).
void FillRandom(Executor* exec, double lo = 0, double hi = 1);
// Copies arguments and auxiliary states by name from `from` into `to`.
void CopyInputs(const Executor& from, Executor* to);
// Outputs equal element for element (bitwise on doubles).
::testing::AssertionResult SameOutputs(const Executor& a, const Executor& b);
// With rtol > 0: |a - b| <= rtol * (|b| + max|b|) per output, for a
// partition that computes the same math by another algorithm (a fused
// convolution's rounding); rtol == 0 is SameOutputs.
::testing::AssertionResult NearOutputs(const Executor& a, const Executor& b,
                                       double rtol);

// Binds `reference` unpartitioned on the CPU (MX_SUBGRAPH_BACKEND=NONE) and
// `tested` on `ctx` as the environment says (float64 arguments of
// `shapes`, the same random values, gradients with `req`), runs forward and
// backward twice with the same random head gradients (kAddTo accumulates)
// and expects equal outputs and gradients within `tol` (relative and
// absolute). Returns how many _default_subgraph_op nodes the bound `tested`
// has (its symbol after any MX_SUBGRAPH_BACKEND partitioning).
int ExpectSameForwardBackward(const Symbol& reference, const Symbol& tested,
                              Context ctx,
                              const std::map<std::string, TShape>& shapes,
                              OpReqType req, double tol);

// `symbol` partitioned by the default backend claiming `op_names` (the
// claim is removed again afterwards).
Symbol PartitionWithDefault(const Symbol& symbol,
                            const std::vector<std::string>& op_names);

// Nets whose gradients run through _default_subgraph_op, on variables x and
// w of shape (3, 4), with the ops to claim:
struct SubgraphNet {
  Symbol symbol;
  std::vector<std::string> claimed;
};
// Two outputs; exp(x) is read by a claimed and an unclaimed op, x twice.
SubgraphNet TwoOutputNet();
// 3 * (x + w): the partitioned gradient's one inner result is both x's and
// w's gradient, so it is computed aside, then copied (grad_req write) or
// added (grad_req add).
SubgraphNet ScaledSumNet();

// How many nodes of op `op` the symbol has (not looking into subgraphs).
int CountOps(const Symbol& symbol, const std::string& op);

// The seed's four checks with the default backend claiming `op_names`:
// PartitionGraph then SimpleBind; MX_SUBGRAPH_BACKEND with SimpleBind;
// PartitionGraph then Bind; MX_SUBGRAPH_BACKEND with Bind. Outputs must
// equal those of the unpartitioned symbol exactly, and the partitioned
// symbol must list the same inputs, arguments and auxiliary states.
void CheckFourWays(const Symbol& symbol,
                   const std::vector<std::string>& op_names,
                   const std::map<std::string, TShape>& shapes = {});

// The seed's network structures 1-7 (subgraph_api.txt): 1 convolutions
// sharing a weight, 2 a diamond whose partial claim closes a cycle through
// an outside node, 3 BatchNorm (auxiliary states) after the diamond, 4
// duplicate outputs, 5 duplicate inputs, 6 sin feeding a convolution's
// weight (shape flowing backwards), 7 a long path closing a cycle. Every
// variable's shape is given or inferable.
Symbol SeedStructure(int i);  // 1 <= i <= 7.

// Random DAGs over `ops` (each applied with its arity and attributes) on
// `num_vars` variables of shape (3, 4), with extra outputs.
struct RandomOpSpec {
  std::string op;
  int arity;
  AttrDict attrs;
};
const std::vector<RandomOpSpec>& DefaultRandomOps();
Symbol RandomDag(std::mt19937* rng, int num_vars, int num_ops,
                 const std::vector<RandomOpSpec>& ops = DefaultRandomOps());

}  // namespace testing
}  // namespace mx

#endif  // MXCORE_TESTING_SUBGRAPH_TEST_UTIL_H_
