// A bad value of a CUDA plugin variable fails the plugin's load with a
// typed error naming it (run with MX_CUDA_VERBOSE=maybe), with or without
// a GPU.
#include <cstdlib>
#include <string>

#include "base/error.h"
#include "gtest/gtest.h"
#include "plugin/plugin.h"

namespace mx {
namespace {

TEST(CudaPluginEnv, BadVariableValueFailsTheLoad) {
  ASSERT_STREQ(std::getenv("MX_CUDA_VERBOSE"), "maybe");
  try {
    LoadPlugin(std::getenv("MX_CUDA_PLUGIN"));
    ADD_FAILURE() << "the plugin loaded with MX_CUDA_VERBOSE=maybe";
  } catch (const InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find("MX_CUDA_VERBOSE=\"maybe\""),
              std::string::npos)
        << e.what();
  }
  for (const PluginInfo& p : ListPlugins()) EXPECT_NE(p.name, "cuda");
}

}  // namespace
}  // namespace mx
