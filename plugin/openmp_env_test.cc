// The loader's OpenMP wait defaults (openmp_env.h). Run twice by Bazel:
// with the environment clean, and with OMP_WAIT_POLICY set by the "user"
// (USER_SET_POLICY names its value).
#include "plugin/openmp_env.h"

#include <dlfcn.h>

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

TEST(OpenMpEnvTest, SetBeforeTheFirstPluginLoadsUnlessTheUserChose) {
  // The premise: this binary does not bring libgomp itself.
  ASSERT_EQ(dlopen("libgomp.so.1", RTLD_NOW | RTLD_NOLOAD), nullptr);
  const std::string user = Env("USER_SET_POLICY");
  EXPECT_EQ(Env("GOMP_SPINCOUNT"), "<unset>");
  LoadPlugin(std::getenv("TEST_PLUGIN"));
  if (user == "<unset>") {
    EXPECT_EQ(Env("OMP_WAIT_POLICY"), "active");
    EXPECT_EQ(Env("GOMP_SPINCOUNT"), plugin::kGompSpinCount);
  } else {
    EXPECT_EQ(Env("OMP_WAIT_POLICY"), user);
    EXPECT_EQ(Env("GOMP_SPINCOUNT"), "<unset>");
  }
  // Decided once per process.
  EXPECT_EQ(plugin::ApplyOpenMpWaitDefaults(), user == "<unset>");
}

}  // namespace
}  // namespace mx
