// MX_CPU_FLUSH_DENORMALS: read on first use, checked, and overridden by
// SetFlushDenormals.
#include <cstdlib>

#include "base/error.h"
#include "base/float_mode.h"
#include "gtest/gtest.h"

namespace mx {
namespace {

TEST(FloatModeEnv, BadValueIsAConfigErrorThenTheVariableDecides) {
  ASSERT_EQ(setenv("MX_CPU_FLUSH_DENORMALS", "maybe", 1), 0);
  try {
    FlushDenormals();
    ADD_FAILURE() << "no error for MX_CPU_FLUSH_DENORMALS=maybe";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("MX_CPU_FLUSH_DENORMALS"),
              std::string::npos)
        << e.what();
  }
  ASSERT_EQ(setenv("MX_CPU_FLUSH_DENORMALS", "0", 1), 0);
  EXPECT_FALSE(FlushDenormals());
  {
    const CpuFloatModeScope scope;
    EXPECT_EQ(ThreadFloatMode(), 0u);
  }
  EXPECT_FALSE(SetFlushDenormals(true));
  EXPECT_TRUE(FlushDenormals());
}

}  // namespace
}  // namespace mx
