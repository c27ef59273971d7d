// A bad value of a CUDA plugin variable fails the plugin's load with a
// typed error naming it, with or without a GPU. The BUILD file runs it
// once per variable: MX_TEST_BAD_VARIABLE names it, and it is set to
// "maybe".
#include <cstdlib>
#include <string>

#include "base/error.h"
#include "gtest/gtest.h"
#include "plugin/plugin.h"

namespace mx {
namespace {

TEST(CudaPluginEnv, BadVariableValueFailsTheLoad) {
  const char* name = std::getenv("MX_TEST_BAD_VARIABLE");
  ASSERT_NE(name, nullptr);
  ASSERT_STREQ(std::getenv(name), "maybe");
  const std::string named = std::string(name) + "=\"maybe\"";
  try {
    LoadPlugin(std::getenv("MX_CUDA_PLUGIN"));
    ADD_FAILURE() << "the plugin loaded with " << named;
  } catch (const InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find(named), std::string::npos) << e.what();
  }
  for (const PluginInfo& p : ListPlugins()) EXPECT_NE(p.name, "cuda");
}

}  // namespace
}  // namespace mx
