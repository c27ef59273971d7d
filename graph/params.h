// Typed operator parameters declared once, as a schema.
//
// A parameter struct lists its fields with their names; parsing a string
// dictionary into the struct, rejecting unknown keys, bad values and missing
// required keys, and printing it back all derive from that one declaration.
// Defaults are the struct's member initializers.
//
//   struct PoolParam {
//     TShape kernel;
//     std::string pool_type = "max";
//     bool global_pool = false;
//     static void Declare(ParamSchema<PoolParam>* s) {
//       s->Field("kernel", &PoolParam::kernel).Required();
//       s->Field("pool_type", &PoolParam::pool_type).Choices({"max", "avg"});
//       s->Field("global_pool", &PoolParam::global_pool);
//     }
//   };
//   PoolParam p = ParseParams<PoolParam>("Pooling", {{"kernel", "(2,2)"}});
#ifndef MXCORE_GRAPH_PARAMS_H_
#define MXCORE_GRAPH_PARAMS_H_

#include <any>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

#include "ndarray/dtype.h"
#include "ndarray/shape.h"

namespace mx {

using AttrDict = std::map<std::string, std::string>;

// Keys of the form "__name__" are metadata (shape hints, context groups,
// profiler tags) carried through graphs; parameter parsing ignores them.
bool IsMetadataKey(const std::string& key);

// `v` as attribute text: the shortest decimal that parses back to exactly
// `v` (absl::StrCat keeps only 6 digits, so 1/3 came back as 0.333333).
//   {"scalar", AttrText(1.0 / 3)}  // "0.3333333333333333"
std::string AttrText(double v);

// A tuple whose entries may be None, e.g. slice's begin=(None, 1).
using OptionalIntTuple = std::vector<std::optional<int64_t>>;
// A tuple of reals, e.g. MultiBoxPrior's sizes=(0.2, 0.272); a bare
// number is a tuple of one.
using FloatTuple = std::vector<double>;

namespace param_internal {
// Each throws std::invalid_argument with a short reason on a bad value.
void ParseValue(const std::string& s, int* v);
void ParseValue(const std::string& s, int64_t* v);
void ParseValue(const std::string& s, float* v);
void ParseValue(const std::string& s, double* v);
void ParseValue(const std::string& s, bool* v);
void ParseValue(const std::string& s, std::string* v);
void ParseValue(const std::string& s, TShape* v);
void ParseValue(const std::string& s, DType* v);
void ParseValue(const std::string& s, OptionalIntTuple* v);
void ParseValue(const std::string& s, FloatTuple* v);
template <typename T>
void ParseValue(const std::string& s, std::optional<T>* v) {
  if (s == "None" || s == "none" || s.empty()) {
    v->reset();
    return;
  }
  T inner;
  ParseValue(s, &inner);
  *v = inner;
}

std::string PrintValue(int v);
std::string PrintValue(int64_t v);
std::string PrintValue(float v);
std::string PrintValue(double v);
std::string PrintValue(bool v);
std::string PrintValue(const std::string& v);
std::string PrintValue(const TShape& v);
std::string PrintValue(DType v);
std::string PrintValue(const OptionalIntTuple& v);
std::string PrintValue(const FloatTuple& v);
template <typename T>
std::string PrintValue(const std::optional<T>& v) {
  return v ? PrintValue(*v) : "None";
}
}  // namespace param_internal

// The fields of parameter struct P.
template <typename P>
class ParamSchema {
 public:
  struct FieldInfo {
    std::string name;
    bool required = false;
    std::vector<std::string> choices;  // Allowed values for string fields.
    std::string doc;
    std::function<void(P*, const std::string&)> parse;
    std::function<std::string(const P&)> print;
    // Integer fields only: the parsed value, and the largest one allowed.
    std::function<int64_t(const P&)> as_integer;
    std::optional<int64_t> at_most;
  };

