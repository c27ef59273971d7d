// The plugin host's OpenMP wait defaults (openmp_env.h), applied during
// static initialization. Run by Bazel in three environments (its test
// environment is clean apart from what BUILD sets): MX_PLUGINS set;
// MX_PLUGINS and the user's OMP_WAIT_POLICY set (USER_SET_POLICY repeats
// its value); neither.
#include "plugin/openmp_env.h"

#include <cstdlib>
#include <string>

#include "gtest/gtest.h"
#include "plugin/plugin.h"

namespace mx {
namespace {

std::string Env(const char* name) {
  const char* v = std::getenv(name);
  return v == nullptr ? "<unset>" : v;
}

TEST(OpenMpEnvTest, SetAtStartOnlyForMxPluginsAndUnlessTheUserChose) {
  const bool plugins = Env("MX_PLUGINS") != "<unset>";
  const std::string user = Env("USER_SET_POLICY");
  const bool expect_set = plugins && user == "<unset>";
  if (expect_set) {
    EXPECT_EQ(Env("OMP_WAIT_POLICY"), "active");
    EXPECT_EQ(Env("GOMP_SPINCOUNT"), plugin::kGompSpinCount);
    EXPECT_EQ(Env("KMP_BLOCKTIME"), plugin::kKmpBlockTime);
  } else {
    EXPECT_EQ(Env("OMP_WAIT_POLICY"), user);
    EXPECT_EQ(Env("GOMP_SPINCOUNT"), "<unset>");
    EXPECT_EQ(Env("KMP_BLOCKTIME"), "<unset>");
  }
  // Decided once, at static initialization.
  EXPECT_EQ(plugin::ApplyOpenMpWaitDefaults(), expect_set);
  // What a program loading plugins with LoadPlugin calls in main: sets them
  // where nothing did, and never over a value that is there.
  EXPECT_EQ(SetOpenMpWaitDefaults(), !plugins);
  EXPECT_EQ(Env("OMP_WAIT_POLICY"), user == "<unset>" ? "active" : user);
  EXPECT_FALSE(SetOpenMpWaitDefaults());
}

}  // namespace
}  // namespace mx
