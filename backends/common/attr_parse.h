// Reading a built-in op's attribute strings (MXNet's "True", "(3, 3)",
// "None") inside a backend plugin (oneDNN, CUDA), which sees only the
// strings the node was created with (no defaults filled). Every reader
// returns nullopt for text it does not understand: the kernel then declines
// the call or raises the op's typed error.
//
//   auto kernel = ParseTuple(attrs.Get("kernel"));   // "(3,3)" -> {3, 3}
//   auto no_bias = ParseBool(attrs.Get("no_bias", "False"));
#ifndef MXCORE_BACKENDS_COMMON_ATTR_PARSE_H_
#define MXCORE_BACKENDS_COMMON_ATTR_PARSE_H_

#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

namespace mxplugin {

// "True"/"False"/"true"/"false"/"1"/"0".
std::optional<bool> ParseBool(std::string_view text);
// A decimal integer, surrounding spaces allowed.
std::optional<int64_t> ParseInt(std::string_view text);
// A finite or infinite float.
std::optional<double> ParseFloat(std::string_view text);
// "(3, 3)", "[3,3]", "(3,)", "3", "()" or "None" (empty).
std::optional<std::vector<int64_t>> ParseTuple(std::string_view text);
// The same with float entries: "(0.2, 0.272)", "0.5".
std::optional<std::vector<double>> ParseFloatTuple(std::string_view text);

}  // namespace mxplugin

#endif  // MXCORE_BACKENDS_COMMON_ATTR_PARSE_H_
