#include "backends/common/attr_parse.h"

#include <cerrno>
#include <cstdlib>
#include <string>

namespace mxplugin {
namespace {

std::string_view Trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) {
    s.remove_prefix(1);
  }
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) {
    s.remove_suffix(1);
  }
  return s;
}

}  // namespace

std::optional<bool> ParseBool(std::string_view text) {
  text = Trim(text);
  if (text == "True" || text == "true" || text == "1") return true;
  if (text == "False" || text == "false" || text == "0") return false;
  return std::nullopt;
}

std::optional<int64_t> ParseInt(std::string_view text) {
  const std::string s(Trim(text));
  if (s.empty()) return std::nullopt;
  char* end = nullptr;
  errno = 0;
  const long long v = std::strtoll(s.c_str(), &end, 10);
  if (errno != 0 || end != s.c_str() + s.size()) return std::nullopt;
  return static_cast<int64_t>(v);
}

std::optional<double> ParseFloat(std::string_view text) {
  const std::string s(Trim(text));
  if (s.empty()) return std::nullopt;
  char* end = nullptr;
  const double v = std::strtod(s.c_str(), &end);
  if (end != s.c_str() + s.size()) return std::nullopt;
  return v;
}

namespace {

// The entries of a tuple, each read by `parse`.
template <typename T, typename Parse>
std::optional<std::vector<T>> ParseEntries(std::string_view text, Parse parse) {
  text = Trim(text);
  if (text == "None" || text.empty()) return std::vector<T>{};
  if ((text.front() == '(' && text.back() == ')') ||
      (text.front() == '[' && text.back() == ']')) {
    text = text.substr(1, text.size() - 2);
  }
  std::vector<T> values;
  while (!Trim(text).empty()) {
    const size_t comma = text.find(',');
    const std::optional<T> v = parse(text.substr(0, comma));
    if (!v) return std::nullopt;
    values.push_back(*v);
    if (comma == std::string_view::npos) break;
    text.remove_prefix(comma + 1);
  }
  return values;
}

}  // namespace

std::optional<std::vector<int64_t>> ParseTuple(std::string_view text) {
  return ParseEntries<int64_t>(text, ParseInt);
}

std::optional<std::vector<double>> ParseFloatTuple(std::string_view text) {
  return ParseEntries<double>(text, ParseFloat);
}

}  // namespace mxplugin
