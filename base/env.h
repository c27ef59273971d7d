// Reading mxcore's run-time configuration from environment variables.
//
// Every getter returns the default when the variable is unset or empty and
// throws mx::ConfigError naming the variable, its value and what is allowed
// when the value is bad:
//
//   int n = mx::env::GetInt("MX_CPU_WORKER_NTHREADS", /*def=*/1,
//                           /*min=*/1, /*max=*/1024);
//   std::string t = mx::env::GetChoice("MX_ENGINE_TYPE",
//   "ThreadedEnginePerDevice",
//                                      {"NaiveEngine", "ThreadedEngine",
//                                       "ThreadedEnginePerDevice"});
#ifndef MXCORE_BASE_ENV_H_
#define MXCORE_BASE_ENV_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace mx {
namespace env {

// The raw value, or nullopt when unset or empty.
std::optional<std::string> Get(const char* name);

// An integer in [min, max]; anything else (text, overflow) is a ConfigError.
int64_t GetInt(const char* name, int64_t def, int64_t min, int64_t max);

// One of `choices` (exact match); anything else is a ConfigError.
std::string GetChoice(const char* name, const std::string& def,
                      const std::vector<std::string>& choices);

// "1", "true", "yes", "on" / "0", "false", "no", "off" (any case).
bool GetBool(const char* name, bool def);

}  // namespace env
}  // namespace mx

#endif  // MXCORE_BASE_ENV_H_
