#include "graph/params.h"

#include <cerrno>
#include <charconv>
#include <cstdlib>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "base/error.h"

namespace mx {

bool IsMetadataKey(const std::string& key) {
  return key.size() > 4 && key.compare(0, 2, "__") == 0 &&
         key.compare(key.size() - 2, 2, "__") == 0;
}

namespace {
// The shortest decimal text that parses back to exactly `v` (as a T).
template <typename T>
std::string ShortestText(T v) {
  char buf[32];
  return std::string(buf, std::to_chars(buf, buf + sizeof(buf), v).ptr);
}
}  // namespace

std::string AttrText(double v) { return ShortestText(v); }

namespace param_internal {
namespace {

template <typename T>
T ParseInteger(const std::string& s) {
  errno = 0;
  char* end = nullptr;
  const long long v = std::strtoll(s.c_str(), &end, 10);
  if (s.empty() || errno != 0 || *end != '\0') {
    throw std::invalid_argument("not an integer");
  }
  if (v < std::numeric_limits<T>::min() || v > std::numeric_limits<T>::max()) {
    throw std::invalid_argument("integer out of range");
  }
  return static_cast<T>(v);
}

double ParseReal(const std::string& s) {
  std::string t = absl::AsciiStrToLower(s);
  if (t == "inf" || t == "+inf") return HUGE_VAL;
  if (t == "-inf") return -HUGE_VAL;
  errno = 0;
  char* end = nullptr;
  const double v = std::strtod(s.c_str(), &end);
  if (s.empty() || *end != '\0') throw std::invalid_argument("not a number");
  return v;
}

}  // namespace

void ParseValue(const std::string& s, int* v) { *v = ParseInteger<int>(s); }
void ParseValue(const std::string& s, int64_t* v) {
  *v = ParseInteger<int64_t>(s);
}
void ParseValue(const std::string& s, float* v) {
  *v = static_cast<float>(ParseReal(s));
}
void ParseValue(const std::string& s, double* v) { *v = ParseReal(s); }
void ParseValue(const std::string& s, bool* v) {
  std::string t = absl::AsciiStrToLower(s);
  if (t == "1" || t == "true") {
    *v = true;
  } else if (t == "0" || t == "false") {
    *v = false;
  } else {
    throw std::invalid_argument("not a boolean (true/false/1/0)");
  }
}
void ParseValue(const std::string& s, std::string* v) { *v = s; }
void ParseValue(const std::string& s, TShape* v) {
  try {
    *v = TShape::Parse(s);
  } catch (const InvalidArgument&) {
    throw std::invalid_argument("not a shape such as (2,3)");
  }
}
void ParseValue(const std::string& s, DType* v) {
  try {
    *v = ParseDType(s);
  } catch (const DTypeError&) {
    throw std::invalid_argument("not a dtype name such as float32");
  }
}

namespace {
// The items of "(a, b)", "[a, b]" or "a, b" ("(1,)" and "()" allowed).
std::vector<std::string> TupleItems(const std::string& s) {
  std::string body = std::string(absl::StripAsciiWhitespace(s));
  if (!body.empty() && (body.front() == '(' || body.front() == '[')) {
    const char close = body.front() == '(' ? ')' : ']';
    if (body.back() != close) throw std::invalid_argument("unbalanced tuple");
    body = body.substr(1, body.size() - 2);
  }
  std::vector<std::string> items;
  for (absl::string_view part : absl::StrSplit(body, ',')) {
    std::string item(absl::StripAsciiWhitespace(part));
    if (!item.empty()) items.push_back(std::move(item));
  }
  return items;
}

template <typename T, typename F>
std::string TupleText(const std::vector<T>& v, F text) {
  std::string out = "(";
  for (size_t i = 0; i < v.size(); ++i) {
    if (i > 0) out += ",";
    out += text(v[i]);
  }
  if (v.size() == 1) out += ",";
  return out + ")";
}
}  // namespace

void ParseValue(const std::string& s, OptionalIntTuple* v) {
  v->clear();
  for (const std::string& item : TupleItems(s)) {
    if (item == "None" || item == "none") {
      v->push_back(std::nullopt);
    } else {
      v->push_back(ParseInteger<int64_t>(item));
    }
  }
}

void ParseValue(const std::string& s, FloatTuple* v) {
  v->clear();
  for (const std::string& item : TupleItems(s)) v->push_back(ParseReal(item));
}

std::string PrintValue(const OptionalIntTuple& v) {
  return TupleText(v, [](const std::optional<int64_t>& e) {
    return e ? std::to_string(*e) : std::string("None");
  });
}

std::string PrintValue(const FloatTuple& v) {
  return TupleText(v, [](double e) { return AttrText(e); });
}

std::string PrintValue(int v) { return std::to_string(v); }
std::string PrintValue(int64_t v) { return std::to_string(v); }
std::string PrintValue(float v) { return ShortestText(v); }
std::string PrintValue(double v) { return AttrText(v); }
std::string PrintValue(bool v) { return v ? "True" : "False"; }
std::string PrintValue(const std::string& v) { return v; }
std::string PrintValue(const TShape& v) { return v.ToString(); }
std::string PrintValue(DType v) { return DTypeName(v); }

void ThrowUnknownKey(const std::string& op, const std::string& key,
                     const std::vector<std::string>& known) {
  throw InvalidArgument(absl::StrCat(
      "op \"", op, "\": unknown attribute \"", key, "\"; known attributes: ",
      known.empty() ? "(none)" : absl::StrJoin(known, ", ")));
}

void ThrowBadValue(const std::string& op, const std::string& key,
                   const std::string& value, const std::string& reason) {
  throw InvalidArgument(absl::StrCat("op \"", op, "\": attribute ", key, "=\"",
                                     value, "\" is invalid: ", reason));
}

void ThrowMissing(const std::string& op, const std::string& key) {
  throw InvalidArgument(absl::StrCat("op \"", op, "\": required attribute \"",
                                     key, "\" is missing"));
}

}  // namespace param_internal
}  // namespace mx
