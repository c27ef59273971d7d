// A plugin kernel that declines (MX_STATUS_NOT_IMPLEMENTED) falls back to
// the kernel the op had before the plugin loaded, also when that was the
// op's kernel for every device (_default_subgraph_op).
#include <dlfcn.h>

#include <cstdlib>

#include "gtest/gtest.h"
#include "plugin/plugin.h"
#include "testing/subgraph_test_util.h"

namespace mx {
namespace {

TEST(PluginKernel, DeclineFallsBackToTheKernelForEveryDevice) {
  const char* path = std::getenv("DECLINING_PLUGIN");
  LoadPlugin(path);
  void* lib = dlopen(path, RTLD_NOW | RTLD_NOLOAD);
  ASSERT_NE(lib, nullptr);
  auto calls =
      reinterpret_cast<int (*)()>(dlsym(lib, "declining_plugin_calls"));
  ASSERT_NE(calls, nullptr);
  const testing::SubgraphNet net = testing::ScaledSumNet();
  const Symbol part = testing::PartitionWithDefault(net.symbol, net.claimed);
  EXPECT_GT(testing::ExpectSameForwardBackward(net.symbol, part, Context::CPU(),
                                               {{"x", {3, 4}}, {"w", {3, 4}}},
                                               OpReqType::kWriteTo, 1e-12),
            0);
  // The plugin's kernel was asked first (forward and backward, twice).
  EXPECT_GE(calls(), 4);
  dlclose(lib);
}

}  // namespace
}  // namespace mx
