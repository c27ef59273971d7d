// Which ops of the CPU library have a GPU kernel once the CUDA plugin is
// loaded (no GPU needed). The ops without one are listed here on purpose:
// a new CPU op, or a GPU kernel removed, fails this test until the list
// (and the README's list) says so.
#include <algorithm>
#include <cstdlib>
#include <iostream>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/str_join.h"
#include "base/context.h"
#include "graph/op.h"
#include "gtest/gtest.h"
#include "plugin/plugin.h"

namespace mx {
namespace {

bool HasKernel(const Op& op, int dev_type) {
  return op.compute(dev_type) != nullptr ||
         op.compute_dynamic(dev_type) != nullptr ||
         op.stateful_compute(dev_type) != nullptr;
}

// The ops of the CPU library the CUDA plugin has no kernel for, as the
// README's CUDA section lists them (none: _default_subgraph_op runs on
// every device with the inner ops' kernels).
const std::set<std::string>& ExpectedWithoutGpuKernel() {
  static const auto* ops = new std::set<std::string>{};
  return *ops;
}

TEST(CudaCoverage, EveryCpuOpHasAGpuKernelButTheListedOnes) {
  LoadPlugin(std::getenv("MX_CUDA_PLUGIN"));
  int gpu = Context::DeviceTypeFromName("gpu");
  std::vector<std::string> missing, covered;
  for (const std::string& name : OpRegistry::Get()->ListNames()) {
    const Op& op = OpRegistry::Get()->Lookup(name);
    if (!HasKernel(op, Context::kCPU)) continue;
    (HasKernel(op, gpu) ? covered : missing).push_back(name);
  }
  std::sort(missing.begin(), missing.end());
  std::cout << covered.size() << " with GPU kernels, " << missing.size()
            << " without:\n"
            << absl::StrJoin(missing, " ") << "\n";
  EXPECT_EQ(std::set<std::string>(missing.begin(), missing.end()),
            ExpectedWithoutGpuKernel())
      << "update the list here and in the README's CUDA section";
  EXPECT_GT(covered.size(), 180u);
}

}  // namespace
}  // namespace mx
