// Shared by the CUDA plugin's GPU tests: loads the plugin named by
// MX_CUDA_PLUGIN once and says whether a GPU is usable, so that each test
// skips with one line saying why where there is none.
//
//   TEST(CudaOps, Something) {
//     MX_SKIP_WITHOUT_GPU();
//     ...
//   }
#ifndef MXCORE_BACKENDS_CUDA_CUDA_TEST_UTIL_H_
#define MXCORE_BACKENDS_CUDA_CUDA_TEST_UTIL_H_

#include <cstdint>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "ndarray/ndarray.h"

namespace mx {
namespace testing {

// a's values (on any device) as doubles, copied to the CPU first.
std::vector<double> Host(const NDArray& a);

// The plugin's path (MX_CUDA_PLUGIN).
const char* CudaPluginPath();
// Loads the plugin on first use; "" when a GPU is usable, else why not.
const std::string& NoGpuReason();
// The plugin's count of softmax/activation/pooling/BatchNorm calls that
// ran cuDNN (-1 when the plugin lacks the counter).
int64_t CudnnCallsSoFar();

}  // namespace testing
}  // namespace mx

#define MX_SKIP_WITHOUT_GPU()                                                 \
  if (!::mx::testing::NoGpuReason().empty()) {                                \
    GTEST_SKIP() << "no usable GPU (" << ::mx::testing::NoGpuReason() << ")"; \
  }

#endif  // MXCORE_BACKENDS_CUDA_CUDA_TEST_UTIL_H_
