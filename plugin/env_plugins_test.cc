// MX_PLUGINS (set in BUILD) loads before the first op runs: a program that
// only invokes ops gets the plugin's ops and kernels without calling
// LoadPlugin or touching the subgraph API.
#include "gtest/gtest.h"
#include "imperative/imperative.h"
#include "plugin/plugin.h"
#include "testing/op_test_util.h"

namespace mx {
namespace {

TEST(EnvPlugins, LoadedBeforeTheFirstInvoke) {
  NDArray x = testing::ArrayOf({2}, {1, -2});
  EXPECT_EQ(testing::ToDouble(imperative::Invoke("_test_plugin_scale", {x})[0]),
            (std::vector<double>{2, -4}));
  ASSERT_EQ(ListPlugins().size(), 1u);
  EXPECT_EQ(ListPlugins()[0].name, "test_plugin");
}

}  // namespace
}  // namespace mx
