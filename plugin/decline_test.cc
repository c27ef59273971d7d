// A plugin kernel that declines (MX_STATUS_NOT_IMPLEMENTED) falls back to
// the kernel the op had before the plugin loaded, also when that was the
// op's kernel for every device (_default_subgraph_op).
#include <dlfcn.h>

#include <cstdlib>

#include "gtest/gtest.h"
#include "plugin/plugin.h"
#include "subgraph/partition_graph.h"
#include "subgraph/subgraph_property.h"
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
  Symbol x = Symbol::Variable("x"), w = Symbol::Variable("w");
  const Symbol net =
      Symbol::Create("_mul_scalar", {Symbol::Create("elemwise_add", {x, w})},
                     {{"scalar", "3"}});
  SetSubgraphPropertyOpNames("default", {"elemwise_add", "_mul_scalar"});
  const Symbol part = PartitionGraph(net, "default");
  RemoveSubgraphPropertyOpNames("default");
  EXPECT_GT(testing::ExpectSameForwardBackward(net, part, Context::CPU(),
                                               {{"x", {3, 4}}, {"w", {3, 4}}},
                                               OpReqType::kWriteTo, 1e-12),
            0);
  // The plugin's kernel was asked first (forward and backward, twice).
  EXPECT_GE(calls(), 4);
  dlclose(lib);
}

}  // namespace
}  // namespace mx