  class FieldBuilder {
   public:
    explicit FieldBuilder(FieldInfo* f) : f_(f) {}
    FieldBuilder& Required() {
      f_->required = true;
      return *this;
    }
    FieldBuilder& Choices(std::vector<std::string> choices) {
      f_->choices = std::move(choices);
      return *this;
    }
    FieldBuilder& Describe(std::string doc) {
      f_->doc = std::move(doc);
      return *this;
    }
    // Integer fields: values above `max` are rejected when parsed (e.g. an
    // arity attribute, before anything is sized by it).
    FieldBuilder& AtMost(int64_t max) {
      f_->at_most = max;
      return *this;
    }

   private:
    FieldInfo* f_;
  };

  template <typename T>
  FieldBuilder Field(const std::string& name, T P::*member) {
    FieldInfo f;
    f.name = name;
    f.parse = [member](P* p, const std::string& s) {
      param_internal::ParseValue(s, &(p->*member));
    };
    f.print = [member](const P& p) {
      return param_internal::PrintValue(p.*member);
    };
    if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) {
      f.as_integer = [member](const P& p) {
        return static_cast<int64_t>(p.*member);
      };
    }
    fields_.push_back(std::move(f));
    return FieldBuilder(&fields_.back());
  }

  const std::vector<FieldInfo>& fields() const { return fields_; }

  static const ParamSchema& Get() {
    static const ParamSchema* schema = [] {
      auto* s = new ParamSchema();
      P::Declare(s);
      return s;
    }();
    return *schema;
  }

 private:
  std::vector<FieldInfo> fields_;
};

namespace param_internal {
[[noreturn]] void ThrowUnknownKey(const std::string& op, const std::string& key,
                                  const std::vector<std::string>& known);
[[noreturn]] void ThrowBadValue(const std::string& op, const std::string& key,
                                const std::string& value,
                                const std::string& reason);
[[noreturn]] void ThrowMissing(const std::string& op, const std::string& key);
}  // namespace param_internal

// Parses `dict` into P for op `op_name`; throws InvalidArgument naming the
// op, the key and the value on any problem.
template <typename P>
P ParseParams(const std::string& op_name, const AttrDict& dict) {
  const ParamSchema<P>& schema = ParamSchema<P>::Get();
  P p{};
  size_t matched = 0;
  for (const auto& field : schema.fields()) {
    auto it = dict.find(field.name);
    if (it == dict.end()) {
      if (field.required) param_internal::ThrowMissing(op_name, field.name);
      continue;
    }
    ++matched;
    if (!field.choices.empty()) {
      bool ok = false;
      for (const std::string& c : field.choices) ok |= (c == it->second);
      if (!ok) {
        std::string allowed;
        for (const std::string& c : field.choices) {
          allowed += (allowed.empty() ? "" : ", ") + c;
        }
        param_internal::ThrowBadValue(op_name, field.name, it->second,
                                      "expected one of: " + allowed);
      }
    }
    try {
      field.parse(&p, it->second);
    } catch (const std::invalid_argument& e) {
      param_internal::ThrowBadValue(op_name, field.name, it->second, e.what());
    }
    if (field.at_most && field.as_integer &&
        field.as_integer(p) > *field.at_most) {
      param_internal::ThrowBadValue(
          op_name, field.name, it->second,
          "must be at most " + std::to_string(*field.at_most));
    }
  }
  if (matched != dict.size()) {
    std::vector<std::string> known;
    for (const auto& field : schema.fields()) known.push_back(field.name);
    for (const auto& [key, value] : dict) {
      if (IsMetadataKey(key)) continue;
      bool found = false;
      for (const auto& field : schema.fields()) found |= field.name == key;
      if (!found) param_internal::ThrowUnknownKey(op_name, key, known);
    }
  }
  return p;
}

// Every field of `p` as strings (for JSON and printing).
template <typename P>
AttrDict PrintParams(const P& p) {
  AttrDict out;
  for (const auto& field : ParamSchema<P>::Get().fields()) {
    out[field.name] = field.print(p);
  }
  return out;
}

// The parameter struct of ops that take none.
struct NoParams {
  static void Declare(ParamSchema<NoParams>*) {}
};

}  // namespace mx

#endif  // MXCORE_GRAPH_PARAMS_H_
