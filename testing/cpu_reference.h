// The built-in CPU kernels as the reference for another implementation of
// an op (a plugin's kernel, a fused op, another device), on inputs that the
// test generates from a seed. Test-only (//testing:cpu_reference).
//
//   const std::vector<NDArray> in =
//       RandomArrays({{4, 5}, {4, 5}}, DType::kFloat32, -1, 1, /*seed=*/3);
//   const std::vector<NDArray> got = RunMyPluginOp(in);
//   EXPECT_TRUE(MatchesCpuReference(got, "elemwise_add", {}, in));
//   EXPECT_TRUE(AddToAccumulates("elemwise_add", {}, in));
#ifndef MXCORE_TESTING_CPU_REFERENCE_H_
#define MXCORE_TESTING_CPU_REFERENCE_H_

#include <cstdint>
#include <string>
#include <vector>

#include "graph/op.h"
#include "gtest/gtest.h"
#include "ndarray/ndarray.h"

namespace mx {
namespace testing {

// The outputs of `op` with `attrs` on `inputs`, computed by the built-in
// CPU kernels (inputs are copied to the CPU first; they are not changed).
std::vector<NDArray> CpuReference(const std::string& op, const AttrDict& attrs,
                                  const std::vector<NDArray>& inputs);

// `actual` has as many outputs as the CPU reference, each of the same
// shape and dtype and AllClose to it; the first mismatch names the output.
::testing::AssertionResult MatchesCpuReference(
    const std::vector<NDArray>& actual, const std::string& op,
    const AttrDict& attrs, const std::vector<NDArray>& inputs,
    double rtol = 1e-5, double atol = 1e-6);

// The OpReqType::kAddTo contract: with every output requested as kAddTo
// and holding random values (seeds `seed`, `seed + 1`, ...), `op` on the
// CPU leaves each output equal to those values plus what kWriteTo writes.
::testing::AssertionResult AddToAccumulates(const std::string& op,
                                            const AttrDict& attrs,
                                            const std::vector<NDArray>& inputs,
                                            uint32_t seed = 20);

}  // namespace testing
}  // namespace mx

#endif  // MXCORE_TESTING_CPU_REFERENCE_H_
