#include <cstdlib>
#include <string>

#include "base/context.h"
#include "base/env.h"
#include "base/error.h"
#include "gtest/gtest.h"

namespace mx {
namespace {

TEST(Context, PrintsDeviceTypeAndId) {
  EXPECT_EQ(Context::CPU().ToString(), "cpu(0)");
  EXPECT_EQ(Context::GPU(3).ToString(), "gpu(3)");
  EXPECT_EQ(Context::CPUPinned(1).ToString(), "cpu_pinned(1)");
  EXPECT_NE(Context::CPU(0), Context::CPU(1));
  EXPECT_TRUE(Context::CPU(0) < Context::GPU(0));
}

TEST(Env, IntDefaultsWhenUnsetAndParsesWhenSet) {
  unsetenv("MX_TEST_INT");
  EXPECT_EQ(env::GetInt("MX_TEST_INT", 7, 1, 10), 7);
  setenv("MX_TEST_INT", "4", 1);
  EXPECT_EQ(env::GetInt("MX_TEST_INT", 7, 1, 10), 4);
}

TEST(Env, BadIntNamesVariableAndValue) {
  setenv("MX_TEST_INT", "four", 1);
  try {
    env::GetInt("MX_TEST_INT", 7, 1, 10);
    FAIL() << "expected ConfigError";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("MX_TEST_INT=\"four\""),
              std::string::npos)
        << e.what();
  }
  setenv("MX_TEST_INT", "11", 1);
  EXPECT_THROW(env::GetInt("MX_TEST_INT", 7, 1, 10), ConfigError);
  setenv("MX_TEST_INT", "3x", 1);
  EXPECT_THROW(env::GetInt("MX_TEST_INT", 7, 1, 10), ConfigError);
}

TEST(Env, ChoiceListsAllowedValues) {
  setenv("MX_TEST_CHOICE", "Fast", 1);
  try {
    env::GetChoice("MX_TEST_CHOICE", "a", {"a", "b"});
    FAIL() << "expected ConfigError";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("a, b"), std::string::npos);
  }
  setenv("MX_TEST_CHOICE", "b", 1);
  EXPECT_EQ(env::GetChoice("MX_TEST_CHOICE", "a", {"a", "b"}), "b");
}

TEST(Env, Bool) {
  setenv("MX_TEST_BOOL", "On", 1);
  EXPECT_TRUE(env::GetBool("MX_TEST_BOOL", false));
  setenv("MX_TEST_BOOL", "0", 1);
  EXPECT_FALSE(env::GetBool("MX_TEST_BOOL", true));
  setenv("MX_TEST_BOOL", "maybe", 1);
  EXPECT_THROW(env::GetBool("MX_TEST_BOOL", true), ConfigError);
}

TEST(Error, HierarchyIsCatchableAsBase) {
  EXPECT_THROW(throw ShapeError("s"), InvalidArgument);
  EXPECT_THROW(throw DTypeError("d"), Error);
  EXPECT_THROW(throw NotFound("n"), std::runtime_error);
}

}  // namespace
}  // namespace mx
