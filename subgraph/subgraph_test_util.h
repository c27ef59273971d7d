// Test helpers: run a symbol before and after partitioning and compare.
#ifndef MXCORE_SUBGRAPH_SUBGRAPH_TEST_UTIL_H_
#define MXCORE_SUBGRAPH_SUBGRAPH_TEST_UTIL_H_

#include <map>
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

// Fills every argument and auxiliary state of `exec` with uniform values
// in [lo, hi) (deterministic per name).
void FillRandom(Executor* exec, double lo = 0, double hi = 1);
// Copies arguments and auxiliary states by name from `from` into `to`.
void CopyInputs(const Executor& from, Executor* to);
// Outputs equal element for element (bitwise on doubles).
::testing::AssertionResult SameOutputs(const Executor& a, const Executor& b);

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

}  // namespace testing
}  // namespace mx

#endif  // MXCORE_SUBGRAPH_SUBGRAPH_TEST_UTIL_H_
