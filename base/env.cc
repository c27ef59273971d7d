#include "base/env.h"

#include <cerrno>
#include <cstdlib>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "base/error.h"

namespace mx {
namespace env {

std::optional<std::string> Get(const char* name) {
  const char* value = std::getenv(name);
  if (value == nullptr || *value == '\0') return std::nullopt;
  return std::string(value);
}

int64_t GetInt(const char* name, int64_t def, int64_t min, int64_t max) {
  std::optional<std::string> value = Get(name);
  if (!value) return def;
  const std::string allowed =
      absl::StrCat("an integer in [", min, ", ", max, "]");
  errno = 0;
  char* end = nullptr;
  long long parsed = std::strtoll(value->c_str(), &end, 10);
  if (errno != 0 || end == value->c_str() || *end != '\0') {
    throw ConfigError(absl::StrCat("environment variable ", name, "=\"", *value,
                                   "\" is not an integer; expected ", allowed));
  }
  if (parsed < min || parsed > max) {
    throw ConfigError(absl::StrCat("environment variable ", name, "=", parsed,
                                   " is out of range; expected ", allowed));
  }
  return parsed;
}

std::string GetChoice(const char* name, const std::string& def,
                      const std::vector<std::string>& choices) {
  std::optional<std::string> value = Get(name);
  if (!value) return def;
  for (const std::string& choice : choices) {
    if (*value == choice) return choice;
  }
  throw ConfigError(
      absl::StrCat("environment variable ", name, "=\"", *value,
                   "\" is not one of: ", absl::StrJoin(choices, ", ")));
}

bool GetBool(const char* name, bool def) {
  std::optional<std::string> value = Get(name);
  if (!value) return def;
  std::string v = absl::AsciiStrToLower(*value);
  if (v == "1" || v == "true" || v == "yes" || v == "on") return true;
  if (v == "0" || v == "false" || v == "no" || v == "off") return false;
  throw ConfigError(
      absl::StrCat("environment variable ", name, "=\"", *value,
                   "\" is not a boolean; expected 1/0, true/false, "
                   "yes/no or on/off"));
}

}  // namespace env
}  // namespace mx
